// ral_topk and ral_sort on every device against std::stable_sort done here: many ties (equal
// values keep the lower index first), a NaN (larger than every number), k = n, k = 1, k = 0,
// strided inputs and outputs.
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

class TopKSort : public KernelTest {
 protected:
  // topk (k < n) or sort (k == n, `sort`) of each row of a rows x n input.
  template <typename T>
  void check(int64_t rows, int64_t n, int64_t k, bool largest, bool sort) {
    SCOPED_TRACE(::testing::Message() << (sort ? "sort " : "topk ") << rows << "x" << n << " k "
                                      << k << (largest ? " largest" : " smallest") << " elem "
                                      << sizeof(T));
    Tensor<T, 2> in(*this, {rows, n}, Layout::kPadded);
    Tensor<T, 2> values(*this, {rows, k}, Layout::kDense);
    Tensor<int64_t, 2> indices(*this, {rows, k}, Layout::kPadded);
    std::uniform_int_distribution<int> small(0, 9);  // many ties
    forEachIndex<2>({rows, n}, [&](const std::array<int64_t, 2>& i) {
      in.at(i) = static_cast<T>(small(rng));
    });
    if constexpr (std::is_floating_point_v<T>) {
      if (rows > 0 && n > 1) in.at({0, 1}) = std::numeric_limits<T>::quiet_NaN();
    }
    in.upload();
    values.upload();
    indices.upload();
    const Status s =
        sort ? call("ral_sort", in.device_view, values.device_view, indices.device_view, largest)
             : call("ral_topk", in.device_view, values.device_view, indices.device_view, k,
                    largest);
    ASSERT_TRUE(s.ok()) << s;
    const auto got_values = values.download();
    const auto got_indices = indices.download();
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<int64_t> order(n);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
        return before(in.at({r, x}), in.at({r, y}), largest);
      });
      for (int64_t j = 0; j < k; ++j) {
        ASSERT_EQ(elementOf(indices, got_indices, {r, j}), order[j]) << "row " << r << " #" << j;
        const T want = in.at({r, order[j]});
        const T have = elementOf(values, got_values, {r, j});
        ASSERT_EQ(std::memcmp(&have, &want, sizeof(T)), 0) << "row " << r << " #" << j;
      }
    }
    expectOutsideViewUnchanged(indices, got_indices);
  }
};

TEST_P(TopKSort, TopKIncludingTiesAndNaN) {
  for (bool largest : {false, true}) {
    check<float>(7, 100, 13, largest, false);
    check<double>(3, 1000, 5, largest, false);
    check<int32_t>(5, 33, 1, largest, false);
    check<int64_t>(2, 4097, 100, largest, false);
    check<float>(3, 8, 0, largest, false);
  }
}

TEST_P(TopKSort, SortIsStableIncludingNaN) {
  for (bool descending : {false, true}) {
    check<float>(7, 100, 100, descending, true);
    check<int32_t>(5, 33, 33, descending, true);
    check<int64_t>(2, 4097, 4097, descending, true);
    check<double>(1, 1, 1, descending, true);
  }
}

RAL_KERNEL_CTS_INSTANTIATE(TopKSort);

}  // namespace
}  // namespace ral::kernel_cts
