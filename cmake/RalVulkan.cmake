# The Vulkan driver's build switch. Vulkan is loaded at run time (dlopen), so only its headers
# and glslc (to compile the compute shaders) are needed to build.
if(NOT DEFINED RAL_ENABLE_VULKAN OR RAL_ENABLE_VULKAN)
  find_package(Vulkan QUIET COMPONENTS glslc)
endif()
if(Vulkan_FOUND AND TARGET Vulkan::glslc)
  set(RAL_VULKAN_DEFAULT ON)
else()
  set(RAL_VULKAN_DEFAULT OFF)
endif()
option(RAL_ENABLE_VULKAN "Build the Vulkan driver and its kernels (needs Vulkan headers and glslc)"
       ${RAL_VULKAN_DEFAULT})
if(RAL_ENABLE_VULKAN AND NOT (Vulkan_FOUND AND TARGET Vulkan::glslc))
  message(FATAL_ERROR "RAL_ENABLE_VULKAN needs the Vulkan headers and glslc "
                      "(libvulkan-dev, glslc)")
endif()
if(RAL_ENABLE_VULKAN)
  # Imported targets and plain variables are scoped to this directory; tests and benchmarks in
  # other folders need the headers and glslc too.
  set(RAL_GLSLC ${Vulkan_GLSLC_EXECUTABLE} CACHE INTERNAL "glslc")
  set(RAL_VULKAN_INCLUDE_DIRS ${Vulkan_INCLUDE_DIRS} CACHE INTERNAL "Vulkan headers")
  include(RalSpirv)
endif()
