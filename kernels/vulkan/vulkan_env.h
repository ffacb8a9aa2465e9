// Helpers of the Vulkan kernels: the context's Vulkan driver, its buffer-binding service and the
// execution's stream, the embedded shaders as executables (loaded once per driver, i.e. per
// Context), strided views bound as buffers, and launches with a push-constant block. The driver
// is reached through the Driver interface only. Stateless; safe from any thread.
#ifndef RAL_KERNELS_VULKAN_VULKAN_ENV_H_
#define RAL_KERNELS_VULKAN_VULKAN_ENV_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/common/devices.h"
#include "kernels/common/kernel_util.h"
#include "ral/driver_services.h"
#include "ral/execution_context.h"
#include "ral/memref.h"
#include "ral/status.h"

namespace ral::kernels::vulkan {

// An embedded shader (kernels/vulkan/shaders, compiled by glslc at build time).
struct Shader {
  const char* name;  // executable name, unique per shader
  const uint32_t* words;
  size_t size;
};

// The Vulkan driver of an execution, its stream (nullptr: the default stream) and how its
// pointers are bound.
struct VulkanEnv {
  Driver* driver = nullptr;
  Stream* stream = nullptr;
  BufferBindingService* buffers = nullptr;
};
StatusOr<VulkanEnv> vulkanEnv(const KernelEnv& env);
StatusOr<VulkanEnv> vulkanEnv(ExecutionContext* ctx);
// The shader's executable on the driver (loaded on first use).
StatusOr<Executable*> executable(const VulkanEnv& env, const Shader& shader);

// A view bound as a storage buffer: `ptr` is what the launch passes (the view's lowest byte,
// rounded down to the driver's binding alignment), `base` the element offset of data() from it.
struct Binding {
  void* ptr = nullptr;
  int32_t base = 0;
};
// Checks that every element of [lo, hi) lies in one allocation of the driver and fits a binding
// with 32-bit element indices.
StatusOr<Binding> bindRange(const VulkanEnv& env, const char* kernel, const char* what,
                            uintptr_t data, uintptr_t lo, uintptr_t hi, size_t elem_size);

template <typename T, int N>
StatusOr<Binding> bindView(const VulkanEnv& env, const char* kernel, const char* what,
                           const MemRef<T, N>& m) {
  const auto [lo, hi] = byteSpan(m);
  return bindRange(env, kernel, what, reinterpret_cast<uintptr_t>(m.data()), lo, hi, sizeof(T));
}

// Strides as 32-bit element counts (InvalidArgument when one does not fit).
Status toInt32(const char* kernel, int64_t v, int32_t* out);

// Launches entry 0 of `exe` with the bindings, then `push` as the whole push-constant block.
Status launch(const VulkanEnv& env, Executable* exe, Dim3 grid, const Binding* bindings,
              size_t binding_count, const void* push, size_t push_size);

// Workgroups for `items` with 256 invocations each (grid-stride loops cover the rest).
uint32_t groupsFor(uint64_t items);

}  // namespace ral::kernels::vulkan

#endif  // RAL_KERNELS_VULKAN_VULKAN_ENV_H_
