// Timeline: a Vulkan timeline semaphore (VkSemaphore of type TIMELINE) owned by RAL. Streams use
// one to count their submitted batches; RAL semaphores wrap one. completed() remembers the
// largest value seen, so polling a reached value costs one atomic load.
#ifndef RAL_DRIVERS_VULKAN_TIMELINE_H_
#define RAL_DRIVERS_VULKAN_TIMELINE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "drivers/vulkan/vulkan_device.h"
#include "ral/driver.h"
#include "ral/status.h"

namespace ral::vulkan {

class Timeline {
 public:
  static StatusOr<std::shared_ptr<Timeline>> create(std::shared_ptr<VulkanDevice> device,
                                                    uint64_t initial_value);
  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  VkSemaphore handle() const { return semaphore_; }
  VulkanDevice& device() const { return *device_; }
  // The current counter value (queried from the device).
  StatusOr<uint64_t> query();
  bool reached(uint64_t value);
  // Host wait for value; DeadlineExceeded when `timeout` passes first.
  Status wait(uint64_t value, Timeout timeout);
  Status signal(uint64_t value);

 private:
  Timeline(std::shared_ptr<VulkanDevice> device, VkSemaphore semaphore, uint64_t value)
      : device_(std::move(device)), semaphore_(semaphore), seen_(value) {}
  void remember(uint64_t value);

  std::shared_ptr<VulkanDevice> device_;
  VkSemaphore semaphore_;
  std::atomic<uint64_t> seen_;
};

// "Memory may be reused once each of these timelines reaches its value": what a stream-ordered
// free waits for.
using UseFence = std::vector<std::pair<std::shared_ptr<Timeline>, uint64_t>>;
bool fenceReached(const UseFence& fence);

}  // namespace ral::vulkan

#endif  // RAL_DRIVERS_VULKAN_TIMELINE_H_
