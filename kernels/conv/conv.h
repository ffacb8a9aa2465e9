// ral_conv: N-d convolution (and transposed convolution) with bias, a fused residual add and a
// fused activation, for every device: the config decoding, the shape check, the entry point and
// the registration table, written once. A device file (conv_<device>.cc) supplies `Impl`, a
// struct with
//   template <int R> static Status conv(ExecutionContext*, const ConvConfig&,
//       const MemRef<float, R>& x, const MemRef<float, R>& w, const MemRef<float, 1>& bias,
//       const MemRef<float, R>& y);
// called once the operands are checked, with x and y as channels-first views ([N, C, D...] and
// [N, F, O...] whatever their memory order), and instantiates the table.
//
//   void conv(ExecutionContext*, MemRef<float, R> x, MemRef<float, R> w, MemRef<float, 1> bias,
//             MemRef<float, R> y, MemRef<int64_t, 1> config, float alpha, float beta)
//     ral_conv___<dev>___pvoid_m<R>df32_m<R>df32_m1df32_m<R>df32_m1di64_f32_f32___void
//     R in 3, 4, 5 (1-, 2- and 3-D convolutions; s = R - 2 spatial dims)
//
// config (int64, exactly 4 + 4s values):
//   [0] s (must equal R - 2), [1] groups (>= 1), [2] activation, [3] flags,
//   [4, 4+s) strides (>= 1), [4+s, 4+2s) dilations (>= 1), [4+2s, 4+3s) pad_begin (>= 0),
//   [4+3s, 4+4s) pad_end (>= 0).
// activation, applied last: 0 none, 1 relu, 2 clip to [alpha, beta] (min(max(v, alpha), beta);
//   NaN bounds are rejected), 3 sigmoid, 4 silu v*sigmoid(v), 5 hardswish v*min(max(v+3,0),6)/6,
//   6 gelu (erf form), 7 gelu (tanh form). alpha and beta are read by clip only.
// flags:
//   bit0 residual: y holds a residual on entry; the result is act(conv + bias + y_in).
//   bit1 constant_filter: w is read-only for the lifetime of the Context (a module constant), so
//        a device may keep a prepared copy keyed by w's address, shape and the config. Without
//        it, weights are read on every call.
//   bit2 channels_last: x and y are given as [N, D..., C] and [N, O..., F]; w keeps its layout.
//   bit3 transposed: a transposed convolution (ONNX ConvTranspose): w is [C, F/groups, K...] and
//        y's spatial sizes are (D-1)*stride - pad_begin - pad_end + dil*(K-1) + 1 +
//        output_padding with 0 <= output_padding < max(stride, dilation).
// Shapes (channels-first): x [N, C, D...], w [F, C/groups, K...] (K >= 1), bias [F] or [0] (no
// bias), y [N, F, O...] with O = floor((D + pad_begin + pad_end - dil*(K-1) - 1) / stride) + 1;
// the padded input must hold the dilated kernel, except that one shorter than it by at most a
// stride gives O = 0 (an empty spatial dim of x, say). C and F are divisible by groups.
// Any strides. An empty batch or output computes nothing; an input without elements (C = 0 or an
// empty spatial dim) gives act(bias [+ y_in]). Every mismatch is an INVALID_ARGUMENT naming the
// operand and the shapes; a configuration the device cannot run is UNSUPPORTED, never a wrong
// result.
//
// Plain functions: thread-safe; device state (prepared primitives, constant filters) lives in
// the Context's resource cache.
#ifndef RAL_KERNELS_CONV_CONV_H_
#define RAL_KERNELS_CONV_CONV_H_

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "kernels/common/kernel_util.h"
#include "ral/api.h"
#include "ral/memref.h"

namespace ral::kernels {

enum class ConvActivation : int {
  kNone = 0,
  kRelu = 1,
  kClip = 2,
  kSigmoid = 3,
  kSilu = 4,
  kHardSwish = 5,
  kGeluErf = 6,
  kGeluTanh = 7,
};
inline constexpr int kConvActivationCount = 8;

inline constexpr int64_t kConvResidual = 1;
inline constexpr int64_t kConvConstantFilter = 2;
inline constexpr int64_t kConvChannelsLast = 4;
inline constexpr int64_t kConvTransposed = 8;
inline constexpr int64_t kConvKnownFlags = 15;

inline constexpr int kConvMaxSpatial = 3;

// The decoded config.
struct ConvConfig {
  int spatial = 0;  // s = R - 2
  int64_t groups = 1;
  ConvActivation activation = ConvActivation::kNone;
  int64_t flags = 0;
  int64_t strides[kConvMaxSpatial] = {};
  int64_t dilations[kConvMaxSpatial] = {};
  int64_t pad_begin[kConvMaxSpatial] = {};
  int64_t pad_end[kConvMaxSpatial] = {};
  float alpha = 0, beta = 0;  // clip bounds
  bool residual() const { return flags & kConvResidual; }
  bool constantFilter() const { return flags & kConvConstantFilter; }
  bool channelsLast() const { return flags & kConvChannelsLast; }
  bool transposed() const { return flags & kConvTransposed; }
};

// "2-D conv, groups 1, strides [1,1], dilations [1,1], pads [0,0]/[0,0], activation 1, flags 0"
// for messages.
inline std::string convConfigString(const ConvConfig& c) {
  std::ostringstream os;
  auto list = [&](const int64_t* v) {
    os << "[";
    for (int i = 0; i < c.spatial; ++i) os << (i ? "," : "") << v[i];
    os << "]";
  };
  os << c.spatial << "-D " << (c.transposed() ? "transposed conv" : "conv") << ", groups "
     << c.groups << ", strides ";
  list(c.strides);
  os << ", dilations ";
  list(c.dilations);
  os << ", pads ";
  list(c.pad_begin);
  os << "/";
  list(c.pad_end);
  os << ", activation " << static_cast<int>(c.activation) << ", flags " << c.flags;
  return os.str();
}

// The activation on one value, in double: the reference for devices that fill an output without
// running a convolution (an input without elements).
inline double convActivate(const ConvConfig& c, double v) {
  switch (c.activation) {
    case ConvActivation::kNone:
      return v;
    case ConvActivation::kRelu:
      return v > 0 ? v : 0;
    case ConvActivation::kClip:
      return std::fmin(std::fmax(v, c.alpha), c.beta);
    case ConvActivation::kSigmoid:
      return 1 / (1 + std::exp(-v));
    case ConvActivation::kSilu:
      return v / (1 + std::exp(-v));
    case ConvActivation::kHardSwish:
      return v * std::fmin(std::fmax(v + 3, 0.0), 6.0) / 6;
    case ConvActivation::kGeluErf:
      return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    case ConvActivation::kGeluTanh:
      return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  }
  return v;
}

// [N, D..., C] seen as [N, C, D...]: the same memory, sizes and strides permuted.
template <typename T, int R>
MemRef<T, R> channelsFirstView(const MemRef<T, R>& m) {
  MemRef<T, R> v = m;
  v.sizes[1] = m.sizes[R - 1];
  v.strides[1] = m.strides[R - 1];
  for (int d = 2; d < R; ++d) {
    v.sizes[d] = m.sizes[d - 1];
    v.strides[d] = m.strides[d - 1];
  }
  return v;
}

namespace conv_detail {

template <typename T, int R>
std::string cfShape(const MemRef<T, R>& m, bool channels_last) {
  return channels_last ? shapeString(m) + " (channels-last; channels-first " +
                             shapeString(channelsFirstView(m)) + ")"
                       : shapeString(m);
}

// Element counts that overflow int64 are refused before anything multiplies sizes.
template <typename T, int R>
Status checkElementCount(const MemRef<T, R>& m, const char* what, const char* kernel) {
  int64_t n = 1;
  for (int d = 0; d < R; ++d)
    if (__builtin_mul_overflow(n, m.sizes[d], &n))
      return invalidArgument(kernel, ": ", what, " ", shapeString(m), " has too many elements");
  return Status();
}

}  // namespace conv_detail

// Decodes and checks config and every operand of ral_conv; on success *xc and *yc are the
// channels-first views of x and y. ral_qconv (qconv.h) shares it: its element types, its name
// and `extra` config values after ral_conv's, which it checks itself.
template <typename TX, typename TW, typename TY, int R>
StatusOr<ConvConfig> checkConv(const MemRef<TX, R>& x, const MemRef<TW, R>& w,
                               const MemRef<float, 1>& bias, const MemRef<TY, R>& y,
                               const MemRef<int64_t, 1>& config, float alpha, float beta,
                               MemRef<TX, R>* xc, MemRef<TY, R>* yc,
                               const char* kernel = "ral_conv", int extra = 0) {
  static_assert(R >= 3 && R <= 2 + kConvMaxSpatial, "1-, 2- or 3-D convolutions");
  constexpr int s = R - 2;
  RAL_RETURN_IF_ERROR(checkMemRef(config, kernel, "config"));
  if (config.sizes[0] != 4 + 4 * s + extra)
    return invalidArgument(kernel, ": config has ", config.sizes[0], " values, expected ",
                           4 + 4 * s + extra, " for rank-", R, " operands (", s,
                           " spatial dims)");
  auto cfg = [&](int i) { return config.data()[i * config.strides[0]]; };
  ConvConfig c;
  if (cfg(0) != s)
    return invalidArgument(kernel, ": config[0] (spatial dims) is ", cfg(0), " but rank-", R,
                           " operands have ", s);
  c.spatial = s;
  c.groups = cfg(1);
  if (c.groups < 1 || c.groups > INT_MAX)
    return invalidArgument(kernel, ": groups (config[1]) is ", c.groups, ", expected 1..", INT_MAX);
  const int64_t act = cfg(2);
  if (act < 0 || act >= kConvActivationCount)
    return invalidArgument(kernel, ": unknown activation ", act,
                           " (config[2]; 0 none, 1 relu, 2 clip, 3 sigmoid, 4 silu, 5 hardswish, "
                           "6 gelu erf, 7 gelu tanh)");
  c.activation = static_cast<ConvActivation>(act);
  c.flags = cfg(3);
  if (c.flags & ~kConvKnownFlags)
    return invalidArgument(kernel, ": unknown flag bits ", c.flags & ~kConvKnownFlags, " in flags ",
                           c.flags,
                           " (config[3]; bit0 residual, bit1 constant_filter, bit2 "
                           "channels_last, bit3 transposed)");
  const char* names[] = {"stride", "dilation", "pad_begin", "pad_end"};
  int64_t* fields[] = {c.strides, c.dilations, c.pad_begin, c.pad_end};
  for (int f = 0; f < 4; ++f) {
    const int64_t lo = f < 2 ? 1 : 0;
    for (int i = 0; i < s; ++i) {
      const int64_t v = cfg(4 + f * s + i);
      // Bounded so that every size formula below stays far from int64 overflow.
      if (v < lo || v > INT_MAX)
        return invalidArgument(kernel, ": ", names[f], " ", v, " of spatial dim ", i, " (config[",
                               4 + f * s + i, "]) is out of range ", lo, "..", INT_MAX);
      fields[f][i] = v;
    }
  }
  if (c.activation == ConvActivation::kClip && (std::isnan(alpha) || std::isnan(beta)))
    return invalidArgument(kernel, ": clip bounds [", alpha, ", ", beta, "] include NaN");
  c.alpha = alpha;
  c.beta = beta;

  RAL_RETURN_IF_ERROR(checkMemRef(x, kernel, "x"));
  RAL_RETURN_IF_ERROR(checkMemRef(w, kernel, "w"));
  RAL_RETURN_IF_ERROR(checkMemRef(bias, kernel, "bias"));
  RAL_RETURN_IF_ERROR(checkMemRef(y, kernel, "y"));
  RAL_RETURN_IF_ERROR(conv_detail::checkElementCount(x, "x", kernel));
  RAL_RETURN_IF_ERROR(conv_detail::checkElementCount(w, "w", kernel));
  RAL_RETURN_IF_ERROR(conv_detail::checkElementCount(y, "y", kernel));
  const bool cl = c.channelsLast();
  *xc = cl ? channelsFirstView(x) : x;
  *yc = cl ? channelsFirstView(y) : y;
  // Shapes as text for the messages, built only when one is needed (not on every call).
  auto xs = [&] { return conv_detail::cfShape(x, cl); };
  auto ys = [&] { return conv_detail::cfShape(y, cl); };
  const int64_t n = xc->sizes[0], ch = xc->sizes[1], g = c.groups;
  if (ch % g != 0)
    return invalidArgument(kernel, ": x ", xs(), " has ", ch, " channels, not divisible by groups ",
                           g);
  // Output channels, and w's expected shape in channels.
  int64_t f = 0, w0 = 0, w1 = 0;
  if (c.transposed()) {
    w0 = ch;
    w1 = w.sizes[1];
    f = w1 * g;
  } else {
    f = w.sizes[0];
    w0 = f;
    w1 = ch / g;
    if (f % g != 0)
      return invalidArgument(kernel, ": w ", shapeString(w), " has ", f,
                             " output channels, not divisible by groups ", g);
  }
  if (w.sizes[0] != w0 || w.sizes[1] != w1)
    return invalidArgument(kernel, ": w is ", shapeString(w), " but x is ", xs(), " with groups ", g,
                           ": expected w [", w0, "x", w1, "x K...] (",
                           c.transposed() ? "[C, F/groups, K...]" : "[F, C/groups, K...]", ")");
  for (int d = 0; d < s; ++d)
    if (w.sizes[2 + d] < 1 || w.sizes[2 + d] > INT_MAX)
      return invalidArgument(kernel, ": w ", shapeString(w), " has kernel size ", w.sizes[2 + d],
                             " in spatial dim ", d, ", expected 1..", INT_MAX);
  if (bias.sizes[0] != 0 && bias.sizes[0] != f)
    return invalidArgument(kernel, ": bias is ", shapeString(bias), " but w ", shapeString(w),
                           " gives ", f, " output channels: expected [0] (no bias) or [", f, "]");
  if (yc->sizes[0] != n || yc->sizes[1] != f)
    return invalidArgument(kernel, ": y is ", ys(), " but x ", xs(), " and w ", shapeString(w),
                           " give batch ", n, " and ", f, " output channels");
  for (int d = 0; d < s; ++d) {
    const int64_t in = xc->sizes[2 + d], k = w.sizes[2 + d], out = yc->sizes[2 + d];
    const int64_t extent = c.dilations[d] * (k - 1) + 1;
    const int64_t pads = c.pad_begin[d] + c.pad_end[d];
    if (c.transposed()) {
      const int64_t base = (in - 1) * c.strides[d] - pads + extent;
      const int64_t limit = std::max(c.strides[d], c.dilations[d]);
      const int64_t output_padding = out - base;
      if (out == 0 && base <= 0) continue;  // nothing to compute
      if (output_padding < 0 || output_padding >= limit)
        return invalidArgument(kernel, ": y is ", ys(), " but transposed x ", xs(), " and w ",
                               shapeString(w), " (", convConfigString(c), ") give spatial dim ", d,
                               " = ", base, " + output_padding with 0 <= output_padding < ", limit,
                               ", not ", out);
    } else {
      // A padded input shorter than the kernel by at most one stride has no output position
      // (ONNX's floor): an empty y (e.g. a linear layer's rows, an empty spatial dim).
      if (out == 0 && in + pads < extent && extent - (in + pads) <= c.strides[d]) continue;
      if (in + pads < extent)
        return invalidArgument(kernel, ": the dilated kernel (extent ", extent, ") of spatial dim ",
                               d, " is larger than x's padded size ", in + pads, " (x ", xs(), ", w ",
                               shapeString(w), ", ", convConfigString(c), ")");
      const int64_t want = (in + pads - extent) / c.strides[d] + 1;
      if (out != want)
        return invalidArgument(kernel, ": y is ", ys(), " but x ", xs(), " and w ", shapeString(w),
                               " (", convConfigString(c), ") give spatial dim ", d, " = ", want,
                               ", not ", out);
    }
  }
  return c;
}

template <class Impl, int R>
void convKernel(ExecutionContext* ctx, MemRef<float, R> x, MemRef<float, R> w,
                MemRef<float, 1> bias, MemRef<float, R> y, MemRef<int64_t, 1> config, float alpha,
                float beta) {
  MemRef<float, R> xc, yc;
  const auto c = checkConv(x, w, bias, y, config, alpha, beta, &xc, &yc);
  RAL_SIGNAL_IF_ERROR(ctx, c.status());
  RAL_SIGNAL_IF_ERROR(ctx, Impl::template conv<R>(ctx, *c, xc, w, bias, yc));
}

}  // namespace ral::kernels

// The ranks of ral_conv: 1-, 2- and 3-D convolutions.
#define RAL_KERNEL_CONV_RANKS(X) X(3) X(4) X(5)

// The registration table of device `Impl` named `kDevice` (both defined where this is used).
#define RAL_REGISTER_CONV(R) RAL_API("ral_conv", kDevice, ::ral::kernels::convKernel<Impl, R>);

#endif  // RAL_KERNELS_CONV_CONV_H_
