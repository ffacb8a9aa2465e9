// Device tags and the per-execution environment every kernel starts from.
//
// Ops are written once (checks, type lists, registration tables) and call their per-device part
// through overloads or implementation structs selected by a tag: cpu::Tag, cuda::Tag,
// hsa::Tag, vulkan::Tag. A tag's code is compiled only when its device is enabled.
//
// KernelEnv is a plain view: the Context owns the driver, the host owns the stream.
#ifndef RAL_KERNELS_COMMON_DEVICES_H_
#define RAL_KERNELS_COMMON_DEVICES_H_

#include "ral/context.h"
#include "ral/driver.h"
#include "ral/execution_context.h"
#include "ral/status.h"

namespace ral::kernels {

namespace cpu {
struct Tag {
  static constexpr DeviceKind kKind = DeviceKind::kCpu;
};
}  // namespace cpu
namespace cuda {
struct Tag {
  static constexpr DeviceKind kKind = DeviceKind::kCuda;
};
}  // namespace cuda
namespace hsa {
struct Tag {
  static constexpr DeviceKind kKind = DeviceKind::kHsa;
};
}  // namespace hsa
namespace vulkan {
struct Tag {
  static constexpr DeviceKind kKind = DeviceKind::kVulkan;
};
}  // namespace vulkan

// The driver of one device of the execution's Context and the stream its work goes to.
struct KernelEnv {
  Context* context = nullptr;  // per-Context caches (loaded executables, library handles)
  Driver* driver = nullptr;
  Stream* stream = nullptr;  // nullptr: the driver's default stream
};

// CPU kernels run before they return, so they ignore the execution's stream; other devices queue
// on it.
inline StatusOr<KernelEnv> kernelEnv(ExecutionContext* ctx, DeviceKind kind) {
  if (ctx == nullptr || ctx->context() == nullptr)
    return failedPrecondition("the execution context has no Context");
  RAL_ASSIGN_OR_RETURN(Driver * driver, ctx->context()->driver(kind));
  return KernelEnv{ctx->context(), driver, kind == DeviceKind::kCpu ? nullptr : ctx->stream()};
}

// The service of type T of `driver` (see Driver::service), or Unsupported naming the driver.
template <class T>
StatusOr<T*> requireService(Driver* driver, const char* what) {
  if (T* s = driver->service<T>()) return s;
  return unsupported("the ", deviceKindName(driver->kind()), " driver (", driver->deviceName(),
                     ") does not provide ", what);
}

}  // namespace ral::kernels

#endif  // RAL_KERNELS_COMMON_DEVICES_H_
