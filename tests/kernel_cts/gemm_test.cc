// ral_gemm and ral_batch_gemm on every device against float64 computed here: every transpose
// combination, padded and column-major operands, k = 0, empty and 1x1 results; nothing outside
// c's view written; a bad shape is an error and the next call works.
#include <cmath>
#include <type_traits>

#include "tensor.h"

namespace ral::kernel_cts {
namespace {

using ::ral::testing::toDouble;

// Unit roundoff of T.
template <typename T>
double roundoff() {
  if constexpr (std::is_same_v<T, double>) return 0x1p-53;
  if constexpr (std::is_same_v<T, float>) return 0x1p-24;
  if constexpr (std::is_same_v<T, float16>) return 0x1p-11;
  return 0x1p-8;  // bfloat16
}

class Gemm : public KernelTest {
 protected:
  // c = op(a) op(b) for one case, checked element by element against float64 with the classical
  // bound |error| <= u |c| + k u sum|a b| (u of T: a device may accumulate in T itself).
  template <typename T>
  void check(int64_t m, int64_t n, int64_t k, bool ta, bool tb, Layout la, Layout lb, Layout lc) {
    SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k << " ta " << ta << " tb " << tb
                                      << " a " << layoutName(la) << " b " << layoutName(lb)
                                      << " c " << layoutName(lc));
    Tensor<T, 2> a(*this, ta ? std::array<int64_t, 2>{k, m} : std::array<int64_t, 2>{m, k}, la);
    Tensor<T, 2> b(*this, tb ? std::array<int64_t, 2>{n, k} : std::array<int64_t, 2>{k, n}, lb);
    Tensor<T, 2> c(*this, {m, n}, lc);
    for (auto* t : {&a, &b, &c}) {
      t->randomize(rng);
      t->upload();
    }
    const Status s = call("ral_gemm", a.device_view, b.device_view, c.device_view, ta, tb);
    ASSERT_TRUE(s.ok()) << s;
    const auto got = c.download();
    const double u = roundoff<T>();
    forEachIndex<2>({m, n}, [&](const std::array<int64_t, 2>& ij) {
      double want = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double x = toDouble(a.at(ta ? std::array{p, ij[0]} : std::array{ij[0], p}));
        const double y = toDouble(b.at(tb ? std::array{ij[1], p} : std::array{p, ij[1]}));
        want += x * y;
        magnitude += std::abs(x * y);
      }
      const double have = toDouble(elementOf(c, got, ij));
      ASSERT_NEAR(have, want, u * std::abs(want) + static_cast<double>(k) * u * magnitude)
          << "c[" << ij[0] << "][" << ij[1] << "]";
    });
    expectOutsideViewUnchanged(c, got);
  }

  template <typename T>
  void checkTransposes(int64_t m, int64_t n, int64_t k) {
    for (bool ta : {false, true})
      for (bool tb : {false, true}) check<T>(m, n, k, ta, tb, Layout::kPadded, Layout::kDense,
                                             Layout::kPadded);
    check<T>(1, 1, 1, false, false, Layout::kDense, Layout::kDense, Layout::kDense);
    check<T>(5, 4, 0, false, false, Layout::kDense, Layout::kDense, Layout::kPadded);  // c = 0
    check<T>(0, 4, 3, false, false, Layout::kDense, Layout::kDense, Layout::kDense);   // empty
  }
};

TEST_P(Gemm, F32) {
  checkTransposes<float>(65, 33, 47);
  check<float>(64, 64, 64, false, false, Layout::kDense, Layout::kDense, Layout::kDense);
  check<float>(100, 37, 129, true, false, Layout::kColumnMajor, Layout::kDense, Layout::kDense);
  check<float>(31, 96, 17, false, true, Layout::kPadded, Layout::kPadded, Layout::kPadded);
  check<float>(50, 50, 80, true, true, Layout::kColumnMajor, Layout::kColumnMajor,
               Layout::kColumnMajor);
  check<float>(128, 3, 200, false, false, Layout::kPadded, Layout::kPadded, Layout::kPadded);
  check<float>(1, 70, 3, false, true, Layout::kDense, Layout::kColumnMajor, Layout::kDense);
}

TEST_P(Gemm, F64) { checkTransposes<double>(17, 40, 9); }
TEST_P(Gemm, F16) { checkTransposes<float16>(20, 32, 48); }
TEST_P(Gemm, BF16) { checkTransposes<bfloat16>(31, 17, 64); }

TEST_P(Gemm, ABadShapeIsAnErrorAndTheNextCallWorks) {
  Tensor<float, 2> a(*this, {2, 3}, Layout::kDense), b(*this, {3, 2}, Layout::kDense);
  Tensor<float, 2> c(*this, {2, 2}, Layout::kDense);
  for (auto* t : {&a, &b, &c}) {
    t->randomize(rng);
    t->upload();
  }
  // op(a) 2x3 times op(a) 2x3: the shapes do not chain.
  Status s = call("ral_gemm", a.device_view, a.device_view, c.device_view, false, false);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
  s = call("ral_gemm", a.device_view, b.device_view, c.device_view, false, false);
  ASSERT_TRUE(s.ok()) << s;
  const auto got = c.download();
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j) {
      float want = 0;
      for (int64_t p = 0; p < 3; ++p) want += a.at({i, p}) * b.at({p, j});
      EXPECT_NEAR(elementOf(c, got, {i, j}), want, 1e-5f);
    }
}

// A GPU kernel given host memory the driver did not allocate says so (naming the operand)
// instead of faulting the device; a device that can read it (HMM) must then get it right. Either
// way the next call works.
TEST_P(Gemm, HostMemoryOnTheDeviceIsAnErrorOrRight) {
  if (onCpu()) GTEST_SKIP() << "host memory is the CPU's device memory";
  Tensor<float, 2> a(*this, {4, 5}, Layout::kDense), b(*this, {5, 3}, Layout::kDense);
  Tensor<float, 2> c(*this, {4, 3}, Layout::kDense);
  for (auto* t : {&a, &b, &c}) {
    t->randomize(rng);
    t->upload();
  }
  auto check_c = [&] {
    const auto got = c.download();
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        float want = 0;
        for (int64_t p = 0; p < 5; ++p) want += a.at({i, p}) * b.at({p, j});
        EXPECT_NEAR(elementOf(c, got, {i, j}), want, 1e-5f);
      }
  };
  Status s = call("ral_gemm", a.host_view, b.device_view, c.device_view, false, false);
  if (s.ok()) {
    check_c();
  } else {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find(" a "), std::string_view::npos) << s;
  }
  s = call("ral_gemm", a.device_view, b.device_view, c.device_view, false, false);
  ASSERT_TRUE(s.ok()) << s;
  check_c();
}

RAL_KERNEL_CTS_INSTANTIATE(Gemm);

class BatchGemm : public KernelTest {
 protected:
  // c[i] = op(a or a[i]) op(b[i]) against float64; RA = 2 broadcasts a over the batch.
  template <int RA>
  void check(int64_t batch, int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
    SCOPED_TRACE(::testing::Message() << "batch " << batch << " a rank " << RA << " " << m << "x"
                                      << n << "x" << k << " ta " << ta << " tb " << tb);
    std::array<int64_t, RA> as{};
    if constexpr (RA == 3) as[0] = batch;
    as[RA - 2] = ta ? k : m;
    as[RA - 1] = ta ? m : k;
    Tensor<float, RA> a(*this, as, Layout::kPadded);
    Tensor<float, 3> b(*this, {batch, tb ? n : k, tb ? k : n}, Layout::kDense);
    Tensor<float, 3> c(*this, {batch, m, n}, Layout::kPadded);
    a.randomize(rng);
    b.randomize(rng);
    c.randomize(rng);
    a.upload();
    b.upload();
    c.upload();
    const Status s = call("ral_batch_gemm", a.device_view, b.device_view, c.device_view, ta, tb);
    ASSERT_TRUE(s.ok()) << s;
    const auto got = c.download();
    forEachIndex<3>({batch, m, n}, [&](const std::array<int64_t, 3>& bij) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p) {
        const int64_t r = ta ? p : bij[1], col = ta ? bij[1] : p;
        double x;
        if constexpr (RA == 3) {
          x = a.at({bij[0], r, col});
        } else {
          x = a.at({r, col});
        }
        want += x * b.at(tb ? std::array{bij[0], bij[2], p} : std::array{bij[0], p, bij[2]});
      }
      ASSERT_NEAR(elementOf(c, got, bij), want, 1e-5 * (1 + static_cast<double>(k)));
    });
    expectOutsideViewUnchanged(c, got);
  }
};

TEST_P(BatchGemm, BroadcastA) {
  check<2>(3, 9, 7, 5, false, true);
  check<2>(2, 16, 1, 33, true, false);
}

TEST_P(BatchGemm, PerBatchA) {
  check<3>(4, 9, 7, 5, true, true);
  check<3>(1, 1, 1, 1, false, false);
  check<3>(0, 3, 3, 3, false, false);
}

RAL_KERNEL_CTS_INSTANTIATE(BatchGemm);

}  // namespace
}  // namespace ral::kernel_cts
