// ral_conv's CPU implementation as a function, for CPU kernels built from convolutions
// (ral_conv_block runs its stages through it where its fused kernel does not apply).
// Thread-safe, as ral_conv.
#ifndef RAL_KERNELS_CONV_CONV_CPU_H_
#define RAL_KERNELS_CONV_CONV_CPU_H_

#include <cstdint>

#include "kernels/conv/conv.h"
#include "ral/api.h"
#include "ral/memref.h"

namespace ral::kernels::cpu {

// One 2-D convolution as ral_conv computes it, on operands checkConv accepted for `c`: x and y
// channels-first views ([N, C, H, W] and [N, F, P, Q] whatever their memory order).
Status convCpu(ExecutionContext* ctx, const ConvConfig& c, const MemRef<float, 4>& x,
               const MemRef<float, 4>& w, const MemRef<float, 1>& bias, const MemRef<float, 4>& y);

// [N, D1, D2, C] dense channels-last in `data` (scratch the CPU kernels run ral_conv on).
inline MemRef<float, 4> denseChannelsLast(float* data, int64_t n, int64_t d1, int64_t d2,
                                          int64_t c) {
  MemRef<float, 4> m{};
  m.allocated = m.aligned = data;
  const int64_t sizes[4] = {n, d1, d2, c};
  int64_t stride = 1;
  for (int d = 3; d >= 0; --d) {
    m.sizes[d] = sizes[d];
    m.strides[d] = stride;
    stride *= sizes[d];
  }
  return m;
}

}  // namespace ral::kernels::cpu

#endif  // RAL_KERNELS_CONV_CONV_CPU_H_
