// ral_qconv: a quantized N-d convolution (8-bit activations and weights, 32-bit integer sums)
// with a bias, an activation and requantization, for the devices that have one (the CPU, on
// oneDNN's int8 kernels). Shares ral_conv's config layout, shape checks and activations
// (conv.h); a device file (qconv_<device>.cc) supplies `Impl` with
//   template <typename Y, int R> static Status qconv(ExecutionContext*, const QConvConfig&,
//       const MemRef<int8_t, R>& x, const MemRef<int8_t, R>& w, const MemRef<float, 1>& bias,
//       const MemRef<float, 1>& scales, const MemRef<Y, R>& y);
// called once the operands are checked (x and y as channels-first views).
//
//   void qconv(ExecutionContext*, MemRef<int8_t, R> x, MemRef<int8_t, R> w,
//              MemRef<float, 1> bias, MemRef<Y, R> y, MemRef<int64_t, 1> config,
//              MemRef<float, 1> scales, float alpha, float beta)
//     ral_qconv___<dev>___pvoid_m<R>di8_m<R>di8_m1df32_m<R>d<y>_m1di64_m1df32_f32_f32___void
//     R in 3, 4, 5; Y int8_t (y i8) or float (y f32)
//
// config (int64, 7 + 4s values): ral_conv's 4 + 4s (conv.h; flags may be constant_filter and
// channels_last, not residual or transposed), then
//   [4+4s] x_zero_point, [5+4s] y_zero_point, [6+4s] qflags: bit0 x holds uint8 (else int8),
//   bit1 y holds uint8 (else int8; y f32: 0, with y_zero_point 0).
// For output channel f (scales has one value for all, or one per output channel):
//   acc = sum over the window of (x - x_zero_point) * w, in int32; padding contributes nothing
//         (it stands for x_zero_point, a real zero);
//   v   = act(scales[f] * (acc + bias[f])) in f32 (bias [0]: no bias; act as in conv.h);
//   y   = v (f32), or saturate(round_half_even(v + y_zero_point)) to uint8 / int8.
// Zero points are in the range of their type; scales finite. An x without elements gives
// y = the above with acc = 0. Every mismatch is an INVALID_ARGUMENT naming the operand.
//
// Plain functions: thread-safe; device state (primitives, reordered constant filters) lives in
// the Context's resource cache.
#ifndef RAL_KERNELS_CONV_QCONV_H_
#define RAL_KERNELS_CONV_QCONV_H_

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/conv/conv.h"

namespace ral::kernels {

inline constexpr int64_t kQConvXUnsigned = 1;
inline constexpr int64_t kQConvYUnsigned = 2;

struct QConvConfig {
  ConvConfig conv;
  int32_t x_zero_point = 0, y_zero_point = 0;
  bool x_unsigned = false, y_unsigned = false;
};

// Decodes and checks config and every operand of ral_qconv; *xc and *yc as in checkConv.
template <typename Y, int R>
StatusOr<QConvConfig> checkQConv(const MemRef<int8_t, R>& x, const MemRef<int8_t, R>& w,
                                 const MemRef<float, 1>& bias, const MemRef<Y, R>& y,
                                 const MemRef<int64_t, 1>& config, const MemRef<float, 1>& scales,
                                 float alpha, float beta, MemRef<int8_t, R>* xc, MemRef<Y, R>* yc) {
  constexpr const char* kernel = "ral_qconv";
  constexpr int s = R - 2;
  QConvConfig q;
  RAL_ASSIGN_OR_RETURN(q.conv, checkConv(x, w, bias, y, config, alpha, beta, xc, yc, kernel, 3));
  if (q.conv.residual() || q.conv.transposed())
    return invalidArgument(kernel, ": flags ", q.conv.flags,
                           " ask for a residual or a transposed convolution, which ral_qconv "
                           "does not do (config[3])");
  auto cfg = [&](int i) { return config.data()[i * config.strides[0]]; };
  const int64_t x_zp = cfg(4 + 4 * s), y_zp = cfg(5 + 4 * s), qflags = cfg(6 + 4 * s);
  if (qflags & ~(kQConvXUnsigned | kQConvYUnsigned))
    return invalidArgument(kernel, ": unknown qflags bits in ", qflags, " (config[", 6 + 4 * s,
                           "]; bit0 x uint8, bit1 y uint8)");
  q.x_unsigned = qflags & kQConvXUnsigned;
  q.y_unsigned = qflags & kQConvYUnsigned;
  auto inRange = [](int64_t v, bool is_unsigned) {
    return is_unsigned ? v >= 0 && v <= 255 : v >= -128 && v <= 127;
  };
  if (!inRange(x_zp, q.x_unsigned))
    return invalidArgument(kernel, ": x_zero_point ", x_zp, " is out of the range of ",
                           q.x_unsigned ? "uint8" : "int8");
  if constexpr (std::is_same_v<Y, float>) {
    if (y_zp != 0 || q.y_unsigned)
      return invalidArgument(kernel, ": an f32 y takes y_zero_point 0 and no uint8 flag, got ",
                             y_zp, " and qflags ", qflags);
  } else if (!inRange(y_zp, q.y_unsigned)) {
    return invalidArgument(kernel, ": y_zero_point ", y_zp, " is out of the range of ",
                           q.y_unsigned ? "uint8" : "int8");
  }
  q.x_zero_point = static_cast<int32_t>(x_zp);
  q.y_zero_point = static_cast<int32_t>(y_zp);
  RAL_RETURN_IF_ERROR(checkMemRef(scales, kernel, "scales"));
  const int64_t filters = w.sizes[0];
  if (scales.sizes[0] != 1 && scales.sizes[0] != filters)
    return invalidArgument(kernel, ": scales is ", shapeString(scales), " but w ", shapeString(w),
                           " gives ", filters, " output channels: expected [1] or [", filters, "]");
  for (int64_t i = 0; i < scales.sizes[0]; ++i)
    if (!std::isfinite(scales.data()[i * scales.strides[0]]))
      return invalidArgument(kernel, ": scales[", i, "] is not finite");
  return q;
}

template <class Impl, typename Y, int R>
void qconvKernel(ExecutionContext* ctx, MemRef<int8_t, R> x, MemRef<int8_t, R> w,
                 MemRef<float, 1> bias, MemRef<Y, R> y, MemRef<int64_t, 1> config,
                 MemRef<float, 1> scales, float alpha, float beta) {
  MemRef<int8_t, R> xc;
  MemRef<Y, R> yc;
  const auto q = checkQConv(x, w, bias, y, config, scales, alpha, beta, &xc, &yc);
  RAL_SIGNAL_IF_ERROR(ctx, q.status());
  const Status status = Impl::template qconv<Y, R>(ctx, *q, xc, w, bias, scales, yc);
  RAL_SIGNAL_IF_ERROR(ctx, status);
}

// The value of one output element from its int32 sum, in double (the reference for elements no
// input reaches, and for tests).
template <typename Y>
Y qconvOutput(const QConvConfig& q, double scale, double acc_plus_bias) {
  const double v =
      convActivate(q.conv, static_cast<double>(static_cast<float>(scale * acc_plus_bias)));
  if constexpr (std::is_same_v<Y, float>) {
    return static_cast<float>(v);
  } else {
    const double lo = q.y_unsigned ? 0 : -128, hi = q.y_unsigned ? 255 : 127;
    const double r = std::fmin(std::fmax(std::nearbyint(v + q.y_zero_point), lo), hi);
    return static_cast<Y>(static_cast<int32_t>(r));
  }
}

}  // namespace ral::kernels

// The registration table of device `Impl` named `kDevice` (both defined where this is used).
#define RAL_REGISTER_QCONV(R)                                                  \
  RAL_API("ral_qconv", kDevice, ::ral::kernels::qconvKernel<Impl, int8_t, R>); \
  RAL_API("ral_qconv", kDevice, ::ral::kernels::qconvKernel<Impl, float, R>);

#endif  // RAL_KERNELS_CONV_QCONV_H_
