#include "drivers/cuda/event_pool.h"

namespace ral::cuda {

EventBackend::~EventBackend() = default;

void GpuEvent::release() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) pool_->recycle(this);
}

EventPool::~EventPool() {
  trim();
  // Events still referenced belong to timepoints that outlive the pool only through a bug; their
  // handles are left to the backend (destroying them here could free an event still in use).
}

StatusOr<GpuEvent*> EventPool::acquire() {
  GpuEvent* event = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      event = free_.back();
      free_.pop_back();
    }
    ++live_;
  }
  if (event == nullptr) {
    auto handle = backend_->createEvent();
    if (!handle.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      --live_;
      return handle.status();
    }
    event = new GpuEvent(*handle, this);
  }
  event->refs_.store(1, std::memory_order_relaxed);
  return event;
}

void EventPool::recycle(GpuEvent* event) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(event);
  --live_;
}

void EventPool::trim() {
  std::vector<GpuEvent*> events;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events.swap(free_);
  }
  for (GpuEvent* event : events) {
    backend_->destroyEvent(event->handle_);
    delete event;
  }
}

size_t EventPool::freeCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_.size();
}

size_t EventPool::liveCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_;
}

}  // namespace ral::cuda
