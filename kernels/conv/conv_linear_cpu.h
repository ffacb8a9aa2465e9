// ral_conv's CPU path for linear layers: pointwise convolutions (1x1, stride 1, unpadded, one
// group, channels contiguous in x and y) with a constant filter past the tiles' bound
// (conv_tiles_cpu.h; 2 to 64 rows go to the tiles even then), which is what the compiler makes of a
// MatMul or Gemm by constant weights (BERT's and ViT's projections, 768 x 768 to 768 x 3072). They
// run as oneDNN sgemm calls over the filter packed once per Context into dense blocks of 384 output
// channels (linearColumnBlocks): oneDNN 2.6's sgemm reaches 160-166 GFLOP/s on one AVX-512 core
// there, its 1x1 convolution 137-159 (at 128 rows 141: the weight rows 9-12 KiB apart that a plain
// [C, F] matrix gives sgemm cost it as much). The bias and the residual go into the rows the GEMM
// accumulates into; the activation runs as oneDNN's eltwise on each block, so the results round
// as the convolution path's post-ops do (apart from the order of the sum). A single row (a CNN's
// classifier at batch 1) skips sgemm, which would pack the whole filter on every call to use it
// once: each block's rows stream through one row-times-matrix product (conv_tiles.h).
//
// AVX-512 hosts (convTilesAvailable()) only; RAL_CONV_ALGORITHM=onednn turns it off with the
// tiles. Plain function, thread-safe; oneDNN runs with the CPU driver's thread count.
#ifndef RAL_KERNELS_CONV_CONV_LINEAR_CPU_H_
#define RAL_KERNELS_CONV_CONV_LINEAR_CPU_H_

#include "kernels/common/devices.h"
#include "kernels/conv/conv.h"
#include "ral/api.h"
#include "ral/memref.h"

namespace ral::kernels::cpu {

// Runs the convolution when this path takes it: *handled is false (and nothing is written) for
// a configuration or layout it does not take. x and y are the channels-first views conv.h's
// Impl::conv receives; `alias` whether y overlaps an input; `threads` oneDNN's thread count.
template <int R>
Status tryLinearConv(const KernelEnv& env, const ConvConfig& c, const MemRef<float, R>& x,
                     const MemRef<float, R>& w, const MemRef<float, 1>& bias,
                     const MemRef<float, R>& y, bool alias, int threads, bool* handled);

}  // namespace ral::kernels::cpu

#endif  // RAL_KERNELS_CONV_CONV_LINEAR_CPU_H_
