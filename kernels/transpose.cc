// ral_transpose: out = in permuted, for any permutation of ranks 1-6 and every element type.
//
//   void transpose(ExecutionContext*, MemRef<T, N> in, MemRef<int64_t, 1> perm, MemRef<T, N> out)
//     ral_transpose___cpu___pvoid_m<N>d<T>_m1di64_m<N>d<T>___void
//     T in i1 i8 ui8 i16 i32 i64 f16 bf16 f32 f64; N in 1..6
//
// out.sizes[d] == in.sizes[perm[d]] and out[i_0, ..., i_{N-1}] = in[j] with j[perm[d]] = i_d (the
// numpy / PyTorch convention). Any strides; in and out must not overlap.
#include "kernels/kernel_checks.h"
#include "kernels/kernel_types.h"
#include "kernels/kernel_util.h"
#include "kernels/strided_copy.h"
#include "ral/api.h"

namespace ral::kernels {
namespace {

template <typename T, int N>
void transpose(ExecutionContext* ctx, MemRef<T, N> in, MemRef<int64_t, 1> perm, MemRef<T, N> out) {
  RAL_SIGNAL_IF_ERROR(ctx, checkTransposeOperands(in, perm, out));
  int64_t p[N];
  for (int d = 0; d < N; ++d) p[d] = perm(d);
  int64_t in_strides[N];
  RAL_SIGNAL_IF_ERROR(ctx, checkPermutation(in, p, out, in_strides));
  auto driver = cpuDriver(ctx);
  RAL_SIGNAL_IF_ERROR(ctx, driver.status());
  RAL_SIGNAL_IF_ERROR(ctx, stridedCopy(*driver, sizeof(T), N, out.sizes, in.data(), in_strides,
                                       out.data(), out.strides));
}

#define RAL_REGISTER_TRANSPOSE_RANK(T, N) RAL_API("ral_transpose", "cpu", transpose<T, N>);
#define RAL_REGISTER_TRANSPOSE(T) RAL_KERNEL_RANKS_1_TO_6(RAL_REGISTER_TRANSPOSE_RANK, T)
RAL_KERNEL_DATA_TYPES(RAL_REGISTER_TRANSPOSE)

}  // namespace
}  // namespace ral::kernels
