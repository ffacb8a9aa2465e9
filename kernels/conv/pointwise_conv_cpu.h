// ral_conv's own kernel for pointwise (1x1) convolutions on the CPU: stride 1, no padding, one
// group, channels-last x and y. Such a convolution is a GEMM over the pixels,
//   y[m, f] = act(sum_c x[m, c] * w[f, c] + bias[f] (+ y[m, f] on entry)),
// and MobileNet- and EfficientNet-style networks spend most of their time in it. oneDNN 2.6's
// brgconv_1x1 writes the output in column panels, and on the 112x112 and 56x56 layers (16 or
// 24 channels in, 96 or 144 out) those panels miss the cache; this kernel computes every output
// channel of a block of 12 pixels before moving on, so y is written once, front to back, with
// the bias, residual and activation applied in registers (1.3x to 2.8x faster than oneDNN on
// those layers; about even on the deep 7x7 and 14x14 ones).
//
// x86-64 hosts with AVX-512 only (pointwiseConvAvailable()); elsewhere, or for GELU, which this
// kernel does not compute, ral_conv runs oneDNN. RAL_CONV_ALGORITHM=onednn turns it off.
//
// Plain functions, thread-safe; the packed filters of constant weights live in the Context's
// resource cache (pointwise_conv_cpu.cc).
#ifndef RAL_KERNELS_CONV_POINTWISE_CONV_CPU_H_
#define RAL_KERNELS_CONV_POINTWISE_CONV_CPU_H_

#include <cstdint>

#include "kernels/common/devices.h"
#include "kernels/conv/conv.h"
#include "kernels/conv/pointwise_conv_kernel.h"
#include "ral/api.h"
#include "ral/memref.h"

namespace ral::kernels::cpu {

// Whether this host runs the kernel (AVX-512 present and usable, and not switched off).
bool pointwiseConvAvailable();

// Runs the convolution when the kernel takes it: *handled is false (and nothing is written) for
// a configuration or layout it does not take, which then goes to oneDNN. x and y are the
// channels-first views conv.h's Impl::conv receives; `threads` the CPU driver's pool size;
// `alias` whether y overlaps an input.
template <int R>
Status tryPointwiseConv(const KernelEnv& env, const ConvConfig& c, const MemRef<float, R>& x,
                        const MemRef<float, R>& w, const MemRef<float, 1>& bias,
                        const MemRef<float, R>& y, bool alias, bool* handled);

}  // namespace ral::kernels::cpu

#endif  // RAL_KERNELS_CONV_POINTWISE_CONV_CPU_H_
