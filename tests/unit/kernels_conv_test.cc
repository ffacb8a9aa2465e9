// ral_conv against a naive double-precision reference: 1-, 2- and 3-D, groups and depthwise,
// strides, dilations, asymmetric pads, transposed convolutions with output padding, every
// activation, residuals, strided / reversed / broadcast / channels-last operands, constant
// filters, calls from several threads on one Context; bad configs and shapes are context errors
// and the next call is correct.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <thread>

#include "kernels/conv/conv_linear_cpu.h"
#include "kernels/conv/conv_tiles_cpu.h"
#include "tests/support/conv_cases.h"
#include "tests/support/kernels_test_util.h"

namespace ral::testing {
namespace {

using Case = ConvCase;
template <int R>
using Tensor = HostTensor<R>;

double activate(const Case& cs, double v) {
  return referenceActivation(cs.act, v, cs.alpha, cs.beta);
}

// The operands of one case, in the layouts it asks for.
template <int R>
struct Operands {
  Tensor<R> x, w, y;
  Tensor<1> bias;
  Buffer<int64_t, 1> config;
  std::vector<double> residual;  // y on entry, channels-first dense (residual cases)

  Operands(const Case& cs, std::mt19937& rng)
      : x(ConvShapes<R>::x(cs), cs.xs, ConvShapes<R>::channelDim(cs)),
        w(ConvShapes<R>::weight(cs), cs.ws, 1),
        y(ConvShapes<R>::y(cs), cs.ys, ConvShapes<R>::channelDim(cs)),
        bias({cs.bias ? cs.f : 0}, cs.bs, 0),
        config({4 + 4 * (R - 2)}, Layout::kDense) {
    x.fill(rng);
    w.fill(rng);
    bias.fill(rng);
    y.fill(rng, 100, 200);  // garbage the kernel must overwrite
    const int s = R - 2;
    config.at(0) = s;
    config.at(1) = cs.groups;
    config.at(2) = cs.act;
    config.at(3) = cs.flags;
    for (int d = 0; d < s; ++d) {
      config.at(4 + d) = cs.stride[d];
      config.at(4 + s + d) = cs.dil[d];
      config.at(4 + 2 * s + d) = cs.pb[d];
      config.at(4 + 3 * s + d) = cs.pe[d];
    }
    if (cs.residual()) {
      y.fill(rng);
      residual.resize(y.numel());
      for (int64_t i = 0; i < y.numel(); ++i) residual[i] = yAt(cs, i);
    }
  }

  // Element i (channels-first row-major order) of x or y.
  static float at(const Case& cs, const Tensor<R>& t, int64_t i) {
    std::array<int64_t, R> cf{}, mem{};
    std::array<int64_t, R> sizes{};
    for (int d = 0; d < R; ++d) sizes[d] = t.view.sizes[d];
    if (cs.channelsLast()) {  // channels-first sizes
      std::array<int64_t, R> m = sizes;
      sizes[1] = m[R - 1];
      for (int d = 2; d < R; ++d) sizes[d] = m[d - 1];
    }
    for (int d = R - 1; d >= 0; --d) cf[d] = i % sizes[d], i /= sizes[d];
    mem = cf;
    if (cs.channelsLast()) {
      mem[R - 1] = cf[1];
      for (int d = 2; d < R; ++d) mem[d - 1] = cf[d];
    }
    return t.view.at(mem);
  }
  double xAt(const Case& cs, int64_t i) const { return at(cs, x, i); }
  double yAt(const Case& cs, int64_t i) const { return at(cs, y, i); }

  Status call(Context& context, const Case& cs) {
    return callCpu(context, "ral_conv", x.view, w.view, bias.view, y.view, config.view, cs.alpha,
                   cs.beta);
  }

  // The expected y, channels-first row-major.
  std::vector<double> reference(const Case& cs) const {
    const int s = R - 2;
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, st[3] = {1, 1, 1},
            dl[3] = {1, 1, 1}, pb[3] = {0, 0, 0};
    for (int d = 0; d < s; ++d) {
      in[d] = cs.in[d];
      out[d] = cs.out(d);
      k[d] = cs.k[d];
      st[d] = cs.stride[d];
      dl[d] = cs.dil[d];
      pb[d] = cs.pb[d];
    }
    const int64_t g = cs.groups, cg = cs.c / g, fg = cs.f / g;
    const int64_t in_size = in[0] * in[1] * in[2], out_size = out[0] * out[1] * out[2];
    std::vector<double> y_ref(cs.n * cs.f * out_size, 0.0);
    auto wAt = [&](int64_t a, int64_t b, int64_t k0, int64_t k1, int64_t k2) {
      std::array<int64_t, R> idx{};
      idx[0] = a;
      idx[1] = b;
      const int64_t kk[3] = {k0, k1, k2};
      for (int d = 0; d < s; ++d) idx[2 + d] = kk[d];
      return static_cast<double>(w.view.at(idx));
    };
    for (int64_t n = 0; n < cs.n; ++n) {
      for (int64_t ci = 0; ci < cs.c; ++ci) {
        const int64_t gi = ci / cg;
        for (int64_t i0 = 0; i0 < in[0]; ++i0)
          for (int64_t i1 = 0; i1 < in[1]; ++i1)
            for (int64_t i2 = 0; i2 < in[2]; ++i2) {
              const double xv = xAt(cs, (n * cs.c + ci) * in_size + (i0 * in[1] + i1) * in[2] + i2);
              for (int64_t k0 = 0; k0 < k[0]; ++k0)
                for (int64_t k1 = 0; k1 < k[1]; ++k1)
                  for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                    // The output position this input and tap meet at (forward: o*s - pb +
                    // k*d = i; transposed: o = i*s - pb + k*d).
                    const int64_t ii[3] = {i0, i1, i2}, kk[3] = {k0, k1, k2};
                    int64_t o[3];
                    bool inside = true;
                    for (int d = 0; d < 3; ++d) {
                      if (cs.transposed()) {
                        o[d] = ii[d] * st[d] - pb[d] + kk[d] * dl[d];
                      } else {
                        const int64_t t = ii[d] + pb[d] - kk[d] * dl[d];
                        inside = inside && t >= 0 && t % st[d] == 0;
                        o[d] = t / st[d];
                      }
                      inside = inside && o[d] >= 0 && o[d] < out[d];
                    }
                    if (!inside) continue;
                    const int64_t o_off = (o[0] * out[1] + o[1]) * out[2] + o[2];
                    if (cs.transposed()) {
                      for (int64_t fl = 0; fl < fg; ++fl)
                        y_ref[(n * cs.f + gi * fg + fl) * out_size + o_off] +=
                            xv * wAt(ci, fl, k0, k1, k2);
                    } else {
                      for (int64_t fl = 0; fl < fg; ++fl)
                        y_ref[(n * cs.f + gi * fg + fl) * out_size + o_off] +=
                            xv * wAt(gi * fg + fl, ci - gi * cg, k0, k1, k2);
                    }
                  }
            }
      }
    }
    for (int64_t i = 0; i < static_cast<int64_t>(y_ref.size()); ++i) {
      const int64_t f = (i / out_size) % cs.f;
      if (cs.bias) y_ref[i] += bias.view(f);
      if (cs.residual()) y_ref[i] += residual[i];
      y_ref[i] = activate(cs, y_ref[i]);
    }
    return y_ref;
  }

  void expectMatches(const Case& cs, const std::vector<double>& want) const {
    ASSERT_EQ(static_cast<int64_t>(want.size()), y.numel());
    for (int64_t i = 0; i < y.numel(); ++i) {
      const double got = yAt(cs, i);
      ASSERT_NEAR(got, want[i], 1e-4 * std::max(1.0, std::abs(want[i])))
          << cs.describe() << " at element " << i;
    }
  }
};

template <int R>
void checkCase(Context& context, const Case& cs, std::mt19937& rng) {
  Operands<R> ops(cs, rng);
  const Status s = ops.call(context, cs);
  ASSERT_TRUE(s.ok()) << s << " for " << cs.describe();
  ops.expectMatches(cs, ops.reference(cs));
}

void check(Context& context, const Case& cs, std::mt19937& rng) {
  switch (cs.spatial()) {
    case 1:
      return checkCase<3>(context, cs, rng);
    case 2:
      return checkCase<4>(context, cs, rng);
    case 3:
      return checkCase<5>(context, cs, rng);
  }
  FAIL() << "bad case " << cs.describe();
}

// The shared shape families (tests/support/conv_cases.h) and two of the sizes oneDNN's blocked
// kernels take.
std::vector<Case> shapeCases() {
  std::vector<Case> cases = convShapeCases();
  Case c = basicConv(1, 16, 32, {14, 14}, {3, 3});  // blocked kernels of real size
  c.pb = {1, 1};
  c.pe = {1, 1};
  cases.push_back(c);
  c.bias = false;
  cases.push_back(c);
  c = basicConv(1, 32, 32, {12, 12}, {3, 3});  // depthwise, blocked
  c.groups = 32;
  c.stride = {2, 2};
  c.pb = {1, 1};
  c.pe = {1, 1};
  cases.push_back(c);
  return cases;
}

TEST(ConvTest, ShapesGroupsStridesDilationsPads) {
  Context context;
  std::mt19937 rng(1);
  for (const Case& c : shapeCases()) check(context, c, rng);
}

TEST(ConvTest, StridedReversedBroadcastAndChannelsLastOperands) {
  Context context;
  std::mt19937 rng(2);
  const Store pairs[][2] = {{Store::kEveryOtherChannel, Store::kPadded},
                            {Store::kColumnMajor, Store::kReversed},
                            {Store::kReversed, Store::kEveryOtherChannel},
                            {Store::kBroadcastBatch, Store::kColumnMajor},
                            {Store::kPadded, Store::kDense}};
  for (Case c : shapeCases()) {
    for (const auto& p : pairs) {
      c.xs = p[0];
      c.ys = p[1];
      // Plain, channels_last (same layouts of the [N, D..., C] tensors), and both with a
      // residual read from y's layout.
      for (int64_t flags : {0, 4, 1, 5}) {
        c.flags = flags;
        check(context, c, rng);
      }
    }
    c.xs = c.ys = Store::kDense;
    c.flags = 4;
    check(context, c, rng);
    c.ws = Store::kColumnMajor;
    c.bs = Store::kEveryOtherChannel;
    check(context, c, rng);
    c.ws = Store::kReversed;
    c.bs = Store::kReversed;
    check(context, c, rng);
  }
}

TEST(ConvTest, EveryActivationWithAndWithoutResidual) {
  Context context;
  std::mt19937 rng(3);
  Case c = basicConv(2, 6, 4, {6, 5}, {3, 3});
  c.groups = 2;
  c.pb = {1, 0};
  c.pe = {1, 1};
  for (int64_t flags : {0, 1, 4, 5}) {
    for (int act = 0; act < 8; ++act) {
      c.act = act;
      c.flags = flags;
      c.alpha = -0.3f;
      c.beta = 0.4f;
      for (Store ys : {Store::kDense, Store::kPadded}) {
        c.ys = ys;
        check(context, c, rng);
      }
    }
  }
  // Clip with infinite bounds, and with bounds that cross (min(max(v, a), b) is b).
  c.act = 2;
  c.flags = 0;
  c.alpha = -std::numeric_limits<float>::infinity();
  c.beta = 0.1f;
  check(context, c, rng);
  c.alpha = 0.5f;
  c.beta = -0.5f;
  check(context, c, rng);
}

// 3x3 stride-1 convolutions of 64 or more channels run as Winograd in oneDNN's blocked layout
// (unless RAL_CONV_ALGORITHM=direct): every layout, post-op and residual still matches the
// float64 reference; overlapping or zero-stride operands take the direct path.
TEST(ConvTest, WinogradShapesLayoutsAndEpilogues) {
  Context context;
  std::mt19937 rng(9);
  Case c = basicConv(2, 64, 72, {9, 7}, {3, 3});
  c.pb = {1, 1};
  c.pe = {1, 1};
  for (int64_t flags : {0, 1, 4, 5}) {
    for (int act : {0, 1, 2, 4}) {
      c.flags = flags;
      c.act = act;
      c.alpha = -0.2f;
      c.beta = 0.3f;
      for (Store xs : {Store::kDense, Store::kEveryOtherChannel, Store::kBroadcastBatch}) {
        c.xs = xs;
        c.ys = xs == Store::kDense ? Store::kPadded : Store::kDense;
        check(context, c, rng);
      }
    }
  }
  Case edge = basicConv(1, 64, 64, {1, 1}, {3, 3});  // one output pixel, all but the centre padding
  edge.pb = edge.pe = {1, 1};
  check(context, edge, rng);
  Case empty_batch = c;
  empty_batch.n = 0;
  check(context, empty_batch, rng);
}

TEST(ConvTest, TransposedWithStridesPadsDilationsGroupsAndOutputPadding) {
  Context context;
  std::mt19937 rng(4);
  std::vector<Case> cases = convTransposedCases();
  Case c = basicConv(1, 16, 8, {7, 7}, {4, 4});
  c.stride = {2, 2};
  c.pb = {1, 1};
  c.pe = {1, 1};
  cases.push_back(c);
  for (Case cs : cases) {
    cs.flags = 8;
    check(context, cs, rng);
    cs.flags = 8 | 4 | 1;  // channels_last, residual, silu
    cs.act = 4;
    check(context, cs, rng);
    cs.flags = 8 | 2;  // constant filter
    cs.act = 0;
    cs.bias = false;
    cs.xs = Store::kEveryOtherChannel;
    cs.ys = Store::kPadded;
    cs.ws = Store::kColumnMajor;
    check(context, cs, rng);
  }
}

TEST(ConvTest, InputWithoutElementsGivesActivatedBias) {
  Context context;
  std::mt19937 rng(5);
  Case c = basicConv(2, 0, 3, {4, 4}, {3, 3});  // no input channels
  c.pb = {1, 1};
  c.pe = {1, 1};
  c.act = 1;
  check(context, c, rng);
  c.flags = 1;  // with the residual
  check(context, c, rng);
  c = basicConv(1, 2, 3, {0, 3}, {1, 1});  // empty spatial dim, all-padding windows
  c.pb = {1, 0};
  c.pe = {1, 0};
  check(context, c, rng);
  // Without padding: no output position (a linear layer's zero rows), channels-last too.
  for (const int64_t flags : {0, 4, 4 | 2}) {
    c = basicConv(1, 5, 3, {0, 3}, {1, 1});
    c.flags = flags;
    check(context, c, rng);
  }
}

// Pointwise (1x1, stride 1, unpadded, one group) channels-last convolutions run on RAL's own
// AVX-512 kernel where the host has it: channel counts around its 16-wide vectors and 96-wide
// panels, pixel counts around its 12-pixel blocks, every activation (GELU goes to oneDNN), the
// residual, constant and per-call filters, padded and broadcast operands, 1-, 2- and 3-D.
TEST(ConvTest, PointwiseShapesLayoutsAndEpilogues) {
  Context context;
  std::mt19937 rng(11);
  std::vector<Case> cases = {
      basicConv(1, 16, 96, {5, 7}, {1, 1}),  basicConv(2, 3, 17, {4, 4}, {1, 1}),
      basicConv(1, 24, 100, {13, 1}, {1, 1}), basicConv(1, 7, 200, {3, 5}, {1, 1}),
      basicConv(1, 33, 97, {1, 1}, {1, 1}),  basicConv(3, 5, 160, {2, 3}, {1, 1}),
      basicConv(1, 1, 1, {3, 3}, {1, 1}),    basicConv(2, 8, 40, {29}, {1}),
      basicConv(1, 6, 20, {3, 4, 5}, {1, 1, 1}), basicConv(1, 70, 33, {25}, {1})};
  for (Case c : cases) {
    c.alpha = -0.4f;
    c.beta = 0.5f;
    for (int64_t flags : {4, 5, 6, 7}) {
      c.flags = flags;
      for (int act = 0; act < 8; ++act) {
        c.act = act;
        // A constant filter is read-only for its Context's lifetime, and a later case's weights
        // may land at an earlier one's address: a Context of its own.
        Context own;
        check(c.constantFilter() ? own : context, c, rng);
      }
    }
    c.act = 4;
    for (Store xs : {Store::kPadded, Store::kBroadcastBatch, Store::kEveryOtherChannel}) {
      for (Store ys : {Store::kDense, Store::kPadded}) {
        for (int64_t flags : {4, 5}) {
          c.xs = xs;
          c.ys = ys;
          c.flags = flags;
          check(context, c, rng);
        }
      }
    }
    c.xs = c.ys = Store::kDense;
    c.bias = false;
    c.ws = Store::kColumnMajor;
    c.flags = 4;
    check(context, c, rng);
    c.flags = 6;
    Context own;
    check(own, c, rng);
  }
  Case empty_batch = cases[0];
  empty_batch.n = 0;
  empty_batch.flags = 4;
  check(context, empty_batch, rng);
}

// Filters past the tiles' 2^18 weights over 2 to 64 pixels in all (a CNN's 7x7 layers at batch
// 1, its classifier at batch 8): the panels go outermost. Per-call and constant filters, every
// activation with and without residual, padded and broadcast operands, and one image, several,
// a 1-D and a 3-D case.
TEST(ConvTest, PointwiseWideFiltersOverFewPixels) {
  std::mt19937 rng(15);
  std::vector<Case> cases = {
      basicConv(1, 600, 520, {7, 7}, {1, 1}), basicConv(2, 513, 520, {3, 5}, {1, 1}),
      basicConv(8, 1280, 1000, {1}, {1}),     basicConv(2, 700, 400, {1, 1}, {1, 1}),
      basicConv(1, 1280, 320, {40}, {1}),     basicConv(1, 520, 530, {2, 3, 4}, {1, 1, 1})};
  for (Case c : cases) {
    c.alpha = -0.4f;
    c.beta = 0.5f;
    for (int64_t flags : {4, 5, 6, 7}) {
      c.flags = flags;
      for (int act : {0, 1, 2, 4, 7}) {
        c.act = act;
        Context own;  // a constant filter's address is cached per Context
        check(own, c, rng);
      }
    }
    c.act = 4;
    for (Store xs : {Store::kPadded, Store::kBroadcastBatch}) {
      c.xs = xs;
      c.ys = Store::kPadded;
      c.flags = 7;
      Context own;
      check(own, c, rng);
    }
  }
}

// The pointwise kernel's activations on their own (one input channel of weight 1, no bias, so
// nothing but the activation rounds): within 4 float ulps of the float64 function from -110 to
// 100 (1e-37 where it underflows), at the infinities and for NaN, which propagates.
TEST(ConvTest, PointwiseActivationsWithinFourUlps) {
  if (!kernels::cpu::convTilesAvailable()) GTEST_SKIP() << "no AVX-512 on this host";
  namespace pw = kernels::cpu::tiles;
  std::vector<float> x;
  for (int i = 0; i <= 21000; ++i) x.push_back(-110.0f + i * 0.01f);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 88.7f, -87.3f, -103.9f, 3e38f, -3e38f})
    x.push_back(v);
  const float inf = std::numeric_limits<float>::infinity();
  x.push_back(inf);
  x.push_back(-inf);
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  std::vector<float> packed(pw::packedFloats(1, 1), 0.0f);
  packed[0] = 1.0f;
  for (int act = 0; act <= 5; ++act) {
    std::vector<float> y(x.size(), 0.0f);
    pw::Problem p;
    p.pixels = static_cast<int64_t>(x.size());
    p.in_channels = p.out_channels = 1;
    p.x = x.data();
    p.x_row = 1;
    p.y = y.data();
    p.y_row = 1;
    p.packed = packed.data();
    p.activation = act;
    p.lo = -0.25f;
    p.hi = 3.5f;
    pw::runAvx512(p, 0, (p.pixels + pw::kBlock - 1) / pw::kBlock, 0, 1);
    Case cs;
    cs.act = act;
    cs.alpha = p.lo;
    cs.beta = p.hi;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = activate(cs, x[i]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(y[i])) << "activation " << act << " of " << x[i];
        continue;
      }
      if (std::isinf(want)) {
        EXPECT_EQ(y[i], want) << "activation " << act << " of " << x[i];
        continue;
      }
      // 4 ulps, or where the result underflows (silu near -90: v / e^-v, e^-v past float's
      // range), a few times the smallest normal float.
      const double tol = std::max(4 * std::abs(want) * std::numeric_limits<float>::epsilon(), 1e-37);
      ASSERT_NEAR(y[i], want, tol) << "activation " << act << " of " << x[i];
    }
  }
}

// Whether `run` (tryPointwiseConv or tryLinearConv, bound to env) takes `cs`; y must be left
// untouched when it does not.
template <typename Run>
bool takes(const Case& cs, std::mt19937& rng, Run run) {
  Operands<4> ops(cs, rng);
  MemRef<float, 4> xc, yc;
  auto config = kernels::checkConv(ops.x.view, ops.w.view, ops.bias.view, ops.y.view,
                                   ops.config.view, cs.alpha, cs.beta, &xc, &yc);
  EXPECT_TRUE(config.ok()) << config.status() << " for " << cs.describe();
  if (!config.ok()) return false;
  const std::vector<float> before = ops.y.storage;
  bool handled = true;
  const Status s = run(*config, xc, ops.w.view, ops.bias.view, yc, &handled);
  EXPECT_TRUE(s.ok()) << s << " for " << cs.describe();
  if (!handled) {
    EXPECT_EQ(ops.y.storage, before) << "y written but not taken: " << cs.describe();
  }
  return handled;
}

// Variants of a channels-last pointwise case that neither pointwise path takes: a stride,
// padding, a 3x1 window, channels-first storage, strided channels, a transposed convolution.
std::vector<Case> nonPointwiseVariants(const Case& pointwise) {
  std::vector<Case> others;
  Case c = pointwise;
  c.stride = {2, 1};
  others.push_back(c);
  c = pointwise;
  c.pb = {0, 1};
  others.push_back(c);
  c = pointwise;
  c.k = {3, 1};
  others.push_back(c);
  c = pointwise;
  c.flags &= ~int64_t{4};  // channels-first: channels are not contiguous
  others.push_back(c);
  c = pointwise;
  c.xs = Store::kEveryOtherChannel;
  others.push_back(c);
  c = pointwise;
  c.flags |= 8;  // transposed
  c.f = c.c;
  others.push_back(c);
  return others;
}

// Which convolutions the pointwise kernel takes: the rest is left untouched for oneDNN.
TEST(ConvTest, PointwiseKernelTakesOnlyWhatItComputes) {
  Context context;
  StatusOr<Driver*> driver = context.driver(DeviceKind::kCpu);
  ASSERT_TRUE(driver.ok()) << driver.status();
  const kernels::KernelEnv env{&context, *driver, nullptr};
  std::mt19937 rng(12);
  auto taken = [&](const Case& cs) {
    return takes(
        cs, rng,
        [&](const kernels::ConvConfig& c, const MemRef<float, 4>& x, const MemRef<float, 4>& w,
            const MemRef<float, 1>& bias, const MemRef<float, 4>& y, bool* handled) {
          return kernels::cpu::tryPointwiseConv(env, c, x, w, bias, y, false, handled);
        });
  };
  Case pointwise = basicConv(2, 16, 40, {5, 6}, {1, 1});
  pointwise.flags = 4;
  EXPECT_EQ(taken(pointwise), kernels::cpu::convTilesAvailable());
  // The largest filter it takes (2^18 weights), and one more row.
  Case largest = basicConv(1, 512, 512, {1, 3}, {1, 1});
  largest.flags = 4;
  EXPECT_EQ(taken(largest), kernels::cpu::convTilesAvailable());
  // Past 2^18 weights it takes 2 to 64 pixels in all (the panels then go outermost).
  Case wide = basicConv(1, 600, 520, {7, 7}, {1, 1});
  wide.flags = 4;
  EXPECT_EQ(taken(wide), kernels::cpu::convTilesAvailable());
  Case wide_images = basicConv(2, 513, 520, {3, 5}, {1, 1});
  wide_images.flags = 6;
  EXPECT_EQ(taken(wide_images), kernels::cpu::convTilesAvailable());
  std::vector<Case> others = nonPointwiseVariants(pointwise);
  Case c = largest;
  c.f = 513;
  c.in = {5, 13};  // past 64 pixels
  others.push_back(c);
  c = wide;
  c.in = {1, 1};  // one pixel: conv_linear_cpu.h's row kernel
  others.push_back(c);
  c = wide;
  c.in = {5, 13};  // 65 pixels
  others.push_back(c);
  c = pointwise;
  c.groups = 2;
  others.push_back(c);
  c = pointwise;
  c.act = 6;  // GELU
  others.push_back(c);
  for (const Case& other : others) EXPECT_FALSE(taken(other)) << other.describe();
}

// Pointwise convolutions with constant filters past the tiles' bound (linear layers: the
// compiler's MatMul and Gemm by constant weights) run as sgemm over packed blocks of 384 output
// channels on AVX-512 hosts (conv_linear_cpu.h): output channels around the block width, one
// row (the classifier's row-times-matrix product), 2 to 64 (the tiles') and more (sgemm), 1- to
// 3-D, every activation with and without bias and residual, padded and broadcast operands, an empty
// batch; per-call filters and strided channels take the oneDNN path and agree.
TEST(ConvTest, LinearLayerShapesLayoutsAndEpilogues) {
  std::mt19937 rng(13);
  std::vector<Case> cases = {
      basicConv(1, 600, 500, {7}, {1}),        basicConv(2, 513, 520, {3, 5}, {1, 1}),
      basicConv(1, 700, 768, {1}, {1}),        basicConv(1, 520, 770, {2, 1, 3}, {1, 1, 1}),
      basicConv(3, 262, 1001, {1, 2}, {1, 1}), basicConv(8, 1280, 1000, {1}, {1}),
      basicConv(1, 300, 1100, {3, 4}, {1, 1}), basicConv(2, 513, 520, {8, 5}, {1, 1}),
      basicConv(1, 600, 500, {70}, {1})};
  for (Case c : cases) {
    c.alpha = -0.4f;
    c.beta = 0.5f;
    for (int64_t flags : {6, 7}) {
      c.flags = flags;
      for (int act = 0; act < 8; ++act) {
        c.act = act;
        Context own;  // a constant filter's address is cached per Context
        check(own, c, rng);
      }
    }
    c.act = 6;
    for (Store xs : {Store::kPadded, Store::kBroadcastBatch, Store::kEveryOtherChannel}) {
      for (Store ys : {Store::kDense, Store::kPadded}) {
        for (int64_t flags : {6, 7}) {
          c.xs = xs;
          c.ys = ys;
          c.flags = flags;
          Context own;
          check(own, c, rng);
        }
      }
    }
    c.xs = c.ys = Store::kDense;
    c.bias = false;
    for (int64_t flags : {4, 5, 6, 7}) {  // per-call (oneDNN) and constant filters
      c.flags = flags;
      Context own;
      check(own, c, rng);
    }
    c.ws = Store::kColumnMajor;
    Context own;
    check(own, c, rng);
  }
  Case empty_batch = cases[1];
  empty_batch.n = 0;
  empty_batch.flags = 6;
  Context own;
  check(own, empty_batch, rng);
}

// Which convolutions the linear path takes: the rest is left untouched for the tiles or oneDNN.
TEST(ConvTest, LinearPathTakesOnlyWhatItComputes) {
  Context context;
  StatusOr<Driver*> driver = context.driver(DeviceKind::kCpu);
  ASSERT_TRUE(driver.ok()) << driver.status();
  const kernels::KernelEnv env{&context, *driver, nullptr};
  std::mt19937 rng(14);
  auto taken = [&](const Case& cs, bool alias = false) {
    return takes(
        cs, rng,
        [&](const kernels::ConvConfig& c, const MemRef<float, 4>& x, const MemRef<float, 4>& w,
            const MemRef<float, 1>& bias, const MemRef<float, 4>& y, bool* handled) {
          return kernels::cpu::tryLinearConv(env, c, x, w, bias, y, alias, /*threads=*/1, handled);
        });
  };
  // A filter just past the tiles' 2^18 weights (square, so that its transposed variant is too).
  Case linear = basicConv(1, 513, 513, {2, 3}, {1, 1});
  linear.flags = 6;
  EXPECT_EQ(taken(linear), kernels::cpu::convTilesAvailable());
  std::vector<Case> others = nonPointwiseVariants(linear);
  Case c = linear;
  c.f = 511;  // the tiles'
  others.push_back(c);
  c = linear;
  c.flags = 4;  // a per-call filter
  others.push_back(c);
  c = linear;
  c.groups = 3;
  others.push_back(c);
  for (const Case& other : others) EXPECT_FALSE(taken(other)) << other.describe();
  EXPECT_FALSE(taken(linear, /*alias=*/true));
}

TEST(ConvTest, ConstantFilterIsCachedPerAddress) {
  Context context;
  std::mt19937 rng(6);
  Case c = basicConv(1, 8, 16, {9, 9}, {3, 3});
  c.pb = {1, 1};
  c.pe = {1, 1};
  c.flags = 2;
  Operands<4> a(c, rng), b(c, rng);  // same shapes, different filters at different addresses
  const auto want_a = a.reference(c), want_b = b.reference(c);
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(a.call(context, c).ok());
    a.expectMatches(c, want_a);
    ASSERT_TRUE(b.call(context, c).ok());
    b.expectMatches(c, want_b);
  }
}

TEST(ConvTest, NonConstantFilterIsReadOnEveryCall) {
  Context context;
  std::mt19937 rng(7);
  for (int64_t flags : {0, 4}) {
    Case c = basicConv(1, 8, 16, {9, 9}, {3, 3});
    c.flags = flags;
    Operands<4> ops(c, rng);
    ASSERT_TRUE(ops.call(context, c).ok());
    ops.expectMatches(c, ops.reference(c));
    ops.w.fill(rng);  // new weights at the same address
    ASSERT_TRUE(ops.call(context, c).ok());
    ops.expectMatches(c, ops.reference(c));
  }
}

TEST(ConvTest, OutputOverlappingTheInputStillCorrect) {
  Context context;
  std::mt19937 rng(8);
  // y is x itself: a 1x1 convolution with as many outputs as inputs, computed into scratch.
  Case c = basicConv(1, 4, 4, {5, 5}, {1, 1});
  Operands<4> ops(c, rng);
  const auto want = ops.reference(c);  // from x before the call overwrites it
  ASSERT_TRUE(callCpu(context, "ral_conv", ops.x.view, ops.w.view, ops.bias.view, ops.x.view,
                      ops.config.view, 0.0f, 0.0f)
                  .ok());
  for (int64_t i = 0; i < ops.x.numel(); ++i)
    ASSERT_NEAR(ops.xAt(c, i), want[i], 1e-4 * std::max(1.0, std::abs(want[i]))) << i;
}

TEST(ConvTest, ParallelCallsOnOneContext) {
  Context context;
  std::mt19937 rng(9);
  Case a = basicConv(1, 8, 8, {10, 10}, {3, 3});
  a.flags = 2;
  Case b = basicConv(2, 6, 4, {7, 9}, {3, 2});
  b.groups = 2;
  b.flags = 1;
  std::vector<Operands<4>> ops;
  ops.reserve(4);
  std::vector<std::vector<double>> want, residuals;
  for (int t = 0; t < 4; ++t) {
    const Case& c = t % 2 ? b : a;
    ops.emplace_back(c, rng);
    want.push_back(ops[t].reference(c));
    residuals.push_back(ops[t].residual);
  }
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const Case& c = t % 2 ? b : a;
      for (int i = 0; i < 10 && errors[t].empty(); ++i) {
        if (c.residual()) {
          for (int64_t j = 0; j < ops[t].y.numel(); ++j)
            ops[t].y.view.data()[j] = static_cast<float>(residuals[t][j]);
        }
        const Status s = ops[t].call(context, c);
        if (!s.ok()) errors[t] = s.toString();
        for (int64_t j = 0; j < ops[t].y.numel() && errors[t].empty(); ++j)
          if (std::abs(ops[t].yAt(c, j) - want[t][j]) > 1e-4 * std::max(1.0, std::abs(want[t][j])))
            errors[t] = "mismatch at " + std::to_string(j);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(errors[t].empty()) << "caller " << t << ": " << errors[t];
}

TEST(ConvNameTest, EncodedNamesMatchTheAbi) {
  EXPECT_EQ((cpuName<MemRef<float, 4>, MemRef<float, 4>, MemRef<float, 1>, MemRef<float, 4>,
                     MemRef<int64_t, 1>, float, float>("ral_conv")),
            "ral_conv___cpu___pvoid_m4df32_m4df32_m1df32_m4df32_m1di64_f32_f32___void");
  for (const char* name :
       {"ral_conv___cpu___pvoid_m3df32_m3df32_m1df32_m3df32_m1di64_f32_f32___void",
        "ral_conv___cpu___pvoid_m4df32_m4df32_m1df32_m4df32_m1di64_f32_f32___void",
        "ral_conv___cpu___pvoid_m5df32_m5df32_m1df32_m5df32_m1di64_f32_f32___void"}) {
    EXPECT_TRUE(Registry::global().findFunction(name, &ExecutionContext::kType).ok()) << name;
  }
}

TEST(ConvErrorTest, BadConfigsAndShapesAreContextErrors) {
  Context context;
  std::mt19937 rng(10);
  Case good = basicConv(1, 4, 6, {6, 6}, {3, 3});
  good.groups = 2;
  good.pb = {1, 1};
  good.pe = {1, 1};
  auto expectError = [&](Operands<4>& ops, const Case& cs, const char* what,
                         const std::string& needle) {
    const Status s = ops.call(context, cs);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << what << ": " << s;
    EXPECT_NE(s.message().find("ral_conv"), std::string::npos) << what << ": " << s;
    EXPECT_NE(s.message().find(needle), std::string::npos) << what << ": " << s;
    // The next correct call works.
    Operands<4> ok(good, rng);
    const Status next = ok.call(context, good);
    ASSERT_TRUE(next.ok()) << "after " << what << ": " << next;
    ok.expectMatches(good, ok.reference(good));
  };
  {
    Operands<4> ops(good, rng);
    ops.config.view.sizes[0] = 11;
    expectError(ops, good, "short config", "config has 11 values, expected 12");
  }
  auto withConfig = [&](int index, int64_t value, const char* what, const std::string& needle) {
    Operands<4> ops(good, rng);
    ops.config.at(index) = value;
    expectError(ops, good, what, needle);
  };
  withConfig(0, 1, "spatial dims", "config[0]");
  withConfig(1, 0, "groups 0", "groups");
  withConfig(1, 4, "groups not dividing F", "not divisible by groups 4");
  withConfig(1, 3, "groups not dividing C", "not divisible by groups 3");
  withConfig(2, 8, "activation 8", "unknown activation 8");
  withConfig(2, -1, "activation -1", "unknown activation -1");
  withConfig(3, 16, "flag bit 4", "unknown flag bits 16");
  withConfig(3, 1 << 20, "flag bit 20", "unknown flag bits");
  withConfig(4, 0, "stride 0", "stride 0");
  withConfig(7, 0, "dilation 0", "dilation 0");
  withConfig(9, -1, "negative pad", "pad_begin -1");
  withConfig(10, 2, "pad changing the output size", "y is");
  {
    Case c = good;
    c.act = 2;
    c.alpha = std::numeric_limits<float>::quiet_NaN();
    Operands<4> ops(c, rng);
    expectError(ops, c, "NaN clip bound", "NaN");
  }
  auto withShape = [&](Tensor<4> Operands<4>::*member, int dim, int64_t size, const char* what,
                       const std::string& needle) {
    Operands<4> ops(good, rng);
    (ops.*member).view.sizes[dim] = size;
    expectError(ops, good, what, needle);
  };
  withShape(&Operands<4>::w, 1, 3, "w channels", "w is [6x3x3x3]");
  withShape(&Operands<4>::w, 0, 5, "F not divisible by groups", "not divisible by groups");
  withShape(&Operands<4>::w, 2, 0, "kernel size 0", "kernel size 0");
  withShape(&Operands<4>::w, 2, 9, "kernel larger than the padded input", "dilated kernel");
  withShape(&Operands<4>::y, 1, 5, "y channels", "y is [1x5x6x6]");
  withShape(&Operands<4>::y, 0, 2, "y batch", "y is [2x6x6x6]");
  withShape(&Operands<4>::y, 3, 5, "y spatial", "y is [1x6x6x5]");
  withShape(&Operands<4>::x, 1, 5, "x channels", "x [1x5x6x6]");
  {
    Operands<4> ops(good, rng);
    ops.bias.view.sizes[0] = 5;
    expectError(ops, good, "bias size", "bias is [5]");
  }
  {
    Operands<4> ops(good, rng);
    ops.y.view.strides[2] = 0;
    expectError(ops, good, "y stride 0", "stride 0");
  }
  {
    Operands<4> ops(good, rng);
    ops.x.view.aligned = nullptr;
    expectError(ops, good, "x without data", "x [1x4x6x6] has no data");
  }
  {
    Case c = basicConv(1, 2, 3, {4, 4}, {3, 3});
    c.flags = 8;
    c.stride = {2, 2};
    c.op = {1, 0};
    Operands<4> ops(c, rng);
    ops.y.view.sizes[2] += 1;  // output padding 2 with stride 2
    expectError(ops, c, "output padding", "output_padding");
  }
}

}  // namespace
}  // namespace ral::testing
