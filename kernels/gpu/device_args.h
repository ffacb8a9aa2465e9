// Kernel arguments of the GPU library kernels (kernels/gpu/device_kernels.py writes their MLIR,
// built for CUDA and HSA). Each kernel's gpu.func takes these fields in order, every one 8 bytes,
// so an HSA kernarg segment and a CUDA parameter list are the struct byte for byte: the host
// passes each field as one launch argument (kernels/gpu/gpu_library.h). tests/hsa checks the
// code objects' metadata and the PTX against these layouts.
#ifndef RAL_KERNELS_GPU_DEVICE_ARGS_H_
#define RAL_KERNELS_GPU_DEVICE_ARGS_H_

#include <cstdint>

namespace ral::kernels::gpu {

// Views are padded to this rank with leading dims of size 1 and stride 0.
inline constexpr int kMaxRank = 6;
// Work-items per workgroup of the linear (grid-stride) kernels; GEMM uses kGemmTile^2.
inline constexpr uint32_t kLinearBlock = 256;
inline constexpr uint32_t kGemmTile = 16;

// ral_strided_copy_<bytes>: dst[view(i)] = src[view(i)] for i < count.
struct CopyArgs {
  const void* src;
  void* dst;
  int64_t count;
  int64_t threads;  // work-items in the grid: the loop's stride
  int64_t sizes[kMaxRank];
  int64_t src_strides[kMaxRank];  // elements
  int64_t dst_strides[kMaxRank];
};

// ral_strided_fill_<bytes>: dst[view(i)] = value (its low <bytes> bytes).
struct FillArgs {
  void* dst;
  int64_t count;
  int64_t threads;
  uint64_t value;
  int64_t sizes[kMaxRank];
  int64_t dst_strides[kMaxRank];
};

// ral_rng_uniform_<type>: Philox4x32-10 blocks of (seed, offset), kernels/rng/philox.h. `count`
// counts elements; the grid covers the blocks (4 elements each, 2 for f64).
struct RngArgs {
  void* out;
  int64_t count;
  int64_t threads;
  uint64_t seed;
  uint64_t offset;
  double low;   // f64 output: used as is; others: float bounds widened exactly
  double span;  // high - low, computed as the CPU does
  int64_t sizes[kMaxRank];
  int64_t strides[kMaxRank];
};

// ral_gemm_<type>: c[m x n] = a[m x k] * b[k x n] with row/column strides in elements
// (transposes folded into them); a grid of ceil(n/16) x ceil(m/16) workgroups of 16 x 16.
struct GemmArgs {
  const void* a;
  const void* b;
  void* c;
  int64_t m, n, k;
  int64_t a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;
};

// ral_order_rows_<type> (ral_topk, ral_sort): workgroup g (of `groups`, kLinearBlock wide)
// orders rows g, g + groups, ... of the input's leading dims (`sizes`, padded to kMaxRank) in
// scratch slot g (`padded` pairs from g * padded), then writes the first k of each.
struct OrderArgs {
  const void* in;
  void* values;
  int64_t* indices;
  int64_t* scratch_index;  // groups * padded
  void* scratch_value;     // groups * padded elements
  int64_t rows;
  int64_t n;       // row length
  int64_t padded;  // n rounded up to a power of two
  int64_t log2_padded;
  int64_t k;           // entries written per row
  int64_t descending;  // 0 or 1
  int64_t groups;      // workgroups in the grid: the row loop's stride
  int64_t in_step;     // strides of the last dim
  int64_t values_step;
  int64_t indices_step;
  int64_t sizes[kMaxRank];  // the leading dims
  int64_t in_strides[kMaxRank];
  int64_t values_strides[kMaxRank];
  int64_t indices_strides[kMaxRank];
};

static_assert(sizeof(CopyArgs) == 176 && sizeof(FillArgs) == 128 && sizeof(RngArgs) == 152 &&
                  sizeof(GemmArgs) == 96 && sizeof(OrderArgs) == 312,
              "the argument layouts of kernels/gpu/device_kernels.py");

}  // namespace ral::kernels::gpu

#endif  // RAL_KERNELS_GPU_DEVICE_ARGS_H_
