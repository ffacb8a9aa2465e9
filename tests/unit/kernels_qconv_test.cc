// ral_qconv against an integer reference: uint8 and int8 activations with zero points, per
// channel and per tensor scales, padding (which counts as the zero point), strides, dilations,
// groups and depthwise, relu and clip, int8 / uint8 / f32 results, channels-first (reordered)
// and channels-last operands, strided views, constant filters called twice, an input without
// channels; bad configs are context errors and the next call is correct.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/conv/qconv.h"
#include "ral/context.h"
#include "tests/support/kernels_test_util.h"

namespace ral::testing {
namespace {

using kernels::kConvChannelsLast;
using kernels::kConvConstantFilter;
using kernels::kConvResidual;
using kernels::kQConvXUnsigned;
using kernels::kQConvYUnsigned;

// One case: sizes channels-first ([N, C, D...], w [F, C/groups, K...]), s spatial dims (1 or 2).
struct QCase {
  int s = 2;
  int64_t n = 2, c = 4, f = 6, groups = 1;
  std::array<int64_t, 2> in = {5, 7}, k = {3, 3}, stride = {1, 1}, dil = {1, 1}, pb = {1, 1},
                         pe = {1, 1};
  bool x_unsigned = true, y_unsigned = true, channels_last = false, constant = false;
  bool bias = true, per_channel = true;
  int64_t x_zp = 128, y_zp = 3;
  int act = 0;  // 0 none, 1 relu, 2 clip
  float alpha = 0, beta = 0;
  Layout layout = Layout::kDense;

  int64_t out(int d) const {
    return (in[d] + pb[d] + pe[d] - dil[d] * (k[d] - 1) - 1) / stride[d] + 1;
  }
};

template <int R>
std::array<int64_t, R> shape(int64_t a, int64_t b, const std::array<int64_t, 2>& sp, bool last) {
  std::array<int64_t, R> r{};
  r[0] = a;
  if (last) {
    for (int d = 0; d < R - 2; ++d) r[1 + d] = sp[d];
    r[R - 1] = b;
  } else {
    r[1] = b;
    for (int d = 0; d < R - 2; ++d) r[2 + d] = sp[d];
  }
  return r;
}

// The element (n, c, p0, p1) of a channels-first or channels-last buffer.
template <typename T, int R>
T& element(const Buffer<T, R>& b, bool last, int64_t n, int64_t c, int64_t p0, int64_t p1) {
  const int64_t sp[2] = {p0, p1};
  int64_t off = n * b.view.strides[0];
  if (last) {
    for (int d = 0; d < R - 2; ++d) off += sp[d] * b.view.strides[1 + d];
    off += c * b.view.strides[R - 1];
  } else {
    off += c * b.view.strides[1];
    for (int d = 0; d < R - 2; ++d) off += sp[d] * b.view.strides[2 + d];
  }
  return b.view.data()[off];
}

template <typename Y, int R>
struct QOperands {
  QCase cs;
  Buffer<int8_t, R> x, w;
  Buffer<Y, R> y;
  Buffer<float, 1> bias, scales;
  Buffer<int64_t, 1> config;

  QOperands(const QCase& c, std::mt19937& rng)
      : cs(c),
        x(shape<R>(c.n, c.c, c.in, c.channels_last), c.layout),
        w(shape<R>(c.f, c.c / c.groups, c.k, false), c.layout),
        y(shape<R>(c.n, c.f, {c.out(0), c.s > 1 ? c.out(1) : 1}, c.channels_last), c.layout),
        bias({c.bias ? c.f : 0}, Layout::kDense),
        scales({c.per_channel ? c.f : 1}, Layout::kDense),
        config({7 + 4 * (R - 2)}, Layout::kDense) {
    std::uniform_int_distribution<int> byte(0, 255), weight(-127, 127);
    std::uniform_real_distribution<float> real(-1, 1), scale(0.002f, 0.02f);
    for (int64_t i = 0; i < x.numel(); ++i) x.at(i) = static_cast<int8_t>(byte(rng));
    for (int64_t i = 0; i < w.numel(); ++i) w.at(i) = static_cast<int8_t>(weight(rng));
    for (int64_t i = 0; i < y.numel(); ++i) y.at(i) = static_cast<Y>(77);  // overwritten
    for (int64_t i = 0; i < bias.numel(); ++i) bias.at(i) = real(rng) * 200;
    for (int64_t i = 0; i < scales.numel(); ++i) scales.at(i) = scale(rng);
    const int s = R - 2;
    config.at(0) = s;
    config.at(1) = c.groups;
    config.at(2) = c.act;
    config.at(3) =
        (c.constant ? kConvConstantFilter : 0) | (c.channels_last ? kConvChannelsLast : 0);
    for (int d = 0; d < s; ++d) {
      config.at(4 + d) = c.stride[d];
      config.at(4 + s + d) = c.dil[d];
      config.at(4 + 2 * s + d) = c.pb[d];
      config.at(4 + 3 * s + d) = c.pe[d];
    }
    config.at(4 + 4 * s) = c.x_zp;
    config.at(5 + 4 * s) = c.y_zp;
    config.at(6 + 4 * s) =
        (c.x_unsigned ? kQConvXUnsigned : 0) | (c.y_unsigned ? kQConvYUnsigned : 0);
  }

  Status call(Context& context) {
    return callCpu(context, "ral_qconv", x.view, w.view, bias.view, y.view, config.view,
                   scales.view, cs.alpha, cs.beta);
  }

  int64_t xAt(int64_t n, int64_t c, int64_t p0, int64_t p1) const {
    const int8_t v = element(x, cs.channels_last, n, c, p0, p1);
    return cs.x_unsigned ? static_cast<uint8_t>(v) : v;
  }
  double yAt(int64_t n, int64_t f, int64_t p0, int64_t p1) const {
    const Y v = element(y, cs.channels_last, n, f, p0, p1);
    if constexpr (std::is_same_v<Y, float>) return v;
    return cs.y_unsigned ? static_cast<uint8_t>(v) : static_cast<int8_t>(v);
  }

  // Every y against the integer sum, scaled and rounded in f32 in the kernel's order.
  void expectMatches() const {
    const int64_t fg = cs.f / cs.groups, cg = cs.c / cs.groups;
    const int64_t o1 = cs.s > 1 ? cs.out(1) : 1, k1 = cs.s > 1 ? cs.k[1] : 1;
    int64_t exact = 0, total = 0;
    for (int64_t n = 0; n < cs.n; ++n)
      for (int64_t f = 0; f < cs.f; ++f)
        for (int64_t p0 = 0; p0 < cs.out(0); ++p0)
          for (int64_t p1 = 0; p1 < o1; ++p1) {
            int64_t acc = 0;
            const int64_t g = f / fg;
            for (int64_t ci = 0; ci < cg; ++ci)
              for (int64_t a = 0; a < cs.k[0]; ++a)
                for (int64_t bb = 0; bb < k1; ++bb) {
                  const int64_t i0 = p0 * cs.stride[0] - cs.pb[0] + a * cs.dil[0];
                  const int64_t i1 = cs.s > 1 ? p1 * cs.stride[1] - cs.pb[1] + bb * cs.dil[1] : 0;
                  if (i0 < 0 || i0 >= cs.in[0] || (cs.s > 1 && (i1 < 0 || i1 >= cs.in[1])))
                    continue;  // padding: a real zero
                  const int64_t wv = element(w, false, f, ci, a, bb);
                  acc += (xAt(n, g * cg + ci, i0, i1) - cs.x_zp) * wv;
                }
            const float b = cs.bias ? bias.at(f) : 0.0f;
            float v = scales.at(cs.per_channel ? f : 0) * (static_cast<float>(acc) + b);
            if (cs.act == 1) v = std::max(v, 0.0f);
            if (cs.act == 2) v = std::min(std::max(v, cs.alpha), cs.beta);
            const double got = yAt(n, f, p0, p1);
            ++total;
            if constexpr (std::is_same_v<Y, float>) {
              ASSERT_NEAR(got, v, 1e-5 * std::max(1.0f, std::abs(v)))
                  << "y[" << n << "," << f << "," << p0 << "," << p1 << "]";
              ++exact;
            } else {
              const double lo = cs.y_unsigned ? 0 : -128, hi = cs.y_unsigned ? 255 : 127;
              const double want =
                  std::min(std::max(std::nearbyint(static_cast<double>(v + cs.y_zp)), lo), hi);
              // A value at a rounding midpoint may go either way (f32 rounding of the product).
              ASSERT_LE(std::abs(got - want), 1)
                  << "y[" << n << "," << f << "," << p0 << "," << p1 << "] from v = " << v;
              exact += got == want;
            }
          }
    EXPECT_GE(exact, total - total / 100) << exact << " of " << total << " exact";
  }
};

template <typename Y, int R>
void check(Context& context, const QCase& cs, unsigned seed = 1) {
  std::mt19937 rng(seed);
  QOperands<Y, R> ops(cs, rng);
  const Status s = ops.call(context);
  ASSERT_TRUE(s.ok()) << s;
  ops.expectMatches();
}

class QConvTest : public ::testing::Test {
 protected:
  Context context;
};

TEST_F(QConvTest, Uint8WithZeroPointsPaddingAndRelu) {
  QCase cs;
  cs.act = 1;
  check<int8_t, 4>(context, cs);
}

TEST_F(QConvTest, Int8ChannelsLastGroupsStridesDilationsClip) {
  QCase cs;
  cs.x_unsigned = false;
  cs.y_unsigned = false;
  cs.x_zp = -5;
  cs.y_zp = -7;
  cs.channels_last = true;
  cs.c = 6;
  cs.f = 4;
  cs.groups = 2;
  cs.in = {9, 8};
  cs.stride = {2, 1};
  cs.dil = {1, 2};
  cs.pb = {0, 2};
  cs.pe = {1, 0};
  cs.act = 2;
  cs.alpha = -20;
  cs.beta = 40;
  check<int8_t, 4>(context, cs);
}

TEST_F(QConvTest, DepthwiseToF32WithOneScaleAndNoBias) {
  QCase cs;
  cs.c = cs.f = cs.groups = 8;
  cs.bias = false;
  cs.per_channel = false;
  cs.y_unsigned = false;
  cs.y_zp = 0;
  check<float, 4>(context, cs);
}

TEST_F(QConvTest, OneDimensionalStridedViewsAndAConstantFilterTwice) {
  QCase cs;
  cs.s = 1;
  cs.in = {11, 1};
  cs.k = {4, 1};
  cs.pb = {2, 0};
  cs.pe = {1, 0};
  cs.layout = Layout::kPadded;
  cs.constant = true;
  check<int8_t, 3>(context, cs, 1);
  check<int8_t, 3>(context, cs, 1);  // the kept filter
  cs.layout = Layout::kColumnMajor;
  check<int8_t, 3>(context, cs, 2);
}

TEST_F(QConvTest, BatchOfOneAndOneByOne) {
  QCase cs;
  cs.n = 1;
  cs.k = {1, 1};
  cs.pb = cs.pe = {0, 0};
  cs.c = 16;
  cs.f = 3;
  check<int8_t, 4>(context, cs);
}

TEST_F(QConvTest, InputWithoutChannelsGivesTheBias) {
  std::mt19937 rng(3);
  QCase cs;
  cs.c = 0;
  cs.act = 1;
  QOperands<int8_t, 4> ops(cs, rng);
  ASSERT_TRUE(ops.call(context).ok());
  ops.expectMatches();
}

TEST_F(QConvTest, BadConfigsAreErrorsAndTheNextCallIsCorrect) {
  std::mt19937 rng(4);
  QCase cs;
  {
    QOperands<int8_t, 4> ops(cs, rng);
    ops.config.at(4 + 8) = 300;  // x_zero_point out of uint8's range
    const Status s = ops.call(context);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("x_zero_point 300"), std::string::npos) << s;
  }
  {
    QOperands<int8_t, 4> ops(cs, rng);
    ops.config.at(3) = kConvResidual;
    const Status s = ops.call(context);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
  }
  {
    QCase wrong = cs;
    wrong.per_channel = false;
    QOperands<int8_t, 4> ops(wrong, rng);
    Buffer<float, 1> two({2}, Layout::kDense);
    two.at(0) = two.at(1) = 0.01f;
    const Status s = callCpu(context, "ral_qconv", ops.x.view, ops.w.view, ops.bias.view,
                             ops.y.view, ops.config.view, two.view, 0.0f, 0.0f);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("scales"), std::string::npos) << s;
  }
  {
    QOperands<float, 4> ops(cs, rng);  // an f32 y with a y zero point
    const Status s = ops.call(context);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
  }
  check<int8_t, 4>(context, cs);
}

}  // namespace
}  // namespace ral::testing
