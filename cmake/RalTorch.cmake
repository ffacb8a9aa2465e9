# The PyTorch context and plugin option (contexts/torch, plugins/torch). ON when Torch's CMake
# package is found: a Python torch's own (python3 -c "import torch;
# print(torch.utils.cmake_prefix_path)", pip's torch 2.x) or Debian's libtorch-dev. The core
# builds and tests without it.
#
# RAL_TORCH_PYTHON: the interpreter whose torch the tests and benchmark use (the first of
# /usr/bin/python3 and the python3 on PATH that imports torch).
#
# Included by each folder that needs it (Torch's package sets plain variables, per directory).

if(NOT DEFINED RAL_ENABLE_TORCH OR RAL_ENABLE_TORCH)
  if(NOT RAL_TORCH_PYTHON)
    find_program(_ral_path_python3 python3)
    foreach(candidate /usr/bin/python3 ${_ral_path_python3})
      if(EXISTS ${candidate})
        execute_process(
          COMMAND ${candidate} -c "import torch; print(torch.utils.cmake_prefix_path)"
          OUTPUT_VARIABLE _ral_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
          RESULT_VARIABLE _ral_torch_rc ERROR_QUIET)
        if(_ral_torch_rc EQUAL 0)
          set(RAL_TORCH_PYTHON ${candidate} CACHE FILEPATH "Python interpreter with torch")
          set(RAL_TORCH_PYTHON_PREFIX ${_ral_torch_prefix} CACHE INTERNAL "")
          break()
        endif()
      endif()
    endforeach()
  endif()
  # Torch's package prints its progress; keep the configure output quiet.
  find_package(Torch CONFIG QUIET
               HINTS ${RAL_TORCH_PYTHON_PREFIX} /usr/lib/x86_64-linux-gnu/cmake/Torch)
endif()

if(Torch_FOUND)
  set(RAL_TORCH_DEFAULT ON)
else()
  set(RAL_TORCH_DEFAULT OFF)
endif()
option(RAL_ENABLE_TORCH "Build the PyTorch context, custom class and ral_torch package"
       ${RAL_TORCH_DEFAULT})
if(RAL_ENABLE_TORCH AND NOT Torch_FOUND)
  message(FATAL_ERROR "RAL_ENABLE_TORCH needs Torch's CMake package (libtorch-dev); set Torch_DIR")
endif()

if(RAL_ENABLE_TORCH)
  # The CUDA parts of the context need torch's CUDA headers, which include the CUDA toolkit's.
  set(RAL_TORCH_CUDA OFF)
  if(TORCH_CUDA_LIBRARIES OR TARGET torch_cuda)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND)
      set(RAL_TORCH_CUDA ON)
    endif()
  endif()
  # Where the build puts the importable ral_torch package (PYTHONPATH for tests and benchmarks).
  set(RAL_TORCH_PYTHONPATH ${PROJECT_BINARY_DIR}/python)
endif()
