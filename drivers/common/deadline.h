// A wait's Timeout turned into a steady-clock deadline once, the same way in every driver:
// kInfiniteTimeout, and any timeout too large to add to the clock, never expires (a host that
// computes "a year from now" must not overflow into an immediate timeout); zero or negative has
// expired already (the waiter still checks its condition once). Loops that wait in pieces ask
// remaining() so the caller's total holds. A value type; not shared between threads.
#ifndef RAL_DRIVERS_COMMON_DEADLINE_H_
#define RAL_DRIVERS_COMMON_DEADLINE_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>

#include "ral/driver.h"

namespace ral::drivers {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Deadline(Timeout timeout) {
    const auto now = Clock::now();
    if (timeout <= Timeout::zero()) {
      when_ = now;
    } else if (timeout == kInfiniteTimeout ||
               timeout >= std::chrono::duration_cast<Timeout>(Clock::time_point::max() - now)) {
      when_ = Clock::time_point::max();
    } else {
      when_ = now + std::chrono::duration_cast<Clock::duration>(timeout);
    }
  }

  bool infinite() const { return when_ == Clock::time_point::max(); }
  bool expired() const { return !infinite() && Clock::now() >= when_; }
  Clock::time_point when() const { return when_; }
  // What is left (zero once expired), kInfiniteTimeout when it never expires.
  Timeout remaining() const {
    if (infinite()) return kInfiniteTimeout;
    return std::max(Timeout::zero(), std::chrono::duration_cast<Timeout>(when_ - Clock::now()));
  }
  // cv.wait until `ready` or the deadline; returns ready().
  template <typename Lock, typename Ready>
  bool wait(std::condition_variable& cv, Lock& lock, Ready ready) const {
    if (infinite()) {
      cv.wait(lock, ready);
      return true;
    }
    return cv.wait_until(lock, when_, ready);
  }

 private:
  Clock::time_point when_;
};

}  // namespace ral::drivers

#endif  // RAL_DRIVERS_COMMON_DEADLINE_H_
