// ral_transpose on Vulkan: the strided copy shader with the input strides permuted.
//
//   void transpose(ExecutionContext*, MemRef<T, N> in, MemRef<int64_t, 1> perm, MemRef<T, N> out)
//     ral_transpose___vulkan___pvoid_m<N>d<T>_m1di64_m<N>d<T>___void
//     T in i1 i8 ui8 i16 i32 i64 f16 bf16 f32 f64; N in 1..6
//
// Same contract as the CPU kernel (numpy convention: out.sizes[d] == in.sizes[perm[d]]). `perm`
// may live in device memory (it is read back, N values) or on the host.
#include <string>

#include "kernels/kernel_checks.h"
#include "kernels/kernel_types.h"
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
  RAL_RETURN_IF_ERROR(checkTransposeOperands(in, perm, out));
  RAL_ASSIGN_OR_RETURN(VulkanDriver * driver, vulkanDriver(ctx));
  Stream* stream = executionStream(ctx);
  int64_t p[N];
  for (int d = 0; d < N; ++d)
    RAL_RETURN_IF_ERROR(
        readToHost(driver, perm.data() + d * perm.strides[0], sizeof(int64_t), &p[d], stream));
  int64_t in_strides[N];
  RAL_RETURN_IF_ERROR(checkPermutation(in, p, out, in_strides));
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

#define RAL_REGISTER_TRANSPOSE_RANK(T, N) RAL_API("ral_transpose", "vulkan", transpose<T, N>);
#define RAL_REGISTER_TRANSPOSE(T) RAL_KERNEL_RANKS_1_TO_6(RAL_REGISTER_TRANSPOSE_RANK, T)
RAL_KERNEL_DATA_TYPES(RAL_REGISTER_TRANSPOSE)

}  // namespace
}  // namespace ral::kernels::vulkan
