// ral_topk and ral_sort along the last dimension, with int64 indices, for every device: checks,
// entry points and the registration table written once. A device file (topk_sort_<device>.cc)
// supplies `Impl` with
//   template <typename T, int N> static Status orderRows(ExecutionContext*, const MemRef<T, N>& in,
//       const MemRef<T, N>& values, const MemRef<int64_t, N>& indices, int64_t k,
//       bool descending, bool partial);   // partial: only the first k need ordering
// called once the operands are checked.
//
//   void topk(ExecutionContext*, MemRef<T, N> in, MemRef<T, N> values,
//             MemRef<int64_t, N> indices, int64_t k, bool largest)
//     ral_topk___<dev>___pvoid_m<N>d<T>_m<N>d<T>_m<N>di64_i64_i1___void
//   void sort(ExecutionContext*, MemRef<T, N> in, MemRef<T, N> values,
//             MemRef<int64_t, N> indices, bool descending)
//     ral_sort___<dev>___pvoid_m<N>d<T>_m<N>d<T>_m<N>di64_i1___void
//   T in f32 f64 i32 i64; N in 1..4
//
// topk: the k largest (or smallest) of each row, best first; equal values keep the lower index
// first. values/indices have in's shape with the last dim k; 0 <= k <= n.
// sort: each row ordered ascending (or descending), stable: equal values keep their order.
// NaN counts as larger than every number (first when largest/descending, last otherwise).
#ifndef RAL_KERNELS_TOPK_SORT_TOPK_SORT_H_
#define RAL_KERNELS_TOPK_SORT_TOPK_SORT_H_

#include <cstdint>

#include "kernels/common/kernel_types.h"
#include "kernels/common/kernel_util.h"
#include "ral/api.h"
#include "ral/memref.h"

namespace ral::kernels {

// ral_topk / ral_sort: values and indices have the input's shape with the last dim `last`;
// neither output overlaps the input (values may be the input's own view, to order in place) or
// the other output.
template <typename T, int N>
Status checkOrdering(const char* kernel, const MemRef<T, N>& in, const MemRef<T, N>& values,
                     const MemRef<int64_t, N>& indices, int64_t last) {
  RAL_RETURN_IF_ERROR(checkMemRef(in, kernel, "input"));
  RAL_RETURN_IF_ERROR(checkMemRef(values, kernel, "values"));
  RAL_RETURN_IF_ERROR(checkMemRef(indices, kernel, "indices"));
  for (int d = 0; d < N; ++d) {
    const int64_t want = d == N - 1 ? last : in.sizes[d];
    if (values.sizes[d] != want || indices.sizes[d] != want)
      return invalidArgument(kernel, ": input ", shapeString(in),
                             " needs values and indices of its shape with the last dim ", last,
                             ", got values ", shapeString(values), " and indices ",
                             shapeString(indices));
  }
  bool same_view = values.data() == in.data();
  for (int d = 0; d < N; ++d) same_view = same_view && values.strides[d] == in.strides[d];
  if ((!same_view && overlaps(values, in)) || overlaps(indices, in) || overlaps(indices, values))
    return invalidArgument(kernel, ": outputs overlap the input or each other");
  return Status();
}

// ral_topk: 0 <= k <= the last dim, then checkOrdering with last dim k.
template <typename T, int N>
Status checkTopk(const MemRef<T, N>& in, const MemRef<T, N>& values,
                 const MemRef<int64_t, N>& indices, int64_t k) {
  const int64_t n = in.sizes[N - 1];
  if (k < 0 || k > n)
    return invalidArgument("ral_topk: k = ", k, " is not in [0, ", n, "] for input ",
                           shapeString(in));
  return checkOrdering("ral_topk", in, values, indices, k);
}
template <class Impl, typename T, int N>
void topkKernel(ExecutionContext* ctx, MemRef<T, N> in, MemRef<T, N> values,
                MemRef<int64_t, N> indices, int64_t k, bool largest) {
  RAL_SIGNAL_IF_ERROR(ctx, checkTopk(in, values, indices, k));
  RAL_SIGNAL_IF_ERROR(ctx,
                      (Impl::template orderRows<T, N>(ctx, in, values, indices, k, largest, true)));
}

template <class Impl, typename T, int N>
void sortKernel(ExecutionContext* ctx, MemRef<T, N> in, MemRef<T, N> values,
                MemRef<int64_t, N> indices, bool descending) {
  const int64_t n = in.sizes[N - 1];
  RAL_SIGNAL_IF_ERROR(ctx, checkOrdering("ral_sort", in, values, indices, n));
  RAL_SIGNAL_IF_ERROR(
      ctx, (Impl::template orderRows<T, N>(ctx, in, values, indices, n, descending, false)));
}

}  // namespace ral::kernels

// The registration table: every ordered type and rank 1-4 for device `Impl` named `kDevice`
// (both defined where this is used, once per device).
#define RAL_TOPK_SORT_RANK_(T, N)                                       \
  RAL_API("ral_topk", kDevice, ::ral::kernels::topkKernel<Impl, T, N>); \
  RAL_API("ral_sort", kDevice, ::ral::kernels::sortKernel<Impl, T, N>);
#define RAL_TOPK_SORT_TYPE_(T) RAL_KERNEL_RANKS_1_TO_4(RAL_TOPK_SORT_RANK_, T)
#define RAL_REGISTER_TOPK_SORT() RAL_KERNEL_ORDERED_TYPES(RAL_TOPK_SORT_TYPE_)

#endif  // RAL_KERNELS_TOPK_SORT_TOPK_SORT_H_
