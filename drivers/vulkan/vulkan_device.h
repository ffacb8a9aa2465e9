// VulkanDevice: the process's Vulkan instance (created on first use, then kept), the physical
// device chosen for RAL and a logical device with one compute queue. Shared (std::shared_ptr) by
// the driver and everything that holds Vulkan objects of it (semaphores, executables, streams), so
// none can outlive the VkDevice.
//
// Device choice, first match wins:
//   1. VulkanDeviceOptions::device when not empty;
//   2. the RAL_VULKAN_DEVICE environment variable when set;
//   3. the first discrete GPU, else integrated, else virtual, else CPU device (e.g. llvmpipe).
// A choice is a device index ("1") or a case-insensitive substring of the device name
// ("llvmpipe"). Every device must offer Vulkan 1.2 with timeline semaphores, buffer device
// addresses and a queue family with compute; anything missing is an Unavailable status that says
// what is missing, never a crash.
#ifndef RAL_DRIVERS_VULKAN_VULKAN_DEVICE_H_
#define RAL_DRIVERS_VULKAN_VULKAN_DEVICE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "drivers/vulkan/vulkan_api.h"
#include "ral/status.h"

namespace ral::vulkan {

struct VulkanDeviceOptions {
  std::string device;  // index or name substring; empty: RAL_VULKAN_DEVICE, then automatic
};

// What one physical device offers, as listed by listDevices().
struct PhysicalDeviceInfo {
  uint32_t index = 0;
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t api_version = 0;
  bool usable = false;
  std::string unusable_reason;  // why not, when !usable
  std::string uuid;             // "GPU-<hex>" from VkPhysicalDeviceIDProperties::deviceUUID
};

class VulkanDevice {
 public:
  static StatusOr<std::shared_ptr<VulkanDevice>> create(const VulkanDeviceOptions& options);
  // Every physical device the loader offers, in its order (indices are the ordinals of device
  // URIs), usable or not, without creating a logical device.
  static StatusOr<std::vector<PhysicalDeviceInfo>> listDevices();
  ~VulkanDevice();
  VulkanDevice(const VulkanDevice&) = delete;
  VulkanDevice& operator=(const VulkanDevice&) = delete;

  const VulkanApi& api() const { return api_; }
  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physicalDevice() const { return physical_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queueFamily() const { return queue_family_; }
  // vkQueueSubmit needs the queue externally synchronised.
  std::mutex& queueMutex() { return queue_mutex_; }

  const VkPhysicalDeviceProperties& properties() const { return properties_; }
  const VkPhysicalDeviceLimits& limits() const { return properties_.limits; }
  const std::string& name() const { return name_; }
  const std::vector<PhysicalDeviceInfo>& allDevices() const { return all_devices_; }
  uint32_t deviceIndex() const { return index_; }
  bool hasPushDescriptors() const { return api_.vkCmdPushDescriptorSetKHR != nullptr; }
  // Shader features enabled on the device (each where the device has it): what SPIR-V
  // capabilities a module may declare (VulkanExecutable checks them before building a pipeline).
  struct ShaderFeatures {
    bool float64 = false, int64 = false, int16 = false, float16 = false, int8 = false;
    bool storage_buffer_16bit = false, storage_buffer_8bit = false;
  };
  const ShaderFeatures& shaderFeatures() const { return shader_features_; }
  bool hasCreationFeedback() const { return creation_feedback_; }

  // Every RAL submission also signals the queue's own timeline with the next value (returned
  // here; call with queueMutex() held), so the device knows which submissions have finished.
  VkSemaphore queueTimeline() const { return queue_timeline_; }
  uint64_t nextSubmitValue() { return ++submits_; }
  // Destroys `semaphore` once a submission made after this call has completed (or when the
  // device goes): the queue may still be finishing the batch that last signalled it even after
  // the host saw the signal, so destroying it at once could pull it from under the driver.
  void retireSemaphore(VkSemaphore semaphore);
  void collectGarbage();

  // Device time of commands, for traces: whether the queue writes timestamps the host can place
  // on its own clock (VK_EXT_calibrated_timestamps with the device's clock and CLOCK_MONOTONIC,
  // which std::chrono::steady_clock reads on Linux).
  bool timesCommands() const { return times_commands_; }
  // A timestamp read back (its valid bits) on the host's steady clock, in ns, given
  // hostMinusDeviceNs() read after the command ran.
  int64_t hostTimeNs(uint64_t timestamp, int64_t host_minus_device_ns) const;
  // The offset of the host's clock from the device's now (clocks drift: asked per read-back).
  StatusOr<int64_t> hostMinusDeviceNs() const;
  // The trace track (ral/trace.h) of this device's queue.
  uint32_t traceTrack() const { return trace_track_; }

  // Memory type indices: kDevice prefers DEVICE_LOCAL; kHostVisible needs HOST_VISIBLE |
  // HOST_COHERENT (preferring HOST_CACHED, since RAL reads results back on the host).
  uint32_t deviceMemoryType() const { return device_memory_type_; }
  uint32_t hostMemoryType() const { return host_memory_type_; }
  bool deviceMemoryIsHostVisible() const { return device_memory_host_visible_; }

 private:
  VulkanDevice() = default;
  Status init(const VulkanDeviceOptions& options);
  Status createInstance();  // the process-wide instance
  Status newInstance();
  Status listPhysicalDevices(std::vector<VkPhysicalDevice>* devices);
  Status selectPhysicalDevice(const VulkanDeviceOptions& options);
  Status createLogicalDevice();

  VulkanApi api_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  uint32_t index_ = 0;
  std::mutex queue_mutex_;
  VkPhysicalDeviceProperties properties_{};
  std::string name_;
  std::vector<PhysicalDeviceInfo> all_devices_;
  bool creation_feedback_ = false;
  bool times_commands_ = false;
  uint64_t timestamp_mask_ = 0;
  uint32_t trace_track_ = 0;
  ShaderFeatures shader_features_;
  uint32_t device_memory_type_ = 0;
  uint32_t host_memory_type_ = 0;
  bool device_memory_host_visible_ = false;
  VkSemaphore queue_timeline_ = VK_NULL_HANDLE;
  uint64_t submits_ = 0;  // guarded by queue_mutex_
  std::mutex garbage_mutex_;
  std::vector<std::pair<uint64_t, VkSemaphore>> garbage_;  // (submissions at retirement, object)
};

}  // namespace ral::vulkan

#endif  // RAL_DRIVERS_VULKAN_VULKAN_DEVICE_H_
