#include "drivers/vulkan/timeline.h"

#include <algorithm>

namespace ral::vulkan {

StatusOr<std::shared_ptr<Timeline>> Timeline::create(std::shared_ptr<VulkanDevice> device,
                                                     uint64_t initial_value) {
  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = initial_value;
  VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  info.pNext = &type;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  RAL_VK_RETURN_IF_ERROR(
      device->api().vkCreateSemaphore(device->device(), &info, nullptr, &semaphore),
      "vkCreateSemaphore (timeline)");
  return std::shared_ptr<Timeline>(new Timeline(std::move(device), semaphore, initial_value));
}

Timeline::~Timeline() { device_->retireSemaphore(semaphore_); }

void Timeline::remember(uint64_t value) {
  uint64_t seen = seen_.load(std::memory_order_relaxed);
  while (value > seen && !seen_.compare_exchange_weak(seen, value, std::memory_order_release)) {
  }
}

StatusOr<uint64_t> Timeline::query() {
  uint64_t value = 0;
  RAL_VK_RETURN_IF_ERROR(
      device_->api().vkGetSemaphoreCounterValue(device_->device(), semaphore_, &value),
      "vkGetSemaphoreCounterValue");
  remember(value);
  return value;
}

bool Timeline::reached(uint64_t value) {
  if (seen_.load(std::memory_order_acquire) >= value) return true;
  auto current = query();
  return current.ok() && *current >= value;
}

Status Timeline::wait(uint64_t value, Timeout timeout) {
  if (seen_.load(std::memory_order_acquire) >= value) return Status();
  VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  info.semaphoreCount = 1;
  info.pSemaphores = &semaphore_;
  info.pValues = &value;
  const uint64_t ns = timeout == kInfiniteTimeout
                          ? UINT64_MAX
                          : static_cast<uint64_t>(std::max<int64_t>(0, timeout.count()));
  const VkResult r = device_->api().vkWaitSemaphores(device_->device(), &info, ns);
  if (r == VK_TIMEOUT) return deadlineExceeded("vulkan: timed out waiting for value ", value);
  RAL_VK_RETURN_IF_ERROR(r, "vkWaitSemaphores");
  remember(value);
  return Status();
}

Status Timeline::signal(uint64_t value) {
  VkSemaphoreSignalInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
  info.semaphore = semaphore_;
  info.value = value;
  RAL_VK_RETURN_IF_ERROR(device_->api().vkSignalSemaphore(device_->device(), &info),
                         "vkSignalSemaphore");
  remember(value);
  return Status();
}

bool fenceReached(const UseFence& fence) {
  return std::all_of(fence.begin(), fence.end(),
                     [](const auto& entry) { return entry.first->reached(entry.second); });
}

}  // namespace ral::vulkan
