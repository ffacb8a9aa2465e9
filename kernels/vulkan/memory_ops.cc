// ral_memcpy and ral_memset on Vulkan, for the same element types and ranks as the CPU kernels.
//
//   void memcpy(ExecutionContext*, MemRef<T, N> src, MemRef<T, N> dst)    dst = src
//     ral_memcpy___vulkan___pvoid_m<N>d<T>_m<N>d<T>___void
//   void memset(ExecutionContext*, MemRef<T, N> dst, T value)             every element = value
//     ral_memset___vulkan___pvoid_m<N>d<T>_<T>___void
//   T in i1 i8 ui8 i16 i32 i64 f16 bf16 f32 f64; N in 1..6
//
// Dense operands go through the driver's copy/fill (vkCmdCopyBuffer / vkCmdFillBuffer); others
// through the strided shaders.
#include <cstring>

#include "kernels/kernel_checks.h"
#include "kernels/kernel_types.h"
#include "kernels/vulkan/kernel_util.h"
#include "kernels/vulkan/strided.h"
#include "ral/api.h"
#include "ral/half.h"

namespace ral::kernels::vulkan {
namespace {

template <typename T, int N>
Status memcpyImpl(ExecutionContext* ctx, const MemRef<T, N>& src, const MemRef<T, N>& dst) {
  const char* kKernel = "ral_memcpy";
  RAL_ASSIGN_OR_RETURN(const bool work, checkCopy(src, dst, kKernel));
  if (!work) return Status();
  RAL_ASSIGN_OR_RETURN(VulkanDriver * driver, vulkanDriver(ctx));
  Stream* stream = executionStream(ctx);
  if (src.isContiguous() && dst.isContiguous())
    return driver->copy(dst.data(), src.data(), sizeof(T) * dst.numel(), CopyKind::kDeviceToDevice,
                        stream);
  RAL_ASSIGN_OR_RETURN(Binding s, bindView(driver, kKernel, "source", src));
  RAL_ASSIGN_OR_RETURN(Binding d, bindView(driver, kKernel, "destination", dst));
  return stridedCopy(driver, stream, kKernel, sizeof(T), N, dst.sizes, s, src.strides, d,
                     dst.strides);
}

template <typename T, int N>
Status memsetImpl(ExecutionContext* ctx, const MemRef<T, N>& dst, T value) {
  const char* kKernel = "ral_memset";
  RAL_RETURN_IF_ERROR(checkMemRef(dst, kKernel, "destination"));
  if (dst.numel() == 0) return Status();
  RAL_ASSIGN_OR_RETURN(VulkanDriver * driver, vulkanDriver(ctx));
  Stream* stream = executionStream(ctx);
  unsigned char pattern[sizeof(T)];
  std::memcpy(pattern, &value, sizeof(T));
  if (dst.isContiguous())
    return driver->fill(dst.data(), sizeof(T) * dst.numel(), pattern, sizeof(T), stream);
  RAL_ASSIGN_OR_RETURN(Binding d, bindView(driver, kKernel, "destination", dst));
  return stridedFill(driver, stream, kKernel, sizeof(T), N, dst.sizes, d, dst.strides, pattern);
}

template <typename T, int N>
void memcpyKernel(ExecutionContext* ctx, MemRef<T, N> src, MemRef<T, N> dst) {
  RAL_SIGNAL_IF_ERROR(ctx, memcpyImpl(ctx, src, dst));
}

template <typename T, int N>
void memsetKernel(ExecutionContext* ctx, MemRef<T, N> dst, T value) {
  RAL_SIGNAL_IF_ERROR(ctx, memsetImpl(ctx, dst, value));
}

#define RAL_REGISTER_MEMORY_OPS_RANK(T, N)             \
  RAL_API("ral_memcpy", "vulkan", memcpyKernel<T, N>); \
  RAL_API("ral_memset", "vulkan", memsetKernel<T, N>);
#define RAL_REGISTER_MEMORY_OPS(T) RAL_KERNEL_RANKS_1_TO_6(RAL_REGISTER_MEMORY_OPS_RANK, T)
RAL_KERNEL_DATA_TYPES(RAL_REGISTER_MEMORY_OPS)

}  // namespace
}  // namespace ral::kernels::vulkan
