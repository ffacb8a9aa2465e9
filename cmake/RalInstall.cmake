# `cmake --install` puts headers, libral.so and a CMake package (find_package(ral)) in a prefix.
include(CMakePackageConfigHelpers)

install(TARGETS ral EXPORT ralTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/ral/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ral
        FILES_MATCHING PATTERN "*.h" PATTERN "schema" EXCLUDE)
# The standalone context (C++ API over DLPack) and the command-line tools. The module file's
# schema and generated code stay private to libral.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/contexts/standalone/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/contexts/standalone FILES_MATCHING PATTERN "*.h")
install(TARGETS ral-run ral-inspect ral-pack RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT ralTargets NAMESPACE ral:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ral)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ralConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ralConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ral)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ralConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ralConfig.cmake ${PROJECT_BINARY_DIR}/ralConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ral)
