// float16 / bfloat16 conversions against independent references: values computed with ldexp
// in double, nearest-even chosen by explicit comparison, and (where the compiler has it)
// the hardware-defined _Float16 conversion.
#include "ral/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ral {
namespace {

float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t floatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Value of a finite half, computed from its definition.
double halfValue(uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(static_cast<double>(mant), -24);
  return sign * std::ldexp(1.0 + mant / 1024.0, exp - 15);
}

// Nearest half to a finite float, ties to even, by search over the positive halves.
uint16_t referenceHalf(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  if (a >= 65520.0) return sign | 0x7c00;  // half-way to 2^16 and beyond: overflow
  uint16_t lo = 0, hi = 0x7bff;            // largest h with value(h) <= a
  while (lo < hi) {
    const uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
    if (halfValue(mid) <= a)
      lo = mid;
    else
      hi = static_cast<uint16_t>(mid - 1);
  }
  if (lo == 0x7bff) return sign | lo;
  const double d0 = a - halfValue(lo), d1 = halfValue(static_cast<uint16_t>(lo + 1)) - a;
  if (d0 < d1 || (d0 == d1 && (lo & 1) == 0)) return sign | lo;
  return sign | static_cast<uint16_t>(lo + 1);
}

uint16_t referenceBFloat16(float f) {
  const uint32_t x = floatToBits(f);
  const uint32_t lo = x & 0xffff0000u;
  const double v = f, vlo = bitsToFloat(lo);
  const double vhi = (lo & 0x7fffffffu) == 0x7f7f0000u
                         ? std::ldexp(1.0, 128) * ((x >> 31) ? -1 : 1)  // rounds to inf
                         : static_cast<double>(bitsToFloat(lo + 0x10000u));
  const double d0 = std::fabs(v - vlo), d1 = std::fabs(vhi - v);
  if (d0 < d1 || (d0 == d1 && ((lo >> 16) & 1) == 0)) return static_cast<uint16_t>(lo >> 16);
  return static_cast<uint16_t>((lo + 0x10000u) >> 16);
}

std::vector<float> interestingFloats() {
  std::vector<float> out;
  // A wide sample of all bit patterns.
  for (uint64_t u = 0; u < (1ull << 32); u += 7919)
    out.push_back(bitsToFloat(static_cast<uint32_t>(u)));
  // Every half value, every half-way point between neighbours, and one float step around each.
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const double mid =
        (halfValue(static_cast<uint16_t>(h)) + halfValue(static_cast<uint16_t>(h + 1))) / 2;
    for (double v : {halfValue(static_cast<uint16_t>(h)), mid}) {
      const float f = static_cast<float>(v);
      for (float g : {f, std::nextafter(f, 0.0f), std::nextafter(f, 1e30f)}) {
        out.push_back(g);
        out.push_back(-g);
      }
    }
  }
  // Every bfloat16 half-way point (low 16 bits 0x8000) and its neighbours.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint32_t mid = (b << 16) | 0x8000u;
    for (uint32_t u : {mid - 1, mid, mid + 1}) out.push_back(bitsToFloat(u));
  }
  return out;
}

TEST(HalfTest, HalfToFloatIsExactForEveryBitPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = halfBitsToFloat(static_cast<uint16_t>(h));
    const int exp = (h >> 10) & 0x1f;
    if (exp == 0x1f) {
      if (h & 0x3ff) {
        EXPECT_TRUE(std::isnan(f)) << h;
      } else {
        EXPECT_TRUE(std::isinf(f)) << h;
        EXPECT_EQ(std::signbit(f), (h & 0x8000) != 0);
      }
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), halfValue(static_cast<uint16_t>(h))) << std::hex << h;
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << h;
    // Round trip: every half value converts back to itself.
    ASSERT_EQ(floatToHalfBits(f), h) << std::hex << h;
  }
}

TEST(HalfTest, FloatToHalfRoundsToNearestEven) {
  size_t checked = 0;
  for (float f : interestingFloats()) {
    if (std::isnan(f)) continue;
    const uint16_t got = floatToHalfBits(f);
    if (std::isinf(f)) {
      ASSERT_EQ(got, std::signbit(f) ? 0xfc00 : 0x7c00);
      continue;
    }
    ASSERT_EQ(got, referenceHalf(f)) << std::hexfloat << f;
    ++checked;
  }
  EXPECT_GT(checked, 500000u);
}

#ifdef __FLT16_MAX__
TEST(HalfTest, MatchesCompilerFloat16) {
  for (float f : interestingFloats()) {
    if (std::isnan(f)) continue;
    const _Float16 h = static_cast<_Float16>(f);
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    ASSERT_EQ(floatToHalfBits(f), bits) << std::hexfloat << f;
  }
}
#endif

TEST(HalfTest, NaNStaysNaN) {
  const float qnan = std::nanf("");
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(qnan))));
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(-qnan))));
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(bitsToFloat(0x7f800001u)))));  // sNaN
  EXPECT_TRUE(std::isnan(bfloat16BitsToFloat(floatToBFloat16Bits(bitsToFloat(0x7f800001u)))));
  EXPECT_TRUE(std::isnan(bfloat16BitsToFloat(floatToBFloat16Bits(qnan))));
}

TEST(BFloat16Test, ToFloatIsExactAndRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bfloat16BitsToFloat(static_cast<uint16_t>(b));
    ASSERT_EQ(floatToBits(f), b << 16);
    if (std::isnan(f)) continue;
    ASSERT_EQ(floatToBFloat16Bits(f), b) << std::hex << b;
  }
}

TEST(BFloat16Test, FloatToBFloat16RoundsToNearestEven) {
  for (float f : interestingFloats()) {
    if (std::isnan(f)) continue;
    ASSERT_EQ(floatToBFloat16Bits(f), referenceBFloat16(f)) << std::hexfloat << f;
  }
}

TEST(HalfTest, StorageTypes) {
  EXPECT_EQ(static_cast<float>(float16(1.5f)), 1.5f);
  EXPECT_EQ(float16(65504.0f).bits, 0x7bff);
  EXPECT_EQ(float16(1e6f).bits, 0x7c00);
  EXPECT_EQ(float16::fromBits(0x3c00).toFloat(), 1.0f);
  EXPECT_EQ(static_cast<float>(bfloat16(3.0f)), 3.0f);
  EXPECT_EQ(bfloat16(1.00390625f).bits, 0x3f80);  // tie (1 + 2^-8) rounds to even 1.0
  EXPECT_EQ(bfloat16(1.01171875f).bits, 0x3f82);  // tie (1 + 3*2^-8) rounds up to even
}

}  // namespace
}  // namespace ral
