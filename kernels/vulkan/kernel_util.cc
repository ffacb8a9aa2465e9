#include "kernels/vulkan/kernel_util.h"

#include <algorithm>
#include <climits>

#include "ral/context.h"

namespace ral::kernels::vulkan {

StatusOr<VulkanDriver*> vulkanDriver(ExecutionContext* ctx) {
  if (ctx == nullptr || ctx->context() == nullptr)
    return failedPrecondition("the execution context has no Context");
  return ctx->context()->driver<VulkanDriver>();
}

StatusOr<Executable*> executable(VulkanDriver* driver, const Shader& shader) {
  ExecutableSpec spec;
  spec.name = shader.name;
  spec.format = ExecutableFormat::kSpirv;
  spec.data = shader.words;
  spec.size = shader.size;
  return driver->load(spec);
}

Status toInt32(const char* kernel, int64_t v, int32_t* out) {
  if (v < INT32_MIN || v > INT32_MAX)
    return invalidArgument(kernel, ": stride or offset ", v,
                           " does not fit the 32-bit indices of the Vulkan kernels");
  *out = static_cast<int32_t>(v);
  return Status();
}

StatusOr<Binding> bindRange(VulkanDriver* driver, const char* kernel, const char* what,
                            uintptr_t data, uintptr_t lo, uintptr_t hi, size_t elem_size) {
  auto range = driver->resolve(reinterpret_cast<const void*>(lo), hi - lo);
  if (!range.ok())
    return invalidArgument(kernel, ": the ", what,
                           " is not (entirely) Vulkan device memory: ", range.status().message());
  const uintptr_t start = lo - range->offset % driver->bindingAlignment();
  const uint64_t span = hi - start;
  if (span > driver->device().limits().maxStorageBufferRange)
    return unsupported(kernel, ": the ", what, " spans ", span, " bytes; the device binds at most ",
                       driver->device().limits().maxStorageBufferRange);
  if ((data - start) % elem_size != 0)
    return invalidArgument(kernel, ": the ", what, " is not aligned to its element size");
  if (span / elem_size > static_cast<uint64_t>(INT32_MAX))
    return unsupported(kernel, ": the ", what, " has too many elements for 32-bit indices");
  Binding b;
  b.ptr = reinterpret_cast<void*>(start);
  b.base = static_cast<int32_t>((data - start) / elem_size);
  return b;
}

Status launch(VulkanDriver* driver, Executable* exe, Dim3 grid, const Binding* bindings,
              size_t binding_count, const void* push, size_t push_size, Stream* stream) {
  void* values[8];
  size_t sizes[8];
  void* ptrs[8];
  if (binding_count > 7) return internalError("too many bindings");
  for (size_t i = 0; i < binding_count; ++i) {
    ptrs[i] = bindings[i].ptr;
    values[i] = &ptrs[i];
    sizes[i] = sizeof(void*);
  }
  values[binding_count] = const_cast<void*>(push);
  sizes[binding_count] = push_size;
  LaunchConfig config;
  config.grid = grid;
  config.block = Dim3{0, 0, 0};
  return driver->launch(exe, 0, config, KernelArgs{values, sizes, binding_count + 1}, stream);
}

uint32_t groupsFor(uint64_t items) {
  return static_cast<uint32_t>(std::clamp<uint64_t>((items + 255) / 256, 1, 65535));
}

Status readToHost(VulkanDriver* driver, const void* src, size_t bytes, void* dst, Stream* stream) {
  if (bytes == 0) return Status();
  if (driver->resolve(src, bytes).ok())
    return driver->copy(dst, src, bytes, CopyKind::kDeviceToHost, stream);
  std::memcpy(dst, src, bytes);
  return Status();
}

}  // namespace ral::kernels::vulkan
