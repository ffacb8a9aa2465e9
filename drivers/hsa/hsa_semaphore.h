// HsaSemaphore: a timeline semaphore (ral::Semaphore) for the HSA driver. An AQL barrier packet
// can only wait for signals to reach 0, not for a value to pass a threshold, so the timeline value
// lives on the host and each device-side wait gets a signal of its own.
//  - The 64-bit value and the failure live on the host (mutex + condition variable): host
//    signal() stores, host wait() blocks with its timeout and wakes on failure too.
//  - A device-side wait is a WaitPoint: one HSA signal per queued wait, holding 1 until the
//    semaphore reaches the wait's value (then 0), or -1 when the semaphore fails or the waiting
//    stream is destroyed. Streams put it as the dependency of an AQL barrier-AND packet; a
//    negative dependency makes the queue fail instead of hanging, and the stream reports the
//    semaphore's failure (WaitPoint::failure()).
//  - A device-side signal is queued by HsaStream (a barrier packet whose completion runs
//    signal() on the runtime's signal-handler thread).
// Shared ownership: the semaphore is a shared_ptr; WaitPoints are shared between the semaphore
// (until released) and the stream operation that waits on them; a WaitPoint destroys its HSA
// signal. Every member function is thread-safe.
#ifndef RAL_DRIVERS_HSA_HSA_SEMAPHORE_H_
#define RAL_DRIVERS_HSA_HSA_SEMAPHORE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "drivers/hsa/hsa_library.h"
#include "ral/driver.h"
#include "ral/status.h"

namespace ral::hsa {

class WaitPoint {
 public:
  static StatusOr<std::shared_ptr<WaitPoint>> create(const HsaLibrary& lib);
  ~WaitPoint();
  hsa_signal_t signal() const { return signal_; }
  // The first of release/fail wins; the later one does nothing. Returns whether this call won.
  bool release();
  bool fail(Status status);
  // The failure this wait was cancelled with (OK while pending or released).
  Status failure() const;
  bool released() const { return state_.load() == kReleased; }

 private:
  enum : int { kPending, kReleased, kFailed };
  WaitPoint(const HsaLibrary& lib, hsa_signal_t signal) : lib_(lib), signal_(signal) {}
  const HsaLibrary& lib_;
  const hsa_signal_t signal_;
  std::atomic<int> state_{kPending};
  mutable std::mutex mutex_;
  Status failure_;
};

class HsaSemaphore final : public Semaphore, public std::enable_shared_from_this<HsaSemaphore> {
 public:
  HsaSemaphore(const HsaLibrary& lib, uint64_t initial_value) : lib_(lib), value_(initial_value) {}
  StatusOr<uint64_t> query() override;
  Status signal(uint64_t value) override;
  Status wait(uint64_t value, Timeout timeout = kInfiniteTimeout) override;
  void fail(Status status) override;

  // A WaitPoint released when the value reaches `value` (already released when it has). The
  // semaphore's failure when it failed.
  StatusOr<std::shared_ptr<WaitPoint>> deviceWait(uint64_t value);
  // True once the value is >= `value` (false when failed).
  bool reached(uint64_t value);

 private:
  const HsaLibrary& lib_;
  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t value_;
  bool failed_ = false;
  Status failure_;
  std::multimap<uint64_t, std::shared_ptr<WaitPoint>> device_waits_;
};

}  // namespace ral::hsa

#endif  // RAL_DRIVERS_HSA_HSA_SEMAPHORE_H_
