// Argument structs of the CUDA device kernels (device_kernels.cu), passed by value to
// cuLaunchKernel. Plain C++ with fixed-size integers, so nvcc and the host compiler agree on the
// layout; the host side fills them in the ops' *_cuda.cc files.
#ifndef RAL_KERNELS_CUDA_DEVICE_PARAMS_H_
#define RAL_KERNELS_CUDA_DEVICE_PARAMS_H_

#include <stdint.h>

namespace ral::kernels::cuda {

inline constexpr int kMaxRank = 8;

// A strided view: element i (row-major over sizes) lives at sum(idx[d] * strides[d]) elements.
struct StridedView {
  int32_t rank;
  int32_t pad;
  int64_t sizes[kMaxRank];
  int64_t strides[kMaxRank];
};

struct CopyParams {
  StridedView src;
  StridedView dst;
  int64_t count;
  const void* src_ptr;
  void* dst_ptr;
};

struct FillParams {
  StridedView dst;
  int64_t count;
  void* dst_ptr;
  uint64_t value;
};

struct RngParams {
  StridedView out;
  int64_t count;
  void* out_ptr;
  uint64_t seed;
  uint64_t offset;
  double low;   // f64 output: used as is; others: the float bounds widened exactly
  double span;  // high - low, computed as the CPU does (in float for 32-bit-or-narrower types)
};

// One thread block per row of the last dimension.
struct OrderParams {
  StridedView rows;  // the leading dims of the input (the last dim removed), input strides
  StridedView value_rows;
  StridedView index_rows;
  int64_t n;        // row length
  int64_t padded;   // n rounded up to a power of two
  int64_t k;        // entries written per row
  int64_t in_step;  // strides of the last dim
  int64_t value_step;
  int64_t index_step;
  const void* in;
  void* values;
  int64_t* indices;
  int64_t* scratch_index;  // rows * padded
  void* scratch_value;     // rows * padded elements
  int32_t descending;
  int32_t pad;
};

}  // namespace ral::kernels::cuda

#endif  // RAL_KERNELS_CUDA_DEVICE_PARAMS_H_
