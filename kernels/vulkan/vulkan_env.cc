#include "kernels/vulkan/vulkan_env.h"

#include <algorithm>
#include <climits>

#include "ral/context.h"

namespace ral::kernels::vulkan {

StatusOr<VulkanEnv> vulkanEnv(const KernelEnv& env) {
  RAL_ASSIGN_OR_RETURN(BufferBindingService * buffers,
                       requireService<BufferBindingService>(env.driver, "buffer bindings"));
  return VulkanEnv{env.driver, env.stream, buffers};
}

StatusOr<VulkanEnv> vulkanEnv(ExecutionContext* ctx) {
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kVulkan));
  return vulkanEnv(env);
}

StatusOr<Executable*> executable(const VulkanEnv& env, const Shader& shader) {
  ExecutableSpec spec;
  spec.name = shader.name;
  spec.format = ExecutableFormat::kSpirv;
  spec.data = shader.words;
  spec.size = shader.size;
  return env.driver->load(spec);
}

Status toInt32(const char* kernel, int64_t v, int32_t* out) {
  if (v < INT32_MIN || v > INT32_MAX)
    return invalidArgument(kernel, ": stride or offset ", v,
                           " does not fit the 32-bit indices of the Vulkan kernels");
  *out = static_cast<int32_t>(v);
  return Status();
}

StatusOr<Binding> bindRange(const VulkanEnv& env, const char* kernel, const char* what,
                            uintptr_t data, uintptr_t lo, uintptr_t hi, size_t elem_size) {
  auto offset = env.buffers->allocationOffset(reinterpret_cast<const void*>(lo), hi - lo);
  if (!offset.ok())
    return invalidArgument(kernel, ": the ", what,
                           " is not (entirely) Vulkan device memory: ", offset.status().message());
  const uintptr_t start = lo - *offset % env.buffers->bindingAlignment();
  const uint64_t span = hi - start;
  if (span > env.buffers->maxBindingRange())
    return unsupported(kernel, ": the ", what, " spans ", span, " bytes; the device binds at most ",
                       env.buffers->maxBindingRange());
  if ((data - start) % elem_size != 0)
    return invalidArgument(kernel, ": the ", what, " is not aligned to its element size");
  if (span / elem_size > static_cast<uint64_t>(INT32_MAX))
    return unsupported(kernel, ": the ", what, " has too many elements for 32-bit indices");
  Binding b;
  b.ptr = reinterpret_cast<void*>(start);
  b.base = static_cast<int32_t>((data - start) / elem_size);
  return b;
}

Status launch(const VulkanEnv& env, Executable* exe, Dim3 grid, const Binding* bindings,
              size_t binding_count, const void* push, size_t push_size) {
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
  return env.driver->launch(exe, 0, config, KernelArgs{values, sizes, binding_count + 1},
                            env.stream);
}

uint32_t groupsFor(uint64_t items) {
  return static_cast<uint32_t>(std::clamp<uint64_t>((items + 255) / 256, 1, 65535));
}

}  // namespace ral::kernels::vulkan
