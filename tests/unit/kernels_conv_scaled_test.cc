// ral_conv_scaled against a naive double-precision reference of conv(x * scale) and against
// ral_conv on the scaled input computed here: pointwise convolutions the tiles take (channel
// counts that are not whole vectors, several panels, batches, size-1 and empty dims, every
// activation, residuals, padded and every-other-channel operands, channels-first and
// channels-last) and convolutions the oneDNN path takes (3x3, strided, grouped, GELU, filters past
// the tiles' bound); a scale of the wrong shape is a context error and the next call is correct.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "ral/context.h"
#include "tests/support/conv_cases.h"
#include "tests/support/kernels_test_util.h"

namespace ral::testing {
namespace {

struct ScaledCase {
  int64_t n = 2, c = 20, f = 36, h = 5, w = 7, k = 1, stride = 1, pad = 0, groups = 1;
  int act = 0;
  bool residual = false, channels_last = true, bias = true;
  Store xs = Store::kDense, ys = Store::kDense, ss = Store::kDense;
  int64_t p() const { return (h + 2 * pad - k) / stride + 1; }
  int64_t q() const { return (w + 2 * pad - k) / stride + 1; }
  std::string name() const {
    return "n" + std::to_string(n) + " c" + std::to_string(c) + " f" + std::to_string(f) + " " +
           std::to_string(h) + "x" + std::to_string(w) + " k" + std::to_string(k) + " s" +
           std::to_string(stride) + " g" + std::to_string(groups) + " act" + std::to_string(act) +
           (residual ? " residual" : "") + (channels_last ? " nhwc" : " nchw") + " x " +
           storeName(xs) + " y " + storeName(ys) + " scale " + storeName(ss);
  }
};

// Operands in the layout the case asks for; index helpers take channels-first indices.
struct Operands {
  ScaledCase cs;
  HostTensor<4> x, scale, w, y;
  HostTensor<1> bias;
  Buffer<int64_t, 1> config;
  std::vector<double> y_in;

  static std::array<int64_t, 4> act(const ScaledCase& c, int64_t ch, int64_t d1, int64_t d2) {
    return c.channels_last ? std::array<int64_t, 4>{c.n, d1, d2, ch}
                           : std::array<int64_t, 4>{c.n, ch, d1, d2};
  }
  Operands(const ScaledCase& c, std::mt19937& rng)
      : cs(c),
        x(act(c, c.c, c.h, c.w), c.xs, c.channels_last ? 3 : 1),
        scale(act(c, c.c, 1, 1), c.ss, c.channels_last ? 3 : 1),
        w({c.f, c.c / c.groups, c.k, c.k}, Store::kDense, 1),
        y(act(c, c.f, c.p(), c.q()), c.ys, c.channels_last ? 3 : 1),
        bias({c.bias ? c.f : 0}, Store::kDense, 0),
        config({12}, Layout::kDense) {
    x.fill(rng);
    scale.fill(rng, 0, 1);  // a sigmoid's range
    w.fill(rng);
    bias.fill(rng);
    y.fill(rng);
    for (int64_t i = 0; i < y.numel(); ++i) y_in.push_back(y.view.at(y.index(i)));
    const int64_t values[12] = {
        2,        c.groups, c.act, (c.residual ? 1 : 0) | (c.channels_last ? 4 : 0),
        c.stride, c.stride, 1,     1,
        c.pad,    c.pad,    c.pad, c.pad};
    for (int i = 0; i < 12; ++i) config.at(i) = values[i];
  }

  // Channels-first element accessors over the stored layout.
  float& xAt(int64_t n, int64_t ch, int64_t i, int64_t j) const {
    return cs.channels_last ? x.view.at({n, i, j, ch}) : x.view.at({n, ch, i, j});
  }
  float sAt(int64_t n, int64_t ch) const {
    return cs.channels_last ? scale.view.at({n, 0, 0, ch}) : scale.view.at({n, ch, 0, 0});
  }
  int64_t yIndex(int64_t n, int64_t ch, int64_t i, int64_t j) const {  // into y_in (row-major)
    const auto& s = y.view.sizes;
    return cs.channels_last ? ((n * s[1] + i) * s[2] + j) * s[3] + ch
                            : ((n * s[1] + ch) * s[2] + i) * s[3] + j;
  }
  float yAt(int64_t n, int64_t ch, int64_t i, int64_t j) const {
    return cs.channels_last ? y.view.at({n, i, j, ch}) : y.view.at({n, ch, i, j});
  }

  Status call(Context& context) {
    return callCpu(context, "ral_conv_scaled", x.view, scale.view, w.view, bias.view, y.view,
                   config.view, -0.5f, 0.75f);
  }

  // conv(x * scale) in double, the product rounded to f32 as the kernel documents.
  double reference(int64_t n, int64_t o, int64_t i, int64_t j) const {
    const ScaledCase& c = cs;
    const int64_t per_group = c.c / c.groups, g = o / (c.f / c.groups);
    double v = c.bias ? bias.view.at({o}) : 0.0;
    for (int64_t m = 0; m < per_group; ++m) {
      const int64_t ch = g * per_group + m;
      for (int64_t a = 0; a < c.k; ++a)
        for (int64_t b = 0; b < c.k; ++b) {
          const int64_t ii = i * c.stride - c.pad + a, jj = j * c.stride - c.pad + b;
          if (ii < 0 || ii >= c.h || jj < 0 || jj >= c.w) continue;
          const float scaled = xAt(n, ch, ii, jj) * sAt(n, ch);
          v += double(scaled) * w.view.at({o, m, a, b});
        }
    }
    if (c.residual) v += y_in[yIndex(n, o, i, j)];
    return referenceActivation(c.act, v, -0.5, 0.75);
  }

  void expectMatchesReference() const {
    double worst = 0;
    std::string where;
    for (int64_t n = 0; n < cs.n; ++n)
      for (int64_t o = 0; o < cs.f; ++o)
        for (int64_t i = 0; i < cs.p(); ++i)
          for (int64_t j = 0; j < cs.q(); ++j) {
            const double want = reference(n, o, i, j), got = yAt(n, o, i, j);
            const double err = std::abs(got - want) / (1 + std::abs(want));
            if (!(err <= worst)) {
              worst = err;
              where = "[" + std::to_string(n) + "," + std::to_string(o) + "," + std::to_string(i) +
                      "," + std::to_string(j) + "] is " + std::to_string(got) + ", expected " +
                      std::to_string(want);
            }
          }
    EXPECT_LE(worst, 2e-5) << cs.name() << ": " << where;
  }
};

// ral_conv on x * scale computed here, into a copy of y's storage.
std::vector<float> convOfScaled(Context& context, Operands& ops) {
  HostTensor<4> scaled(
      {ops.x.view.sizes[0], ops.x.view.sizes[1], ops.x.view.sizes[2], ops.x.view.sizes[3]},
      Store::kDense, 1);
  const bool cl = ops.cs.channels_last;
  for (int64_t i = 0; i < scaled.numel(); ++i) {
    auto idx = scaled.index(i);
    const int64_t n = idx[0], ch = cl ? idx[3] : idx[1];
    scaled.view.at(idx) = ops.x.view.at(idx) * ops.sAt(n, ch);
  }
  HostTensor<4> y2(
      {ops.y.view.sizes[0], ops.y.view.sizes[1], ops.y.view.sizes[2], ops.y.view.sizes[3]},
      Store::kDense, 1);
  for (int64_t i = 0; i < y2.numel(); ++i)
    y2.view.at(y2.index(i)) = static_cast<float>(ops.y_in[i]);
  const Status s = callCpu(context, "ral_conv", scaled.view, ops.w.view, ops.bias.view, y2.view,
                           ops.config.view, -0.5f, 0.75f);
  EXPECT_TRUE(s.ok()) << s;
  std::vector<float> out;
  for (int64_t i = 0; i < y2.numel(); ++i) out.push_back(y2.view.at(y2.index(i)));
  return out;
}

void runCase(Context& context, const ScaledCase& c, std::mt19937& rng) {
  Operands ops(c, rng);
  const Status s = ops.call(context);
  ASSERT_TRUE(s.ok()) << c.name() << ": " << s;
  ops.expectMatchesReference();
  // The same arithmetic as the two separate calls: a product rounded to f32, then ral_conv.
  const std::vector<float> separate = convOfScaled(context, ops);
  double worst = 0;
  for (int64_t i = 0; i < ops.y.numel(); ++i) {
    const double got = ops.y.view.at(ops.y.index(i)), want = separate[i];
    worst = std::max(worst, std::abs(got - want) / (1 + std::abs(want)));
  }
  EXPECT_LE(worst, 1e-6) << c.name() << " against ral_conv of the scaled input";
}

TEST(ConvScaledTest, PointwiseShapesBatchesAndPanels) {
  Context context;
  std::mt19937 rng(1);
  std::vector<ScaledCase> cases;
  ScaledCase base;
  cases.push_back(base);
  for (auto [c, f] :
       {std::pair<int64_t, int64_t>{1, 1}, {16, 16}, {96, 24}, {144, 40}, {7, 100}, {672, 112}}) {
    ScaledCase s = base;
    s.c = c;
    s.f = f;
    cases.push_back(s);
  }
  ScaledCase one = base;  // size-1 spatial dims: one pixel per image
  one.h = one.w = 1;
  one.n = 5;
  cases.push_back(one);
  ScaledCase rows = base;  // blocks that end inside a row and images that end inside a block
  rows.h = 3;
  rows.w = 9;
  rows.n = 3;
  cases.push_back(rows);
  ScaledCase single = base;
  single.n = 1;
  single.h = single.w = 14;
  cases.push_back(single);
  ScaledCase no_bias = base;
  no_bias.bias = false;
  cases.push_back(no_bias);
  for (const ScaledCase& c : cases) runCase(context, c, rng);
}

// Few pixel blocks over several threads: each task is one 64-channel panel of a block, and a
// thread whose tasks cross from one block to the next scales the next block's rows (3 threads,
// so the tasks split unevenly; the last panel is partial).
TEST(ConvScaledTest, FewBlocksSplitByPanelOverThreads) {
  const char* kThreads = "RAL_CPU_THREADS";
  const char* before = std::getenv(kThreads);
  const std::string saved = before ? before : "";
  setenv(kThreads, "3", 1);
  Context context;
  if (before)
    setenv(kThreads, saved.c_str(), 1);
  else
    unsetenv(kThreads);
  std::mt19937 rng(5);
  std::vector<ScaledCase> cases;
  ScaledCase seven;  // 49 pixels: 5 blocks, 4 panels (the last 8 channels wide)
  seven.n = 1;
  seven.h = seven.w = 7;
  seven.c = 160;
  seven.f = 200;
  seven.act = 4;
  cases.push_back(seven);
  ScaledCase two = seven;  // 2 images of 15 pixels: 2 blocks each
  two.n = 2;
  two.h = 3;
  two.w = 5;
  two.residual = true;
  cases.push_back(two);
  ScaledCase many = seven;  // 17 blocks per image, 2 images: one task per block
  many.n = 2;
  many.h = many.w = 14;
  many.f = 72;
  cases.push_back(many);
  for (const ScaledCase& c : cases) runCase(context, c, rng);
}

TEST(ConvScaledTest, EveryActivationAndResiduals) {
  Context context;
  std::mt19937 rng(2);
  for (bool residual : {false, true})
    for (int act = 0; act <= 7; ++act) {
      ScaledCase c;
      c.act = act;
      c.residual = residual;
      runCase(context, c, rng);
    }
}

TEST(ConvScaledTest, LayoutsAndStrides) {
  Context context;
  std::mt19937 rng(3);
  for (bool cl : {true, false})
    for (Store xs : {Store::kDense, Store::kPadded, Store::kEveryOtherChannel})
      for (Store ys : {Store::kDense, Store::kPadded})
        for (Store ss : {Store::kDense, Store::kEveryOtherChannel}) {
          ScaledCase c;
          c.channels_last = cl;
          c.xs = xs;
          c.ys = ys;
          c.ss = ss;
          c.residual = xs == Store::kPadded;
          runCase(context, c, rng);
        }
}

TEST(ConvScaledTest, ConvolutionsTheTilesDoNotTake) {
  Context context;
  std::mt19937 rng(4);
  ScaledCase k3;
  k3.k = 3;
  k3.pad = 1;
  runCase(context, k3, rng);
  ScaledCase strided = k3;
  strided.stride = 2;
  strided.h = 9;
  runCase(context, strided, rng);
  ScaledCase grouped = k3;
  grouped.groups = 4;
  runCase(context, grouped, rng);
  ScaledCase depthwise = k3;
  depthwise.groups = depthwise.c;
  depthwise.f = depthwise.c;
  runCase(context, depthwise, rng);
  ScaledCase gelu;
  gelu.act = 6;
  runCase(context, gelu, rng);
  ScaledCase large;  // past the tiles' filter bound: 640 x 512 weights
  large.c = 640;
  large.f = 512;
  large.h = large.w = 2;
  runCase(context, large, rng);
}

// Filters past the tiles' 2^18 weights over 2 to 64 pixels in all (EfficientNet's 7x7
// projections at batch 1): the whole scaled x first, then the panels outermost. One image and
// several, every activation with and without a residual, padded and strided operands.
TEST(ConvScaledTest, WideFiltersOverFewPixels) {
  Context context;
  std::mt19937 rng(5);
  ScaledCase one;  // 1152 x 320 weights, 49 pixels
  one.n = 1;
  one.c = 1152;
  one.f = 320;
  one.h = one.w = 7;
  ScaledCase images = one;  // 2 images of 15 pixels, 600 x 500 weights, a masked last vector
  images.n = 2;
  images.c = 600;
  images.f = 500;
  images.h = 3;
  images.w = 5;
  for (ScaledCase c : {one, images}) {
    for (bool residual : {false, true})
      for (int act : {0, 1, 2, 4, 7}) {
        c.act = act;
        c.residual = residual;
        runCase(context, c, rng);
      }
    c.act = 4;
    c.residual = false;
    for (Store xs : {Store::kPadded, Store::kEveryOtherChannel})
      for (Store ss : {Store::kDense, Store::kEveryOtherChannel}) {
        c.xs = xs;
        c.ys = Store::kPadded;
        c.ss = ss;
        runCase(context, c, rng);
      }
  }
}

TEST(ConvScaledTest, EmptyBatchAndEmptyChannels) {
  Context context;
  std::mt19937 rng(5);
  ScaledCase empty_batch;
  empty_batch.n = 0;
  runCase(context, empty_batch, rng);
  ScaledCase no_channels;  // y = act(bias)
  no_channels.c = 0;
  runCase(context, no_channels, rng);
  ScaledCase empty_rows;
  empty_rows.h = 0;
  runCase(context, empty_rows, rng);
}

TEST(ConvScaledTest, AScaleOfTheWrongShapeIsAnErrorAndTheNextCallWorks) {
  Context context;
  std::mt19937 rng(6);
  ScaledCase c;
  for (std::array<int64_t, 4> bad :
       {std::array<int64_t, 4>{c.n, 1, 1, c.c + 1}, std::array<int64_t, 4>{c.n + 1, 1, 1, c.c},
        std::array<int64_t, 4>{c.n, 2, 1, c.c}}) {
    Operands ops(c, rng);
    HostTensor<4> wrong(bad, Store::kDense, 3);
    wrong.fill(rng);
    const Status s = callCpu(context, "ral_conv_scaled", ops.x.view, wrong.view, ops.w.view,
                             ops.bias.view, ops.y.view, ops.config.view, 0.0f, 0.0f);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("scale is"), std::string::npos) << s;
  }
  runCase(context, c, rng);
}

}  // namespace
}  // namespace ral::testing
