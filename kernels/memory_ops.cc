// ral_memcpy and ral_memset on strided MemRefs of any element type, ranks 1-6.
//
//   void memcpy(ExecutionContext*, MemRef<T, N> src, MemRef<T, N> dst)    dst = src
//     ral_memcpy___cpu___pvoid_m<N>d<T>_m<N>d<T>___void
//   void memset(ExecutionContext*, MemRef<T, N> dst, T value)             every element = value
//     ral_memset___cpu___pvoid_m<N>d<T>_<T>___void
//   T in i1 i8 ui8 i16 i32 i64 f16 bf16 f32 f64; N in 1..6
//
// Dense operands go through the driver's copy/fill; others element by element. Shapes must match;
// src and dst must not partially overlap (the very same view is a no-op copy).
#include <cstring>

#include "kernels/kernel_checks.h"
#include "kernels/kernel_types.h"
#include "kernels/kernel_util.h"
#include "kernels/strided_copy.h"
#include "ral/api.h"

namespace ral::kernels {
namespace {

template <typename T, int N>
void memcpyKernel(ExecutionContext* ctx, MemRef<T, N> src, MemRef<T, N> dst) {
  const char* kKernel = "ral_memcpy";
  auto work = checkCopy(src, dst, kKernel);
  RAL_SIGNAL_IF_ERROR(ctx, work.status());
  if (!*work) return;
  auto driver = cpuDriver(ctx);
  RAL_SIGNAL_IF_ERROR(ctx, driver.status());
  if (src.isContiguous() && dst.isContiguous()) {
    RAL_SIGNAL_IF_ERROR(ctx, (*driver)->copy(dst.data(), src.data(), sizeof(T) * dst.numel(),
                                             CopyKind::kDeviceToDevice));
    return;
  }
  RAL_SIGNAL_IF_ERROR(ctx, stridedCopy(*driver, sizeof(T), N, dst.sizes, src.data(), src.strides,
                                       dst.data(), dst.strides));
}

template <typename T, int N>
void memsetKernel(ExecutionContext* ctx, MemRef<T, N> dst, T value) {
  const char* kKernel = "ral_memset";
  RAL_SIGNAL_IF_ERROR(ctx, checkMemRef(dst, kKernel, "destination"));
  if (dst.numel() == 0) return;
  auto driver = cpuDriver(ctx);
  RAL_SIGNAL_IF_ERROR(ctx, driver.status());
  unsigned char pattern[sizeof(T)];
  std::memcpy(pattern, &value, sizeof(T));
  if (dst.isContiguous()) {
    RAL_SIGNAL_IF_ERROR(ctx,
                        (*driver)->fill(dst.data(), sizeof(T) * dst.numel(), pattern, sizeof(T)));
    return;
  }
  RAL_SIGNAL_IF_ERROR(
      ctx, stridedFill(*driver, sizeof(T), N, dst.sizes, dst.data(), dst.strides, pattern));
}

#define RAL_REGISTER_MEMORY_OPS_RANK(T, N)          \
  RAL_API("ral_memcpy", "cpu", memcpyKernel<T, N>); \
  RAL_API("ral_memset", "cpu", memsetKernel<T, N>);
#define RAL_REGISTER_MEMORY_OPS(T) RAL_KERNEL_RANKS_1_TO_6(RAL_REGISTER_MEMORY_OPS_RANK, T)
RAL_KERNEL_DATA_TYPES(RAL_REGISTER_MEMORY_OPS)

}  // namespace
}  // namespace ral::kernels
