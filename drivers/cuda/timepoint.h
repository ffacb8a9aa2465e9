// Timepoint and TimepointPool: one point on a semaphore's timeline.
//  - host wait: a host thread blocked on a HostEvent until the value is reached;
//  - device signal: a recorded GpuEvent that completes when a stream reaches a signal of `value`
//    (it also carries the host function that advances the timeline, hence the reference count);
//  - device wait: queued work waiting for `value`; resolved when the value is reached, when a
//    device signal covering it appears (its event is then associated and waited for on the GPU),
//    or when the semaphore fails.
// Timepoints are recycled through the pool, which also hands out their host and GPU events.
#ifndef RAL_DRIVERS_CUDA_TIMEPOINT_H_
#define RAL_DRIVERS_CUDA_TIMEPOINT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "drivers/cuda/event_pool.h"
#include "drivers/cuda/host_event.h"
#include "ral/status.h"

namespace ral::cuda {

class TimelineSemaphore;

// Called when a device wait timepoint resolves. `on_host_thread`: the caller is an ordinary host
// thread (a host signal) that may issue work to the device right away; otherwise it may be a
// backend callback thread that must not.
using WaitNotifyFn = void (*)(void* user, bool on_host_thread);

struct Timepoint {
  enum class Kind : uint8_t { kHostWait, kDeviceSignal, kDeviceWait };
  enum class State : int { kPending = 0, kReached = 1, kEvent = 2, kFailed = 3 };

  Kind kind = Kind::kHostWait;
  uint64_t value = 0;
  HostEvent* host_event = nullptr;  // kHostWait
  GpuEvent* event = nullptr;        // kDeviceSignal: the recorded event; kDeviceWait: associated
  std::atomic<State> state{State::kPending};
  Status failure;  // written before state becomes kFailed
  WaitNotifyFn notify = nullptr;
  void* notify_user = nullptr;
  // Keeps the notified object alive while a notification is being delivered.
  std::shared_ptr<void> notify_target;
  // kDeviceSignal: keeps the semaphore alive until the host function has run.
  std::shared_ptr<TimelineSemaphore> semaphore;
  std::atomic<int> refs{0};
  bool in_timeline = false;  // guarded by the owning semaphore's mutex
};

class TimepointPool {
 public:
  explicit TimepointPool(HostEventPool* host_events) : host_events_(host_events) {}
  ~TimepointPool();
  TimepointPool(const TimepointPool&) = delete;
  TimepointPool& operator=(const TimepointPool&) = delete;

  // Each returns a timepoint with one reference.
  Timepoint* acquireHostWait(uint64_t value);
  // Takes over the caller's reference to `event`.
  Timepoint* acquireDeviceSignal(uint64_t value, GpuEvent* event);
  Timepoint* acquireDeviceWait(uint64_t value, WaitNotifyFn notify, std::shared_ptr<void> target);
  void retain(Timepoint* tp) { tp->refs.fetch_add(1, std::memory_order_relaxed); }
  // Drops a reference; the last one returns the timepoint's events and recycles it. Never calls
  // the event backend, so host functions may release.
  void release(Timepoint* tp);

  size_t liveCount() const { return live_.load(std::memory_order_relaxed); }

 private:
  Timepoint* take(Timepoint::Kind kind, uint64_t value);

  HostEventPool* const host_events_;
  std::mutex mutex_;
  std::vector<Timepoint*> free_;
  std::atomic<size_t> live_{0};
};

// What every semaphore and queue of one device shares; held by shared_ptr so semaphores may
// outlive the driver that created them.
struct SyncResources {
  explicit SyncResources(std::shared_ptr<EventBackend> b)
      : backend(std::move(b)), events(backend.get()), timepoints(&host_events) {}
  std::shared_ptr<EventBackend> backend;
  EventPool events;
  HostEventPool host_events;
  TimepointPool timepoints;
};

}  // namespace ral::cuda

#endif  // RAL_DRIVERS_CUDA_TIMEPOINT_H_
