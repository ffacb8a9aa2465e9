// The ops whose GPU code is the GPU library's and nothing else: ral_rng_uniform
// (kernels/rng/rng_gpu.h) and ral_topk / ral_sort (kernels/topk_sort/topk_sort_gpu.h). Each GPU
// device of the library registers them from its registration file with one line:
//
//   RAL_REGISTER_GPU_LIBRARY_OPS(hsa, "hsa")   // the tag namespace ral::kernels::hsa, its name
//
// (The copy primitives are kernels/copy/strided_copy_gpu.cc; GEMM differs per device: cuBLAS on
// CUDA, the library's kernel on HSA.)
#ifndef RAL_KERNELS_GPU_LIBRARY_OPS_H_
#define RAL_KERNELS_GPU_LIBRARY_OPS_H_

#include "kernels/rng/rng_gpu.h"
#include "kernels/topk_sort/topk_sort_gpu.h"
#include "ral/registration.h"

#define RAL_REGISTER_GPU_LIBRARY_OPS(tag_namespace, device_name) \
  namespace ral::kernels::tag_namespace {                        \
  namespace {                                                    \
  namespace rng {                                                \
  constexpr char kDevice[] = device_name;                        \
  using Impl = gpu::RngImpl<Tag::kKind>;                         \
  RAL_KERNEL_FLOAT_TYPES(RAL_REGISTER_RNG_UNIFORM)               \
  }                                                              \
  namespace topk_sort {                                          \
  constexpr char kDevice[] = device_name;                        \
  using Impl = gpu::TopkSortImpl<Tag::kKind>;                    \
  RAL_REGISTER_TOPK_SORT()                                       \
  }                                                              \
  }                                                              \
  }

#endif  // RAL_KERNELS_GPU_LIBRARY_OPS_H_
