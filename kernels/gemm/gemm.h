// ral_gemm and ral_batch_gemm for every device: the shape check, the entry points and the
// registration table, written once. A device file (gemm_<device>.cc) supplies `Impl`, a struct
// with
//   template <typename T> static Status gemm(ExecutionContext*, const MemRef<T, 2>& a,
//       const MemRef<T, 2>& b, const MemRef<T, 2>& c, bool ta, bool tb, int64_t k);
//   template <typename T, int RA, int RB, int RC> static Status batchGemm(ExecutionContext*,
//       const MemRef<T, RA>& a, const MemRef<T, RB>& b, const MemRef<T, RC>& c, bool ta,
//       bool tb, int64_t k);
// called once the shapes are checked, and instantiates the table for the types it supports.
//
//   void gemm(ExecutionContext*, MemRef<T, 2> a, MemRef<T, 2> b, MemRef<T, 2> c,
//             bool transpose_a, bool transpose_b)                       c = op(a) * op(b)
//     ral_gemm___<dev>___pvoid_m2d<T>_m2d<T>_m2d<T>_i1_i1___void
//   void batchGemm(ExecutionContext*, MemRef<T, RA> a, MemRef<T, RB> b, MemRef<T, RC> c,
//                  bool transpose_a, bool transpose_b)                  per batch index
//     ral_batch_gemm___<dev>___pvoid_m<RA>d<T>_m<RB>d<T>_m<RC>d<T>_i1_i1___void
//     (RA, RB, RC) in (3,3,3) (4,4,4) (2,3,3) (3,2,3) (2,4,4) (4,2,4): a rank-2 operand is used by
//     every batch; batch dims of a and b equal c's or are 1 (broadcast).
//   T in f32 f64 f16 bf16 (cpu, cuda, hsa; f16/bf16 accumulate in f32), f32 (vulkan).
//
// op(x) is x or its transpose. A shape mismatch is an INVALID_ARGUMENT on the context.
#ifndef RAL_KERNELS_GEMM_GEMM_H_
#define RAL_KERNELS_GEMM_GEMM_H_

#include <climits>
#include <cstdint>

#include "kernels/common/kernel_types.h"
#include "kernels/common/kernel_util.h"
#include "ral/api.h"
#include "ral/memref.h"

namespace ral::kernels {

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
// Matrix `index` (row-major over the batch dims of a rank-RC c) of operand `m`, broadcasting its
// size-1 batch dims: for devices that run a batch as one GEMM per matrix.
template <int RC, typename T, int R>
MemRef<T, 2> batchMatrix(const MemRef<T, R>& m, const int64_t* c_sizes, int64_t index) {
  MemRef<T, 2> s{m.allocated,
                 m.aligned,
                 m.offset,
                 {m.sizes[R - 2], m.sizes[R - 1]},
                 {m.strides[R - 2], m.strides[R - 1]}};
  for (int d = RC - 3; d >= 0; --d) {
    const int64_t i = index % c_sizes[d];
    index /= c_sizes[d];
    const int md = d - (RC - R);  // m's dim aligned with c's dim d (trailing alignment)
    if (md >= 0 && m.sizes[md] != 1) s.offset += i * m.strides[md];
  }
  return s;
}

// ral_batch_gemm as one GEMM per matrix of c, for devices without a batched kernel:
// gemm(a_i, b_i, c_i) on the matrices batchMatrix gives; the first error names its matrix.
template <typename T, int RA, int RB, int RC, typename Gemm>
Status gemmPerMatrix(const MemRef<T, RA>& a, const MemRef<T, RB>& b, const MemRef<T, RC>& c,
                     Gemm gemm) {
  int64_t batches = 1;
  for (int d = 0; d < RC - 2; ++d) batches *= c.sizes[d];
  for (int64_t i = 0; i < batches; ++i) {
    Status s = gemm(batchMatrix<RC>(a, c.sizes, i), batchMatrix<RC>(b, c.sizes, i),
                    batchMatrix<RC>(c, c.sizes, i));
    if (!s.ok()) return s.withContext(::ral::internal::strCat("ral_batch_gemm: matrix ", i));
  }
  return Status();
}

// The Impl of RAL_REGISTER_GEMM for a device whose kernel computes one matrix:
// `Matrix::run(ctx, a, b, c, ta, tb, k)` (static; shapes checked) runs ral_gemm, and
// ral_batch_gemm once per matrix of c.
template <class Matrix>
struct PerMatrixGemm {
  template <typename T>
  static Status gemm(ExecutionContext* ctx, const MemRef<T, 2>& a, const MemRef<T, 2>& b,
                     const MemRef<T, 2>& c, bool ta, bool tb, int64_t k) {
    return Matrix::run(ctx, a, b, c, ta, tb, k);
  }

  template <typename T, int RA, int RB, int RC>
  static Status batchGemm(ExecutionContext* ctx, const MemRef<T, RA>& a, const MemRef<T, RB>& b,
                          const MemRef<T, RC>& c, bool ta, bool tb, int64_t k) {
    return gemmPerMatrix(a, b, c, [&](const auto& ai, const auto& bi, const auto& ci) {
      return Matrix::run(ctx, ai, bi, ci, ta, tb, k);
    });
  }
};

template <class Impl, typename T>
void gemmKernel(ExecutionContext* ctx, MemRef<T, 2> a, MemRef<T, 2> b, MemRef<T, 2> c, bool ta,
                bool tb) {
  const auto k = checkMatmul("ral_gemm", a, b, c, ta, tb);
  RAL_SIGNAL_IF_ERROR(ctx, k.status());
  RAL_SIGNAL_IF_ERROR(ctx, Impl::template gemm<T>(ctx, a, b, c, ta, tb, *k));
}

template <class Impl, typename T, int RA, int RB, int RC>
void batchGemmKernel(ExecutionContext* ctx, MemRef<T, RA> a, MemRef<T, RB> b, MemRef<T, RC> c,
                     bool ta, bool tb) {
  const auto k = checkMatmul("ral_batch_gemm", a, b, c, ta, tb);
  RAL_SIGNAL_IF_ERROR(ctx, k.status());
  RAL_SIGNAL_IF_ERROR(ctx, (Impl::template batchGemm<T, RA, RB, RC>(ctx, a, b, c, ta, tb, *k)));
}

}  // namespace ral::kernels

// The registration table for element type T of device `Impl` named `kDevice` (both defined
// where this is used): ral_gemm and every ral_batch_gemm rank combination.
#define RAL_GEMM_BATCH_(T, RA, RB, RC) \
  RAL_API("ral_batch_gemm", kDevice, ::ral::kernels::batchGemmKernel<Impl, T, RA, RB, RC>);
#define RAL_REGISTER_GEMM(T)                                         \
  RAL_API("ral_gemm", kDevice, ::ral::kernels::gemmKernel<Impl, T>); \
  RAL_KERNEL_BATCH_GEMM_RANKS(RAL_GEMM_BATCH_, T)

#endif  // RAL_KERNELS_GEMM_GEMM_H_
