// ral_transpose: out = in permuted, for any permutation of ranks 1-6 and every element type, for
// every device: checks, kernel and registration table written once; each device instantiates the
// table with its tag (kernels/generic_ops.h). The device-specific parts are the
// strided primitive and the permutation read of kernels/copy.
//
//   void transpose(ExecutionContext*, MemRef<T, N> in, MemRef<int64_t, 1> perm, MemRef<T, N> out)
//     ral_transpose___<dev>___pvoid_m<N>d<T>_m1di64_m<N>d<T>___void
//     T in i1 i8 ui8 i16 i32 i64 f16 bf16 f32 f64; N in 1..6
//
// out.sizes[d] == in.sizes[perm[d]] and out[i_0, ..., i_{N-1}] = in[j] with j[perm[d]] = i_d (the
// numpy / PyTorch convention). Any strides; in and out must not overlap. `perm` may live in host
// or device memory (it is read back, N values).
#ifndef RAL_KERNELS_TRANSPOSE_TRANSPOSE_H_
#define RAL_KERNELS_TRANSPOSE_TRANSPOSE_H_

#include <cstdint>
#include <string>

#include "kernels/common/devices.h"
#include "kernels/common/kernel_types.h"
#include "kernels/common/kernel_util.h"
#include "kernels/copy/strided_copy.h"
#include "ral/api.h"
#include "ral/memref.h"

namespace ral::kernels {

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
template <class Dev, typename T, int N>
Status transposeOn(ExecutionContext* ctx, const MemRef<T, N>& in, const MemRef<int64_t, 1>& perm,
                   const MemRef<T, N>& out) {
  RAL_RETURN_IF_ERROR(checkTransposeOperands(in, perm, out));
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, Dev::kKind));
  int64_t p[N];
  RAL_RETURN_IF_ERROR(readIndices(Dev{}, env, perm.data(), perm.strides[0], N, p));
  int64_t in_strides[N];
  RAL_RETURN_IF_ERROR(checkPermutation(in, p, out, in_strides));
  return stridedCopy(Dev{}, env, "ral_transpose", sizeof(T), N, out.sizes, in.data(), in_strides,
                     out.data(), out.strides, "input", "output");
}

template <class Dev, typename T, int N>
void transposeKernel(ExecutionContext* ctx, MemRef<T, N> in, MemRef<int64_t, 1> perm,
                     MemRef<T, N> out) {
  RAL_SIGNAL_IF_ERROR(ctx, (transposeOn<Dev, T, N>(ctx, in, perm, out)));
}

}  // namespace ral::kernels

// The registration table: every data type and rank 1-6 for device `Dev` named `kDevice` (both
// defined where this is used, once per device).
#define RAL_TRANSPOSE_RANK_(T, N) \
  RAL_API("ral_transpose", kDevice, ::ral::kernels::transposeKernel<Dev, T, N>);
#define RAL_TRANSPOSE_TYPE_(T) RAL_KERNEL_RANKS_1_TO_6(RAL_TRANSPOSE_RANK_, T)
#define RAL_REGISTER_TRANSPOSE() RAL_KERNEL_DATA_TYPES(RAL_TRANSPOSE_TYPE_)

#endif  // RAL_KERNELS_TRANSPOSE_TRANSPOSE_H_
