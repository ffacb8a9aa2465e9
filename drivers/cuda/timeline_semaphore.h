// TimelineSemaphore: the CUDA driver's timeline semaphore, emulated with events.
//
// CUDA events are binary and must be recorded before anyone waits on them, so the 64-bit
// timeline is kept on the host and every point of interest is a Timepoint:
//  - host signal: advances the value, wakes host waits and resolves device waits it reaches;
//  - device signal: an event recorded on the signalling stream; a host function on a dedicated
//    callback stream (waiting for that event) advances the value once the device gets there, so
//    the signalling stream itself is never blocked by host work;
//  - device wait: resolved by the value, or by the event of a recorded device signal that covers
//    it (one event may serve many waits: it is reference counted), so a GPU->GPU wait needs no
//    host wake-up; unresolved waits hold their work in PendingQueueActions;
//  - host wait: a HostEvent, or, without a timeout, the covering device signal's event directly.
// fail() wakes every host waiter with the error and fails every pending device wait, which in turn
// fails the signals queued behind them: the failure reaches every waiter.
#ifndef RAL_DRIVERS_CUDA_TIMELINE_SEMAPHORE_H_
#define RAL_DRIVERS_CUDA_TIMELINE_SEMAPHORE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "drivers/cuda/event_backend.h"
#include "drivers/cuda/timepoint.h"
#include "ral/driver.h"
#include "ral/status.h"

namespace ral::cuda {

class TimelineSemaphore final : public Semaphore,
                                public std::enable_shared_from_this<TimelineSemaphore> {
 public:
  static std::shared_ptr<TimelineSemaphore> create(std::shared_ptr<SyncResources> resources,
                                                   uint64_t initial_value = 0);
  ~TimelineSemaphore() override;

  StatusOr<uint64_t> query() override;
  // InvalidArgument below the current value; the current value is a no-op.
  Status signal(uint64_t value) override;
  Status wait(uint64_t value, Timeout timeout = kInfiniteTimeout) override;
  void fail(Status status) override { failWith(std::move(status), /*on_host_thread=*/true); }

  // ---- used by PendingQueueActions
  // OK when a signal of `value` may be queued: the semaphore has not failed and `value` is not
  // below the current value.
  Status checkSignal(uint64_t value);
  // Records a signal of `value` on `stream`; a host function launched on `callback_stream`
  // advances the timeline when the device gets there. A failure also fails the semaphore.
  Status deviceSignal(BackendStream stream, BackendStream callback_stream, uint64_t value);
  // A device wait for `value`; its state is already final when the value is reached, a recorded
  // signal covers it, or the semaphore failed. Otherwise `notify(target)` runs when it resolves.
  Timepoint* addDeviceWait(uint64_t value, WaitNotifyFn notify, std::shared_ptr<void> target);
  void releaseDeviceWait(Timepoint* tp);
  // The device reached a signal of `value`. No-op when not above the current value or failed.
  void advanceFromDevice(uint64_t value, bool on_host_thread);
  void failWith(Status status, bool on_host_thread);

  SyncResources& resources() const { return *resources_; }
  const std::shared_ptr<SyncResources>& sharedResources() const { return resources_; }
  // Timepoints currently on the timeline (host waits, device signals, device waits).
  size_t timelineSizeForTesting() const;

 private:
  struct Pending {
    std::vector<std::pair<WaitNotifyFn, std::shared_ptr<void>>> notify;
    std::vector<Timepoint*> release;
  };
  TimelineSemaphore(std::shared_ptr<SyncResources> resources, uint64_t initial_value)
      : resources_(std::move(resources)), value_(initial_value) {}
  static void onDeviceSignal(void* user);
  void advanceLocked(uint64_t value, Pending& out);
  void resolveWaitLocked(Timepoint* tp, Timepoint::State state, Pending& out);
  void dropSignalsUpToLocked(uint64_t value, Pending& out);
  Timepoint* coveringSignalLocked(uint64_t value) const;
  void deliver(Pending& pending, bool on_host_thread);

  const std::shared_ptr<SyncResources> resources_;
  mutable std::mutex mutex_;
  uint64_t value_;
  bool failed_ = false;
  Status failure_;
  std::vector<Timepoint*> host_waits_;
  std::vector<Timepoint*> device_signals_;
  std::vector<Timepoint*> device_waits_;
};

}  // namespace ral::cuda

#endif  // RAL_DRIVERS_CUDA_TIMELINE_SEMAPHORE_H_
