// ral_conv_scaled: ral_conv of an input whose channels are first scaled per image, the
// squeeze-and-excitation of EfficientNet and MobileNet-V3 (y = conv(x * s) with s[n, c] from the
// block's own pooled activations). Run as a multiply and a ral_conv, x * s goes to memory and
// back; here each block of pixels is scaled as the convolution reads it. The compiler emits it
// where a broadcast multiply's only use is a convolution's input
// (disc-ral-lower-to-library-calls), on the CPU.
//
//   void conv_scaled(ExecutionContext*, MemRef<float, 4> x, MemRef<float, 4> scale,
//                    MemRef<float, 4> w, MemRef<float, 1> bias, MemRef<float, 4> y,
//                    MemRef<int64_t, 1> config, float alpha, float beta)
//     ral_conv_scaled___cpu___pvoid_m4df32_m4df32_m4df32_m1df32_m4df32_m1di64_f32_f32___void
//
// x, w, bias, y, config, alpha and beta exactly as ral_conv's 2-D convolution (conv.h), every
// configuration included; scale is [N, C, 1, 1], or [N, 1, 1, C] when config says channels_last
// (laid out as x is), any strides. The result is ral_conv's on x[n, c, h, w] * scale[n, c]
// (each product rounded to f32 first, as the separate multiply would). Every mismatch is an
// INVALID_ARGUMENT naming the operand and the shapes.
//
// Plain functions: thread-safe; prepared filters live in the Context's resource cache.
#ifndef RAL_KERNELS_CONV_CONV_SCALED_H_
#define RAL_KERNELS_CONV_CONV_SCALED_H_

#include "kernels/conv/conv.h"
#include "ral/api.h"
#include "ral/memref.h"

namespace ral::kernels {

// Checks scale against x's channels-first view xc ([N, C, H, W]) and returns scale's
// channels-first view ([N, C, 1, 1]).
StatusOr<MemRef<float, 4>> checkConvScale(const ConvConfig& c, const MemRef<float, 4>& xc,
                                          const MemRef<float, 4>& scale);

}  // namespace ral::kernels

#endif  // RAL_KERNELS_CONV_CONV_SCALED_H_
