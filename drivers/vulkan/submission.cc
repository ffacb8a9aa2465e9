#include "drivers/vulkan/submission.h"

#include "drivers/common/deadline.h"

#include <algorithm>
#include <chrono>

namespace ral::vulkan {
namespace {

using drivers::Deadline;

void eraseOne(std::multiset<uint64_t>& set, uint64_t value) {
  auto it = set.find(value);
  if (it != set.end()) set.erase(it);
}

}  // namespace

// ---- batches ---------------------------------------------------------------------------------

Status Scheduler::enqueue(const std::shared_ptr<StreamQueue>& queue, Batch batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!queue->failure.ok()) {
    // A failed stream runs nothing until its failure is reported; what it would have signalled
    // fails too.
    for (auto& [sem, value] : batch.signals) {
      eraseOne(sem->unsubmitted, value);
      failSemaphoreLocked(*sem, queue->failure);
    }
    queue->dropped = std::max(queue->dropped, batch.value);
    pumpLocked();
    return queue->failure;
  }
  const bool was_blocked = !queue->held.empty();
  queue->held.push_back(std::move(batch));
  if (!was_blocked) blocked_.push_back(queue);
  pumpLocked();
  return Status();
}

Status Scheduler::submitLocked(StreamQueue& queue, const Batch& batch) {
  std::vector<VkSemaphore> wait_sems, signal_sems;
  std::vector<uint64_t> wait_values, signal_values;
  std::vector<VkPipelineStageFlags> stages;
  for (const auto& [sem, value] : batch.waits) {
    wait_sems.push_back(sem->timeline->handle());
    wait_values.push_back(value);
    stages.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  }
  for (const auto& [sem, value] : batch.signals) {
    signal_sems.push_back(sem->timeline->handle());
    signal_values.push_back(value);
  }
  // The stream's own value last: once the host sees it, the batch's other signals happened.
  signal_sems.push_back(queue.timeline->handle());
  signal_values.push_back(batch.value);
  signal_sems.push_back(device_->queueTimeline());
  signal_values.push_back(0);
  VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  timeline.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  timeline.pWaitSemaphoreValues = wait_values.data();
  timeline.signalSemaphoreValueCount = static_cast<uint32_t>(signal_values.size());
  timeline.pSignalSemaphoreValues = signal_values.data();
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.pNext = &timeline;
  submit.waitSemaphoreCount = static_cast<uint32_t>(wait_sems.size());
  submit.pWaitSemaphores = wait_sems.data();
  submit.pWaitDstStageMask = stages.data();
  submit.commandBufferCount = batch.cmd != VK_NULL_HANDLE ? 1 : 0;
  submit.pCommandBuffers = &batch.cmd;
  submit.signalSemaphoreCount = static_cast<uint32_t>(signal_sems.size());
  submit.pSignalSemaphores = signal_sems.data();
  {
    std::lock_guard<std::mutex> qlock(device_->queueMutex());
    signal_values.back() = device_->nextSubmitValue();
    RAL_VK_RETURN_IF_ERROR(
        device_->api().vkQueueSubmit(device_->queue(), 1, &submit, VK_NULL_HANDLE),
        "vkQueueSubmit");
  }
  while (!queue.in_flight.empty() && queue.timeline->reached(queue.in_flight.front().first))
    queue.in_flight.pop_front();
  if (!batch.waits.empty() || !batch.signals.empty()) {
    std::vector<std::shared_ptr<SemaphoreState>> keep;
    for (const auto& op : batch.waits) keep.push_back(op.first);
    for (const auto& op : batch.signals) keep.push_back(op.first);
    queue.in_flight.emplace_back(batch.value, std::move(keep));
  }
  device_->collectGarbage();
  queue.submitted = batch.value;
  for (const auto& [sem, value] : batch.signals) {
    sem->promised = std::max(sem->promised, value);
    eraseOne(sem->unsubmitted, value);
  }
  return Status();
}

void Scheduler::pumpLocked() {
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t i = 0; i < blocked_.size(); ++i) {
      StreamQueue& q = *blocked_[i];
      while (!q.held.empty()) {
        const Batch& head = q.held.front();
        const SemaphoreState* failed = nullptr;
        bool covered = true;
        for (const auto& [sem, value] : head.waits) {
          if (sem->failed) {
            failed = sem.get();
            break;
          }
          if (sem->promised < value) covered = false;
        }
        for (const auto& [sem, value] : head.signals)
          if (!sem->failed && !sem->unsubmitted.empty() && *sem->unsubmitted.begin() < value)
            covered = false;
        if (failed != nullptr) {
          failStreamLocked(q, failed->failure);
          progress = true;
          break;
        }
        if (!covered) break;
        Status s = submitLocked(q, head);
        if (!s.ok()) {
          failStreamLocked(q, s);
          progress = true;
          break;
        }
        q.held.pop_front();
        progress = true;
      }
    }
    blocked_.erase(std::remove_if(blocked_.begin(), blocked_.end(),
                                  [](const auto& q) { return q->held.empty(); }),
                   blocked_.end());
  }
  cv_.notify_all();
}

void Scheduler::failStreamLocked(StreamQueue& queue, const Status& status) {
  if (queue.failure.ok()) queue.failure = status;
  for (const Batch& batch : queue.held) {
    for (const auto& [sem, value] : batch.signals) {
      eraseOne(sem->unsubmitted, value);
      failSemaphoreLocked(*sem, queue.failure);
    }
    queue.dropped = std::max(queue.dropped, batch.value);
  }
  queue.held.clear();
}

void Scheduler::failSemaphoreLocked(SemaphoreState& s, const Status& status) {
  if (s.failed) return;
  s.failed = true;
  s.failure = status.ok() ? internalError("vulkan: semaphore failed without a reason") : status;
}

Status Scheduler::waitStream(StreamQueue& queue, uint64_t value, Timeout timeout) {
  const Deadline deadline(timeout);
  std::unique_lock<std::mutex> lock(mutex_);
  auto ready = [&] { return queue.submitted >= value || !queue.failure.ok(); };
  if (!deadline.wait(cv_, lock, ready))
    return deadlineExceeded("vulkan: timed out waiting for a stream");
  if (queue.failure.ok()) {
    lock.unlock();
    return queue.timeline->wait(value, deadline.remaining());
  }
  const Status failure = queue.failure;
  const uint64_t submitted = queue.submitted;
  lock.unlock();
  RAL_RETURN_IF_ERROR(queue.timeline->wait(submitted, kInfiniteTimeout));
  lock.lock();
  // Nothing of this stream is pending now, so the host may move its timeline past the values of
  // the dropped batches (whatever waits for them, e.g. stream-ordered frees, then proceeds).
  if (queue.submitted == submitted && queue.held.empty() && queue.dropped > submitted) {
    (void)queue.timeline->signal(queue.dropped);
    queue.submitted = queue.dropped;
  }
  queue.failure = Status();
  return failure;
}

void Scheduler::retire(StreamQueue& queue) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!queue.held.empty())
    failStreamLocked(queue, cancelled("vulkan: the stream was destroyed before this work ran"));
  blocked_.erase(std::remove_if(blocked_.begin(), blocked_.end(),
                                [&](const auto& q) { return q.get() == &queue; }),
                 blocked_.end());
  const uint64_t submitted = queue.submitted;
  pumpLocked();
  lock.unlock();
  (void)queue.timeline->wait(submitted, kInfiniteTimeout);
  lock.lock();
  queue.in_flight.clear();
}

// ---- semaphores ------------------------------------------------------------------------------

StatusOr<uint64_t> Scheduler::query(SemaphoreState& s) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (s.failed) return s.failure;
  }
  return s.timeline->query();
}

Status Scheduler::hostSignal(SemaphoreState& s, uint64_t value) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (s.failed) return s.failure;
  RAL_ASSIGN_OR_RETURN(const uint64_t current, s.timeline->query());
  if (value < current)
    return invalidArgument("vulkan: cannot signal ", value, ": the semaphore is already at ",
                           current);
  if (value == current) return Status();
  s.device_signals.erase(s.device_signals.begin(), s.device_signals.upper_bound(current));
  if (!s.device_signals.empty() && value >= *s.device_signals.begin())
    return failedPrecondition("vulkan: cannot signal ", value,
                              " from the host while a queued "
                              "device signal of ",
                              *s.device_signals.begin(), " is pending");
  RAL_RETURN_IF_ERROR(s.timeline->signal(value));
  s.promised = std::max(s.promised, value);
  s.max_signal = std::max(s.max_signal, value);
  pumpLocked();
  return Status();
}

Status Scheduler::hostWait(SemaphoreState& s, uint64_t value, Timeout timeout) {
  const Deadline deadline(timeout);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    auto ready = [&] { return s.failed || s.promised >= value; };
    if (!deadline.wait(cv_, lock, ready))
      return deadlineExceeded("vulkan: timed out waiting for semaphore value ", value);
    if (s.failed) return s.failure;
  }
  // Covered: a submitted batch or the host will reach the value.
  RAL_RETURN_IF_ERROR(s.timeline->wait(value, deadline.remaining()));
  std::lock_guard<std::mutex> lock(mutex_);
  if (s.failed) return s.failure;
  return Status();
}

void Scheduler::fail(SemaphoreState& s, Status status) {
  std::lock_guard<std::mutex> lock(mutex_);
  failSemaphoreLocked(s, status);
  pumpLocked();
}

Status Scheduler::reserveSignal(SemaphoreState& s, uint64_t value) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (s.failed) return s.failure;
  if (value <= s.max_signal)
    return invalidArgument("vulkan: a queued signal of ", value,
                           " must exceed every value already signalled or queued (", s.max_signal,
                           ")");
  s.max_signal = value;
  s.device_signals.insert(value);
  s.unsubmitted.insert(value);
  return Status();
}

Status Scheduler::checkWait(SemaphoreState& s) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (s.failed) return s.failure;
  return Status();
}

}  // namespace ral::vulkan
