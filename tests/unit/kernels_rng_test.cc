// Philox4x32-10 known-answer vectors, the documented bits -> float mapping, Box-Muller against
// libm, independence from thread count and layout, stream offsets, statistics, bad arguments.
#include <gtest/gtest.h>

#include <cstring>

#include "drivers/cpu/cpu_driver.h"
#include "kernels/rng/philox.h"
#include "tests/support/kernels_test_util.h"

namespace ral::testing {
namespace {

// Random123 kat_vectors for philox4x32_10.
TEST(PhiloxTest, KnownAnswerVectors) {
  struct Kat {
    philox::Block ctr;
    uint32_t k0, k1;
    philox::Block expect;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
       0xffffffffu,
       0xffffffffu,
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
       0xa4093822u,
       0x299f31d0u,
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const Kat& kat : kats) {
    const philox::Block out = philox::philox4x32_10(kat.ctr, kat.k0, kat.k1);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out.w[i], kat.expect.w[i]) << "word " << i;
  }
  // The stream maps (seed, offset + block) to key and counter as documented.
  const philox::Block s = philox::streamBlock(0x299f31d0a4093822ull, 0x85a308d3243f6a88ull, 0);
  const philox::Block d =
      philox::philox4x32_10({{0x243f6a88u, 0x85a308d3u, 0, 0}}, 0xa4093822u, 0x299f31d0u);
  EXPECT_EQ(std::memcmp(&s, &d, sizeof(s)), 0);
  const philox::Block wrap = philox::streamBlock(1, ~uint64_t{0}, 2);  // counter wraps to 1
  const philox::Block one = philox::philox4x32_10({{1, 0, 0, 0}}, 1, 0);
  EXPECT_EQ(std::memcmp(&wrap, &one, sizeof(one)), 0);
}

TEST(PhiloxTest, ElementaryFunctionsAreAccurate) {
  for (float x : {1.0f, 0.5f, 0.75f, 1e-7f, 5.9604645e-08f, 0.999999f, 0.3f}) {
    EXPECT_NEAR(philox::logf01(x), std::log(static_cast<double>(x)),
                2e-7 * std::abs(std::log(x)) + 1e-7);
  }
  for (double x : {1.0, 0.5, 1e-15, 0.123456789, 0.9999999999}) {
    EXPECT_NEAR(philox::log01(x), std::log(x), 1e-15 * std::abs(std::log(x)) + 1e-16);
  }
  for (uint32_t k = 0; k < (1u << 24); k += 4099) {
    float s, c;
    philox::sinCos24(k, &s, &c);
    const double theta = 2 * M_PI * k / 16777216.0;
    ASSERT_NEAR(s, std::sin(theta), 3e-7) << k;
    ASSERT_NEAR(c, std::cos(theta), 3e-7) << k;
    double sd, cd;
    const double k53 = static_cast<double>(k) * 536870912.0 + 12345;  // spread over 2^53
    philox::sinCos53(k53, &sd, &cd);
    const long double t = 2.0L * 3.141592653589793238462643383279L * k53 / 9007199254740992.0L;
    ASSERT_NEAR(sd, std::sin(t), 1e-15);
    ASSERT_NEAR(cd, std::cos(t), 1e-15);
  }
}

// The documented mapping, written out independently of the kernel.
template <typename T>
double expectedUniform(uint64_t seed, uint64_t offset, int64_t i, double lo, double hi) {
  if constexpr (std::is_same_v<T, double>) {
    const philox::Block b = philox::streamBlock(seed, offset, i / 2);
    const uint32_t a = b.w[2 * (i % 2)], c = b.w[2 * (i % 2) + 1];
    const uint64_t bits = (static_cast<uint64_t>(a >> 5) << 26) | (c >> 6);
    return lo + static_cast<double>(bits) / 9007199254740992.0 * (hi - lo);
  } else {
    const philox::Block b = philox::streamBlock(seed, offset, i / 4);
    const uint32_t w = b.w[i % 4];
    const int bits = std::is_same_v<T, float> ? 24 : std::is_same_v<T, float16> ? 11 : 8;
    const float u = static_cast<float>(w >> (32 - bits)) / static_cast<float>(1u << bits);
    const float l = static_cast<float>(lo), h = static_cast<float>(hi);
    const float span = h - l;
    const float scaled = u * span;
    return toDouble(fromDouble<T>(l + scaled));
  }
}

// Box-Muller with libm on the same words.
template <typename T>
double expectedNormal(uint64_t seed, uint64_t offset, int64_t i) {
  if constexpr (std::is_same_v<T, double>) {
    const philox::Block b = philox::streamBlock(seed, offset, i / 2);
    const double u1 =
        (static_cast<double>((static_cast<uint64_t>(b.w[0] >> 5) << 26) | (b.w[1] >> 6)) + 1) /
        9007199254740992.0;
    const double u2 =
        static_cast<double>((static_cast<uint64_t>(b.w[2] >> 5) << 26) | (b.w[3] >> 6)) /
        9007199254740992.0;
    const double r = std::sqrt(-2 * std::log(u1));
    return i % 2 == 0 ? r * std::cos(2 * M_PI * u2) : r * std::sin(2 * M_PI * u2);
  } else {
    const philox::Block b = philox::streamBlock(seed, offset, i / 4);
    const int p = (i % 4) / 2;
    const double u1 = ((b.w[2 * p] >> 8) + 1) / 16777216.0;
    const double u2 = (b.w[2 * p + 1] >> 8) / 16777216.0;
    const double r = std::sqrt(-2 * std::log(u1));
    return i % 2 == 0 ? r * std::cos(2 * M_PI * u2) : r * std::sin(2 * M_PI * u2);
  }
}

template <typename T>
class RngTest : public ::testing::Test {};
using RngTypes = ::testing::Types<float, double, float16, bfloat16>;
TYPED_TEST_SUITE(RngTest, RngTypes);

TYPED_TEST(RngTest, UniformFollowsTheDocumentedMapping) {
  using T = TypeParam;
  Context context;
  for (Layout layout : {Layout::kDense, Layout::kPadded, Layout::kColumnMajor}) {
    for (auto bounds : {std::pair<double, double>{0, 1}, {-2.5, 4}}) {
      Buffer<T, 3> out({3, 7, 5}, layout);
      const uint64_t seed = 0x1234567890abcdefull, offset = 77;
      const T lo = fromDouble<T>(bounds.first), hi = fromDouble<T>(bounds.second);
      ASSERT_TRUE(callCpu(context, "ral_rng_uniform", out.view, seed, offset, lo, hi).ok());
      for (int64_t i = 0; i < out.numel(); ++i) {
        const double got = toDouble(out.at(i));
        ASSERT_EQ(got, expectedUniform<T>(seed, offset, i, bounds.first, bounds.second))
            << layoutName(layout) << " element " << i;
        ASSERT_GE(got, bounds.first);
        if (bounds.second == 1) {
          ASSERT_LT(got, 1.0);
        }
      }
    }
  }
}

TYPED_TEST(RngTest, NormalIsBoxMullerOnTheSameWords) {
  using T = TypeParam;
  Context context;
  Buffer<T, 2> out({37, 29}, Layout::kPadded);
  const uint64_t seed = 99, offset = 5;
  ASSERT_TRUE(
      callCpu(context, "ral_rng_normal", out.view, seed, offset, fromDouble<T>(0), fromDouble<T>(1))
          .ok());
  const double rel = std::is_same_v<T, double>    ? 1e-13
                     : std::is_same_v<T, float>   ? 2e-6
                     : std::is_same_v<T, float16> ? 1e-3
                                                  : 8e-3;
  for (int64_t i = 0; i < out.numel(); ++i) {
    const double want = expectedNormal<T>(seed, offset, i);
    ASSERT_NEAR(toDouble(out.at(i)), want, rel * std::max(1.0, std::abs(want))) << i;
  }
  // mean + stddev * z
  Buffer<T, 2> scaled({37, 29}, Layout::kDense);
  ASSERT_TRUE(callCpu(context, "ral_rng_normal", scaled.view, seed, offset, fromDouble<T>(3),
                      fromDouble<T>(0.5))
                  .ok());
  for (int64_t i = 0; i < out.numel(); ++i) {
    const double want = 3 + 0.5 * expectedNormal<T>(seed, offset, i);
    ASSERT_NEAR(toDouble(scaled.at(i)), want, rel * std::max(1.0, std::abs(want)) * 4) << i;
  }
}

template <typename T>
std::vector<uint8_t> generate(Context& context, const char* target, int64_t n, uint64_t seed,
                              uint64_t offset) {
  Buffer<T, 1> out({n}, Layout::kDense);
  Status s = callCpu(context, target, out.view, seed, offset, fromDouble<T>(0), fromDouble<T>(1));
  EXPECT_TRUE(s.ok()) << s;
  std::vector<uint8_t> bytes(n * sizeof(T));
  std::memcpy(bytes.data(), out.view.data(), bytes.size());
  return bytes;
}

TYPED_TEST(RngTest, SameBitsForOneOrManyPoolThreads) {
  using T = TypeParam;
  Context one, many;
  ASSERT_TRUE(one.setDriverFactory(DeviceKind::kCpu, cpu::cpuDriverFactory({1, {}})).ok());
  ASSERT_TRUE(many.setDriverFactory(DeviceKind::kCpu, cpu::cpuDriverFactory({4, {}})).ok());
  for (const char* target : {"ral_rng_uniform", "ral_rng_normal"}) {
    const int64_t n = 100003;
    EXPECT_EQ(generate<T>(one, target, n, 2024, 0), generate<T>(many, target, n, 2024, 0))
        << target;
  }
}

TYPED_TEST(RngTest, OffsetsContinueTheStream) {
  using T = TypeParam;
  Context context;
  const bool f64 = std::is_same_v<T, double>;
  const auto whole = generate<T>(context, "ral_rng_normal", 16, 5, 10);
  const auto first = generate<T>(context, "ral_rng_normal", 8, 5, 10);
  const auto second = generate<T>(context, "ral_rng_normal", 8, 5, 10 + philox::blocksFor(f64, 8));
  std::vector<uint8_t> joined = first;
  joined.insert(joined.end(), second.begin(), second.end());
  EXPECT_EQ(whole, joined);
  EXPECT_NE(generate<T>(context, "ral_rng_uniform", 64, 5, 0),
            generate<T>(context, "ral_rng_uniform", 64, 6, 0));
}

TYPED_TEST(RngTest, Statistics) {
  using T = TypeParam;
  Context context;
  const int64_t n = 200000;
  Buffer<T, 1> u({n}, Layout::kDense), z({n}, Layout::kDense);
  ASSERT_TRUE(callCpu(context, "ral_rng_uniform", u.view, uint64_t{1}, uint64_t{0},
                      fromDouble<T>(0), fromDouble<T>(1))
                  .ok());
  ASSERT_TRUE(callCpu(context, "ral_rng_normal", z.view, uint64_t{1}, uint64_t{0}, fromDouble<T>(0),
                      fromDouble<T>(1))
                  .ok());
  double su = 0, sz = 0, szz = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = toDouble(u.at(i));
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    su += x;
    sz += toDouble(z.at(i));
    szz += toDouble(z.at(i)) * toDouble(z.at(i));
  }
  const double step = std::is_same_v<T, bfloat16> ? 1.0 / 256 : 0;  // bf16 mean is 0.5 - 1/512
  EXPECT_NEAR(su / n, 0.5 - step / 2, 0.005);
  EXPECT_NEAR(sz / n, 0.0, 0.01);
  EXPECT_NEAR(szz / n, 1.0, 0.02);
}

TEST(RngErrorTest, BadArgumentsAreContextErrors) {
  Context context;
  Buffer<float, 1> out({16}, Layout::kDense);
  EXPECT_EQ(
      callCpu(context, "ral_rng_uniform", out.view, uint64_t{1}, uint64_t{0}, 2.0f, 1.0f).code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(
      callCpu(context, "ral_rng_uniform", out.view, uint64_t{1}, uint64_t{0}, 0.0f, NAN).code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(
      callCpu(context, "ral_rng_normal", out.view, uint64_t{1}, uint64_t{0}, 0.0f, -1.0f).code(),
      StatusCode::kInvalidArgument);
  MemRef<float, 1> null_out = out.view;
  null_out.aligned = nullptr;
  EXPECT_EQ(
      callCpu(context, "ral_rng_normal", null_out, uint64_t{1}, uint64_t{0}, 0.0f, 1.0f).code(),
      StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      callCpu(context, "ral_rng_uniform", out.view, uint64_t{1}, uint64_t{0}, 0.0f, 1.0f).ok());
  EXPECT_EQ((cpuName<MemRef<float, 2>, uint64_t, uint64_t, float, float>("ral_rng_uniform")),
            "ral_rng_uniform___cpu___pvoid_m2df32_ui64_ui64_f32_f32___void");
}

}  // namespace
}  // namespace ral::testing
