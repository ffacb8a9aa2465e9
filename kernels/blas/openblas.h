// OpenBLAS, loaded lazily with dlopen so that RAL can choose its CPU kernels first.
//
// OpenBLAS (DYNAMIC_ARCH builds such as Debian's) picks its kernels in its library constructor
// from OPENBLAS_CORETYPE or its own CPU detection. Version 0.3.21 does not know recent CPUs
// (e.g. Intel family 6 model 207, AMD family 26) and falls back to much slower kernels. A library
// that links OpenBLAS cannot fix that: the constructor runs before any of its code. So RAL does
// not link OpenBLAS; on the first GEMM it
//   1. sets OPENBLAS_CORETYPE, unless the user already set it, to the best core type the CPU
//      supports (cpuid, with OS support for the registers): "Cooperlake" with AVX-512 BF16,
//      "SkylakeX" with AVX-512 F/BW/DQ/VL/CD, "Haswell" with AVX2 + FMA; otherwise it leaves
//      OpenBLAS to decide;
//   2. dlopens libopenblas.so.0, else libopenblas.so, or what RAL_OPENBLAS_PATH names
//      (drivers/common/dynamic_library.h);
//   3. sets OpenBLAS's thread count to the CPU driver's (setOpenBlasThreads).
// If the process had already loaded OpenBLAS (e.g. through numpy), that instance is used as it is.
#ifndef RAL_KERNELS_BLAS_OPENBLAS_H_
#define RAL_KERNELS_BLAS_OPENBLAS_H_

#include <cblas.h>

#include <string>

#include "ral/status.h"

namespace ral::kernels::cpu {

struct OpenBlas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  void (*set_num_threads)(int) = nullptr;
  int (*get_num_threads)() = nullptr;
  char* (*get_corename)() = nullptr;  // optional
  char* (*get_config)() = nullptr;    // optional
  std::string library;                // what was loaded
  std::string coretype;               // OPENBLAS_CORETYPE as OpenBLAS saw it ("" when unset)
  bool coretype_chosen_by_ral = false;
  bool was_already_loaded = false;
};

// Loads OpenBLAS once; every call returns the same instance or the same error (Unavailable).
StatusOr<const OpenBlas*> openBlas();

// The OPENBLAS_CORETYPE RAL would choose on this CPU ("" when it would not set one).
std::string recommendedOpenBlasCoreType();

// Sets OpenBLAS's thread count when it differs from the last one set (OpenBLAS's count is
// process-wide).
Status setOpenBlasThreads(int threads);

// "OpenBLAS 0.3.21 ... core Cooperlake (OPENBLAS_CORETYPE set by RAL), 2 threads", for logs.
std::string openBlasDescription();

}  // namespace ral::kernels::cpu

#endif  // RAL_KERNELS_BLAS_OPENBLAS_H_
