// ral_transpose: out = in permuted, for any permutation of ranks 1-6 and every element type.
//
//   void transpose(ExecutionContext*, MemRef<T, N> in, MemRef<int64_t, 1> perm, MemRef<T, N> out)
//     ral_transpose___cpu___pvoid_m<N>d<T>_m1di64_m<N>d<T>___void
//     T in i1 i8 ui8 i16 i32 i64 f16 bf16 f32 f64; N in 1..6
//
// out.sizes[d] == in.sizes[perm[d]] and out[i_0, ..., i_{N-1}] = in[j] with j[perm[d]] = i_d (the
// numpy / PyTorch convention). Any strides; in and out must not overlap.
#include "kernels/kernel_util.h"
#include "kernels/strided_copy.h"
#include "ral/api.h"

namespace ral::kernels {
namespace {

template <typename T, int N>
void transpose(ExecutionContext* ctx, MemRef<T, N> in, MemRef<int64_t, 1> perm, MemRef<T, N> out) {
  const char* kKernel = "ral_transpose";
  RAL_SIGNAL_IF_ERROR(ctx, checkMemRef(in, kKernel, "input"));
  RAL_SIGNAL_IF_ERROR(ctx, checkMemRef(out, kKernel, "output"));
  RAL_SIGNAL_IF_ERROR(ctx, checkMemRef(perm, kKernel, "permutation"));
  if (perm.sizes[0] != N) {
    ctx->signalError(invalidArgument(kKernel, ": the permutation has ", perm.sizes[0],
                                     " entries for a rank-", N, " tensor"));
    return;
  }
  int64_t p[N];
  bool seen[N] = {};
  for (int d = 0; d < N; ++d) {
    p[d] = perm(d);
    if (p[d] < 0 || p[d] >= N || seen[p[d]]) {
      std::string list;
      for (int e = 0; e < N; ++e) list += (e ? "," : "") + std::to_string(perm(e));
      ctx->signalError(
          invalidArgument(kKernel, ": [", list, "] is not a permutation of 0..", N - 1));
      return;
    }
    seen[p[d]] = true;
  }
  int64_t in_strides[N];
  for (int d = 0; d < N; ++d) {
    if (out.sizes[d] != in.sizes[p[d]]) {
      ctx->signalError(invalidArgument(kKernel, ": output ", shapeString(out),
                                       " does not match input ", shapeString(in), " permuted (dim ",
                                       d, " should be ", in.sizes[p[d]], ")"));
      return;
    }
    in_strides[d] = in.strides[p[d]];
  }
  if (overlaps(in, out)) {
    ctx->signalError(invalidArgument(kKernel, ": input and output overlap"));
    return;
  }
  auto driver = cpuDriver(ctx);
  RAL_SIGNAL_IF_ERROR(ctx, driver.status());
  RAL_SIGNAL_IF_ERROR(ctx, stridedCopy(*driver, sizeof(T), N, out.sizes, in.data(), in_strides,
                                       out.data(), out.strides));
}

#define RAL_REGISTER_TRANSPOSE(T)                   \
  RAL_API("ral_transpose", "cpu", transpose<T, 1>); \
  RAL_API("ral_transpose", "cpu", transpose<T, 2>); \
  RAL_API("ral_transpose", "cpu", transpose<T, 3>); \
  RAL_API("ral_transpose", "cpu", transpose<T, 4>); \
  RAL_API("ral_transpose", "cpu", transpose<T, 5>); \
  RAL_API("ral_transpose", "cpu", transpose<T, 6>)

RAL_REGISTER_TRANSPOSE(bool);
RAL_REGISTER_TRANSPOSE(int8_t);
RAL_REGISTER_TRANSPOSE(uint8_t);
RAL_REGISTER_TRANSPOSE(int16_t);
RAL_REGISTER_TRANSPOSE(int32_t);
RAL_REGISTER_TRANSPOSE(int64_t);
RAL_REGISTER_TRANSPOSE(float16);
RAL_REGISTER_TRANSPOSE(bfloat16);
RAL_REGISTER_TRANSPOSE(float);
RAL_REGISTER_TRANSPOSE(double);

}  // namespace
}  // namespace ral::kernels
