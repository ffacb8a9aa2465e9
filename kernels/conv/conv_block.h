// ral_conv_block: a depthwise-separable block of 2-D convolutions on channels-last activations,
// run as one kernel: an optional pointwise expansion, a depthwise convolution and an optional
// pointwise projection, each with its bias and activation (MobileNet-V2's inverted residual,
// EfficientNet's expansion + depthwise). Run as three ral_conv calls, the expanded activations
// (6x the block's input) go to memory and back twice; here they never leave the cache: the
// kernel walks the output rows, keeping the few expanded rows the depthwise window reads in a
// ring. The compiler emits it for such chains (disc-ral-lower-to-library-calls), on the CPU.
//
//   void conv_block(ExecutionContext*, MemRef<float, 4> x, MemRef<float, 4> w1,
//                   MemRef<float, 1> b1, MemRef<float, 4> w2, MemRef<float, 1> b2,
//                   MemRef<float, 4> w3, MemRef<float, 1> b3, MemRef<float, 4> y,
//                   MemRef<int64_t, 1> config, MemRef<float, 1> bounds)
//     ral_conv_block___cpu___pvoid_m4df32_m4df32_m1df32_m4df32_m1df32_m4df32_m1df32_m4df32
//         _m1di64_m1df32___void (one name, no line break)
//
// x [N, H, W, C] and y [N, P, Q, F], channels-last, any strides.
// Stage 1, expansion: w1 [E, C, 1, 1], b1 [E] or [0]; absent when w1 has no elements (E = C).
// Stage 2, depthwise: w2 [E, 1, KH, KW], b2 [E] or [0]; strides, pads from config; no dilation.
// Stage 3, projection: w3 [F, E, 1, 1], b3 [F] or [0]; absent when w3 has no elements (F = E).
// At least one of the pointwise stages is present. P, Q as ral_conv computes them for stage 2.
// config (int64, exactly 10 values):
//   [0] flags: bit0 residual (y holds a residual on entry, added to the last stage's result
//       before its activation, as ral_conv's residual), bit1/2/3 constant w1/w2/w3 (read-only
//       for the Context's lifetime: prepared copies may be kept, keyed by address);
//   [1], [2], [3] the stages' activations (conv.h's codes);
//   [4, 5] strides (h, w) >= 1, [6, 7] pad_begin (h, w) >= 0, [8, 9] pad_end (h, w) >= 0.
// bounds (f32, exactly 6 values): each stage's clip bounds [lo, hi], read for clip only.
// Every stage computes as ral_conv would (the same kernels' arithmetic; results agree to
// rounding). Every mismatch is an INVALID_ARGUMENT naming the operand and the shapes.
//
// Plain functions: thread-safe; prepared filters live in the Context's resource cache.
#ifndef RAL_KERNELS_CONV_CONV_BLOCK_H_
#define RAL_KERNELS_CONV_CONV_BLOCK_H_

#include <cstdint>

#include "kernels/conv/conv.h"
#include "ral/api.h"
#include "ral/memref.h"

namespace ral::kernels {

inline constexpr int64_t kConvBlockResidual = 1;
inline constexpr int64_t kConvBlockConstantW1 = 2;
inline constexpr int64_t kConvBlockConstantW2 = 4;
inline constexpr int64_t kConvBlockConstantW3 = 8;
inline constexpr int64_t kConvBlockKnownFlags = 15;
inline constexpr int kConvBlockConfigSize = 10;

// One block, decoded and checked: each stage as the ral_conv it computes (channels-first views
// of its operands are the caller's business), plus the sizes the fused kernel walks.
struct ConvBlock {
  bool expand = false, project = false;
  ConvConfig stage[3];                 // expansion, depthwise, projection
  int64_t n = 0, h = 0, w = 0, c = 0;  // x
  int64_t e = 0;                       // the depthwise stage's channels
  int64_t kh = 0, kw = 0;
  int64_t p = 0, q = 0, f = 0;  // y
};

// Decodes config and bounds and checks every operand's shape against them.
StatusOr<ConvBlock> checkConvBlock(const MemRef<float, 4>& x, const MemRef<float, 4>& w1,
                                   const MemRef<float, 1>& b1, const MemRef<float, 4>& w2,
                                   const MemRef<float, 1>& b2, const MemRef<float, 4>& w3,
                                   const MemRef<float, 1>& b3, const MemRef<float, 4>& y,
                                   const MemRef<int64_t, 1>& config,
                                   const MemRef<float, 1>& bounds);

}  // namespace ral::kernels

#endif  // RAL_KERNELS_CONV_CONV_BLOCK_H_
