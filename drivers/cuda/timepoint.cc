#include "drivers/cuda/timepoint.h"

#include <utility>

namespace ral::cuda {

TimepointPool::~TimepointPool() {
  for (Timepoint* tp : free_) delete tp;
}

Timepoint* TimepointPool::take(Timepoint::Kind kind, uint64_t value) {
  Timepoint* tp = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      tp = free_.back();
      free_.pop_back();
    }
  }
  if (tp == nullptr) tp = new Timepoint();
  tp->kind = kind;
  tp->value = value;
  tp->state.store(Timepoint::State::kPending, std::memory_order_relaxed);
  tp->refs.store(1, std::memory_order_relaxed);
  live_.fetch_add(1, std::memory_order_relaxed);
  return tp;
}

Timepoint* TimepointPool::acquireHostWait(uint64_t value) {
  Timepoint* tp = take(Timepoint::Kind::kHostWait, value);
  tp->host_event = host_events_->acquire();
  return tp;
}

Timepoint* TimepointPool::acquireDeviceSignal(uint64_t value, GpuEvent* event) {
  Timepoint* tp = take(Timepoint::Kind::kDeviceSignal, value);
  tp->event = event;
  return tp;
}

Timepoint* TimepointPool::acquireDeviceWait(uint64_t value, WaitNotifyFn notify,
                                            std::shared_ptr<void> target) {
  Timepoint* tp = take(Timepoint::Kind::kDeviceWait, value);
  tp->notify = notify;
  tp->notify_user = target.get();
  tp->notify_target = std::move(target);
  return tp;
}

void TimepointPool::release(Timepoint* tp) {
  if (tp->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (tp->host_event != nullptr) host_events_->release(std::exchange(tp->host_event, nullptr));
  if (tp->event != nullptr) std::exchange(tp->event, nullptr)->release();
  tp->failure = Status();
  tp->notify = nullptr;
  tp->notify_user = nullptr;
  tp->notify_target.reset();
  tp->in_timeline = false;
  // The semaphore reference may be the last one: drop it outside the pool's lock.
  std::shared_ptr<TimelineSemaphore> semaphore = std::move(tp->semaphore);
  live_.fetch_sub(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(tp);
  }
}

}  // namespace ral::cuda
