// ral_conv_block against a naive double-precision reference of its three stages: with and
// without the expansion and the projection, 3x3 and 5x5 windows, strides 1 and 2, asymmetric
// pads, channel counts that are not whole vectors, size-1 and empty dims, every activation the
// fused kernel computes (and GELU, which goes through the stage-by-stage path), residuals,
// padded (non-contiguous) and every-other-channel operands, batch and band splits on several
// threads; bad configs and shapes are context errors and the next call is correct.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "drivers/cpu/cpu_driver.h"
#include "kernels/conv/conv_tiles_cpu.h"
#include "ral/context.h"
#include "tests/support/conv_cases.h"
#include "tests/support/kernels_test_util.h"

namespace ral::testing {
namespace {

struct Stage {
  int act = 0;
  float lo = 0, hi = 0;
  bool bias = true;
};

struct BlockCase {
  int64_t n = 1, h = 8, w = 8, c = 4, e = 24, f = 6, kh = 3, kw = 3;
  int64_t stride[2] = {1, 1}, pb[2] = {1, 1}, pe[2] = {1, 1};
  bool expand = true, project = true, residual = false;
  Stage s[3] = {{2, 0, 6}, {2, 0, 6}, {0}};
  Store xs = Store::kDense, ys = Store::kDense;
  bool constant = false;
  int64_t p() const { return (h + pb[0] + pe[0] - kh) / stride[0] + 1; }
  int64_t q() const { return (w + pb[1] + pe[1] - kw) / stride[1] + 1; }
  int64_t dwChannels() const { return expand ? e : c; }
  int64_t outChannels() const { return project ? f : dwChannels(); }
  std::string name() const {
    std::string s = "n" + std::to_string(n) + " " + std::to_string(h) + "x" + std::to_string(w) +
                    " c" + std::to_string(c) + (expand ? " e" + std::to_string(e) : "") +
                    (project ? " f" + std::to_string(f) : "") + " k" + std::to_string(kh) + "x" +
                    std::to_string(kw) + " s" + std::to_string(stride[0]) +
                    std::to_string(stride[1]) + " pads " + std::to_string(pb[0]) +
                    std::to_string(pb[1]) + "/" + std::to_string(pe[0]) + std::to_string(pe[1]);
    for (const Stage& st : this->s) s += " act" + std::to_string(st.act);
    return s + (residual ? " residual" : "") + " x " + storeName(xs) + " y " + storeName(ys);
  }
};

double activate(const Stage& s, double v) { return referenceActivation(s.act, v, s.lo, s.hi); }

struct BlockOperands {
  BlockCase cs;
  HostTensor<4> x, w1, w2, w3, y;
  HostTensor<1> b1, b2, b3;
  Buffer<int64_t, 1> config;
  Buffer<float, 1> bounds;
  std::vector<double> y_in;  // y on entry (NHWC row-major), for residuals

  BlockOperands(const BlockCase& c, std::mt19937& rng)
      : cs(c),
        x({c.n, c.h, c.w, c.c}, c.xs, 3),
        w1({c.expand ? c.e : 0, c.c, 1, 1}, Store::kDense, 1),
        w2({c.dwChannels(), 1, c.kh, c.kw}, Store::kDense, 1),
        w3({c.project ? c.f : 0, c.dwChannels(), 1, 1}, Store::kDense, 1),
        y({c.n, c.p(), c.q(), c.outChannels()}, c.ys, 3),
        b1({c.expand && c.s[0].bias ? c.e : 0}, Store::kDense, 0),
        b2({c.s[1].bias ? c.dwChannels() : 0}, Store::kDense, 0),
        b3({c.project && c.s[2].bias ? c.f : 0}, Store::kDense, 0),
        config({10}, Layout::kDense),
        bounds({6}, Layout::kDense) {
    for (HostTensor<4>* t : {&x, &w1, &w2, &w3}) t->fill(rng);
    for (HostTensor<1>* t : {&b1, &b2, &b3}) t->fill(rng);
    y.fill(rng, c.residual ? -1 : 100, c.residual ? 1 : 200);
    for (int64_t i = 0; i < y.numel(); ++i) y_in.push_back(y.view.at(y.index(i)));
    config.at(0) = (c.residual ? 1 : 0) | (c.constant ? 14 : 0);
    for (int s = 0; s < 3; ++s) {
      config.at(1 + s) = c.s[s].act;
      bounds.at(2 * s) = c.s[s].lo;
      bounds.at(2 * s + 1) = c.s[s].hi;
    }
    for (int d = 0; d < 2; ++d) {
      config.at(4 + d) = c.stride[d];
      config.at(6 + d) = c.pb[d];
      config.at(8 + d) = c.pe[d];
    }
  }

  Status call(Context& context) {
    return callCpu(context, "ral_conv_block", x.view, w1.view, b1.view, w2.view, b2.view, w3.view,
                   b3.view, y.view, config.view, bounds.view);
  }

  static double bias(const HostTensor<1>& b, int64_t i) {
    return b.view.sizes[0] ? b.view.at({i}) : 0.0;
  }

  // The expected y, NHWC row-major, in double.
  std::vector<double> reference() const {
    const BlockCase& c = cs;
    const int64_t e = c.dwChannels();
    std::vector<double> ex(c.n * c.h * c.w * e), dw(c.n * c.p() * c.q() * e);
    for (int64_t n = 0; n < c.n; ++n)
      for (int64_t i = 0; i < c.h; ++i)
        for (int64_t j = 0; j < c.w; ++j)
          for (int64_t k = 0; k < e; ++k) {
            double v;
            if (c.expand) {
              v = bias(b1, k);
              for (int64_t m = 0; m < c.c; ++m)
                v += double(x.view.at({n, i, j, m})) * w1.view.at({k, m, 0, 0});
              v = activate(c.s[0], v);
            } else {
              v = x.view.at({n, i, j, k});
            }
            ex[((n * c.h + i) * c.w + j) * e + k] = v;
          }
    const bool dw_last = !c.project;
    for (int64_t n = 0; n < c.n; ++n)
      for (int64_t i = 0; i < c.p(); ++i)
        for (int64_t j = 0; j < c.q(); ++j)
          for (int64_t k = 0; k < e; ++k) {
            double v = bias(b2, k);
            for (int64_t a = 0; a < c.kh; ++a)
              for (int64_t b = 0; b < c.kw; ++b) {
                const int64_t ii = i * c.stride[0] - c.pb[0] + a,
                              jj = j * c.stride[1] - c.pb[1] + b;
                if (ii < 0 || ii >= c.h || jj < 0 || jj >= c.w) continue;
                v += ex[((n * c.h + ii) * c.w + jj) * e + k] * w2.view.at({k, 0, a, b});
              }
            const int64_t o = ((n * c.p() + i) * c.q() + j) * e + k;
            if (dw_last && c.residual) v += y_in[o];
            dw[o] = activate(c.s[1], v);
          }
    if (!c.project) return dw;
    std::vector<double> out(c.n * c.p() * c.q() * c.f);
    for (int64_t px = 0; px < c.n * c.p() * c.q(); ++px)
      for (int64_t k = 0; k < c.f; ++k) {
        double v = bias(b3, k);
        for (int64_t m = 0; m < e; ++m) v += dw[px * e + m] * w3.view.at({k, m, 0, 0});
        if (c.residual) v += y_in[px * c.f + k];
        out[px * c.f + k] = activate(c.s[2], v);
      }
    return out;
  }

  void expectMatches() const {
    const std::vector<double> want = reference();
    ASSERT_EQ(static_cast<int64_t>(want.size()), y.numel()) << cs.name();
    double worst = 0;
    int64_t bad = -1;
    for (int64_t i = 0; i < y.numel(); ++i) {
      const double got = y.view.at(y.index(i));
      const double err = std::abs(got - want[i]) / (1 + std::abs(want[i]));
      if (!(err <= worst)) {
        worst = err;
        bad = i;
      }
    }
    EXPECT_LE(worst, 2e-5) << cs.name() << ": element " << bad << " is "
                           << (bad >= 0 ? y.view.at(y.index(bad)) : 0) << ", expected "
                           << (bad >= 0 ? want[bad] : 0);
  }
};

// RAL_CONV_BLOCK for one scope: these shapes are small enough that the kernel would run them
// stage by stage on its own (their expanded tensors fit in L2), so the tests ask for the fused
// kernel; one test runs the other modes.
class ScopedMode {
 public:
  explicit ScopedMode(const char* mode) {
    const char* old = std::getenv("RAL_CONV_BLOCK");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("RAL_CONV_BLOCK", mode, 1);
  }
  ~ScopedMode() {
    if (had_) {
      setenv("RAL_CONV_BLOCK", old_.c_str(), 1);
    } else {
      unsetenv("RAL_CONV_BLOCK");
    }
  }

 private:
  bool had_ = false;
  std::string old_;
};

void runCase(Context& context, const BlockCase& c, std::mt19937& rng) {
  BlockOperands ops(c, rng);
  const Status s = ops.call(context);
  ASSERT_TRUE(s.ok()) << c.name() << ": " << s;
  ops.expectMatches();
}

std::vector<BlockCase> shapeCases() {
  std::vector<BlockCase> cases;
  BlockCase base;
  cases.push_back(base);
  BlockCase s2 = base;  // MobileNet's downsampling block, pads 0/1 as TF-style exports have
  s2.h = 9;
  s2.w = 12;
  s2.stride[0] = s2.stride[1] = 2;
  s2.pb[0] = s2.pb[1] = 0;
  cases.push_back(s2);
  BlockCase k5 = base;  // EfficientNet's 5x5, rows and columns of different sizes
  k5.kh = k5.kw = 5;
  k5.pb[0] = k5.pb[1] = k5.pe[0] = k5.pe[1] = 2;
  k5.h = 7;
  k5.w = 13;
  k5.e = 40;
  cases.push_back(k5);
  BlockCase wide = base;  // several vector groups, more than one tile panel
  wide.c = 24;
  wide.e = 144;
  wide.f = 40;
  wide.h = wide.w = 6;
  cases.push_back(wide);
  BlockCase rect = base;  // non-square kernel and strides, no pads
  rect.kh = 1;
  rect.kw = 3;
  rect.stride[0] = 1;
  rect.stride[1] = 2;
  rect.pb[0] = rect.pe[0] = 0;
  rect.pb[1] = 0;
  rect.pe[1] = 0;
  cases.push_back(rect);
  BlockCase one = base;  // size-1 spatial dims
  one.h = 1;
  one.w = 1;
  cases.push_back(one);
  BlockCase row = base;
  row.h = 1;
  row.w = 17;
  row.n = 3;
  cases.push_back(row);
  BlockCase no_expand = base;  // MobileNet-V2's first block
  no_expand.expand = false;
  no_expand.c = 32;
  no_expand.f = 16;
  cases.push_back(no_expand);
  no_expand.c = 20;  // a masked last vector: rows copied into the ring pixel by pixel
  cases.push_back(no_expand);
  BlockCase no_project = base;  // EfficientNet's expansion + depthwise (SiLU)
  no_project.project = false;
  no_project.s[0] = no_project.s[1] = {4};
  cases.push_back(no_project);
  BlockCase residual = base;  // the inverted residual
  residual.residual = true;
  residual.f = residual.c;
  cases.push_back(residual);
  BlockCase dw_residual = no_project;
  dw_residual.residual = true;
  cases.push_back(dw_residual);
  BlockCase no_bias = base;
  for (Stage& s : no_bias.s) s.bias = false;
  cases.push_back(no_bias);
  BlockCase long_rows = base;  // rows of 48+ pixels: one row at a time through each stage
  long_rows.w = 53;
  long_rows.h = 5;
  cases.push_back(long_rows);
  long_rows.stride[0] = long_rows.stride[1] = 2;
  long_rows.w = 100;
  cases.push_back(long_rows);
  BlockCase batch = base;
  batch.n = 5;
  batch.h = 11;
  cases.push_back(batch);
  return cases;
}

TEST(ConvBlockTest, ShapesStridesPadsAndStages) {
  ScopedMode fused("fused");
  Context context;
  std::mt19937 rng(1);
  for (const BlockCase& c : shapeCases()) runCase(context, c, rng);
}

TEST(ConvBlockTest, EveryActivationInEveryStage) {
  ScopedMode fused("fused");
  Context context;
  std::mt19937 rng(2);
  for (int stage = 0; stage < 3; ++stage)
    for (int act = 0; act <= 6; ++act) {
      BlockCase c;
      c.s[stage] = {act, -0.5f, 0.75f};
      runCase(context, c, rng);  // GELU (6) runs stage by stage: the same results
    }
}

TEST(ConvBlockTest, PaddedStridedAndEveryOtherChannelOperands) {
  ScopedMode fused("fused");
  Context context;
  std::mt19937 rng(3);
  for (bool expand : {true, false})  // without: x's rows go to the ring as they are
    for (bool residual : {false, true})
      for (Store xs : {Store::kDense, Store::kPadded, Store::kEveryOtherChannel})
        for (Store ys : {Store::kDense, Store::kPadded, Store::kEveryOtherChannel}) {
          BlockCase c;
          c.expand = expand;
          if (!expand) c.c = 32;  // whole vectors: a dense x's row is one copy
          c.xs = xs;
          c.ys = ys;
          c.residual = residual;
          c.f = c.c;
          runCase(context, c, rng);
        }
}

TEST(ConvBlockTest, EmptyBatchAndEmptyRowsComputeNothing) {
  ScopedMode fused("fused");
  Context context;
  std::mt19937 rng(4);
  BlockCase empty;
  empty.n = 0;
  runCase(context, empty, rng);
  // A 1-row input under a 3-row window without pads, short of it by no more than the stride:
  // no output rows (ONNX's floor), as ral_conv.
  BlockCase no_rows;
  no_rows.h = 1;
  no_rows.pb[0] = no_rows.pe[0] = 0;
  no_rows.stride[0] = 2;
  runCase(context, no_rows, rng);
}

TEST(ConvBlockTest, ResidualWrittenOverItsInput) {
  ScopedMode fused("fused");
  // The compiler gives a residual block the buffer of its dead input as y: y is x. Run in place
  // on one band per image, through a copy of x otherwise; a y overlapping x elsewhere is copied
  // around too.
  for (int threads : {1, 2}) {
    Context context;
    ASSERT_TRUE(
        context.setDriverFactory(DeviceKind::kCpu, cpu::cpuDriverFactory({threads, {}})).ok());
    std::mt19937 rng(8);
    for (int64_t n : {1, 2, 3}) {
      for (bool project : {true, false}) {
        BlockCase c;
        c.n = n;
        c.h = 13;
        c.w = 9;
        c.residual = true;
        c.project = project;
        c.f = c.c;
        if (!project) c.e = c.c;  // the depthwise stage's output over the block's input
        BlockOperands ops(c, rng);
        ops.y.view = ops.x.view;
        for (int64_t i = 0; i < ops.y.numel(); ++i) ops.y_in[i] = ops.x.view.at(ops.x.index(i));
        const std::vector<double> want = ops.reference();
        const Status s = ops.call(context);
        ASSERT_TRUE(s.ok()) << s;
        for (int64_t i = 0; i < ops.y.numel(); ++i)
          ASSERT_NEAR(ops.x.view.at(ops.x.index(i)), want[i], 2e-5 * (1 + std::abs(want[i])))
              << c.name() << " in place, " << threads << " threads, element " << i;
      }
    }
  }
}

TEST(ConvBlockTest, ConstantFiltersCachedPerAddressAndThreads) {
  ScopedMode fused("fused");
  // Bands split over the context's threads; prepared filters reused by a second call and
  // kept apart for a second set of weights.
  for (int threads : {1, 2, 3}) {
    Context context;
    ASSERT_TRUE(
        context.setDriverFactory(DeviceKind::kCpu, cpu::cpuDriverFactory({threads, {}})).ok());
    std::mt19937 rng(5);
    BlockCase c;
    c.constant = true;
    c.h = c.w = 14;
    // Constant filters must outlive the Context's use of them: every operand set stays.
    std::vector<std::unique_ptr<BlockOperands>> kept;
    for (int64_t n : {1, 2, 3}) {
      c.n = n;
      kept.push_back(std::make_unique<BlockOperands>(c, rng));
      kept.push_back(std::make_unique<BlockOperands>(c, rng));
      BlockOperands* a = kept[kept.size() - 2].get();
      BlockOperands* b = kept.back().get();
      for (BlockOperands* ops : {a, b, a}) {
        const Status s = ops->call(context);
        ASSERT_TRUE(s.ok()) << threads << " threads: " << s;
        ops->expectMatches();
      }
    }
  }
}

TEST(ConvBlockTest, EveryModeGivesTheSameResults) {
  // The fused kernel, the stages as ral_conv calls, and the choice between them (a block whose
  // expanded tensor outgrows L2 fuses: 4 x 56 x 56 x 96 floats is 4.8 MB).
  std::mt19937 rng(6);
  Context context;
  for (const char* mode : {"fused", "stages", "auto"}) {
    ScopedMode scoped(mode);
    for (int64_t size : {20, 56}) {
      BlockCase c;
      c.n = size == 56 ? 4 : 1;
      c.c = 16;
      c.e = 96;
      c.f = 24;
      c.h = c.w = size;
      c.stride[0] = c.stride[1] = 2;
      BlockOperands ops(c, rng);
      ASSERT_TRUE(ops.call(context).ok()) << mode;
      ops.expectMatches();
    }
  }
}

TEST(ConvBlockErrorTest, BadConfigsAndShapesAreContextErrors) {
  ScopedMode fused("fused");
  Context context;
  std::mt19937 rng(7);
  BlockCase good;
  auto expectError = [&](BlockOperands& ops, const char* what, const std::string& needle) {
    const Status s = ops.call(context);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << what << ": " << s;
    EXPECT_NE(s.message().find("ral_conv_block"), std::string::npos) << what << ": " << s;
    EXPECT_NE(s.message().find(needle), std::string::npos) << what << ": " << s;
    BlockOperands ok(good, rng);
    ASSERT_TRUE(ok.call(context).ok()) << "after " << what;
    ok.expectMatches();
  };
  auto withConfig = [&](int index, int64_t value, const char* what, const std::string& needle) {
    BlockOperands ops(good, rng);
    ops.config.at(index) = value;
    expectError(ops, what, needle);
  };
  withConfig(0, 16, "flag bit 4", "unknown flag bits 16");
  withConfig(1, 8, "activation 8", "unknown activation 8");
  withConfig(3, -1, "activation -1", "unknown activation -1");
  withConfig(4, 0, "stride 0", "stride 0");
  withConfig(7, -1, "negative pad", "pad_begin -1");
  withConfig(8, 3, "pad changing the output size", "y is");
  {
    BlockOperands ops(good, rng);
    ops.config.view.sizes[0] = 9;
    expectError(ops, "short config", "config has 9 values, expected 10");
  }
  {
    BlockOperands ops(good, rng);
    ops.bounds.view.sizes[0] = 2;
    expectError(ops, "short bounds", "bounds has 2 values");
  }
  {
    BlockOperands ops(good, rng);
    ops.bounds.at(1) = std::nanf("");
    expectError(ops, "NaN clip bound", "NaN");
  }
  auto withShape = [&](HostTensor<4> BlockOperands::*member, int dim, int64_t size,
                       const char* what, const std::string& needle) {
    BlockOperands ops(good, rng);
    (ops.*member).view.sizes[dim] = size;
    expectError(ops, what, needle);
  };
  withShape(&BlockOperands::w1, 1, 3, "w1 channels", "w1 is [24x3x1x1]");
  withShape(&BlockOperands::w1, 2, 3, "w1 not pointwise", "w1 is [24x4x3x1]");
  withShape(&BlockOperands::w2, 0, 23, "w2 channels", "w2 is [23x1x3x3]");
  withShape(&BlockOperands::w2, 2, 0, "empty window", "empty kernel");
  withShape(&BlockOperands::w2, 2, 12, "window larger than the padded input", "larger than");
  withShape(&BlockOperands::w3, 1, 20, "w3 channels", "w3 is [6x20x1x1]");
  withShape(&BlockOperands::y, 3, 5, "y channels", "y is [1x8x8x5]");
  withShape(&BlockOperands::y, 1, 7, "y rows", "y is [1x7x8x6]");
  {
    BlockOperands ops(good, rng);
    ops.w1.view.sizes[0] = 0;
    ops.w3.view.sizes[0] = 0;
    expectError(ops, "no pointwise stage", "both empty");
  }
  {
    BlockOperands ops(good, rng);
    ops.b2.view.sizes[0] = 5;
    expectError(ops, "depthwise bias", "b2 is [5]");
  }
}

}  // namespace
}  // namespace ral::testing
