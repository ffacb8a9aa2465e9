// The argument checks a kernel shares with its twins on every device (cpu, cuda, vulkan), so the
// same bad call gets the same error message whichever device runs it. Each returns an
// InvalidArgument (or Unsupported) Status naming the kernel, the operand and its shape.
#ifndef RAL_KERNELS_KERNEL_CHECKS_H_
#define RAL_KERNELS_KERNEL_CHECKS_H_

#include <climits>
#include <cstdint>
#include <string>

#include "kernels/kernel_util.h"
#include "ral/memref.h"
#include "ral/status.h"

namespace ral::kernels {

// ral_memcpy: both views valid, same shape, not partially overlapping. Returns false when there
// is nothing to copy (empty, or the same view).
template <typename T, int N>
StatusOr<bool> checkCopy(const MemRef<T, N>& src, const MemRef<T, N>& dst, const char* kernel) {
  RAL_RETURN_IF_ERROR(checkMemRef(src, kernel, "source"));
  RAL_RETURN_IF_ERROR(checkMemRef(dst, kernel, "destination"));
  if (!sameSizes(src, dst))
    return invalidArgument(kernel, ": source ", shapeString(src), " and destination ",
                           shapeString(dst), " differ in shape");
  if (dst.numel() == 0) return false;
  bool same_view = src.data() == dst.data();
  for (int d = 0; d < N; ++d) same_view = same_view && src.strides[d] == dst.strides[d];
  if (same_view) return false;
  if (overlaps(src, dst)) return invalidArgument(kernel, ": source and destination overlap");
  return true;
}

// ral_gemm / ral_batch_gemm: op(a) (m x k) times op(b) (k x n) gives c (m x n) in the trailing
// two dims; every leading (batch) dim of a and b equals c's matching trailing batch dim or is 1
// (broadcast); m, n and k fit the 32-bit dimensions of BLAS interfaces. Returns k.
template <typename T, int RA, int RB, int RC>
StatusOr<int64_t> checkMatmul(const char* kernel, const MemRef<T, RA>& a, const MemRef<T, RB>& b,
                              const MemRef<T, RC>& c, bool ta, bool tb) {
  static_assert(RA >= 2 && RB >= 2 && RC >= RA && RC >= RB, "c has the most batch dims");
  RAL_RETURN_IF_ERROR(checkMemRef(a, kernel, "a"));
  RAL_RETURN_IF_ERROR(checkMemRef(b, kernel, "b"));
  RAL_RETURN_IF_ERROR(checkMemRef(c, kernel, "c"));
  const int64_t ar = a.sizes[RA - 2], ac = a.sizes[RA - 1];
  const int64_t br = b.sizes[RB - 2], bc = b.sizes[RB - 1];
  const int64_t cr = c.sizes[RC - 2], cc = c.sizes[RC - 1];
  const int64_t m = ta ? ac : ar, ka = ta ? ar : ac;
  const int64_t kb = tb ? bc : br, n = tb ? br : bc;
  if (ka != kb || m != cr || n != cc)
    return invalidArgument(kernel, ": op(a) is ", m, "x", ka, " (transpose_a=", ta, "), op(b) is ",
                           kb, "x", n, " (transpose_b=", tb, "), c is ", cr, "x", cc,
                           ": expected op(a) m x k, op(b) k x n, c m x n");
  auto checkBatch = [&](const int64_t* sizes, int rank, const char* what) -> Status {
    for (int d = 0; d < rank - 2; ++d) {
      const int64_t want = c.sizes[(RC - 2) - (rank - 2) + d];
      if (sizes[d] != want && sizes[d] != 1)
        return invalidArgument(kernel, ": batch dim ", d, " of ", what, " is ", sizes[d],
                               " but c's is ", want, " (a ", shapeString(a), ", b ", shapeString(b),
                               ", c ", shapeString(c), ")");
    }
    return Status();
  };
  RAL_RETURN_IF_ERROR(checkBatch(a.sizes, RA, "a"));
  RAL_RETURN_IF_ERROR(checkBatch(b.sizes, RB, "b"));
  for (int64_t d : {m, n, ka})
    if (d > INT_MAX)
      return unsupported(kernel, ": dimension ", d, " exceeds the 32-bit dimensions of BLAS");
  return ka;
}

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

// ral_transpose, before the permutation is read (it may live in device memory): valid views and
// a permutation of N entries.
template <typename T, int N>
Status checkTransposeOperands(const MemRef<T, N>& in, const MemRef<int64_t, 1>& perm,
                              const MemRef<T, N>& out) {
  const char* kKernel = "ral_transpose";
  RAL_RETURN_IF_ERROR(checkMemRef(in, kKernel, "input"));
  RAL_RETURN_IF_ERROR(checkMemRef(out, kKernel, "output"));
  RAL_RETURN_IF_ERROR(checkMemRef(perm, kKernel, "permutation"));
  if (perm.sizes[0] != N)
    return invalidArgument(kKernel, ": the permutation has ", perm.sizes[0], " entries for a rank-",
                           N, " tensor");
  return Status();
}

// ral_transpose, once the permutation `p` is on the host: p is a permutation of 0..N-1, out's
// shape is in's permuted (numpy's convention: out.sizes[d] == in.sizes[p[d]]) and the two do not
// overlap. Fills `in_strides` with in's strides permuted, i.e. the walk over in in out's order.
template <typename T, int N>
Status checkPermutation(const MemRef<T, N>& in, const int64_t (&p)[N], const MemRef<T, N>& out,
                        int64_t (&in_strides)[N]) {
  const char* kKernel = "ral_transpose";
  bool seen[N] = {};
  for (int d = 0; d < N; ++d) {
    if (p[d] < 0 || p[d] >= N || seen[p[d]]) {
      std::string list;
      for (int e = 0; e < N; ++e) list += (e ? "," : "") + std::to_string(p[e]);
      return invalidArgument(kKernel, ": [", list, "] is not a permutation of 0..", N - 1);
    }
    seen[p[d]] = true;
  }
  for (int d = 0; d < N; ++d) {
    if (out.sizes[d] != in.sizes[p[d]])
      return invalidArgument(kKernel, ": output ", shapeString(out), " does not match input ",
                             shapeString(in), " permuted (dim ", d, " should be ", in.sizes[p[d]],
                             ")");
    in_strides[d] = in.strides[p[d]];
  }
  if (overlaps(in, out)) return invalidArgument(kKernel, ": input and output overlap");
  return Status();
}

}  // namespace ral::kernels

#endif  // RAL_KERNELS_KERNEL_CHECKS_H_
