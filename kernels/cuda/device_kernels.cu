// Device code of the CUDA kernels of every op (strided copy and fill, rng, topk/sort), compiled by
// nvcc at build time into one fatbin (PTX plus SASS for sm_80 and sm_90) that is embedded in
// libral.so and loaded through the driver on first use. It stays one .cu file on purpose: nvcc
// is the slowest step of the build, and one fatbin is one module to load per Context.
// Compiled with -fmad=false so every + and * rounds separately, as kernels/rng/philox.h requires.
// No CUDA header is needed: conversions use PTX directly.
#include <stdint.h>

#include "kernels/cuda/device_params.h"

using ral::kernels::cuda::CopyParams;
using ral::kernels::cuda::FillParams;
using ral::kernels::cuda::OrderParams;
using ral::kernels::cuda::RngParams;
using ral::kernels::cuda::StridedView;

namespace {

__device__ __forceinline__ int64_t globalIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t globalStride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// Element offset of logical (row-major) index i in a strided view.
__device__ int64_t offsetOf(const StridedView& v, int64_t i) {
  int64_t off = 0;
  for (int d = v.rank - 1; d >= 0; --d) {
    const int64_t size = v.sizes[d];
    const int64_t q = i / size;
    off += (i - q * size) * v.strides[d];
    i = q;
  }
  return off;
}

template <typename T>
__device__ void stridedCopy(const CopyParams& p) {
  const T* src = static_cast<const T*>(p.src_ptr);
  T* dst = static_cast<T*>(p.dst_ptr);
  for (int64_t i = globalIndex(); i < p.count; i += globalStride())
    dst[offsetOf(p.dst, i)] = src[offsetOf(p.src, i)];
}

template <typename T>
__device__ void stridedFill(const FillParams& p) {
  T* dst = static_cast<T*>(p.dst_ptr);
  const T value = static_cast<T>(p.value);
  for (int64_t i = globalIndex(); i < p.count; i += globalStride()) dst[offsetOf(p.dst, i)] = value;
}

// ---- Philox4x32-10: a line-by-line mirror of kernels/rng/philox.h
// ---------------------------------

struct Block {
  uint32_t w[4];
};

__device__ __forceinline__ Block philox4x32_10(Block c, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    const uint32_t hi0 = __umulhi(0xD2511F53u, c.w[0]), lo0 = 0xD2511F53u * c.w[0];
    const uint32_t hi1 = __umulhi(0xCD9E8D57u, c.w[2]), lo1 = 0xCD9E8D57u * c.w[2];
    c = Block{{hi1 ^ c.w[1] ^ k0, lo1, hi0 ^ c.w[3] ^ k1, lo0}};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

__device__ __forceinline__ Block streamBlock(uint64_t seed, uint64_t offset, uint64_t block) {
  const uint64_t ctr = offset + block;
  return philox4x32_10(Block{{static_cast<uint32_t>(ctr), static_cast<uint32_t>(ctr >> 32), 0, 0}},
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

__device__ __forceinline__ float uniform24(uint32_t w) {
  return static_cast<float>(w >> 8) * (1.0f / 16777216.0f);
}
__device__ __forceinline__ float uniform11(uint32_t w) {
  return static_cast<float>(w >> 21) * (1.0f / 2048.0f);
}
__device__ __forceinline__ float uniform8(uint32_t w) {
  return static_cast<float>(w >> 24) * (1.0f / 256.0f);
}
__device__ __forceinline__ double uniform53(uint32_t a, uint32_t b) {
  return (static_cast<double>(a >> 5) * 67108864.0 + static_cast<double>(b >> 6)) *
         (1.0 / 9007199254740992.0);
}

// Round-to-nearest-even narrowing, as ral/half.h does on the host.
__device__ __forceinline__ uint16_t toHalfBits(float f) {
  uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ uint16_t toBFloat16Bits(float f) {
  uint16_t h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}

// Kind: 0 f32, 1 f64, 2 f16, 3 bf16.
template <int Kind>
__device__ void rngUniform(const RngParams& p) {
  constexpr int kPer = Kind == 1 ? 2 : 4;
  const int64_t blocks = (p.count + kPer - 1) / kPer;
  for (int64_t b = globalIndex(); b < blocks; b += globalStride()) {
    const Block words = streamBlock(p.seed, p.offset, static_cast<uint64_t>(b));
    for (int j = 0; j < kPer; ++j) {
      const int64_t i = b * kPer + j;
      if (i >= p.count) break;
      const int64_t off = offsetOf(p.out, i);
      if constexpr (Kind == 1) {
        const double u = uniform53(words.w[2 * j], words.w[2 * j + 1]);
        static_cast<double*>(p.out_ptr)[off] = __dadd_rn(p.low, __dmul_rn(u, p.span));
      } else {
        const float low = static_cast<float>(p.low), span = static_cast<float>(p.span);
        const float u = Kind == 0 ? uniform24(words.w[j])
                                  : (Kind == 2 ? uniform11(words.w[j]) : uniform8(words.w[j]));
        const float r = __fadd_rn(low, __fmul_rn(u, span));
        if constexpr (Kind == 0) {
          static_cast<float*>(p.out_ptr)[off] = r;
        } else if constexpr (Kind == 2) {
          static_cast<uint16_t*>(p.out_ptr)[off] = toHalfBits(r);
        } else {
          static_cast<uint16_t*>(p.out_ptr)[off] = toBFloat16Bits(r);
        }
      }
    }
  }
}

// ---- sort / topk: a bitonic sort of (value, index) per row, one thread block per row -----------

template <typename T>
__device__ __forceinline__ bool isNan(T v) {
  return v != v;  // false for integers
}

// Strict "a comes before b", NaN largest, as the CPU kernel orders.
template <typename T>
__device__ __forceinline__ bool before(T a, T b, bool descending) {
  const bool na = isNan(a), nb = isNan(b);
  if (na || nb) return descending ? (na && !nb) : (!na && nb);
  return descending ? a > b : a < b;
}

// Total order on indices of a row: by value, then by index; padding (>= n) last.
template <typename T>
__device__ __forceinline__ bool precedes(const T* row, int64_t step, int64_t n, int64_t a,
                                         int64_t b, bool descending) {
  if (a >= n) return false;
  if (b >= n) return true;
  const T va = row[a * step], vb = row[b * step];
  if (before(va, vb, descending)) return true;
  if (before(vb, va, descending)) return false;
  return a < b;
}

template <typename T>
__device__ void orderRows(const OrderParams& p) {
  const int64_t r = blockIdx.x;
  const T* row = static_cast<const T*>(p.in) + offsetOf(p.rows, r);
  int64_t* idx = p.scratch_index + r * p.padded;
  T* sorted = static_cast<T*>(p.scratch_value) + r * p.padded;
  const bool desc = p.descending != 0;
  for (int64_t i = threadIdx.x; i < p.padded; i += blockDim.x) idx[i] = i;
  __syncthreads();
  for (int64_t k = 2; k <= p.padded; k <<= 1) {
    for (int64_t j = k >> 1; j > 0; j >>= 1) {
      for (int64_t i = threadIdx.x; i < p.padded; i += blockDim.x) {
        const int64_t l = i ^ j;
        if (l <= i) continue;
        const int64_t a = idx[i], b = idx[l];
        const bool ascending_pair = (i & k) == 0;
        const bool swap = ascending_pair ? precedes(row, p.in_step, p.n, b, a, desc)
                                         : precedes(row, p.in_step, p.n, a, b, desc);
        if (swap) {
          idx[i] = b;
          idx[l] = a;
        }
      }
      __syncthreads();
    }
  }
  // Gather first, then write: `values` may be the input itself.
  for (int64_t i = threadIdx.x; i < p.k; i += blockDim.x) sorted[i] = row[idx[i] * p.in_step];
  __syncthreads();
  T* values = static_cast<T*>(p.values) + offsetOf(p.value_rows, r);
  int64_t* indices = p.indices + offsetOf(p.index_rows, r);
  for (int64_t i = threadIdx.x; i < p.k; i += blockDim.x) {
    values[i * p.value_step] = sorted[i];
    indices[i * p.index_step] = idx[i];
  }
}

}  // namespace

extern "C" {

__global__ void ral_cuda_empty() {}

__global__ void ral_strided_copy_1(CopyParams p) { stridedCopy<uint8_t>(p); }
__global__ void ral_strided_copy_2(CopyParams p) { stridedCopy<uint16_t>(p); }
__global__ void ral_strided_copy_4(CopyParams p) { stridedCopy<uint32_t>(p); }
__global__ void ral_strided_copy_8(CopyParams p) { stridedCopy<uint64_t>(p); }

__global__ void ral_strided_fill_1(FillParams p) { stridedFill<uint8_t>(p); }
__global__ void ral_strided_fill_2(FillParams p) { stridedFill<uint16_t>(p); }
__global__ void ral_strided_fill_4(FillParams p) { stridedFill<uint32_t>(p); }
__global__ void ral_strided_fill_8(FillParams p) { stridedFill<uint64_t>(p); }

__global__ void ral_rng_uniform_f32(RngParams p) { rngUniform<0>(p); }
__global__ void ral_rng_uniform_f64(RngParams p) { rngUniform<1>(p); }
__global__ void ral_rng_uniform_f16(RngParams p) { rngUniform<2>(p); }
__global__ void ral_rng_uniform_bf16(RngParams p) { rngUniform<3>(p); }

__global__ void ral_order_rows_f32(OrderParams p) { orderRows<float>(p); }
__global__ void ral_order_rows_f64(OrderParams p) { orderRows<double>(p); }
__global__ void ral_order_rows_i32(OrderParams p) { orderRows<int32_t>(p); }
__global__ void ral_order_rows_i64(OrderParams p) { orderRows<int64_t>(p); }

}  // extern "C"
