#include "ral/memref.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace ral {
namespace {

TEST(MemRefTest, RowMajorHelpers) {
  std::vector<float> buf(24);
  std::iota(buf.begin(), buf.end(), 0.0f);
  auto m = makeMemRef<float, 3>(buf.data(), {2, 3, 4});
  EXPECT_EQ(m.numel(), 24);
  EXPECT_TRUE(m.isContiguous());
  EXPECT_EQ(m.strides[0], 12);
  EXPECT_EQ(m.strides[2], 1);
  EXPECT_EQ(m(1, 2, 3), 23.0f);
  EXPECT_EQ(m.at({0, 1, 2}), 6.0f);
}

TEST(MemRefTest, StridedViewIsNotContiguous) {
  std::vector<int32_t> buf(12);
  std::iota(buf.begin(), buf.end(), 0);
  // Transposed view of a 3x4 matrix.
  MemRef<int32_t, 2> t{buf.data(), buf.data(), 0, {4, 3}, {1, 4}};
  EXPECT_FALSE(t.isContiguous());
  EXPECT_EQ(t(3, 2), 11);
  // Column 1 with an offset.
  MemRef<int32_t, 1> col{buf.data(), buf.data(), 1, {3}, {4}};
  EXPECT_EQ(col(2), 9);
  EXPECT_EQ(col.data(), buf.data() + 1);
  // Size-1 dims may have any stride.
  MemRef<int32_t, 2> row{buf.data(), buf.data(), 0, {1, 4}, {999, 1}};
  EXPECT_TRUE(row.isContiguous());
}

TEST(MemRefTest, RankZeroAndEmpty) {
  double x = 2.5;
  auto s = makeMemRef<double, 0>(&x, {});
  EXPECT_EQ(s(), 2.5);
  EXPECT_EQ(s.numel(), 1);
  static_assert(sizeof(s) == 24);
  float dummy = 0;
  auto e = makeMemRef<float, 2>(&dummy, {0, 5});
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(e.numel(), 0);
}

TEST(MemRefTest, LayoutMatchesMlirDescriptor) {
  // {allocated, aligned, offset, sizes[N], strides[N]} as consecutive 8-byte words.
  MemRef<float, 8> m{};
  auto* words = reinterpret_cast<int64_t*>(&m);
  m.offset = 7;
  m.sizes[0] = 11;
  m.strides[7] = 13;
  EXPECT_EQ(words[2], 7);
  EXPECT_EQ(words[3], 11);
  EXPECT_EQ(words[3 + 8 + 7], 13);
  EXPECT_EQ(sizeof(m), (3 + 16) * 8u);
}

}  // namespace
}  // namespace ral
