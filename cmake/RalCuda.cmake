# The CUDA driver option. ON when the CUDA toolkit (headers and ptxas) is found; the core builds
# and tests without it. Only headers and ptxas (which assembles the GPU library's PTX into cubins,
# kernels/gpu) are used at build time: RAL never links libcuda, libcudart or libcublas (they are
# dlopen-ed at run time).
if(NOT DEFINED RAL_ENABLE_CUDA OR RAL_ENABLE_CUDA)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    find_program(RAL_PTXAS ptxas HINTS ${CUDAToolkit_BIN_DIR})
  endif()
endif()
if(CUDAToolkit_FOUND AND RAL_PTXAS)
  set(RAL_CUDA_DEFAULT ON)
else()
  set(RAL_CUDA_DEFAULT OFF)
endif()
option(RAL_ENABLE_CUDA "Build the CUDA driver and kernels (needs the CUDA toolkit)"
       ${RAL_CUDA_DEFAULT})
if(RAL_ENABLE_CUDA AND NOT (CUDAToolkit_FOUND AND RAL_PTXAS))
  message(FATAL_ERROR "RAL_ENABLE_CUDA needs the CUDA toolkit (headers and ptxas); set "
                      "CUDAToolkit_ROOT")
endif()
