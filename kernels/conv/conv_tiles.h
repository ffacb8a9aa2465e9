// GEMM tiles for ral_conv's own CPU kernel (conv_tiles_cpu.h): y[m, f] = act(sum_k a[m, k] *
// w[f, k] + bias[f] (+ y[m, f])) over rows m of a row-major a, the interface between
// conv_tiles_cpu.cc (which plans, packs and threads) and conv_tiles_avx512.cc (the AVX-512
// code). A pointwise convolution's a is x itself: a row per pixel, k over its channels.
// Only <cstdint>:
// the AVX-512 file is compiled with -mavx512f, and any inline function it shared with the rest
// of RAL could be linked into code that runs on hosts without AVX-512.
#ifndef RAL_KERNELS_CONV_CONV_TILES_H_
#define RAL_KERNELS_CONV_CONV_TILES_H_

#include <cstdint>

namespace ral::kernels::cpu {
namespace tiles {

inline constexpr int kVector = 16;  // floats per AVX-512 register
inline constexpr int kBlock = 12;   // pixels computed together (every panel's rows divide it)
inline constexpr int kMaxPanelVectors = 6;

// The output channels in panels of up to 6 vectors (96 channels): one panel when there are at
// most 96 channels, else panels of 4 vectors and a last one of 3 to 6. Panel q covers channels
// [64 q, 64 q + 16 * panelVectors(f, q)) (the last one masked at f); its weights are packed
// [k][16 * panelVectors(f, q)] at offset 64 q * k. Derived, not stored: a call needs no table.
inline int64_t vectorsOf(int64_t f) { return (f + kVector - 1) / kVector; }
inline int64_t panelCount(int64_t f) {
  const int64_t v = vectorsOf(f);
  return v <= kMaxPanelVectors ? 1 : (v - kMaxPanelVectors + 3) / 4 + 1;
}
inline int panelVectors(int64_t f, int64_t q) {
  const int64_t v = vectorsOf(f), count = panelCount(f);
  return static_cast<int>(q + 1 < count ? 4 : v - 4 * (count - 1));
}
inline int64_t panelFirst(int64_t q) { return 4 * kVector * q; }
inline int64_t packedFloats(int64_t f, int64_t c) { return (f + kVector - 1) / kVector * kVector * c; }

// One GEMM: rows are pixels, in_channels the reduction's length k.
struct Problem {
  int64_t pixels = 0, in_channels = 0, out_channels = 0;
  const float* x = nullptr;  // row m, element k at x[m * x_row + k]
  int64_t x_row = 0;
  float* y = nullptr;  // pixel m, channel f at y[m * y_row + f]
  int64_t y_row = 0;
  const float* packed = nullptr;  // the weights, packed in panels (above)
  const float* bias = nullptr;    // dense, f values; null: none
  int activation = 0;  // ConvActivation, not GELU
  float lo = 0, hi = 0;
  bool residual = false;
};

// Computes the panels [panel_begin, panel_end) of the pixel blocks [block_begin, block_end).
void runAvx512(const Problem& p, int64_t block_begin, int64_t block_end, int panel_begin,
               int panel_end);

// out[r * channels + k] = x[r * x_row + k] * scale[k] for r < rows, k < channels: a block of
// rows of a pointwise convolution's input scaled per channel (ral_conv_scaled).
void scaleRowsAvx512(const float* x, int64_t x_row, const float* scale, int64_t rows,
                     int64_t channels, float* out);

// t[m * t_row + j] = (r ? r[m * r_row + j] : 0) + (bias ? bias[j] : 0) for m < rows, j < cols:
// the rows a linear layer's GEMM then accumulates into (conv_linear_cpu.cc). t may be r.
void sumRowsAvx512(float* t, int64_t t_row, const float* r, int64_t r_row, const float* bias,
                   int64_t rows, int64_t cols);

// y[i] = act(y[i]) for i < n, act one of the tiles' activations (not GELU): the activation of a
// oneDNN convolution whose own is slow (conv_cpu.cc).
void activateAvx512(float* y, int64_t n, int activation, float lo, float hi);

// y[j] = (accumulate ? y[j] : 0) + sum_k x[k] * b[k * b_row + j] for j < cols, k < depth, each
// sum in order of k: a linear layer's product for one row (a CNN's classifier at batch 1,
// conv_linear_cpu.cc), where sgemm would pack b on every call to use it once. Up to
// kRowColumns columns at a time, so that b's rows stream from memory in order (the prefetchers
// keep up only with that: 1.28 M weights from DRAM in 0.27 ms, against 0.55-0.95 ms read 96
// columns at a time).
inline constexpr int kRowColumns = 24 * kVector;
void rowTimesMatrixAvx512(const float* x, const float* b, int64_t b_row, int64_t depth, float* y,
                          int64_t cols, bool accumulate);

// One output row of a depthwise convolution (ral_conv_block, conv_block_cpu.cc) over input rows
// already padded: column j of input row i (0 <= i < kh) starts at rows[i] + j * in_pixel, every
// pixel holding vectorsOf(channels) full vectors (zeros past `channels` and in the padding).
// y[o * y_pixel + e] = act(sum_ij rows[i][(o * stride + j) * in_pixel + e] * taps[(i * kw + j) *
// tap_row + e] + bias[e] (+ y[...] when residual)) for o < out_width, e < channels; taps and bias
// hold tap_row = 16 * vectorsOf(channels) floats per tap (zeros past channels).
struct DepthwiseRow {
  static constexpr int kMaxRows = 16;
  const float* rows[kMaxRows] = {};
  int kh = 0, kw = 0;
  int64_t stride = 1, in_pixel = 0, out_width = 0, channels = 0, tap_row = 0;
  const float* taps = nullptr;
  const float* bias = nullptr;
  float* y = nullptr;
  int64_t y_pixel = 0;
  int activation = 0;  // ConvActivation, not GELU
  float lo = 0, hi = 0;
  bool residual = false;
};
void depthwiseRowAvx512(const DepthwiseRow& d);

}  // namespace tiles
}  // namespace ral::kernels::cpu

#endif  // RAL_KERNELS_CONV_CONV_TILES_H_
