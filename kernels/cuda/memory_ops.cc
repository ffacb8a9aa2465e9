// ral_memcpy, ral_memset and ral_transpose for device "cuda", with the CPU kernels' signatures
// and rules (kernels/memory_ops.cc, kernels/transpose.cc):
//   void memcpy(ExecutionContext*, MemRef<T, N> src, MemRef<T, N> dst)
//   void memset(ExecutionContext*, MemRef<T, N> dst, T value)
//   void transpose(ExecutionContext*, MemRef<T, N> in, MemRef<int64_t, 1> perm, MemRef<T, N> out)
// Dense operands use the driver's copy and fill; strided ones a device kernel. The permutation of
// ral_transpose is read on the host (it may live in host or device memory).
#include <cstring>
#include <string>

#include "kernels/cuda/cuda_kernel_util.h"
#include "kernels/kernel_checks.h"
#include "kernels/kernel_types.h"
#include "kernels/kernel_util.h"
#include "ral/api.h"
#include "ral/half.h"

namespace ral::cuda_kernels {
namespace {

using kernels::checkMemRef;
using kernels::overlaps;
using kernels::sameSizes;
using kernels::shapeString;

template <typename T, int N>
void memcpyKernel(ExecutionContext* ctx, MemRef<T, N> src, MemRef<T, N> dst) {
  const char* kKernel = "ral_memcpy";
  auto work = kernels::checkCopy(src, dst, kKernel);
  RAL_SIGNAL_IF_ERROR(ctx, work.status());
  if (!*work) return;
  auto env = cudaEnv(ctx);
  RAL_SIGNAL_IF_ERROR(ctx, env.status());
  if (src.isContiguous() && dst.isContiguous()) {
    RAL_SIGNAL_IF_ERROR(ctx, env->driver->copy(dst.data(), src.data(), sizeof(T) * dst.numel(),
                                               CopyKind::kDeviceToDevice, env->stream));
    return;
  }
  RAL_SIGNAL_IF_ERROR(ctx, stridedCopy(*env, sizeof(T), viewOf(src), src.data(), viewOf(dst),
                                       dst.data(), dst.numel()));
}

template <typename T, int N>
void memsetKernel(ExecutionContext* ctx, MemRef<T, N> dst, T value) {
  const char* kKernel = "ral_memset";
  RAL_SIGNAL_IF_ERROR(ctx, checkMemRef(dst, kKernel, "destination"));
  if (dst.numel() == 0) return;
  auto env = cudaEnv(ctx);
  RAL_SIGNAL_IF_ERROR(ctx, env.status());
  unsigned char pattern[sizeof(T)];
  std::memcpy(pattern, &value, sizeof(T));
  if (dst.isContiguous()) {
    RAL_SIGNAL_IF_ERROR(ctx, env->driver->fill(dst.data(), sizeof(T) * dst.numel(), pattern,
                                               sizeof(T), env->stream));
    return;
  }
  FillParams p{};
  p.dst = viewOf(dst);
  p.count = dst.numel();
  p.dst_ptr = dst.data();
  std::memcpy(&p.value, &value, sizeof(T));
  constexpr Entry kFill = sizeof(T) == 1   ? Entry::kFill1
                          : sizeof(T) == 2 ? Entry::kFill2
                          : sizeof(T) == 4 ? Entry::kFill4
                                           : Entry::kFill8;
  RAL_SIGNAL_IF_ERROR(ctx, launchLinear(*env, kFill, p.count, p));
}

// Reads the permutation wherever it lives: host memory directly, device memory by a copy.
Status readPermutation(const CudaEnv& env, const MemRef<int64_t, 1>& perm, int64_t* out, int n) {
  const int64_t* data = perm.data();
  const int64_t step = perm.strides[0];
  auto is_device = env.driver->isDevicePointer(data);
  RAL_RETURN_IF_ERROR(is_device.status());
  if (!*is_device) {
    for (int d = 0; d < n; ++d) out[d] = data[d * step];
    return Status();
  }
  for (int d = 0; d < n; ++d)
    RAL_RETURN_IF_ERROR(env.driver->copy(&out[d], data + d * step, sizeof(int64_t),
                                         CopyKind::kDeviceToHost, env.stream));
  return env.driver->synchronize(env.stream);
}

template <typename T, int N>
void transpose(ExecutionContext* ctx, MemRef<T, N> in, MemRef<int64_t, 1> perm, MemRef<T, N> out) {
  RAL_SIGNAL_IF_ERROR(ctx, kernels::checkTransposeOperands(in, perm, out));
  auto env = cudaEnv(ctx);
  RAL_SIGNAL_IF_ERROR(ctx, env.status());
  int64_t p[N];
  RAL_SIGNAL_IF_ERROR(ctx, readPermutation(*env, perm, p, N));
  int64_t in_strides[N];
  RAL_SIGNAL_IF_ERROR(ctx, kernels::checkPermutation(in, p, out, in_strides));
  StridedView src = viewOf(out);  // out's sizes, walking in with permuted strides
  for (int d = 0; d < N; ++d) src.strides[d] = in_strides[d];
  if (out.numel() == 0) return;
  RAL_SIGNAL_IF_ERROR(
      ctx, stridedCopy(*env, sizeof(T), src, in.data(), viewOf(out), out.data(), out.numel()));
}

#define RAL_REGISTER_CUDA_MEMORY_RANK(T, N)          \
  RAL_API("ral_memcpy", "cuda", memcpyKernel<T, N>); \
  RAL_API("ral_memset", "cuda", memsetKernel<T, N>); \
  RAL_API("ral_transpose", "cuda", transpose<T, N>);
#define RAL_REGISTER_CUDA_MEMORY_OPS(T) RAL_KERNEL_RANKS_1_TO_6(RAL_REGISTER_CUDA_MEMORY_RANK, T)
RAL_KERNEL_DATA_TYPES(RAL_REGISTER_CUDA_MEMORY_OPS)

}  // namespace
}  // namespace ral::cuda_kernels
