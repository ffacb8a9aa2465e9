// GpuEvent and EventPool: device events with a reference count, recycled through a
// pool. One recorded event may serve a timeline signal timepoint and any number of device waits at
// once; it returns to the pool when the last user releases it. Releasing never calls the backend,
// so it is safe inside host functions; only trim() and the destructor destroy events.
#ifndef RAL_DRIVERS_CUDA_EVENT_POOL_H_
#define RAL_DRIVERS_CUDA_EVENT_POOL_H_

#include <atomic>
#include <cstddef>
#include <mutex>
#include <vector>

#include "drivers/cuda/event_backend.h"
#include "ral/status.h"

namespace ral::cuda {

class EventPool;

class GpuEvent {
 public:
  BackendEvent handle() const { return handle_; }
  void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Returns the event to its pool when the count drops to zero.
  void release();
  int refCountForTesting() const { return refs_.load(std::memory_order_relaxed); }

 private:
  friend class EventPool;
  GpuEvent(BackendEvent handle, EventPool* pool) : handle_(handle), pool_(pool) {}

  BackendEvent handle_;
  EventPool* pool_;
  std::atomic<int> refs_{0};
};

class EventPool {
 public:
  explicit EventPool(EventBackend* backend) : backend_(backend) {}
  ~EventPool();
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  // An event with one reference: recycled when possible, else created.
  StatusOr<GpuEvent*> acquire();
  // Destroys the events waiting in the pool.
  void trim();

  EventBackend* backend() const { return backend_; }
  size_t freeCount() const;
  // Events handed out and not yet returned.
  size_t liveCount() const;

 private:
  friend class GpuEvent;
  void recycle(GpuEvent* event);

  EventBackend* const backend_;
  mutable std::mutex mutex_;
  std::vector<GpuEvent*> free_;
  size_t live_ = 0;
};

}  // namespace ral::cuda

#endif  // RAL_DRIVERS_CUDA_EVENT_POOL_H_
