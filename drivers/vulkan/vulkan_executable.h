// VulkanExecutable: a SPIR-V module turned into one compute pipeline per entry point, sharing one
// pipeline layout that the driver derives from the module itself (spirv_reflect.h):
//   - descriptor set 0: the module's storage/uniform buffer bindings, pushed per dispatch
//     (VK_KHR_push_descriptor) or written into per-batch descriptor sets where that is missing;
//   - one push-constant range: the module's push-constant block.
// The workgroup size travels with the executable: the one compiled into the SPIR-V, checked
// against ExecutableSpec::entries[i].workgroup_size when that is given.
//
// Launch arguments (KernelArgs) follow the layout: first one `void*` per binding, in binding
// order (memory of this driver, any pointer inside an allocation); then either one argument per
// push-constant member (each exactly the member's size) or a single argument holding the whole
// block.
#ifndef RAL_DRIVERS_VULKAN_VULKAN_EXECUTABLE_H_
#define RAL_DRIVERS_VULKAN_VULKAN_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "drivers/vulkan/pipeline_cache.h"
#include "drivers/vulkan/spirv_reflect.h"
#include "drivers/vulkan/vulkan_device.h"
#include "ral/driver.h"
#include "ral/status.h"

namespace ral::vulkan {

class VulkanExecutable final : public Executable {
 public:
  struct Entry {
    VkPipeline pipeline = VK_NULL_HANDLE;
    Dim3 workgroup_size;
  };

  static StatusOr<std::unique_ptr<VulkanExecutable>> create(std::shared_ptr<VulkanDevice> device,
                                                            PipelineCache* cache,
                                                            const ExecutableSpec& spec,
                                                            const void* owner);
  ~VulkanExecutable() override;

  const ExecutableSpec& spec() const override { return spec_; }
  const void* owner() const { return owner_; }
  uint64_t contentHash() const { return hash_; }
  // Whether `spec` carries the module this executable was built from (same bytes).
  bool sameModule(const ExecutableSpec& spec) const {
    if (spec.data == source_ && spec.size == source_size_) return true;  // the usual, cheap case
    return spec.size == source_size_ && hashBytes(spec.data, spec.size) == hash_;
  }
  const Entry& entry(uint32_t i) const { return entries_[i]; }
  size_t entryCount() const { return entries_.size(); }
  const SpirvInfo& layoutInfo() const { return info_; }
  VkPipelineLayout pipelineLayout() const { return layout_; }
  VkDescriptorSetLayout setLayout() const { return set_layout_; }
  bool pushDescriptors() const { return push_descriptors_; }

  // FNV-1a of a byte range, used to tell two different modules loaded under one name apart.
  static uint64_t hashBytes(const void* data, size_t size);

 private:
  explicit VulkanExecutable(std::shared_ptr<VulkanDevice> device) : device_(std::move(device)) {}
  Status build(PipelineCache* cache, const ExecutableSpec& spec);

  std::shared_ptr<VulkanDevice> device_;
  const void* owner_ = nullptr;
  ExecutableSpec spec_;  // `data` cleared: the SPIR-V is not kept
  uint64_t hash_ = 0;
  const void* source_ = nullptr;  // the bytes it was built from (identity only, not kept alive)
  size_t source_size_ = 0;
  SpirvInfo info_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  bool push_descriptors_ = false;
  std::vector<Entry> entries_;
};

// Unsupported, naming the capability and the missing feature, when `info` declares a SPIR-V
// capability (Float64, Int64, Int16, Int8, Float16, 8/16-bit storage) the device does not have:
// building such a pipeline would be undefined behaviour.
Status checkSpirvCapabilities(const SpirvInfo& info, const VulkanDevice::ShaderFeatures& features,
                              const std::string& module, const std::string& device);

}  // namespace ral::vulkan

#endif  // RAL_DRIVERS_VULKAN_VULKAN_EXECUTABLE_H_
