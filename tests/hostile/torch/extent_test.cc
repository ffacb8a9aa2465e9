// io_checks::byteSpanOf, the one extent computation every host (the torch host's storage and
// output checks included) uses: hostile sizes and strides give false or the exact span, never an
// overflow (UBSan builds trap on one).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "ral/io_checks.h"

namespace ral::io_checks {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

ByteSpan spanOf(std::initializer_list<int64_t> sizes, std::initializer_list<int64_t> strides,
                int64_t elem = 4) {
  ByteSpan span{-1, -1};
  EXPECT_TRUE(
      byteSpanOf(sizes.begin(), strides.begin(), static_cast<int>(sizes.size()), elem, &span));
  return span;
}

bool refused(std::initializer_list<int64_t> sizes, std::initializer_list<int64_t> strides,
             int64_t elem = 4) {
  ByteSpan span;
  return !byteSpanOf(sizes.begin(), strides.begin(), static_cast<int>(sizes.size()), elem, &span);
}

TEST(ByteSpanTest, DenseStridedZeroAndNegativeStrides) {
  EXPECT_EQ(spanOf({2, 3}, {3, 1}).end, 24);
  EXPECT_EQ(spanOf({2, 3}, {3, 1}).begin, 0);
  EXPECT_EQ(spanOf({3, 2}, {1, 3}).end, 24);             // transposed
  EXPECT_EQ(spanOf({4, 5}, {0, 1}).end, 20);             // expand(): a zero stride counts once
  EXPECT_EQ(spanOf({1 << 20, 1 << 20}, {0, 0}).end, 4);  // 2^40 elements over one
  const ByteSpan back = spanOf({3, 2}, {-2, 1});         // a flipped view reaches below its first
  EXPECT_EQ(back.begin, -16);
  EXPECT_EQ(back.end, 8);
  EXPECT_EQ(spanOf({}, {}).end, 4);  // a scalar
  EXPECT_EQ(spanOf({5}, {7}, 0).end, 0);
}

TEST(ByteSpanTest, EmptyViewsReachNothingWhateverTheirStrides) {
  for (const ByteSpan s :
       {spanOf({0}, {1}), spanOf({0, 5}, {kMax, kMin}), spanOf({5, 0}, {kMax, 1}),
        spanOf({int64_t{1} << 48, 0}, {kMax, kMax})}) {
    EXPECT_EQ(s.begin, 0);
    EXPECT_EQ(s.end, 0);
  }
}

TEST(ByteSpanTest, OverflowingSizesAndStridesAreRefused) {
  EXPECT_TRUE(refused({-1}, {1}));
  EXPECT_TRUE(refused({int64_t{1} << 62}, {0}));  // expand(2**62)
  EXPECT_TRUE(refused({int64_t{1} << 40, int64_t{1} << 40}, {0, 0}));
  EXPECT_TRUE(refused({kMax, kMax}, {1, 1}));
  EXPECT_TRUE(refused({2}, {int64_t{1} << 62}));  // as_strided with a huge stride
  EXPECT_TRUE(refused({2}, {kMax}));
  EXPECT_TRUE(refused({2}, {kMin}));
  EXPECT_TRUE(refused({2, 2, 2, 2, 2, 2, 2, 2}, {kMax, kMax, kMax, kMax, kMax, kMax, kMax, kMax}));
  EXPECT_TRUE(refused({2, 2, 2, 2, 2, 2, 2, 2}, {kMin, kMin, kMin, kMin, kMin, kMin, kMin, kMin}));
  EXPECT_TRUE(
      refused({2, 2}, {(int64_t{1} << 47) + 1, int64_t{1} << 47}));  // each within, not the sum
  EXPECT_TRUE(refused({3}, {1}, -1));
  EXPECT_TRUE(refused({3}, {int64_t{1} << 40}, kMax));  // in range in elements, not in bytes
  // At the limit: 2^48 elements apart is accepted, one more is not.
  EXPECT_EQ(spanOf({2}, {kMaxElements}, 1).end, kMaxElements + 1);
  EXPECT_TRUE(refused({2}, {kMaxElements + 1}, 1));
}

}  // namespace
}  // namespace ral::io_checks
