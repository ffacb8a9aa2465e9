// ral_memcpy and ral_memset on strided MemRefs of any element type, ranks 1-6, for every device:
// the argument check, the kernels and their registration table, written once. Each device
// instantiates the table with its tag (kernels/generic_ops.h); the device-specific part is the
// strided primitive of kernels/copy.
//
//   void memcpy(ExecutionContext*, MemRef<T, N> src, MemRef<T, N> dst)    dst = src
//     ral_memcpy___<dev>___pvoid_m<N>d<T>_m<N>d<T>___void
//   void memset(ExecutionContext*, MemRef<T, N> dst, T value)             every element = value
//     ral_memset___<dev>___pvoid_m<N>d<T>_<T>___void
//   T read(ExecutionContext*, MemRef<T, 0> element)                      the element, on the host
//     ral_read_element___<dev>___pvoid_m0d<T>___<T>
//   void write(ExecutionContext*, MemRef<T, 0> element, T value)         element = value
//     ral_write_element___<dev>___pvoid_m0d<T>_<T>___void
//   T in i1 i8 ui8 i16 i32 i64 f16 bf16 f32 f64; N in 1..6
//
// ral_read_element and ral_write_element are how a GPU module's host code reads a value it
// decides on (a TopK's K, a loop's trip count or condition) and writes one (a loop's counter):
// the read is a copy on the execution's stream, after the work queued before it, which is waited
// for; the write is a fill queued on the stream (the value travels with it), so nothing waits.
// Dense operands go through the driver's copy/fill on the execution's stream; others through the
// strided copy. Shapes must match; src and dst must not partially overlap (the very same view is
// a no-op copy).
#ifndef RAL_KERNELS_MEMORY_OPS_MEMORY_OPS_H_
#define RAL_KERNELS_MEMORY_OPS_MEMORY_OPS_H_

#include <cstdint>
#include <cstring>

#include "kernels/common/devices.h"
#include "kernels/common/kernel_types.h"
#include "kernels/common/kernel_util.h"
#include "kernels/copy/strided_copy.h"
#include "ral/api.h"
#include "ral/memref.h"

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
template <class Dev, typename T, int N>
Status memcpyOn(ExecutionContext* ctx, const MemRef<T, N>& src, const MemRef<T, N>& dst) {
  const char* kKernel = "ral_memcpy";
  RAL_ASSIGN_OR_RETURN(const bool work, checkCopy(src, dst, kKernel));
  if (!work) return Status();
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, Dev::kKind));
  if (src.isContiguous() && dst.isContiguous())
    return env.driver->copy(dst.data(), src.data(), sizeof(T) * dst.numel(),
                            CopyKind::kDeviceToDevice, env.stream);
  return stridedCopy(Dev{}, env, kKernel, sizeof(T), N, dst.sizes, src.data(), src.strides,
                     dst.data(), dst.strides);
}

template <class Dev, typename T, int N>
Status memsetOn(ExecutionContext* ctx, const MemRef<T, N>& dst, T value) {
  const char* kKernel = "ral_memset";
  RAL_RETURN_IF_ERROR(checkMemRef(dst, kKernel, "destination"));
  if (dst.numel() == 0) return Status();
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, Dev::kKind));
  uint64_t pattern = 0;
  std::memcpy(&pattern, &value, sizeof(T));
  if (dst.isContiguous())
    return env.driver->fill(dst.data(), sizeof(T) * dst.numel(), &pattern, sizeof(T), env.stream);
  return stridedFill(Dev{}, env, kKernel, sizeof(T), N, dst.sizes, dst.data(), dst.strides,
                     pattern);
}

template <class Dev, typename T, int N>
void memcpyKernel(ExecutionContext* ctx, MemRef<T, N> src, MemRef<T, N> dst) {
  RAL_SIGNAL_IF_ERROR(ctx, (memcpyOn<Dev, T, N>(ctx, src, dst)));
}

template <class Dev, typename T, int N>
void memsetKernel(ExecutionContext* ctx, MemRef<T, N> dst, T value) {
  RAL_SIGNAL_IF_ERROR(ctx, (memsetOn<Dev, T, N>(ctx, dst, value)));
}

// The environment of a single-element access, once the element is known to be device memory.
template <class Dev, typename T>
StatusOr<KernelEnv> elementEnv(ExecutionContext* ctx, const MemRef<T, 0>& element,
                               const char* kernel) {
  if (element.aligned == nullptr) return invalidArgument(kernel, ": the element has no data");
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, Dev::kKind));
  if (!env.driver->kernelsCanAccess(element.data(), sizeof(T)))
    return invalidArgument(kernel, ": the element at ", static_cast<const void*>(element.data()),
                           " is not memory of the ", env.driver->deviceName(), " device");
  return env;
}

template <class Dev, typename T>
StatusOr<T> readElementOn(ExecutionContext* ctx, const MemRef<T, 0>& element) {
  RAL_ASSIGN_OR_RETURN(KernelEnv env, (elementEnv<Dev, T>(ctx, element, "ral_read_element")));
  T value{};
  RAL_RETURN_IF_ERROR(
      env.driver->copy(&value, element.data(), sizeof(T), CopyKind::kDeviceToHost, env.stream));
  RAL_RETURN_IF_ERROR(env.driver->synchronize(env.stream));
  return value;
}

template <class Dev, typename T>
Status writeElementOn(ExecutionContext* ctx, const MemRef<T, 0>& element, T value) {
  RAL_ASSIGN_OR_RETURN(KernelEnv env, (elementEnv<Dev, T>(ctx, element, "ral_write_element")));
  uint64_t pattern = 0;
  std::memcpy(&pattern, &value, sizeof(T));
  return env.driver->fill(element.data(), sizeof(T), &pattern, sizeof(T), env.stream);
}

template <class Dev, typename T>
void writeElementKernel(ExecutionContext* ctx, MemRef<T, 0> element, T value) {
  RAL_SIGNAL_IF_ERROR(ctx, (writeElementOn<Dev, T>(ctx, element, value)));
}

template <class Dev, typename T>
T readElementKernel(ExecutionContext* ctx, MemRef<T, 0> element) {
  StatusOr<T> value = readElementOn<Dev, T>(ctx, element);
  if (!value.ok()) {
    ctx->signalError(value.status());
    return T{};
  }
  return *value;
}

}  // namespace ral::kernels

// The registration table: every data type and rank 1-6 (ral_read_element, ral_write_element: rank 0) for device `Dev` named `kDevice` (both
// defined where this is used, once per device).
#define RAL_MEMORY_OPS_RANK_(T, N)                                         \
  RAL_API("ral_memcpy", kDevice, ::ral::kernels::memcpyKernel<Dev, T, N>); \
  RAL_API("ral_memset", kDevice, ::ral::kernels::memsetKernel<Dev, T, N>);
#define RAL_MEMORY_OPS_TYPE_(T) RAL_KERNEL_RANKS_1_TO_6(RAL_MEMORY_OPS_RANK_, T)
#define RAL_READ_ELEMENT_TYPE_(T)                                                   \
  RAL_API("ral_read_element", kDevice, ::ral::kernels::readElementKernel<Dev, T>); \
  RAL_API("ral_write_element", kDevice, ::ral::kernels::writeElementKernel<Dev, T>);
#define RAL_REGISTER_MEMORY_OPS()                    \
  RAL_KERNEL_DATA_TYPES(RAL_MEMORY_OPS_TYPE_)        \
  RAL_KERNEL_DATA_TYPES(RAL_READ_ELEMENT_TYPE_)

#endif  // RAL_KERNELS_MEMORY_OPS_MEMORY_OPS_H_
