// A small SPIR-V reader: what the driver needs to build a compute pipeline layout from a module
// without extra metadata — the compute entry points with their workgroup sizes, the descriptor
// bindings of set 0 and the push-constant block (size and member offsets).
#ifndef RAL_DRIVERS_VULKAN_SPIRV_REFLECT_H_
#define RAL_DRIVERS_VULKAN_SPIRV_REFLECT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ral/driver.h"
#include "ral/status.h"

namespace ral::vulkan {

enum class BindingType : uint8_t { kStorageBuffer, kUniformBuffer };

struct SpirvBinding {
  uint32_t binding = 0;
  BindingType type = BindingType::kStorageBuffer;
};

struct SpirvPushMember {
  uint32_t offset = 0;
  uint32_t size = 0;
};

struct SpirvEntry {
  std::string name;
  Dim3 workgroup_size{0, 0, 0};  // 0 when the module sets it with specialization constants
};

struct SpirvInfo {
  std::vector<SpirvEntry> entries;     // GLCompute entry points, in module order
  std::vector<SpirvBinding> bindings;  // descriptor set 0, sorted by binding number
  uint32_t push_constant_size = 0;     // bytes (0: no push-constant block)
  std::vector<SpirvPushMember> push_members;
  std::vector<uint32_t> capabilities;  // OpCapability operands, in module order
};

// InvalidArgument for anything that is not a well-formed SPIR-V module (bad magic, truncated
// instruction, ...); Unsupported for resources RAL cannot bind (sets other than 0, images).
StatusOr<SpirvInfo> reflectSpirv(const void* data, size_t size);

}  // namespace ral::vulkan

#endif  // RAL_DRIVERS_VULKAN_SPIRV_REFLECT_H_
