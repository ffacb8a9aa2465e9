#include "drivers/vulkan/vulkan_semaphore.h"

#include "drivers/common/driver_trace.h"

namespace ral::vulkan {

StatusOr<std::shared_ptr<VulkanSemaphore>> VulkanSemaphore::create(
    std::shared_ptr<VulkanDevice> device, std::shared_ptr<Scheduler> scheduler,
    uint64_t initial_value, const void* owner) {
  RAL_ASSIGN_OR_RETURN(auto timeline, Timeline::create(std::move(device), initial_value));
  auto state = std::make_shared<SemaphoreState>(std::move(timeline), initial_value);
  return std::shared_ptr<VulkanSemaphore>(
      new VulkanSemaphore(std::move(scheduler), std::move(state), owner));
}

StatusOr<uint64_t> VulkanSemaphore::query() { return scheduler_->query(*state_); }

Status VulkanSemaphore::signal(uint64_t value) { return scheduler_->hostSignal(*state_, value); }

Status VulkanSemaphore::wait(uint64_t value, Timeout timeout) {
  auto span = drivers::waitSpan("semaphore_wait", DeviceKind::kVulkan, value);
  return scheduler_->hostWait(*state_, value, timeout);
}

void VulkanSemaphore::fail(Status status) { scheduler_->fail(*state_, std::move(status)); }

}  // namespace ral::vulkan
