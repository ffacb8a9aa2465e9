// ral_topk and ral_sort on the CPU (kernels/topk_sort/topk_sort.h has the contract): rows split
// over the context's CPU driver (parallelFor), each ordered with std::partial_sort / std::sort.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "kernels/common/devices.h"
#include "kernels/common/parallel.h"
#include "kernels/topk_sort/topk_sort.h"
#include "ral/registration.h"

namespace ral::kernels::cpu {
namespace {

template <typename T>
bool isNan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// Strict "a comes before b" on values, in the requested direction, NaN largest.
template <typename T>
struct Before {
  bool descending;
  bool operator()(T a, T b) const {
    const bool na = isNan(a), nb = isNan(b);
    if (na || nb) return descending ? (na && !nb) : (!na && nb);
    return descending ? a > b : a < b;
  }
};

// Orders each row and writes the first `k` entries.
template <typename T, int N>
Status orderRows(ExecutionContext* ctx, const MemRef<T, N>& in, const MemRef<T, N>& values,
                 const MemRef<int64_t, N>& indices, int64_t k, bool descending, bool partial) {
  const int64_t n = in.sizes[N - 1];
  int64_t rows = 1;
  for (int d = 0; d < N - 1; ++d) rows *= in.sizes[d];
  if (rows == 0 || k == 0) return Status();
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCpu));
  Driver* driver = env.driver;
  const int64_t grain = std::max<int64_t>(1, 16384 / n);
  const int64_t in_step = in.strides[N - 1], v_step = values.strides[N - 1],
                i_step = indices.strides[N - 1];
  return parallelFor(driver, rows, grain, [&](int64_t begin, int64_t end) -> Status {
    Scratch idx_buf, val_buf;
    RAL_RETURN_IF_ERROR(idx_buf.allocate(driver, sizeof(int64_t) * n));
    RAL_RETURN_IF_ERROR(val_buf.allocate(driver, sizeof(T) * n));
    int64_t* idx = idx_buf.as<int64_t>();
    T* val = val_buf.as<T>();
    const Before<T> before{descending};
    auto cmp = [&](int64_t a, int64_t b) {
      if (before(val[a], val[b])) return true;
      if (before(val[b], val[a])) return false;
      return a < b;  // equal values: lower index first (stable)
    };
    IndexWalker in_walk(N - 1, in.sizes, in.strides, values.strides, begin);
    IndexWalker idx_walk(N - 1, in.sizes, indices.strides, nullptr, begin);
    for (int64_t r = begin; r < end; ++r, in_walk.next(), idx_walk.next()) {
      const T* src = in.data() + in_walk.offsetA();
      for (int64_t j = 0; j < n; ++j) val[j] = src[j * in_step];
      std::iota(idx, idx + n, int64_t{0});
      if (partial && k < n) {
        std::partial_sort(idx, idx + k, idx + n, cmp);
      } else {
        std::sort(idx, idx + n, cmp);
      }
      T* vout = values.data() + in_walk.offsetB();
      int64_t* iout = indices.data() + idx_walk.offsetA();
      for (int64_t j = 0; j < k; ++j) {
        vout[j * v_step] = val[idx[j]];
        iout[j * i_step] = idx[j];
      }
    }
    return Status();
  });
}

struct Impl {
  template <typename T, int N>
  static Status orderRows(ExecutionContext* ctx, const MemRef<T, N>& in, const MemRef<T, N>& values,
                          const MemRef<int64_t, N>& indices, int64_t k, bool descending,
                          bool partial) {
    return kernels::cpu::orderRows(ctx, in, values, indices, k, descending, partial);
  }
};

constexpr char kDevice[] = "cpu";
RAL_REGISTER_TOPK_SORT()

}  // namespace
}  // namespace ral::kernels::cpu

RAL_REGISTRATION_ANCHOR(kernels_topk_sort_cpu);
