#include "drivers/vulkan/vulkan_executable.h"

#include <algorithm>

namespace ral::vulkan {
namespace {

bool sameSize(const Dim3& a, const Dim3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
bool isZero(const Dim3& d) { return d.x == 0 && d.y == 0 && d.z == 0; }

}  // namespace

uint64_t VulkanExecutable::hashBytes(const void* data, size_t size) {
  uint64_t h = 1469598103934665603ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

StatusOr<std::unique_ptr<VulkanExecutable>> VulkanExecutable::create(
    std::shared_ptr<VulkanDevice> device, PipelineCache* cache, const ExecutableSpec& spec,
    const void* owner) {
  std::unique_ptr<VulkanExecutable> exe(new VulkanExecutable(std::move(device)));
  exe->owner_ = owner;
  RAL_RETURN_IF_ERROR(
      exe->build(cache, spec)
          .withContext(internal::strCat("vulkan: loading executable '", spec.name, "'")));
  return exe;
}

VulkanExecutable::~VulkanExecutable() {
  const auto& api = device_->api();
  VkDevice dev = device_->device();
  for (auto& e : entries_)
    if (e.pipeline != VK_NULL_HANDLE) api.vkDestroyPipeline(dev, e.pipeline, nullptr);
  if (layout_ != VK_NULL_HANDLE) api.vkDestroyPipelineLayout(dev, layout_, nullptr);
  if (set_layout_ != VK_NULL_HANDLE) api.vkDestroyDescriptorSetLayout(dev, set_layout_, nullptr);
}

Status checkSpirvCapabilities(const SpirvInfo& info, const VulkanDevice::ShaderFeatures& f,
                              const std::string& module, const std::string& device) {
  struct Need {
    uint32_t capability;
    const char* name;
    const char* feature;
    bool present;
  };
  const Need needs[] = {
      {9, "Float16", "shaderFloat16", f.float16},
      {10, "Float64", "shaderFloat64", f.float64},
      {11, "Int64", "shaderInt64", f.int64},
      {22, "Int16", "shaderInt16", f.int16},
      {39, "Int8", "shaderInt8", f.int8},
      {4433, "StorageBuffer16BitAccess", "storageBuffer16BitAccess", f.storage_buffer_16bit},
      {4448, "StorageBuffer8BitAccess", "storageBuffer8BitAccess", f.storage_buffer_8bit},
  };
  for (uint32_t c : info.capabilities)
    for (const Need& n : needs)
      if (n.capability == c && !n.present)
        return unsupported("the SPIR-V module '", module, "' needs capability ", n.name,
                           " but device '", device, "' lacks ", n.feature);
  return Status();
}

Status VulkanExecutable::build(PipelineCache* cache, const ExecutableSpec& spec) {
  if (spec.format != ExecutableFormat::kSpirv)
    return unsupported("format '", executableFormatName(spec.format),
                       "' is not SPIR-V, the only format the Vulkan driver runs");
  RAL_ASSIGN_OR_RETURN(info_, reflectSpirv(spec.data, spec.size));
  hash_ = hashBytes(spec.data, spec.size);
  source_ = spec.data;
  source_size_ = spec.size;
  spec_ = spec;
  spec_.data = nullptr;
  spec_.size = 0;

  // Entries: the requested ones (checked against the module), else all compute entry points.
  if (spec_.entries.empty()) {
    for (const auto& e : info_.entries) spec_.entries.push_back({e.name, e.workgroup_size});
  }
  const auto& limits = device_->limits();
  for (auto& requested : spec_.entries) {
    auto found = std::find_if(info_.entries.begin(), info_.entries.end(),
                              [&](const SpirvEntry& e) { return e.name == requested.name; });
    if (found == info_.entries.end())
      return notFound("the SPIR-V module has no compute entry point '", requested.name, "'");
    if (isZero(found->workgroup_size))
      return unsupported("entry '", requested.name,
                         "' sets its workgroup size with specialization constants");
    if (!isZero(requested.workgroup_size) &&
        !sameSize(requested.workgroup_size, found->workgroup_size))
      return invalidArgument("entry '", requested.name, "' is compiled for workgroup size ",
                             found->workgroup_size.x, "x", found->workgroup_size.y, "x",
                             found->workgroup_size.z, ", not ", requested.workgroup_size.x, "x",
                             requested.workgroup_size.y, "x", requested.workgroup_size.z);
    requested.workgroup_size = found->workgroup_size;
    if (found->workgroup_size.count() > limits.maxComputeWorkGroupInvocations)
      return unsupported("entry '", requested.name, "' needs ", found->workgroup_size.count(),
                         " invocations per workgroup; the device allows ",
                         limits.maxComputeWorkGroupInvocations);
  }
  RAL_RETURN_IF_ERROR(
      checkSpirvCapabilities(info_, device_->shaderFeatures(), spec_.name, device_->name()));
  if (info_.push_constant_size > limits.maxPushConstantsSize)
    return unsupported("a ", info_.push_constant_size, "-byte push-constant block exceeds the ",
                       limits.maxPushConstantsSize, " bytes the device allows");

  const auto& api = device_->api();
  VkDevice dev = device_->device();
  push_descriptors_ = device_->hasPushDescriptors();
  std::vector<VkDescriptorSetLayoutBinding> bindings;
  for (const auto& b : info_.bindings) {
    VkDescriptorSetLayoutBinding lb{};
    lb.binding = b.binding;
    lb.descriptorType = b.type == BindingType::kStorageBuffer ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                                              : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    lb.descriptorCount = 1;
    lb.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    bindings.push_back(lb);
  }
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.flags = push_descriptors_ ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0;
  set_info.bindingCount = static_cast<uint32_t>(bindings.size());
  set_info.pBindings = bindings.data();
  RAL_VK_RETURN_IF_ERROR(api.vkCreateDescriptorSetLayout(dev, &set_info, nullptr, &set_layout_),
                         "vkCreateDescriptorSetLayout");

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, info_.push_constant_size};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &set_layout_;
  layout_info.pushConstantRangeCount = info_.push_constant_size > 0 ? 1 : 0;
  layout_info.pPushConstantRanges = &range;
  RAL_VK_RETURN_IF_ERROR(api.vkCreatePipelineLayout(dev, &layout_info, nullptr, &layout_),
                         "vkCreatePipelineLayout");

  VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module_info.codeSize = spec.size;
  module_info.pCode = static_cast<const uint32_t*>(spec.data);
  VkShaderModule module = VK_NULL_HANDLE;
  RAL_VK_RETURN_IF_ERROR(api.vkCreateShaderModule(dev, &module_info, nullptr, &module),
                         "vkCreateShaderModule");
  // The module is only needed while the pipelines are created.
  struct ModuleGuard {
    const VulkanApi& api;
    VkDevice dev;
    VkShaderModule module;
    ~ModuleGuard() { api.vkDestroyShaderModule(dev, module, nullptr); }
  } guard{api, dev, module};

  for (const auto& requested : spec_.entries) {
    VkPipelineCreationFeedback feedback{};
    VkPipelineCreationFeedbackCreateInfo feedback_info{
        VK_STRUCTURE_TYPE_PIPELINE_CREATION_FEEDBACK_CREATE_INFO};
    feedback_info.pPipelineCreationFeedback = &feedback;
    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    if (device_->hasCreationFeedback()) info.pNext = &feedback_info;
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = requested.name.c_str();
    info.layout = layout_;
    Entry entry;
    entry.workgroup_size = requested.workgroup_size;
    RAL_VK_RETURN_IF_ERROR(
        api.vkCreateComputePipelines(dev, cache != nullptr ? cache->handle() : VK_NULL_HANDLE, 1,
                                     &info, nullptr, &entry.pipeline),
        "vkCreateComputePipelines");
    entries_.push_back(entry);
    if (cache != nullptr) {
      const bool valid = feedback.flags & VK_PIPELINE_CREATION_FEEDBACK_VALID_BIT;
      cache->recordPipeline(
          valid &&
          (feedback.flags & VK_PIPELINE_CREATION_FEEDBACK_APPLICATION_PIPELINE_CACHE_HIT_BIT));
    }
  }
  return Status();
}

}  // namespace ral::vulkan
