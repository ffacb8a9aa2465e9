# The HSA driver option. ON when the HSA headers (hsa/hsa.h, hsa/hsa_ext_amd.h; Debian's
# libhsa-runtime-dev) are found; the core builds and tests without them. Only headers are used
# at build time: RAL never links libhsa-runtime64 (it is dlopen-ed at run time).
if(NOT DEFINED RAL_ENABLE_HSA OR RAL_ENABLE_HSA)
  find_path(RAL_HSA_INCLUDE_DIR NAMES hsa/hsa.h hsa/hsa_ext_amd.h
            PATHS /opt/rocm/include)
endif()
if(RAL_HSA_INCLUDE_DIR AND EXISTS "${RAL_HSA_INCLUDE_DIR}/hsa/hsa_ext_amd.h")
  set(RAL_HSA_DEFAULT ON)
else()
  set(RAL_HSA_DEFAULT OFF)
endif()
option(RAL_ENABLE_HSA "Build the HSA driver for AMD GPUs (needs the HSA headers)"
       ${RAL_HSA_DEFAULT})
if(RAL_ENABLE_HSA AND NOT RAL_HSA_DEFAULT)
  message(FATAL_ERROR "RAL_ENABLE_HSA needs the HSA headers (hsa/hsa.h); install "
                      "libhsa-runtime-dev or set RAL_HSA_INCLUDE_DIR")
endif()
