// VulkanApi: the Vulkan entry points RAL uses, loaded at run time with dlopen. libral.so has no
// link-time dependency on libvulkan, so a process without a Vulkan loader still loads RAL and
// gets an Unavailable status the first time it asks for the Vulkan driver.
//
// The loader library is libvulkan.so.1, or what RAL_VULKAN_LOADER_PATH names (drivers/common/
// dynamic_library.h). Global functions come
// from vkGetInstanceProcAddr(nullptr, ...), instance functions after loadInstance(), device
// functions (through vkGetDeviceProcAddr, skipping the loader trampoline) after loadDevice().
#ifndef RAL_DRIVERS_VULKAN_VULKAN_API_H_
#define RAL_DRIVERS_VULKAN_VULKAN_API_H_

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include <string>

#include "ral/status.h"

namespace ral::vulkan {

#define RAL_VK_GLOBAL_FUNCTIONS(X) \
  X(vkCreateInstance)              \
  X(vkEnumerateInstanceVersion)    \
  X(vkEnumerateInstanceExtensionProperties)

#define RAL_VK_INSTANCE_FUNCTIONS(X)          \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

#define RAL_VK_DEVICE_FUNCTIONS(X) \
  X(vkDestroyDevice)               \
  X(vkGetDeviceQueue)              \
  X(vkDeviceWaitIdle)              \
  X(vkQueueSubmit)                 \
  X(vkAllocateMemory)              \
  X(vkFreeMemory)                  \
  X(vkMapMemory)                   \
  X(vkUnmapMemory)                 \
  X(vkCreateBuffer)                \
  X(vkDestroyBuffer)               \
  X(vkGetBufferMemoryRequirements) \
  X(vkBindBufferMemory)            \
  X(vkGetBufferDeviceAddress)      \
  X(vkCreateShaderModule)          \
  X(vkDestroyShaderModule)         \
  X(vkCreateDescriptorSetLayout)   \
  X(vkDestroyDescriptorSetLayout)  \
  X(vkCreatePipelineLayout)        \
  X(vkDestroyPipelineLayout)       \
  X(vkCreateComputePipelines)      \
  X(vkDestroyPipeline)             \
  X(vkCreatePipelineCache)         \
  X(vkDestroyPipelineCache)        \
  X(vkGetPipelineCacheData)        \
  X(vkCreateCommandPool)           \
  X(vkDestroyCommandPool)          \
  X(vkAllocateCommandBuffers)      \
  X(vkFreeCommandBuffers)          \
  X(vkResetCommandBuffer)          \
  X(vkBeginCommandBuffer)          \
  X(vkEndCommandBuffer)            \
  X(vkCmdBindPipeline)             \
  X(vkCmdBindDescriptorSets)       \
  X(vkCmdPushConstants)            \
  X(vkCmdDispatch)                 \
  X(vkCmdCopyBuffer)               \
  X(vkCmdFillBuffer)               \
  X(vkCmdUpdateBuffer)             \
  X(vkCmdPipelineBarrier)          \
  X(vkCreateDescriptorPool)        \
  X(vkDestroyDescriptorPool)       \
  X(vkResetDescriptorPool)         \
  X(vkAllocateDescriptorSets)      \
  X(vkUpdateDescriptorSets)        \
  X(vkCreateSemaphore)             \
  X(vkDestroySemaphore)            \
  X(vkGetSemaphoreCounterValue)    \
  X(vkSignalSemaphore)             \
  X(vkWaitSemaphores)              \
  X(vkCreateFence)                 \
  X(vkDestroyFence)                \
  X(vkWaitForFences)               \
  X(vkResetFences)                 \
  X(vkCreateQueryPool)             \
  X(vkDestroyQueryPool)            \
  X(vkCmdResetQueryPool)           \
  X(vkCmdWriteTimestamp)           \
  X(vkGetQueryPoolResults)

// Optional device functions (an extension the device may lack): null when absent.
#define RAL_VK_OPTIONAL_DEVICE_FUNCTIONS(X) \
  X(vkCmdPushDescriptorSetKHR)              \
  X(vkGetCalibratedTimestampsEXT)
// Optional instance functions: null when absent.
#define RAL_VK_OPTIONAL_INSTANCE_FUNCTIONS(X) X(vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)

#define RAL_VK_DECLARE(name) PFN_##name name = nullptr;

struct VulkanApi {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  RAL_VK_GLOBAL_FUNCTIONS(RAL_VK_DECLARE)
  RAL_VK_INSTANCE_FUNCTIONS(RAL_VK_DECLARE)
  RAL_VK_DEVICE_FUNCTIONS(RAL_VK_DECLARE)
  RAL_VK_OPTIONAL_DEVICE_FUNCTIONS(RAL_VK_DECLARE)
  RAL_VK_OPTIONAL_INSTANCE_FUNCTIONS(RAL_VK_DECLARE)

  // Opens the loader (once per process; the handle is kept) and resolves the global functions.
  // Unavailable, naming the library and dlerror(), when it cannot be opened.
  static StatusOr<VulkanApi> loadGlobal();
  Status loadInstance(VkInstance instance);
  Status loadDevice(VkDevice device);
};

#undef RAL_VK_DECLARE

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc.
const char* vkResultName(VkResult result);
// OK for VK_SUCCESS; otherwise a status whose code fits the result (out of memory, device lost
// → Unavailable, ...) and whose message is "vulkan: <what>: <VK_ERROR_...>".
Status vkStatus(VkResult result, const char* what);

}  // namespace ral::vulkan

#define RAL_VK_RETURN_IF_ERROR(call, what)                                                  \
  do {                                                                                      \
    const VkResult ral_vk_result_ = (call);                                                 \
    if (ral_vk_result_ != VK_SUCCESS) return ::ral::vulkan::vkStatus(ral_vk_result_, what); \
  } while (0)

#endif  // RAL_DRIVERS_VULKAN_VULKAN_API_H_
