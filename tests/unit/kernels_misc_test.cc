// ral_transpose, ral_memcpy, ral_memset, ral_topk and ral_sort against naive references, with
// strided layouts, odd and empty shapes, and bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "tests/support/kernels_test_util.h"

namespace ral::testing {
namespace {

template <int N>
std::array<int64_t, N> randomShape(std::mt19937& rng, int64_t max_dim) {
  std::array<int64_t, N> s;
  for (auto& d : s) d = 1 + static_cast<int64_t>(rng() % max_dim);
  return s;
}

template <typename T>
T randomValue(std::mt19937& rng) {
  if constexpr (std::is_same_v<T, bool>) {
    return rng() % 2;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<int64_t>(rng() % 200) - 100);
  } else {
    return fromDouble<T>(std::uniform_real_distribution<double>(-10, 10)(rng));
  }
}

template <typename T>
bool sameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// ---- transpose -------------------------------------------------------------------------------

template <typename T, int N>
void checkTranspose(Context& context, std::mt19937& rng, Layout in_layout, Layout out_layout,
                    std::array<int64_t, N> shape) {
  std::array<int64_t, N> perm;
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::array<int64_t, N> out_shape;
  for (int d = 0; d < N; ++d) out_shape[d] = shape[perm[d]];
  Buffer<T, N> in(shape, in_layout), out(out_shape, out_layout);
  for (int64_t i = 0; i < in.numel(); ++i) in.at(i) = randomValue<T>(rng);
  Buffer<int64_t, 1> p({N}, Layout::kDense);
  for (int d = 0; d < N; ++d) p.at(d) = perm[d];
  Status s = callCpu(context, "ral_transpose", in.view, p.view, out.view);
  ASSERT_TRUE(s.ok()) << s;
  std::array<int64_t, N> idx{}, src{};
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t rest = i;
    for (int d = N - 1; d >= 0; --d) idx[d] = rest % out_shape[d], rest /= out_shape[d];
    for (int d = 0; d < N; ++d) src[perm[d]] = idx[d];
    ASSERT_TRUE(sameBits(out.view.at(idx), in.view.at(src))) << "rank " << N << " element " << i;
  }
}

template <typename T>
void transposeAllRanks(std::mt19937& rng) {
  Context context;
  for (Layout li : {Layout::kDense, Layout::kPadded, Layout::kColumnMajor}) {
    for (Layout lo : {Layout::kDense, Layout::kPadded}) {
      checkTranspose<T, 1>(context, rng, li, lo, randomShape<1>(rng, 40));
      checkTranspose<T, 2>(context, rng, li, lo, {1, 1});
      checkTranspose<T, 2>(context, rng, li, lo, {0, 5});
      checkTranspose<T, 2>(context, rng, li, lo, {67, 131});
      checkTranspose<T, 3>(context, rng, li, lo, randomShape<3>(rng, 20));
      checkTranspose<T, 4>(context, rng, li, lo, randomShape<4>(rng, 9));
      checkTranspose<T, 5>(context, rng, li, lo, randomShape<5>(rng, 6));
      checkTranspose<T, 6>(context, rng, li, lo, randomShape<6>(rng, 5));
    }
  }
}

TEST(TransposeTest, AnyPermutationRanks1To6AllTypes) {
  std::mt19937 rng(3);
  transposeAllRanks<float>(rng);
  transposeAllRanks<double>(rng);
  transposeAllRanks<float16>(rng);
  transposeAllRanks<bfloat16>(rng);
  transposeAllRanks<int8_t>(rng);
  transposeAllRanks<uint8_t>(rng);
  transposeAllRanks<int16_t>(rng);
  transposeAllRanks<int32_t>(rng);
  transposeAllRanks<int64_t>(rng);
  transposeAllRanks<bool>(rng);
}

TEST(TransposeTest, LargeMatrixUsesManyChunks) {
  std::mt19937 rng(4);
  Context context;
  checkTranspose<float, 2>(context, rng, Layout::kDense, Layout::kDense, {1024, 777});
  checkTranspose<float, 3>(context, rng, Layout::kDense, Layout::kDense, {64, 129, 65});
}

TEST(TransposeErrorTest, BadPermutationsAreContextErrors) {
  Context context;
  Buffer<float, 3> in({2, 3, 4}, Layout::kDense), out({4, 3, 2}, Layout::kDense);
  auto perm = [](std::vector<int64_t> v) {
    Buffer<int64_t, 1> p({static_cast<int64_t>(v.size())}, Layout::kDense);
    for (size_t i = 0; i < v.size(); ++i) p.at(i) = v[i];
    return p;
  };
  for (const auto& bad : std::vector<std::vector<int64_t>>{
           {0, 1}, {0, 1, 2, 3}, {0, 0, 1}, {0, 1, 3}, {-1, 0, 1}, {1, 0, 2}}) {
    auto p = perm(bad);
    Status s = callCpu(context, "ral_transpose", in.view, p.view, out.view);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad.size();
    EXPECT_NE(s.message().find("ral_transpose"), std::string::npos);
  }
  auto good = perm({2, 1, 0});
  EXPECT_EQ(callCpu(context, "ral_transpose", in.view, good.view, in.view).code(),
            StatusCode::kInvalidArgument);  // shape mismatch / overlap
  for (int64_t i = 0; i < 24; ++i) in.at(i) = static_cast<float>(i);
  ASSERT_TRUE(callCpu(context, "ral_transpose", in.view, good.view, out.view).ok());
  EXPECT_EQ(out.view(3, 2, 1), in.view(1, 2, 3));
}

// ---- memcpy / memset -------------------------------------------------------------------------

template <typename T>
void checkMemoryOps(std::mt19937& rng) {
  Context context;
  for (Layout ls : {Layout::kDense, Layout::kPadded, Layout::kColumnMajor}) {
    for (Layout ld : {Layout::kDense, Layout::kPadded}) {
      for (std::array<int64_t, 3> shape :
           {std::array<int64_t, 3>{1, 1, 1}, {0, 3, 2}, {5, 7, 3}, {3, 64, 257}}) {
        Buffer<T, 3> src(shape, ls), dst(shape, ld);
        for (int64_t i = 0; i < src.numel(); ++i) src.at(i) = randomValue<T>(rng);
        ASSERT_TRUE(callCpu(context, "ral_memcpy", src.view, dst.view).ok());
        for (int64_t i = 0; i < src.numel(); ++i) ASSERT_TRUE(sameBits(src.at(i), dst.at(i)));
        const T value = randomValue<T>(rng);
        ASSERT_TRUE(callCpu(context, "ral_memset", dst.view, value).ok());
        for (int64_t i = 0; i < dst.numel(); ++i) ASSERT_TRUE(sameBits(dst.at(i), value));
        // Padding between elements is untouched.
        if (ld == Layout::kPadded && dst.numel() > 0) {
          EXPECT_TRUE(sameBits(dst.view.aligned[0], T{}));
        }
      }
    }
  }
  Buffer<T, 1> big_src({(int64_t{6} << 20) / static_cast<int64_t>(sizeof(T)) + 3}, Layout::kDense);
  Buffer<T, 1> big_dst({big_src.numel()}, Layout::kDense);
  for (int64_t i = 0; i < big_src.numel(); i += 4099) big_src.at(i) = randomValue<T>(rng);
  ASSERT_TRUE(callCpu(context, "ral_memcpy", big_src.view, big_dst.view).ok());
  EXPECT_EQ(std::memcmp(big_src.storage.data(), big_dst.storage.data(),
                        big_src.storage.size() * sizeof(T)),
            0);
}

TEST(MemoryOpsTest, CopyAndFillEveryTypeAndLayout) {
  std::mt19937 rng(5);
  checkMemoryOps<float>(rng);
  checkMemoryOps<double>(rng);
  checkMemoryOps<float16>(rng);
  checkMemoryOps<bfloat16>(rng);
  checkMemoryOps<int8_t>(rng);
  checkMemoryOps<int32_t>(rng);
  checkMemoryOps<int64_t>(rng);
  checkMemoryOps<bool>(rng);
}

TEST(MemoryOpsErrorTest, MismatchedOrOverlappingAreContextErrors) {
  Context context;
  Buffer<float, 2> a({3, 4}, Layout::kDense), b({4, 3}, Layout::kDense);
  EXPECT_EQ(callCpu(context, "ral_memcpy", a.view, b.view).code(), StatusCode::kInvalidArgument);
  MemRef<float, 2> shifted = a.view;
  shifted.offset = 1;
  shifted.sizes[0] = 2;
  MemRef<float, 2> first = a.view;
  first.sizes[0] = 2;
  EXPECT_EQ(callCpu(context, "ral_memcpy", first, shifted).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(callCpu(context, "ral_memcpy", a.view, a.view).ok());  // same view: nothing to do
  MemRef<float, 2> negative = a.view;
  negative.sizes[1] = -4;
  EXPECT_EQ(callCpu(context, "ral_memset", negative, 1.0f).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(callCpu(context, "ral_memset", a.view, 2.5f).ok());
  EXPECT_EQ(a.at(11), 2.5f);
}

// ---- topk / sort -----------------------------------------------------------------------------

template <typename T>
bool before(T a, T b, bool descending) {
  const bool na = std::is_floating_point_v<T> && std::isnan(static_cast<double>(a));
  const bool nb = std::is_floating_point_v<T> && std::isnan(static_cast<double>(b));
  if (na || nb) return descending ? (na && !nb) : (!na && nb);
  return descending ? a > b : a < b;
}

// Reference: stable sort of each row (independent of the kernel), first k.
template <typename T, int N>
void checkOrdering(Context& context, std::mt19937& rng, std::array<int64_t, N> shape, int64_t k,
                   bool descending, bool is_topk, Layout layout, bool with_nan) {
  Buffer<T, N> in(shape, layout);
  for (int64_t i = 0; i < in.numel(); ++i) {
    in.at(i) = static_cast<T>(static_cast<int64_t>(rng() % 7) - 3);  // many ties
    if constexpr (std::is_floating_point_v<T>) {
      if (with_nan && rng() % 5 == 0) in.at(i) = NAN;
    }
  }
  std::array<int64_t, N> out_shape = shape;
  out_shape[N - 1] = k;
  Buffer<T, N> values(out_shape, layout);
  Buffer<int64_t, N> indices(out_shape, Layout::kPadded);
  Status s = is_topk
                 ? callCpu(context, "ral_topk", in.view, values.view, indices.view, k, descending)
                 : callCpu(context, "ral_sort", in.view, values.view, indices.view, descending);
  ASSERT_TRUE(s.ok()) << s;
  const int64_t n = shape[N - 1];
  const int64_t rows = n == 0 ? 0 : in.numel() / n;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<std::pair<T, int64_t>> row;
    for (int64_t j = 0; j < n; ++j) row.emplace_back(in.at(r * n + j), j);
    std::stable_sort(row.begin(), row.end(), [&](const auto& a, const auto& b) {
      return before(a.first, b.first, descending);
    });
    for (int64_t j = 0; j < k; ++j) {
      ASSERT_EQ(indices.at(r * k + j), row[j].second) << "row " << r << " pos " << j;
      ASSERT_TRUE(sameBits(values.at(r * k + j), row[j].first) ||
                  (std::isnan(static_cast<double>(values.at(r * k + j))) &&
                   std::isnan(static_cast<double>(row[j].first))));
    }
  }
}

template <typename T>
class OrderingTest : public ::testing::Test {};
using OrderingTypes = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(OrderingTest, OrderingTypes);

TYPED_TEST(OrderingTest, TopKAndSortMatchStableReference) {
  using T = TypeParam;
  Context context;
  std::mt19937 rng(11);
  for (Layout layout : {Layout::kDense, Layout::kPadded, Layout::kColumnMajor}) {
    for (bool desc : {true, false}) {
      for (bool nan : {false, true}) {
        checkOrdering<T, 1>(context, rng, {1}, 1, desc, true, layout, nan);
        checkOrdering<T, 1>(context, rng, {17}, 5, desc, true, layout, nan);
        checkOrdering<T, 1>(context, rng, {17}, 0, desc, true, layout, nan);
        checkOrdering<T, 2>(context, rng, {9, 33}, 33, desc, true, layout, nan);
        checkOrdering<T, 2>(context, rng, {300, 70}, 8, desc, true, layout, nan);
        checkOrdering<T, 3>(context, rng, {3, 0, 6}, 2, desc, true, layout, nan);
        checkOrdering<T, 4>(context, rng, {2, 3, 2, 11}, 4, desc, true, layout, nan);
        checkOrdering<T, 1>(context, rng, {1}, 1, desc, false, layout, nan);
        checkOrdering<T, 1>(context, rng, {0}, 0, desc, false, layout, nan);
        checkOrdering<T, 2>(context, rng, {31, 45}, 45, desc, false, layout, nan);
        checkOrdering<T, 3>(context, rng, {4, 5, 129}, 129, desc, false, layout, nan);
        checkOrdering<T, 4>(context, rng, {2, 2, 3, 7}, 7, desc, false, layout, nan);
      }
    }
  }
}

TEST(OrderingErrorTest, BadArgumentsAreContextErrors) {
  Context context;
  Buffer<float, 2> in({3, 5}, Layout::kDense), values({3, 2}, Layout::kDense);
  Buffer<int64_t, 2> indices({3, 2}, Layout::kDense);
  for (int64_t k : {int64_t{6}, int64_t{-1}}) {
    Status s = callCpu(context, "ral_topk", in.view, values.view, indices.view, k, true);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << k;
    EXPECT_NE(s.message().find("k = "), std::string::npos) << s;
  }
  EXPECT_EQ(
      callCpu(context, "ral_topk", in.view, values.view, indices.view, int64_t{3}, true).code(),
      StatusCode::kInvalidArgument);  // outputs have last dim 2
  Buffer<int64_t, 2> bad_indices({2, 2}, Layout::kDense);
  EXPECT_EQ(
      callCpu(context, "ral_topk", in.view, values.view, bad_indices.view, int64_t{2}, true).code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(callCpu(context, "ral_sort", in.view, values.view, indices.view, false).code(),
            StatusCode::kInvalidArgument);
  for (int64_t i = 0; i < 15; ++i) in.at(i) = static_cast<float>(i % 5);
  ASSERT_TRUE(
      callCpu(context, "ral_topk", in.view, values.view, indices.view, int64_t{2}, true).ok());
  EXPECT_EQ(values.view(2, 0), 4.0f);
  EXPECT_EQ(indices.view(2, 1), 3);
  EXPECT_EQ(
      (cpuName<MemRef<float, 2>, MemRef<float, 2>, MemRef<int64_t, 2>, int64_t, bool>("ral_topk")),
      "ral_topk___cpu___pvoid_m2df32_m2df32_m2di64_i64_i1___void");
}

}  // namespace
}  // namespace ral::testing
