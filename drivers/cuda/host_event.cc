#include "drivers/cuda/host_event.h"

namespace ral::cuda {

void HostEvent::set() {
  std::lock_guard<std::mutex> lock(mutex_);
  set_ = true;
  cv_.notify_all();
}

void HostEvent::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  set_ = false;
}

bool HostEvent::waitUntil(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_until(lock, deadline, [&] { return set_; });
}

void HostEvent::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return set_; });
}

HostEventPool::~HostEventPool() {
  for (HostEvent* event : free_) delete event;
}

HostEvent* HostEventPool::acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      HostEvent* event = free_.back();
      free_.pop_back();
      return event;
    }
  }
  return new HostEvent();
}

void HostEventPool::release(HostEvent* event) {
  event->reset();
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(event);
}

}  // namespace ral::cuda
