// Submission: how batches of recorded work reach the queue, and the state of timeline semaphores.
//
// Every stream turns its work into Batches (a command buffer, the semaphore values to wait for
// first, the values to signal after). The Scheduler submits a batch only once each of its waits
// is *covered* (the value was signalled by the host or a batch that signals it was already
// submitted) and each of its signals is the lowest queued one of its semaphore (Vulkan needs a
// semaphore's signals to execute in increasing order). Until then the batch (and everything after
// it on its stream) is held. This gives wait-before-signal in every direction even on a device with
// a single queue (llvmpipe): a submitted batch never waits for work queued behind it, so the queue
// cannot deadlock, and every submitted batch completes.
//
// Failure: a failed semaphore fails every stream whose held batch waits on it; such a stream
// drops its held batches and fails the semaphores they would have signalled, so the error
// travels down every chain of waiters. Host waiters wake up with the error at once. A stream
// reports its failure to the next synchronize, which clears it.
#ifndef RAL_DRIVERS_VULKAN_SUBMISSION_H_
#define RAL_DRIVERS_VULKAN_SUBMISSION_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "drivers/vulkan/timeline.h"
#include "drivers/vulkan/vulkan_device.h"
#include "ral/driver.h"
#include "ral/status.h"

namespace ral::vulkan {

class Scheduler;

// A RAL timeline semaphore's state. The fields below `timeline` are guarded by the scheduler.
struct SemaphoreState {
  SemaphoreState(std::shared_ptr<Timeline> t, uint64_t initial)
      : timeline(std::move(t)), promised(initial), max_signal(initial) {}
  std::shared_ptr<Timeline> timeline;
  uint64_t promised;                       // signalled by the host or by submitted batches
  uint64_t max_signal;                     // the largest value any host or queued signal sets
  std::multiset<uint64_t> device_signals;  // queued device signals not known to be done
  std::multiset<uint64_t> unsubmitted;     // queued device signals not yet submitted
  bool failed = false;
  Status failure;
};

using SemaphoreOp = std::pair<std::shared_ptr<SemaphoreState>, uint64_t>;

struct Batch {
  VkCommandBuffer cmd = VK_NULL_HANDLE;  // may be null: a batch of semaphore operations only
  uint64_t value = 0;                    // what it signals on its stream's timeline
  std::vector<SemaphoreOp> waits;
  std::vector<SemaphoreOp> signals;
};

// The scheduling side of one stream; guarded by the scheduler.
struct StreamQueue {
  explicit StreamQueue(std::shared_ptr<Timeline> t) : timeline(std::move(t)) {}
  std::shared_ptr<Timeline> timeline;
  std::deque<Batch> held;
  uint64_t submitted = 0;  // value of the last submitted batch
  uint64_t dropped = 0;    // largest value of a dropped batch
  Status failure;
  // Semaphores of submitted batches, kept alive until the batch (its value) completes.
  std::deque<std::pair<uint64_t, std::vector<std::shared_ptr<SemaphoreState>>>> in_flight;
};

class Scheduler {
 public:
  explicit Scheduler(std::shared_ptr<VulkanDevice> device) : device_(std::move(device)) {}

  // Takes a sealed batch of `queue`. Returns the stream's failure when it has one (the batch is
  // then dropped).
  Status enqueue(const std::shared_ptr<StreamQueue>& queue, Batch batch);
  // Waits until `queue` has completed `value`, or reports (and clears) its failure.
  Status waitStream(StreamQueue& queue, uint64_t value, Timeout timeout);
  // For a stream being destroyed: drops its held batches (failing what they would signal with
  // Cancelled) and waits for its submitted work.
  void retire(StreamQueue& queue);

  // Semaphores.
  StatusOr<uint64_t> query(SemaphoreState& s);
  Status hostSignal(SemaphoreState& s, uint64_t value);
  Status hostWait(SemaphoreState& s, uint64_t value, Timeout timeout);
  void fail(SemaphoreState& s, Status status);
  // A device signal about to be queued: the value must exceed every value signalled or queued.
  Status reserveSignal(SemaphoreState& s, uint64_t value);
  // A device wait about to be queued: fails at once on a failed semaphore.
  Status checkWait(SemaphoreState& s);

 private:
  void pumpLocked();
  Status submitLocked(StreamQueue& queue, const Batch& batch);
  void failStreamLocked(StreamQueue& queue, const Status& status);
  static void failSemaphoreLocked(SemaphoreState& s, const Status& status);

  std::shared_ptr<VulkanDevice> device_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<StreamQueue>> blocked_;  // queues with held batches
};

}  // namespace ral::vulkan

#endif  // RAL_DRIVERS_VULKAN_SUBMISSION_H_
