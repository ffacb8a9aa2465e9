// ral_rng_uniform on every device bit for bit against the CPU kernel (the Philox stream's
// reference, checked against known answers in tests/unit/kernels_rng_test.cc), in every layout,
// with offsets that carry into the counter's high word; every value within [low, high]; bad
// bounds an error. ral_rng_normal the same way, with its sample moments checked.
#include <cmath>
#include <cstring>

#include "tensor.h"

namespace ral::kernel_cts {
namespace {

using ::ral::testing::toDouble;

class RngUniform : public KernelTest {
 protected:
  template <typename T, int N>
  void check(const std::array<int64_t, N>& sizes, Layout layout, uint64_t seed, uint64_t offset,
             T low, T high) {
    SCOPED_TRACE(::testing::Message() << "rank " << N << " elem " << sizeof(T) << " layout "
                                      << layoutName(layout) << " seed " << seed << " offset "
                                      << offset);
    Tensor<T, N> out(*this, sizes, layout);
    out.randomize(rng);
    out.upload();
    ASSERT_TRUE(callCpu("ral_rng_uniform", out.host_view, seed, offset, low, high).ok());
    const Status s = call("ral_rng_uniform", out.device_view, seed, offset, low, high);
    ASSERT_TRUE(s.ok()) << s;
    const auto got = out.download();
    ASSERT_EQ(got.size(), out.bytes());
    size_t mismatches = 0;
    for (size_t i = 0; i < got.size(); ++i) mismatches += got[i] != out.host()[i];
    EXPECT_EQ(mismatches, 0u) << "bytes differ from the CPU's Philox stream";
    forEachIndex<N>(sizes, [&](const std::array<int64_t, N>& index) {
      const double v = toDouble(out.at(index));
      ASSERT_TRUE(v >= toDouble(low) && v <= toDouble(high)) << v;
    });
  }
};

TEST_P(RngUniform, F32) {
  check<float, 1>({1}, Layout::kDense, 0, 0, 0.0f, 1.0f);
  check<float, 1>({100003}, Layout::kDense, 42, 7, 0.0f, 1.0f);
  check<float, 2>({129, 67}, Layout::kPadded, 0xdeadbeefcafef00dull, 12345, -3.5f, 2.25f);
  // The 64-bit counter carries.
  check<float, 3>({7, 9, 11}, Layout::kColumnMajor, 99, 0xfffffffeull, -1e-3f, 1e3f);
  check<float, 4>({3, 5, 7, 9}, Layout::kDense, 1, 0, 0.1f, 0.1000001f);
  check<float, 2>({0, 5}, Layout::kDense, 1, 0, 0.0f, 1.0f);
  check<float, 2>({300, 300}, Layout::kDense, 3, 1, 0.0f, 1.0f);
}

TEST_P(RngUniform, F64) {
  check<double, 1>({100001}, Layout::kDense, 7, 3, 0.0, 1.0);
  check<double, 2>({33, 65}, Layout::kPadded, 0x123456789abcdefull, 0x1ffffffffull, -10.0, 1e6);
  check<double, 4>({2, 3, 5, 7}, Layout::kColumnMajor, 5, 11, -0.5, 0.5);
  check<double, 2>({1, 3}, Layout::kDense, 9, 0, 0.0, 1.0);  // half a Philox block
}

TEST_P(RngUniform, F16) {
  check<float16, 2>({37, 29}, Layout::kPadded, 0x1234567890abcdefull, 77, float16(0.0f),
                    float16(1.0f));
  check<float16, 1>({1}, Layout::kDense, 1, 0, float16(-2.0f), float16(2.0f));
}

TEST_P(RngUniform, BF16) {
  check<bfloat16, 2>({37, 29}, Layout::kColumnMajor, 0x1234567890abcdefull, 77, bfloat16(-4.0f),
                     bfloat16(4.0f));
  check<bfloat16, 1>({5}, Layout::kDense, 2, 1, bfloat16(0.0f), bfloat16(1.0f));
}

TEST_P(RngUniform, BoundsThatCrossAreAnError) {
  Tensor<float, 1> out(*this, {16}, Layout::kDense);
  out.upload();
  Status s = call("ral_rng_uniform", out.device_view, uint64_t{1}, uint64_t{0}, 2.0f, 1.0f);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
  s = call("ral_rng_uniform", out.device_view, uint64_t{1}, uint64_t{0}, 1.0f, 2.0f);
  EXPECT_TRUE(s.ok()) << s;
}

RAL_KERNEL_CTS_INSTANTIATE(RngUniform);

class RngNormal : public KernelTest {
 protected:
  // 20000 draws of normal(mean, stddev) into a padded view: bit for bit the CPU's, and their
  // sample mean and deviation within 5 standard errors of the parameters.
  template <typename T>
  void check(double mean, double stddev) {
    SCOPED_TRACE(::testing::Message() << "elem " << sizeof(T) << " mean " << mean << " stddev "
                                      << stddev);
    Tensor<T, 2> out(*this, {100, 200}, Layout::kPadded);
    out.upload();
    const uint64_t seed = 0x5eed, offset = 3;
    const T m = static_cast<T>(mean), sd = static_cast<T>(stddev);
    ASSERT_TRUE(callCpu("ral_rng_normal", out.host_view, seed, offset, m, sd).ok());
    const Status s = call("ral_rng_normal", out.device_view, seed, offset, m, sd);
    ASSERT_TRUE(s.ok()) << s;
    const auto got = out.download();
    EXPECT_EQ(std::memcmp(got.data(), out.host(), out.bytes()), 0)
        << "bytes differ from the CPU's stream";
    double sum = 0, squares = 0;
    const double n = 100 * 200;
    forEachIndex<2>({100, 200}, [&](const std::array<int64_t, 2>& i) {
      const double v = out.at(i);
      sum += v;
      squares += v * v;
    });
    const double sample_mean = sum / n;
    const double sample_sd = std::sqrt(squares / n - sample_mean * sample_mean);
    EXPECT_NEAR(sample_mean, mean, 5 * stddev / std::sqrt(n));
    EXPECT_NEAR(sample_sd, stddev, 5 * stddev / std::sqrt(2 * n));
  }
};

TEST_P(RngNormal, F32) { check<float>(1.5, 0.25); }
TEST_P(RngNormal, F64) { check<double>(-3.0, 2.0); }

RAL_KERNEL_CTS_INSTANTIATE(RngNormal);

}  // namespace
}  // namespace ral::kernel_cts
