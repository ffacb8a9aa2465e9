// VulkanSemaphore: a RAL timeline semaphore backed by a native Vulkan timeline semaphore
// (Vulkan 1.2). Host signal/wait/query go to the VkSemaphore; queue waits and signals are part of
// the batches a stream submits. The Scheduler (submission.h) tracks which values are covered by
// submitted work, which is what lets a wait be queued before its signal, and carries failures:
// fail() wakes every host waiter with the status and fails the streams (and, through them, the
// semaphores) that depend on this one.
#ifndef RAL_DRIVERS_VULKAN_VULKAN_SEMAPHORE_H_
#define RAL_DRIVERS_VULKAN_VULKAN_SEMAPHORE_H_

#include <memory>

#include "drivers/vulkan/submission.h"
#include "ral/driver.h"
#include "ral/status.h"

namespace ral::vulkan {

class VulkanSemaphore final : public Semaphore {
 public:
  static StatusOr<std::shared_ptr<VulkanSemaphore>> create(std::shared_ptr<VulkanDevice> device,
                                                           std::shared_ptr<Scheduler> scheduler,
                                                           uint64_t initial_value,
                                                           const void* owner);

  // The failure once failed.
  StatusOr<uint64_t> query() override;
  // InvalidArgument below the current value (the current value itself is a no-op);
  // FailedPrecondition when a queued device signal of a value <= `value` has not run yet.
  Status signal(uint64_t value) override;
  // DeadlineExceeded when `timeout` passes first; the failure once failed.
  Status wait(uint64_t value, Timeout timeout = kInfiniteTimeout) override;
  // The first failure is kept; an OK status becomes INTERNAL.
  void fail(Status status) override;

  const std::shared_ptr<SemaphoreState>& state() const { return state_; }
  const void* owner() const { return owner_; }
  VkSemaphore handle() const { return state_->timeline->handle(); }

 private:
  VulkanSemaphore(std::shared_ptr<Scheduler> scheduler, std::shared_ptr<SemaphoreState> state,
                  const void* owner)
      : scheduler_(std::move(scheduler)), state_(std::move(state)), owner_(owner) {}

  std::shared_ptr<Scheduler> scheduler_;
  std::shared_ptr<SemaphoreState> state_;
  const void* owner_;
};

}  // namespace ral::vulkan

#endif  // RAL_DRIVERS_VULKAN_VULKAN_SEMAPHORE_H_
