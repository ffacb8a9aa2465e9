// ral_conv on every device against the CPU kernel (oneDNN; itself checked against float64 in
// tests/unit/kernels_conv_test.cc): every shape family, layout, activation, residual and
// transposed case of tests/support/conv_test_util.h.
#include "tests/support/conv_test_util.h"

#include "kernel_cts.h"

namespace ral::kernel_cts {
namespace {

using cuda::testing::ConvCase;
using cuda::testing::Store;

class Conv : public KernelTest {
 protected:
  void expectMatches(const ConvCase& cs) {
    cuda::testing::expectDeviceMatchesCpu(context, driver, backend().device, cs, rng);
  }
};

TEST_P(Conv, MatchesCpu) {
  if (onCpu()) GTEST_SKIP() << "the CPU kernel is the reference (tests/unit/kernels_conv_test.cc)";
  {
    const Status probe = cuda::testing::deviceConvStatus(
        context, driver, backend().device, cuda::testing::basicConv(1, 1, 1, {1, 1}, {1, 1}), rng);
    if (!probe.ok() && probe.message().find("cuDNN") != std::string_view::npos)
      GTEST_SKIP() << "no usable cuDNN: " << probe;
    ASSERT_TRUE(probe.ok()) << probe;
  }
  for (ConvCase cs : cuda::testing::convShapeCases()) {
    for (int64_t flags : {0, 1, 4, 5}) {
      cs.flags = flags;
      cs.act = flags & 1 ? 1 : 0;
      expectMatches(cs);
    }
    cs.flags = 4;
    cs.xs = Store::kEveryOtherChannel;
    cs.ys = Store::kPadded;
    cs.ws = Store::kChannelsLast;
    expectMatches(cs);
    cs.flags = 0;
    cs.xs = Store::kColumnMajor;
    cs.ws = Store::kColumnMajor;
    cs.bs = Store::kEveryOtherChannel;
    expectMatches(cs);
  }
  ConvCase act = cuda::testing::basicConv(2, 6, 4, {6, 5}, {3, 3});
  act.groups = 2;
  act.pb = {1, 0};
  act.pe = {1, 1};
  for (int64_t flags : {0, 1, 4, 5}) {
    for (int a : {0, 1, 2, 3, 4}) {
      act.flags = flags;
      act.act = a;
      act.alpha = a == 2 && flags == 0 ? 0.0f : -0.3f;  // clip to [0, b] is CLIPPED_RELU
      act.beta = 0.4f;
      expectMatches(act);
    }
  }
  for (ConvCase cs : cuda::testing::convTransposedCases()) {
    expectMatches(cs);
    cs.flags = 8 | 4 | 1;
    cs.act = 4;
    expectMatches(cs);
  }
  ConvCase big = cuda::testing::basicConv(4, 64, 64, {28, 28}, {3, 3});  // cuDNN's fast kernels
  big.pb = big.pe = {1, 1};
  for (int64_t flags : {0, 4, 5}) {
    big.flags = flags;
    big.act = 1;
    expectMatches(big);
  }
}

RAL_KERNEL_CTS_INSTANTIATE(Conv);

}  // namespace
}  // namespace ral::kernel_cts
