// The AVX-512 code of ral_conv's GEMM tiles (conv_tiles.h). Compiled with
// -mavx512f -mfma and called only on hosts that have them; everything but runAvx512 has internal
// linkage, and nothing here is shared with the rest of RAL (see conv_tiles.h).
//
// A tile is MR pixels x NV vectors of output channels, kept in MR * NV registers (at most 24 of
// the 32) while the input channels stream past: per input channel, NV loads of packed weights,
// MR broadcasts of x and MR * NV FMAs. Its epilogue adds the bias and the residual, applies the
// activation and stores each pixel's channels contiguously.
// GCC 12 reports the deliberately undefined pass-through operand inside its own unmasked
// AVX-512 min/max intrinsics as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstdint>
#include <utility>

#include "kernels/conv/conv_tiles.h"

namespace ral::kernels::cpu::tiles {
namespace {

// e^x for float32 x <= 0 (the sigmoid's only argument): x = n ln2 + r with |r| <= ln2 / 2, e^r
// by a degree-6 minimax polynomial (relative error below 2e-9 on that interval, fitted in
// float64), scaled by 2^n with scalef, which underflows through the subnormals to 0 like the
// exact function. x is first clamped to -105, below which the result is already 0 (and r would
// lose every bit). (max returns its second operand when one is NaN: the clamp keeps NaN.)
__attribute__((always_inline)) inline __m512 expNonPositive512(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-105.0f), x);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // ln 2 in two parts: the first has 16 significant bits, so n * hi is exact for |n| < 2^8.
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187045e-06f), r);
  __m512 p = _mm512_set1_ps(1.3836846e-3f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.374816e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1668225e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.666642e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.999999e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// num / (1 + e^-|v|), with t = e^-|v| (which never overflows, so the result keeps its relative
// precision down to the subnormals: silu(-89) is -2e-37, not -0). The sigmoid is num = 1 (v >= 0)
// or t (v < 0); SiLU is num = v or v t. 1 / (1 + t), t in [0, 1], is rcp14's 14-bit estimate
// refined by one Newton step (28 bits): a division's throughput is a fraction of that on AVX-512
// cores, and SiLU runs on every output of EfficientNet's expand layers, where these few
// instructions are a tenth of the model's time.
template <bool kSilu>
__attribute__((always_inline)) inline __m512 logistic512(__m512 v) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 minus_abs = _mm512_castsi512_ps(
      _mm512_or_si512(_mm512_castps_si512(v), _mm512_set1_epi32(static_cast<int>(0x80000000u))));
  const __m512 t = expNonPositive512(minus_abs);
  const __m512 q = _mm512_add_ps(one, t);
  const __m512 e = _mm512_rcp14_ps(q);
  const __m512 d = _mm512_mul_ps(e, _mm512_fnmadd_ps(q, e, _mm512_set1_ps(2.0f)));
  const __mmask16 negative = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
  const __m512 num =
      kSilu ? _mm512_mask_mul_ps(v, negative, v, t) : _mm512_mask_mov_ps(one, negative, t);
  return _mm512_mul_ps(num, d);
}

// The activations of conv.h (GELU excepted). NaN propagates, as in PyTorch and ONNX: max/min
// return their second operand when one is NaN, so v goes second.
__attribute__((always_inline)) inline __m512 activate(__m512 v, int activation, float lo,
                                                      float hi) {
  const __m512 zero = _mm512_setzero_ps();
  switch (activation) {
    case 1:  // relu
      return _mm512_max_ps(zero, v);
    case 2:  // clip
      return _mm512_min_ps(_mm512_set1_ps(hi), _mm512_max_ps(_mm512_set1_ps(lo), v));
    case 3:  // sigmoid
      return logistic512<false>(v);
    case 4:  // silu
      return logistic512<true>(v);
    case 5: {  // hardswish
      const __m512 t = _mm512_min_ps(_mm512_set1_ps(6.0f),
                                     _mm512_max_ps(zero, _mm512_add_ps(v, _mm512_set1_ps(3.0f))));
      return _mm512_mul_ps(v, _mm512_div_ps(t, _mm512_set1_ps(6.0f)));  // no overflow near FLT_MAX
    }
    default:
      return v;
  }
}

// MR pixels from x (row stride x_row) times the packed panel w ([c][16 * NV]) into y; the last
// vector of each pixel is stored under `last`.
template <int MR, int NV>
void tile(const Problem& p, const float* x, const float* w, float* y, const float* bias,
          __mmask16 last) {
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  const int64_t channels = p.in_channels, x_row = p.x_row, y_row = p.y_row;
  for (int64_t k = 0; k < channels; ++k) {
    __m512 b[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) b[v] = _mm512_loadu_ps(w + k * (kVector * NV) + kVector * v);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 a = _mm512_set1_ps(x[r * x_row + k]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(a, b[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      const __mmask16 m = v == NV - 1 ? last : __mmask16(0xffff);
      float* out = y + r * y_row + kVector * v;
      __m512 s = acc[r][v];
      if (bias) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(m, bias + kVector * v));
      if (p.residual) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(m, out));
      _mm512_mask_storeu_ps(out, m, activate(s, p.activation, p.lo, p.hi));
    }
  }
}

using TileFn = void (*)(const Problem&, const float*, const float*, float*, const float*,
                        __mmask16);

// Rows per tile for NV vectors: MR * NV <= 24 accumulators, and MR divides kBlock.
constexpr int rowsFor(int nv) { return nv <= 2 ? 12 : nv <= 4 ? 6 : 4; }
static_assert(kBlock % rowsFor(1) == 0 && kBlock % rowsFor(3) == 0 && kBlock % rowsFor(6) == 0);

template <int NV, int... Rows>
constexpr TileFn tileFor(int rows, std::integer_sequence<int, Rows...>) {
  constexpr TileFn fns[] = {tile<Rows + 1, NV>...};
  return fns[rows - 1];
}

// The tile of NV vectors and `rows` (1 .. rowsFor(NV)) pixels.
TileFn tileFor(int nv, int rows) {
  switch (nv) {
    case 1:
      return tileFor<1>(rows, std::make_integer_sequence<int, rowsFor(1)>());
    case 2:
      return tileFor<2>(rows, std::make_integer_sequence<int, rowsFor(2)>());
    case 3:
      return tileFor<3>(rows, std::make_integer_sequence<int, rowsFor(3)>());
    case 4:
      return tileFor<4>(rows, std::make_integer_sequence<int, rowsFor(4)>());
    case 5:
      return tileFor<5>(rows, std::make_integer_sequence<int, rowsFor(5)>());
    default:
      return tileFor<6>(rows, std::make_integer_sequence<int, rowsFor(6)>());
  }
}

// P pixels from `o` on, channel vectors [v0, v0 + G) of one depthwise output row; the vector
// vectorsOf(channels) - 1, when among them, is stored under `last`. The taps of each window
// position are loaded once for the P pixels.
template <int G, int P>
void depthwiseTile(const DepthwiseRow& d, int64_t o, int64_t v0, __mmask16 last) {
  __m512 acc[P][G];
  const int64_t nv = vectorsOf(d.channels);
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
    const __m512 b = _mm512_loadu_ps(d.bias + kVector * (v0 + g));
#pragma GCC unroll 4
    for (int px = 0; px < P; ++px) acc[px][g] = b;
  }
  const int64_t step = d.stride * d.in_pixel;
  for (int i = 0; i < d.kh; ++i) {
    const float* row = d.rows[i] + o * step + kVector * v0;
    const float* taps = d.taps + static_cast<int64_t>(i) * d.kw * d.tap_row + kVector * v0;
    for (int j = 0; j < d.kw; ++j) {
      __m512 t[G];
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g) t[g] = _mm512_loadu_ps(taps + j * d.tap_row + kVector * g);
      const float* in = row + j * d.in_pixel;
#pragma GCC unroll 4
      for (int px = 0; px < P; ++px)
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g)
          acc[px][g] =
              _mm512_fmadd_ps(_mm512_loadu_ps(in + px * step + kVector * g), t[g], acc[px][g]);
    }
  }
#pragma GCC unroll 4
  for (int px = 0; px < P; ++px) {
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g) {
      const __mmask16 m = v0 + g == nv - 1 ? last : __mmask16(0xffff);
      float* out = d.y + (o + px) * d.y_pixel + kVector * (v0 + g);
      __m512 s = acc[px][g];
      if (d.residual) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(m, out));
      _mm512_mask_storeu_ps(out, m, activate(s, d.activation, d.lo, d.hi));
    }
  }
}

using DepthwiseFn = void (*)(const DepthwiseRow&, int64_t, int64_t, __mmask16);

template <int G, int... Ps>
constexpr DepthwiseFn depthwiseFor(int pixels, std::integer_sequence<int, Ps...>) {
  constexpr DepthwiseFn fns[] = {depthwiseTile<G, Ps + 1>...};
  return fns[pixels - 1];
}

constexpr int kDepthwiseVectors = 4, kDepthwisePixels = 4;  // 16 accumulators, 4 taps

DepthwiseFn depthwiseFor(int vectors, int pixels) {
  using Pixels = std::make_integer_sequence<int, kDepthwisePixels>;
  switch (vectors) {
    case 1:
      return depthwiseFor<1>(pixels, Pixels());
    case 2:
      return depthwiseFor<2>(pixels, Pixels());
    case 3:
      return depthwiseFor<3>(pixels, Pixels());
    default:
      return depthwiseFor<4>(pixels, Pixels());
  }
}

}  // namespace

void scaleRowsAvx512(const float* x, int64_t x_row, const float* scale, int64_t rows,
                     int64_t channels, float* out) {
  const int64_t full = channels / kVector * kVector;
  const __mmask16 tail = static_cast<__mmask16>((1u << (channels - full)) - 1);
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * x_row;
    float* o = out + r * channels;
    for (int64_t k = 0; k < full; k += kVector)
      _mm512_storeu_ps(o + k, _mm512_mul_ps(_mm512_loadu_ps(in + k), _mm512_loadu_ps(scale + k)));
    if (tail)
      _mm512_mask_storeu_ps(o + full, tail,
                            _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, in + full),
                                          _mm512_maskz_loadu_ps(tail, scale + full)));
  }
}

void sumRowsAvx512(float* t, int64_t t_row, const float* r, int64_t r_row, const float* bias,
                   int64_t rows, int64_t cols) {
  for (int64_t m = 0; m < rows; ++m) {
    float* out = t + m * t_row;
    const float* in = r ? r + m * r_row : nullptr;
    for (int64_t j = 0; j < cols; j += kVector) {
      const __mmask16 mask =
          cols - j >= kVector ? __mmask16(0xffff) : __mmask16((1u << (cols - j)) - 1);
      __m512 v = in ? _mm512_maskz_loadu_ps(mask, in + j) : _mm512_setzero_ps();
      if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, bias + j));
      _mm512_mask_storeu_ps(out + j, mask, v);
    }
  }
}

void activateAvx512(float* y, int64_t n, int activation, float lo, float hi) {
  int64_t i = 0;
  for (; i + kVector <= n; i += kVector)
    _mm512_storeu_ps(y + i, activate(_mm512_loadu_ps(y + i), activation, lo, hi));
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, tail,
                          activate(_mm512_maskz_loadu_ps(tail, y + i), activation, lo, hi));
  }
}

void rowTimesMatrixAvx512(const float* x, const float* b, int64_t b_row, int64_t depth, float* y,
                          int64_t cols, bool accumulate) {
  constexpr int kV = kRowColumns / kVector;
  for (int64_t j = 0; j < cols; j += kRowColumns) {
    __mmask16 mask[kV];
    for (int v = 0; v < kV; ++v) {
      const int64_t left = cols - j - int64_t{kVector} * v;
      mask[v] = left >= kVector ? __mmask16(0xffff)
                : left > 0      ? static_cast<__mmask16>((1u << left) - 1)
                                : __mmask16(0);
    }
    // 24 accumulators and the broadcast: within the 32 registers.
    __m512 acc[kV];
    for (int v = 0; v < kV; ++v)
      acc[v] =
          accumulate ? _mm512_maskz_loadu_ps(mask[v], y + j + kVector * v) : _mm512_setzero_ps();
    for (int64_t k = 0; k < depth; ++k) {
      const __m512 xk = _mm512_set1_ps(x[k]);
      const float* bk = b + k * b_row + j;
      for (int v = 0; v < kV; ++v)
        acc[v] = _mm512_fmadd_ps(xk, _mm512_maskz_loadu_ps(mask[v], bk + kVector * v), acc[v]);
    }
    for (int v = 0; v < kV; ++v) _mm512_mask_storeu_ps(y + j + kVector * v, mask[v], acc[v]);
  }
}

void depthwiseRowAvx512(const DepthwiseRow& d) {
  const int64_t nv = vectorsOf(d.channels);
  const int64_t tail = d.channels - kVector * (nv - 1);
  const __mmask16 last = tail >= kVector ? __mmask16(0xffff) : __mmask16((1u << tail) - 1);
  // Channel groups outermost: a group's taps stay in L1 across the row.
  for (int64_t v0 = 0; v0 < nv; v0 += kDepthwiseVectors) {
    const int g = static_cast<int>(nv - v0 < kDepthwiseVectors ? nv - v0 : kDepthwiseVectors);
    for (int64_t o = 0; o < d.out_width; o += kDepthwisePixels) {
      const int p =
          static_cast<int>(d.out_width - o < kDepthwisePixels ? d.out_width - o : kDepthwisePixels);
      depthwiseFor(g, p)(d, o, v0, last);
    }
  }
}

void runAvx512(const Problem& p, int64_t block_begin, int64_t block_end, int panel_begin,
               int panel_end) {
  for (int64_t block = block_begin; block < block_end; ++block) {
    const int64_t m0 = block * kBlock;
    const int64_t m_end = p.pixels < m0 + kBlock ? p.pixels : m0 + kBlock;
    for (int q = panel_begin; q < panel_end; ++q) {
      const int nv = panelVectors(p.out_channels, q);
      const int mr = rowsFor(nv);
      const int64_t f0 = panelFirst(q);
      // Channels in the panel's last vector: 1..16.
      const int64_t tail = (p.out_channels - f0 < kVector * nv ? p.out_channels - f0 : kVector * nv) -
                           kVector * (nv - 1);
      const __mmask16 last = tail >= kVector ? __mmask16(0xffff) : __mmask16((1u << tail) - 1);
      const float* w = p.packed + f0 * p.in_channels;
      const float* bias = p.bias ? p.bias + f0 : nullptr;
      for (int64_t m = m0; m < m_end; m += mr) {
        const int rows = static_cast<int>(m_end - m < mr ? m_end - m : mr);
        tileFor(nv, rows)(p, p.x + m * p.x_row, w, p.y + m * p.y_row + f0, bias, last);
      }
    }
  }
}

}  // namespace ral::kernels::cpu::tiles
