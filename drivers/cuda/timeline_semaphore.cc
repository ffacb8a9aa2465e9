#include "drivers/cuda/timeline_semaphore.h"

#include <algorithm>
#include <chrono>

#include "drivers/common/deadline.h"
#include "drivers/common/driver_trace.h"

namespace ral::cuda {
namespace {

void eraseFrom(std::vector<Timepoint*>& list, Timepoint* tp) {
  auto it = std::find(list.begin(), list.end(), tp);
  if (it != list.end()) list.erase(it);
  tp->in_timeline = false;
}

}  // namespace

std::shared_ptr<TimelineSemaphore> TimelineSemaphore::create(
    std::shared_ptr<SyncResources> resources, uint64_t initial_value) {
  return std::shared_ptr<TimelineSemaphore>(
      new TimelineSemaphore(std::move(resources), initial_value));
}

TimelineSemaphore::~TimelineSemaphore() {
  // Device waits belong to queued work that keeps this object alive, and device signals hold a
  // reference until their host function ran, so only leftovers of failed launches remain here.
  for (auto* list : {&host_waits_, &device_signals_, &device_waits_}) {
    for (Timepoint* tp : *list) {
      tp->in_timeline = false;
      if (tp->kind == Timepoint::Kind::kDeviceSignal) resources_->timepoints.release(tp);
    }
  }
}

StatusOr<uint64_t> TimelineSemaphore::query() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_) return failure_;
  return value_;
}

Status TimelineSemaphore::checkSignal(uint64_t value) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_) return failure_;
  if (value < value_)
    return invalidArgument("cuda: semaphore signal to ", value, " is below its current value ",
                           value_, " (timeline values only increase)");
  return Status();
}

Status TimelineSemaphore::signal(uint64_t value) {
  Pending pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_) return failure_;
    if (value < value_)
      return invalidArgument("cuda: semaphore signal to ", value, " is below its current value ",
                             value_, " (timeline values only increase)");
    if (value == value_) return Status();
    advanceLocked(value, pending);
  }
  deliver(pending, /*on_host_thread=*/true);
  return Status();
}

void TimelineSemaphore::advanceFromDevice(uint64_t value, bool on_host_thread) {
  Pending pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_ || value <= value_) {
      dropSignalsUpToLocked(value, pending);
    } else {
      advanceLocked(value, pending);
    }
  }
  deliver(pending, on_host_thread);
}

void TimelineSemaphore::advanceLocked(uint64_t value, Pending& out) {
  value_ = value;
  // Host waiters are woken under the lock so a waiter that gives up cannot recycle its event
  // while it is being set.
  for (auto it = host_waits_.begin(); it != host_waits_.end();) {
    Timepoint* tp = *it;
    if (tp->value <= value) {
      tp->in_timeline = false;
      tp->host_event->set();
      it = host_waits_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = device_waits_.begin(); it != device_waits_.end();) {
    Timepoint* tp = *it;
    if (tp->value <= value) {
      it = device_waits_.erase(it);
      resolveWaitLocked(tp, Timepoint::State::kReached, out);
    } else {
      ++it;
    }
  }
  dropSignalsUpToLocked(value, out);
}

void TimelineSemaphore::resolveWaitLocked(Timepoint* tp, Timepoint::State state, Pending& out) {
  tp->in_timeline = false;
  tp->state.store(state, std::memory_order_release);
  if (tp->notify != nullptr) out.notify.emplace_back(tp->notify, tp->notify_target);
}

void TimelineSemaphore::dropSignalsUpToLocked(uint64_t value, Pending& out) {
  for (auto it = device_signals_.begin(); it != device_signals_.end();) {
    Timepoint* tp = *it;
    if (tp->value <= value) {
      tp->in_timeline = false;
      out.release.push_back(tp);
      it = device_signals_.erase(it);
    } else {
      ++it;
    }
  }
}

Timepoint* TimelineSemaphore::coveringSignalLocked(uint64_t value) const {
  Timepoint* best = nullptr;
  for (Timepoint* tp : device_signals_)
    if (tp->value >= value && (best == nullptr || tp->value < best->value)) best = tp;
  return best;
}

void TimelineSemaphore::deliver(Pending& pending, bool on_host_thread) {
  for (auto& [fn, target] : pending.notify) fn(target.get(), on_host_thread);
  for (Timepoint* tp : pending.release) resources_->timepoints.release(tp);
}

void TimelineSemaphore::failWith(Status status, bool on_host_thread) {
  if (status.ok()) status = internalError("cuda: semaphore failed without a reason");
  Pending pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_) return;
    failed_ = true;
    failure_ = std::move(status);
    for (Timepoint* tp : host_waits_) {
      tp->in_timeline = false;
      tp->host_event->set();
    }
    host_waits_.clear();
    for (Timepoint* tp : device_waits_) {
      tp->failure = failure_;
      resolveWaitLocked(tp, Timepoint::State::kFailed, pending);
    }
    device_waits_.clear();
    dropSignalsUpToLocked(UINT64_MAX, pending);
  }
  deliver(pending, on_host_thread);
}

Status TimelineSemaphore::wait(uint64_t value, Timeout timeout) {
  auto span = drivers::waitSpan("semaphore_wait", DeviceKind::kCuda, value);
  const drivers::Deadline deadline(timeout);
  const bool bounded = !deadline.infinite();
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (failed_) return failure_;
    if (value_ >= value) return Status();
    if (deadline.expired())
      return deadlineExceeded("cuda: semaphore did not reach ", value, " in time (value ", value_,
                              ")");
    if (!bounded) {
      // A recorded device signal covers the value: wait for its event, then advance the timeline
      // ourselves instead of waiting for the host function to do it.
      if (Timepoint* signal = coveringSignalLocked(value)) {
        GpuEvent* event = signal->event;
        const uint64_t reached = signal->value;
        event->retain();
        lock.unlock();
        Status s = resources_->backend->synchronizeEvent(event->handle());
        event->release();
        if (!s.ok()) {
          failWith(s, /*on_host_thread=*/true);
          return s;
        }
        advanceFromDevice(reached, /*on_host_thread=*/true);
        lock.lock();
        continue;
      }
    }
    Timepoint* tp = resources_->timepoints.acquireHostWait(value);
    tp->in_timeline = true;
    host_waits_.push_back(tp);
    lock.unlock();
    if (bounded) {
      tp->host_event->waitUntil(deadline.when());
    } else {
      tp->host_event->wait();
    }
    lock.lock();
    if (tp->in_timeline) eraseFrom(host_waits_, tp);
    resources_->timepoints.release(tp);
  }
}

Status TimelineSemaphore::deviceSignal(BackendStream stream, BackendStream callback_stream,
                                       uint64_t value) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_) return failure_;
    if (value <= value_) return Status();  // already reached: nothing left to signal
  }
  SyncResources& res = *resources_;
  auto acquired = res.events.acquire();
  if (!acquired.ok()) {
    failWith(acquired.status(), /*on_host_thread=*/false);
    return acquired.status();
  }
  GpuEvent* event = *acquired;
  Status s = res.backend->recordEvent(event->handle(), stream);
  if (!s.ok()) {
    event->release();
    failWith(s, /*on_host_thread=*/false);
    return s;
  }
  Timepoint* tp = res.timepoints.acquireDeviceSignal(value, event);
  tp->semaphore = shared_from_this();
  res.timepoints.retain(tp);  // one reference for the timeline, one for the host function
  Pending pending;
  Status early;
  bool done = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_ || value <= value_) {
      // Failed or reached meanwhile: the event is not needed, nor is the host function.
      early = failure_;
      done = true;
    } else {
      tp->in_timeline = true;
      device_signals_.push_back(tp);
      // Waits this signal covers can now wait for its event on the device.
      for (auto it = device_waits_.begin(); it != device_waits_.end();) {
        Timepoint* wait = *it;
        if (wait->value <= value) {
          event->retain();
          wait->event = event;
          it = device_waits_.erase(it);
          resolveWaitLocked(wait, Timepoint::State::kEvent, pending);
        } else {
          ++it;
        }
      }
    }
  }
  if (done) {
    res.timepoints.release(tp);
    res.timepoints.release(tp);
    return early;
  }
  deliver(pending, /*on_host_thread=*/false);
  s = res.backend->streamWaitEvent(callback_stream, event->handle());
  if (s.ok()) s = res.backend->launchHostFunc(callback_stream, &onDeviceSignal, tp);
  if (!s.ok()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (tp->in_timeline) eraseFrom(device_signals_, tp);
    }
    res.timepoints.release(tp);  // the host function's reference
    res.timepoints.release(tp);  // the timeline's
    failWith(s, /*on_host_thread=*/false);
    return s;
  }
  return Status();
}

void TimelineSemaphore::onDeviceSignal(void* user) {
  auto* tp = static_cast<Timepoint*>(user);
  TimelineSemaphore* self = tp->semaphore.get();
  // Releasing the timepoint may drop the last reference to the semaphore; the pool must outlive
  // that.
  std::shared_ptr<SyncResources> resources = self->resources_;
  self->advanceFromDevice(tp->value, /*on_host_thread=*/false);
  resources->timepoints.release(tp);
}

Timepoint* TimelineSemaphore::addDeviceWait(uint64_t value, WaitNotifyFn notify,
                                            std::shared_ptr<void> target) {
  Timepoint* tp = resources_->timepoints.acquireDeviceWait(value, notify, std::move(target));
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_) {
    tp->failure = failure_;
    tp->state.store(Timepoint::State::kFailed, std::memory_order_release);
  } else if (value_ >= value) {
    tp->state.store(Timepoint::State::kReached, std::memory_order_release);
  } else if (Timepoint* signal = coveringSignalLocked(value)) {
    signal->event->retain();
    tp->event = signal->event;
    tp->state.store(Timepoint::State::kEvent, std::memory_order_release);
  } else {
    tp->in_timeline = true;
    device_waits_.push_back(tp);
  }
  return tp;
}

void TimelineSemaphore::releaseDeviceWait(Timepoint* tp) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (tp->in_timeline) eraseFrom(device_waits_, tp);
  }
  resources_->timepoints.release(tp);
}

size_t TimelineSemaphore::timelineSizeForTesting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return host_waits_.size() + device_signals_.size() + device_waits_.size();
}

}  // namespace ral::cuda
