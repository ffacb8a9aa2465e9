// ral_conv's own CPU kernel for pointwise convolutions (1x1, stride 1, no padding, one group,
// channels-last x and y), on GEMM tiles (conv_tiles.h) that compute every output channel of a
// block of 12 pixels in registers and apply the bias, residual and activation before a single
// store of y. Such a convolution is a GEMM over the pixels with x itself as its left operand;
// MobileNet- and EfficientNet-style networks spend most of their time there. oneDNN 2.6's
// brgconv_1x1 writes y in column panels, which miss the cache on the 112x112 and 56x56 layers
// (1.3x to 2.8x slower than this kernel there; about even on the deep 7x7 and 14x14 ones).
//
// x86-64 hosts with AVX-512 only (convTilesAvailable()), filters of at most 2^18 weights (they
// stay in L2) or few pixels (below); elsewhere, for GELU, which the tiles do not compute, and for
// every other convolution, ral_conv runs oneDNN. RAL_CONV_ALGORITHM=onednn turns the kernel off.
//
// Plain functions, thread-safe; the packed filters of constant weights live in the Context's
// resource cache (conv_tiles_cpu.cc).
#ifndef RAL_KERNELS_CONV_CONV_TILES_CPU_H_
#define RAL_KERNELS_CONV_CONV_TILES_CPU_H_

#include <cstdint>
#include <memory>

#include "kernels/common/devices.h"
#include "kernels/common/kernel_util.h"
#include "kernels/conv/conv.h"
#include "kernels/conv/conv_tiles.h"
#include "ral/api.h"
#include "ral/memref.h"

namespace ral::kernels::cpu {

// The largest filter the tiles take: 1 MiB of floats (see tryPointwiseConv), unless the
// convolution has 2 to kMaxWideFilterRows pixels in all (a CNN's 7x7 layers at batch 1, its
// classifier at batch 2 to 64): then each panel of the filter is read once for all of them,
// where a GEMM library's packing and blocking cost more than they save.
inline constexpr int64_t kMaxTileFilterFloats = int64_t{1} << 18;
inline constexpr int64_t kMaxWideFilterRows = 64;

// Whether this host runs the kernel (AVX-512 present and usable, and not switched off).
bool convTilesAvailable();

// Runs the convolution when the kernel takes it: *handled is false (and nothing is written) for
// a configuration or layout it does not take, which then goes to oneDNN. x and y are the
// channels-first views conv.h's Impl::conv receives; `alias` whether y overlaps an input.
// `scale` (ral_conv_scaled): null, or [N, C, 1...] channels-first: x[n, c, ...] is multiplied
// by scale[n, c] as each block of pixels is read (into a scratch block the tiles then read).
template <int R>
Status tryPointwiseConv(const KernelEnv& env, const ConvConfig& c, const MemRef<float, R>& x,
                        const MemRef<float, R>& w, const MemRef<float, 1>& bias,
                        const MemRef<float, R>& y, bool alias, bool* handled,
                        const MemRef<float, R>* scale = nullptr);

// Filters prepared for the tiles. A constant filter (conv.h's constant_filter) is prepared once
// per Context, kept in its resource cache by address, shape and strides, and `keep` holds it
// alive while the call uses it; any other is prepared into `scratch` on every call. Either is
// 64-byte aligned: the tiles' vector loads of packed weights never straddle cache lines.
using PreparedFilter = std::shared_ptr<const float>;
// w [F, C, 1...] as the tiles' panels (conv_tiles.h).
StatusOr<const float*> pointwisePanels(const KernelEnv& env, const float* w, int64_t f, int64_t c,
                                       int64_t f_stride, int64_t c_stride, bool constant,
                                       PreparedFilter* keep, Scratch* scratch);
// A constant w [F, C, 1...] as the column blocks of conv_linear_cpu.h: block b holds output
// channels [kLinearBlockColumns * b, + width) (width kLinearBlockColumns, the last one what is
// left) as a dense row-major [C][width] matrix at offset kLinearBlockColumns * b * C.
inline constexpr int64_t kLinearBlockColumns = 384;
StatusOr<const float*> linearColumnBlocks(const KernelEnv& env, const float* w, int64_t f,
                                          int64_t c, int64_t f_stride, int64_t c_stride,
                                          PreparedFilter* keep);
// A depthwise filter w [E, 1, KH, KW] as DepthwiseRow's taps: [KH * KW][16 * vectorsOf(E)],
// zeros past E.
StatusOr<const float*> depthwiseTaps(const KernelEnv& env, const MemRef<float, 4>& w, bool constant,
                                     PreparedFilter* keep, Scratch* scratch);

// The bias as dense floats (copied into `scratch` when strided); null without one.
StatusOr<const float*> denseBias(const KernelEnv& env, const MemRef<float, 1>& bias,
                                 Scratch* scratch);

}  // namespace ral::kernels::cpu

#endif  // RAL_KERNELS_CONV_CONV_TILES_CPU_H_
