// ral_conv's CPU implementation as a function, for CPU kernels built from convolutions
// (ral_conv_block runs its stages through it where its fused kernel does not apply).
// Thread-safe, as ral_conv.
#ifndef RAL_KERNELS_CONV_CONV_CPU_H_
#define RAL_KERNELS_CONV_CONV_CPU_H_

#include "kernels/conv/conv.h"
#include "ral/api.h"
#include "ral/memref.h"

namespace ral::kernels::cpu {

// One 2-D convolution as ral_conv computes it, on operands checkConv accepted for `c`: x and y
// channels-first views ([N, C, H, W] and [N, F, P, Q] whatever their memory order).
Status convCpu(ExecutionContext* ctx, const ConvConfig& c, const MemRef<float, 4>& x,
               const MemRef<float, 4>& w, const MemRef<float, 1>& bias, const MemRef<float, 4>& y);

}  // namespace ral::kernels::cpu

#endif  // RAL_KERNELS_CONV_CONV_CPU_H_
