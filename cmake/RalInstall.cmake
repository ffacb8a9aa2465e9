# `cmake --install` puts headers, libral.so and a CMake package (find_package(ral)) in a prefix.
include(CMakePackageConfigHelpers)

install(TARGETS ral EXPORT ralTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The public headers are include/ral/ and nothing else: the core ABI, contexts, the Driver
# interface, the standalone context (C++ API over DLPack) and the C API. Headers beside the
# sources (ral/*.h, drivers/, kernels/, the module file's generated code) stay private.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ral DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ral-run ral-inspect ral-pack RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT ralTargets NAMESPACE ral:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ral)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ralConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ralConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ral)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ralConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ralConfig.cmake ${PROJECT_BINARY_DIR}/ralConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ral)
