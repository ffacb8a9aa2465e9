// The layout contract's core rules (ral/layout.h), which every host context applies.
#include "ral/layout.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace ral {
namespace {

TensorSignature sig(std::vector<int64_t> dims, std::vector<int64_t> strides = {}) {
  TensorSignature s;
  s.dtype = DType::kF32;
  s.dims = std::move(dims);
  s.strides = std::move(strides);
  return s;
}

bool accepts(const TensorSignature& s, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  return layoutAccepts(s, sizes.data(), strides.data(), static_cast<int>(sizes.size()));
}

constexpr int64_t kAny = kDynamicDim;

TEST(LayoutTest, IdentityAcceptsRowMajorViewsOnly) {
  const TensorSignature s = sig({kAny, kAny});
  EXPECT_TRUE(accepts(s, {3, 4}, {4, 1}));
  EXPECT_FALSE(accepts(s, {3, 4}, {1, 3}));  // transposed / Fortran order
  EXPECT_FALSE(accepts(s, {3, 4}, {9, 1}));  // a column slice of a wider tensor
  EXPECT_FALSE(accepts(s, {3, 4}, {8, 2}));  // stepped
  EXPECT_FALSE(accepts(s, {3, 4}, {0, 1}));  // expanded rows
  // Strides of size-1 dimensions are never used, and nothing of an empty view is.
  EXPECT_TRUE(accepts(s, {1, 4}, {77, 1}));
  EXPECT_TRUE(accepts(s, {3, 1}, {1, 5}));
  EXPECT_TRUE(accepts(s, {0, 4}, {1, 0}));
  EXPECT_TRUE(accepts(s, {3, 0}, {5, 9}));
  EXPECT_TRUE(accepts(sig({}), {}, {}));
  const TensorSignature r3 = sig({kAny, kAny, kAny});
  EXPECT_TRUE(accepts(r3, {2, 1, 5}, {5, 123, 1}));
  EXPECT_FALSE(accepts(r3, {2, 3, 5}, {16, 5, 1}));
}

TEST(LayoutTest, StridedLayoutsCheckTheirFixedStrides) {
  const TensorSignature rows = sig({kAny, kAny}, {kAny, 1});
  EXPECT_TRUE(accepts(rows, {3, 4}, {4, 1}));
  EXPECT_TRUE(accepts(rows, {3, 4}, {9, 1}));   // row stride is free
  EXPECT_TRUE(accepts(rows, {3, 4}, {0, 1}));   // even broadcast rows
  EXPECT_FALSE(accepts(rows, {3, 4}, {1, 3}));  // columns must be dense
  EXPECT_TRUE(accepts(rows, {3, 1}, {1, 3}));   // ... unless there is one
  const TensorSignature any = sig({kAny, kAny}, {kAny, kAny});
  EXPECT_TRUE(accepts(any, {3, 4}, {1, 3}));
  EXPECT_TRUE(accepts(any, {3, 4}, {0, 0}));
  const TensorSignature fixed = sig({kAny, 4}, {8, 1});
  EXPECT_TRUE(accepts(fixed, {3, 4}, {8, 1}));
  EXPECT_FALSE(accepts(fixed, {3, 4}, {4, 1}));
}

TEST(LayoutTest, LayoutForFillsOpenStridesRowMajor) {
  int64_t strides[3];
  const int64_t sizes[] = {3, 4, 5};
  auto n = layoutFor(sig({kAny, kAny, kAny}), sizes, 3, strides);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 60);
  EXPECT_EQ(std::vector<int64_t>(strides, strides + 3), (std::vector<int64_t>{20, 5, 1}));

  n = layoutFor(sig({kAny, kAny, kAny}, {kAny, 8, 1}), sizes, 3, strides);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(std::vector<int64_t>(strides, strides + 3), (std::vector<int64_t>{29, 8, 1}));
  EXPECT_EQ(*n, 2 * 29 + 3 * 8 + 4 + 1);

  const int64_t empty[] = {0, 4, 5};
  n = layoutFor(sig({kAny, kAny, kAny}), empty, 3, strides);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0);
  EXPECT_EQ(std::vector<int64_t>(strides, strides + 3), (std::vector<int64_t>{20, 5, 1}));

  // Column-major, written as a fixed layout.
  const int64_t mat[] = {3, 4};
  n = layoutFor(sig({3, kAny}, {1, 3}), mat, 2, strides);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 12);
}

TEST(LayoutTest, LayoutForRefusesOverlappingOrHugeLayouts) {
  int64_t strides[2];
  const int64_t sizes[] = {3, 4};
  for (const std::vector<int64_t>& bad :
       std::vector<std::vector<int64_t>>{{1, 1}, {0, 1}, {2, 1}, {kAny, 0}}) {
    auto n = layoutFor(sig({kAny, kAny}, bad), sizes, 2, strides);
    EXPECT_EQ(n.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(n.status().message().find("overlap"), std::string::npos) << n.status();
  }
  // A size-1 dimension's stride may be anything.
  const int64_t thin[] = {1, 4};
  EXPECT_TRUE(layoutFor(sig({kAny, kAny}, {0, 1}), thin, 2, strides).ok());
  auto huge = layoutFor(sig({kAny, kAny}, {int64_t{1} << 50, 1}), sizes, 2, strides);
  EXPECT_NE(huge.status().message().find("2^48"), std::string::npos) << huge.status();
}

TEST(LayoutTest, ChooseInputBindingCopiesOrRefuses) {
  const TensorSignature s = sig({kAny, 4});
  const int64_t sizes[] = {3, 4};
  const int64_t row_major[] = {4, 1}, transposed[] = {1, 3};
  EXPECT_EQ(*chooseInputBinding(s, 0, sizes, row_major, 2, true), InputBinding::kAsIs);
  EXPECT_EQ(*chooseInputBinding(s, 0, sizes, transposed, 2, false), InputBinding::kCopy);
  auto strict = chooseInputBinding(s, 2, sizes, transposed, 2, true);
  ASSERT_FALSE(strict.ok());
  const std::string m(strict.status().message());
  for (const char* part : {"input 2", "3x4xf32", "strides [1,3]", "row-major", "strict zero-copy"})
    EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
}

// Reads element `i` (row-major numbering) of a view.
template <typename T>
T at(const T* base, const std::vector<int64_t>& sizes, const int64_t* strides, int64_t i) {
  int64_t off = 0;
  for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
    off += (i % sizes[d]) * strides[d];
    i /= sizes[d];
  }
  return base[off];
}

TEST(LayoutTest, CopyStridedMatchesElementwiseReference) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int rank = static_cast<int>(rng() % 5);
    std::vector<int64_t> sizes(rank);
    for (auto& s : sizes) s = rng() % 5;  // includes 0 and 1
    const int64_t numel = std::accumulate(sizes.begin(), sizes.end(), int64_t{1},
                                          [](int64_t a, int64_t b) { return a * b; });
    // A source view: a permuted, stepped layout inside a bigger buffer (or broadcast rows).
    std::vector<int64_t> src_strides(rank), perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    int64_t span = 1;
    for (int k = 0; k < rank; ++k) {
      const int d = static_cast<int>(perm[k]);
      src_strides[d] = rng() % 7 == 0 ? 0 : span * (1 + rng() % 2);
      span += std::max<int64_t>(src_strides[d], 1) * std::max<int64_t>(sizes[d], 1) * 2;
    }
    std::vector<double> src(span);
    for (auto& v : src) v = static_cast<double>(rng() % 1000);
    std::vector<int64_t> dst_strides(rank);
    TensorSignature target = sig(std::vector<int64_t>(rank, kAny));
    auto n = layoutFor(target, sizes.data(), rank, dst_strides.data());
    ASSERT_TRUE(n.ok()) << n.status();
    std::vector<double> dst(std::max<int64_t>(*n, 1), -1);
    copyStrided(dst.data(), dst_strides.data(), src.data(), src_strides.data(), sizes.data(), rank,
                sizeof(double));
    for (int64_t i = 0; i < numel; ++i)
      ASSERT_EQ(dst[i], at(src.data(), sizes, src_strides.data(), i)) << "trial " << trial;
    EXPECT_TRUE(layoutAccepts(target, sizes.data(), dst_strides.data(), rank));
  }
}

TEST(LayoutTest, CopyStridedHandlesEveryElementSize) {
  // 3-byte elements (no dtype has them) take the generic path; 2 and 1 the typed ones.
  const int64_t sizes[] = {2, 3}, src_strides[] = {1, 2}, dst_strides[] = {3, 1};
  for (size_t elem : {1u, 2u, 3u, 4u, 8u}) {
    std::vector<uint8_t> src(6 * elem), dst(6 * elem, 0);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i + 1);
    copyStrided(dst.data(), dst_strides, src.data(), src_strides, sizes, 2, elem);
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 3; ++c)
        EXPECT_EQ(std::memcmp(&dst[(r * 3 + c) * elem], &src[(r + c * 2) * elem], elem), 0) << elem;
  }
}

}  // namespace
}  // namespace ral
