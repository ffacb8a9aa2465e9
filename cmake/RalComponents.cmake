# Helpers that assemble libral.so from per-folder OBJECT libraries.

# ral_add_component(<name> SOURCES ...): an OBJECT library whose objects go into libral.so.
function(ral_add_component name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  add_library(${name} OBJECT ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                            $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>)
  set_property(GLOBAL APPEND PROPERTY RAL_COMPONENTS ${name})
endfunction()

function(ral_link_components)
  get_property(components GLOBAL PROPERTY RAL_COMPONENTS)
  add_library(ral SHARED)
  add_library(ral::ral ALIAS ral)
  set_target_properties(ral PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION 0)
  target_link_libraries(ral PRIVATE ${components})
  # In the tree, private headers (beside their sources) are reachable too; installed, only
  # include/ral/.
  target_include_directories(ral PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                        $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                        $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(ral PUBLIC cxx_std_17)
  # Symbols a component needs from another (e.g. kernels from the core) resolve inside libral.
  target_link_options(ral PRIVATE -Wl,--no-undefined)

  # libral_static.a: the same objects for programs that link RAL statically. The linker keeps
  # only object files a program names, so such programs call the register functions of
  # ral/registration.h for the components they use.
  find_package(Threads REQUIRED)
  find_package(dlpack CONFIG REQUIRED)
  add_library(ral_static STATIC)
  add_library(ral::ral_static ALIAS ral_static)
  foreach(component ${components})
    target_sources(ral_static PRIVATE $<TARGET_OBJECTS:${component}>)
  endforeach()
  # What the components link: they dlopen device runtimes and BLAS; the few libraries a component
  # links directly (oneDNN for ral_conv) are listed in the global RAL_COMPONENT_LINK_LIBRARIES.
  get_property(component_libs GLOBAL PROPERTY RAL_COMPONENT_LINK_LIBRARIES)
  target_link_libraries(ral_static INTERFACE Threads::Threads dlpack::dlpack ${CMAKE_DL_LIBS}
                                             ${component_libs})
  target_include_directories(ral_static PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                               $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(ral_static PUBLIC cxx_std_17)
endfunction()
