// ral_transpose on Vulkan: the strided copy shader with the input strides permuted.
//
//   void transpose(ExecutionContext*, MemRef<T, N> in, MemRef<int64_t, 1> perm, MemRef<T, N> out)
//     ral_transpose___vulkan___pvoid_m<N>d<T>_m1di64_m<N>d<T>___void
//     T in i1 i8 ui8 i16 i32 i64 f16 bf16 f32 f64; N in 1..6
//
// Same contract as the CPU kernel (numpy convention: out.sizes[d] == in.sizes[perm[d]]). `perm`
// may live in device memory (it is read back, N values) or on the host.
#include <string>

#include "kernels/vulkan/kernel_util.h"
#include "kernels/vulkan/strided.h"
#include "ral/api.h"
#include "ral/half.h"

namespace ral::kernels::vulkan {
namespace {

template <typename T, int N>
Status transposeImpl(ExecutionContext* ctx, const MemRef<T, N>& in, const MemRef<int64_t, 1>& perm,
                     const MemRef<T, N>& out) {
  const char* kKernel = "ral_transpose";
  RAL_RETURN_IF_ERROR(checkMemRef(in, kKernel, "input"));
  RAL_RETURN_IF_ERROR(checkMemRef(out, kKernel, "output"));
  RAL_RETURN_IF_ERROR(checkMemRef(perm, kKernel, "permutation"));
  if (perm.sizes[0] != N)
    return invalidArgument(kKernel, ": the permutation has ", perm.sizes[0], " entries for a rank-",
                           N, " tensor");
  RAL_ASSIGN_OR_RETURN(VulkanDriver * driver, vulkanDriver(ctx));
  Stream* stream = executionStream(ctx);
  int64_t p[N];
  for (int d = 0; d < N; ++d)
    RAL_RETURN_IF_ERROR(
        readToHost(driver, perm.data() + d * perm.strides[0], sizeof(int64_t), &p[d], stream));
  bool seen[N] = {};
  for (int d = 0; d < N; ++d) {
    if (p[d] < 0 || p[d] >= N || seen[p[d]]) {
      std::string list;
      for (int e = 0; e < N; ++e) list += (e ? "," : "") + std::to_string(p[e]);
      return invalidArgument(kKernel, ": [", list, "] is not a permutation of 0..", N - 1);
    }
    seen[p[d]] = true;
  }
  int64_t in_strides[N];
  for (int d = 0; d < N; ++d) {
    if (out.sizes[d] != in.sizes[p[d]])
      return invalidArgument(kKernel, ": output ", shapeString(out), " does not match input ",
                             shapeString(in), " permuted (dim ", d, " should be ", in.sizes[p[d]],
                             ")");
    in_strides[d] = in.strides[p[d]];
  }
  if (overlaps(in, out)) return invalidArgument(kKernel, ": input and output overlap");
  if (out.numel() == 0) return Status();
  RAL_ASSIGN_OR_RETURN(Binding s, bindView(driver, kKernel, "input", in));
  RAL_ASSIGN_OR_RETURN(Binding d, bindView(driver, kKernel, "output", out));
  return stridedCopy(driver, stream, kKernel, sizeof(T), N, out.sizes, s, in_strides, d,
                     out.strides);
}

template <typename T, int N>
void transpose(ExecutionContext* ctx, MemRef<T, N> in, MemRef<int64_t, 1> perm, MemRef<T, N> out) {
  RAL_SIGNAL_IF_ERROR(ctx, transposeImpl(ctx, in, perm, out));
}

#define RAL_REGISTER_TRANSPOSE(T)                      \
  RAL_API("ral_transpose", "vulkan", transpose<T, 1>); \
  RAL_API("ral_transpose", "vulkan", transpose<T, 2>); \
  RAL_API("ral_transpose", "vulkan", transpose<T, 3>); \
  RAL_API("ral_transpose", "vulkan", transpose<T, 4>); \
  RAL_API("ral_transpose", "vulkan", transpose<T, 5>); \
  RAL_API("ral_transpose", "vulkan", transpose<T, 6>)

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
}  // namespace ral::kernels::vulkan
