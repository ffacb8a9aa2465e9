// ral_topk and ral_sort on every device against std::stable_sort done here: many ties (equal
// values keep the lower index first), a NaN (larger than every number), negative values and
// 64-bit integers that differ in their high words, k = n, k = 1, k = 0, ranks 1 to 4 with
// padded, column-major and size-1 dims, no rows, and a sort in place (values = the input).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "tensor.h"

namespace ral::kernel_cts {
namespace {

// Whether x goes before y: the larger first when `largest`; NaN (x != x) ranks above every number.
template <typename T>
bool before(T x, T y, bool largest) {
  const auto key = [](T v) { return std::make_pair(v != v, v != v ? T(0) : v); };
  return largest ? key(y) < key(x) : key(x) < key(y);
}

// Ten distinct values, negatives included, spread over the type's range (so 64-bit integers
// differ in both words and doubles are far outside float's range).
template <typename T>
T valueOf(int level) {
  if constexpr (std::is_same_v<T, int64_t>) return (level - 4) * ((int64_t{1} << 33) + 7);
  if constexpr (std::is_same_v<T, int32_t>) return (level - 4) * 100000007;
  if constexpr (std::is_same_v<T, double>) return (level - 4) * 1.5e300;
  return static_cast<T>((level - 4) * 0.25);
}

class TopKSort : public KernelTest {
 protected:
  // topk (k < n) or sort (`sort`, k == n) along the last dim of an input of `sizes`; with
  // `in_place` the sort writes its values over the input itself.
  template <typename T, int N>
  void check(std::array<int64_t, N> sizes, int64_t k, bool largest, bool sort,
             Layout in_layout = Layout::kPadded, bool in_place = false) {
    std::array<int64_t, N> out_sizes = sizes;
    out_sizes[N - 1] = k;
    const int64_t n = sizes[N - 1];
    ::testing::Message what;
    what << (sort ? "sort " : "topk ");
    for (int d = 0; d < N; ++d) what << (d ? "x" : "") << sizes[d];
    what << " k " << k << (largest ? " largest" : " smallest") << " elem " << sizeof(T) << " "
         << layoutName(in_layout) << (in_place ? " in place" : "");
    SCOPED_TRACE(what);
    Tensor<T, N> in(*this, sizes, in_layout);
    Tensor<T, N> values(*this, out_sizes, Layout::kDense);
    Tensor<int64_t, N> indices(*this, out_sizes, Layout::kPadded);
    std::uniform_int_distribution<int> level(0, 9);  // many ties
    forEachIndex<N>(sizes,
                    [&](const std::array<int64_t, N>& i) { in.at(i) = valueOf<T>(level(rng)); });
    if constexpr (std::is_floating_point_v<T>) {
      std::array<int64_t, N> first{};
      first[N - 1] = 1;
      if (n > 1 && in.host_view.numel() > 0) in.at(first) = std::numeric_limits<T>::quiet_NaN();
    }
    std::vector<T> original;  // the input's values row by row, before an in-place sort
    forEachIndex<N>(sizes, [&](const std::array<int64_t, N>& i) { original.push_back(in.at(i)); });
    in.upload();
    values.upload();
    indices.upload();
    const MemRef<T, N> value_view = in_place ? in.device_view : values.device_view;
    const Status s =
        sort ? call("ral_sort", in.device_view, value_view, indices.device_view, largest)
             : call("ral_topk", in.device_view, value_view, indices.device_view, k, largest);
    ASSERT_TRUE(s.ok()) << s;
    const Tensor<T, N>& out = in_place ? in : values;
    const auto got_values = out.download();
    const auto got_indices = indices.download();
    const int64_t rows = n == 0 ? 0 : static_cast<int64_t>(original.size()) / n;
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = original.data() + r * n;
      std::vector<int64_t> order(n);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t x, int64_t y) { return before(row[x], row[y], largest); });
      std::array<int64_t, N> at{};
      for (int64_t rest = r, d = N - 2; d >= 0; --d) {
        at[d] = rest % sizes[d];
        rest /= sizes[d];
      }
      for (int64_t j = 0; j < k; ++j) {
        at[N - 1] = j;
        ASSERT_EQ(elementOf(indices, got_indices, at), order[j]) << "row " << r << " #" << j;
        const T want = row[order[j]];
        const T have = elementOf(out, got_values, at);
        ASSERT_EQ(std::memcmp(&have, &want, sizeof(T)), 0) << "row " << r << " #" << j;
      }
    }
    expectOutsideViewUnchanged(indices, got_indices);
    if (!in_place) expectOutsideViewUnchanged(values, got_values);
  }
};

TEST_P(TopKSort, TopKIncludingTiesAndNaN) {
  for (bool largest : {false, true}) {
    check<float, 2>({7, 100}, 13, largest, false);
    check<double, 2>({3, 1000}, 5, largest, false);
    check<int32_t, 2>({5, 33}, 1, largest, false);
    check<int64_t, 2>({2, 4097}, 100, largest, false);
    check<float, 2>({3, 8}, 0, largest, false);
  }
}

TEST_P(TopKSort, SortIsStableIncludingNaN) {
  for (bool descending : {false, true}) {
    check<float, 2>({7, 100}, 100, descending, true);
    check<int32_t, 2>({5, 33}, 33, descending, true);
    check<int64_t, 2>({2, 4097}, 4097, descending, true);
    check<double, 2>({1, 1}, 1, descending, true);
  }
}

TEST_P(TopKSort, EveryRankAndLayout) {
  check<float, 1>({37}, 5, true, false, Layout::kColumnMajor);
  check<double, 3>({2, 1, 19}, 19, false, true, Layout::kColumnMajor);
  check<int64_t, 3>({3, 4, 6}, 2, false, false, Layout::kColumnMajor);
  check<int32_t, 4>({2, 3, 1, 9}, 9, true, true, Layout::kColumnMajor);
  check<float, 4>({1, 2, 2, 1}, 1, true, false);
  check<float, 3>({0, 4, 5}, 3, true, false);  // no rows
  check<int64_t, 2>({4, 0}, 0, true, true);    // empty rows
}

// More rows than a GPU kernel's grid: workgroups take several rows each.
TEST_P(TopKSort, ManyRows) { check<float, 2>({70000, 3}, 2, true, false); }

TEST_P(TopKSort, SortInPlace) {
  check<float, 2>({6, 50}, 50, false, true, Layout::kPadded, /*in_place=*/true);
  check<int64_t, 3>({2, 3, 17}, 17, true, true, Layout::kColumnMajor, /*in_place=*/true);
}

RAL_KERNEL_CTS_INSTANTIATE(TopKSort);

}  // namespace
}  // namespace ral::kernel_cts
