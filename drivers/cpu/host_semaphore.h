// HostSemaphore: a timeline semaphore in host memory. The value is a 64-bit
// counter that only grows; wait(v) returns once it is >= v. Any number of threads may wait for
// different values, before or after the matching signal. fail(status) poisons the semaphore:
// every current and future wait, signal and query returns that status.
//
// A wait that is not satisfied at once sleeps on a condition variable; signal only takes the lock
// (and wakes the sleepers) when it reaches the lowest value someone sleeps for, so a waiter at the
// end of a chain is not woken by every step of it.
#ifndef RAL_DRIVERS_CPU_HOST_SEMAPHORE_H_
#define RAL_DRIVERS_CPU_HOST_SEMAPHORE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>

#include "ral/driver.h"
#include "ral/status.h"

namespace ral::cpu {

class HostSemaphore final : public Semaphore {
 public:
  explicit HostSemaphore(uint64_t initial_value = 0) : value_(initial_value) {}

  StatusOr<uint64_t> query() override;
  // InvalidArgument when `value` is below the current value; signalling the current value is a
  // no-op.
  Status signal(uint64_t value) override;
  // DeadlineExceeded when `timeout` passes first; a zero timeout only polls.
  Status wait(uint64_t value, Timeout timeout = kInfiniteTimeout) override;
  // The first failure is kept; an OK status becomes INTERNAL ("failed without a reason").
  void fail(Status status) override;

 private:
  Status failure() const;
  bool reached(uint64_t value) const {
    return value_.load(std::memory_order_seq_cst) >= value ||
           failed_.load(std::memory_order_seq_cst);
  }

  std::atomic<uint64_t> value_;
  std::atomic<bool> failed_{false};
  // The lowest value a sleeper waits for (max: none sleeps); its source, `targets_`, is guarded
  // by mutex_.
  std::atomic<uint64_t> next_wake_{UINT64_MAX};
  std::multiset<uint64_t> targets_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  Status failure_;  // guarded by mutex_; set once, before failed_
};

}  // namespace ral::cpu

#endif  // RAL_DRIVERS_CPU_HOST_SEMAPHORE_H_
