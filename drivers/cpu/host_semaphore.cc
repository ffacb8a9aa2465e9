#include "drivers/cpu/host_semaphore.h"

#include <chrono>

#include "drivers/common/deadline.h"
#include "drivers/common/driver_trace.h"

namespace ral::cpu {

Status HostSemaphore::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

StatusOr<uint64_t> HostSemaphore::query() {
  if (failed_.load(std::memory_order_acquire)) return failure();
  return value_.load(std::memory_order_acquire);
}

Status HostSemaphore::signal(uint64_t value) {
  if (failed_.load(std::memory_order_acquire)) return failure();
  uint64_t current = value_.load(std::memory_order_relaxed);
  do {
    if (value < current)
      return invalidArgument("semaphore signal(", value, ") would decrease its value ", current);
    if (value == current) return Status();
  } while (!value_.compare_exchange_weak(current, value, std::memory_order_seq_cst));
  // Paired with the sleeper's store of next_wake_ before it re-checks the value under the lock:
  // either it sees the new value or we see its target and wake it.
  if (value >= next_wake_.load(std::memory_order_seq_cst)) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    cv_.notify_all();
  }
  return Status();
}

Status HostSemaphore::wait(uint64_t value, Timeout timeout) {
  auto span = drivers::waitSpan("semaphore_wait", DeviceKind::kCpu, value);
  if (failed_.load(std::memory_order_acquire)) return failure();
  if (value_.load(std::memory_order_acquire) >= value) return Status();
  if (timeout <= Timeout::zero())
    return deadlineExceeded("semaphore is at ", value_.load(), ", not yet ", value);
  // No spinning: on a busy machine it takes the CPU from the very thread that would signal.
  if (!reached(value)) {
    const auto start = std::chrono::steady_clock::now();
    const drivers::Deadline deadline(timeout);
    std::unique_lock<std::mutex> lock(mutex_);
    auto target = targets_.insert(value);
    next_wake_.store(*targets_.begin(), std::memory_order_seq_cst);
    deadline.wait(cv_, lock, [&] { return reached(value); });
    targets_.erase(target);
    next_wake_.store(targets_.empty() ? UINT64_MAX : *targets_.begin(), std::memory_order_seq_cst);
    if (failed_.load(std::memory_order_acquire)) return failure_;
    if (value_.load(std::memory_order_acquire) < value) {
      const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::steady_clock::now() - start);
      return deadlineExceeded("semaphore wait for ", value, " timed out after ", waited.count(),
                              " us at value ", value_.load());
    }
    return Status();
  }
  if (failed_.load(std::memory_order_acquire)) return failure();
  return Status();
}

void HostSemaphore::fail(Status status) {
  if (status.ok()) status = internalError("semaphore failed without a reason");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_.load(std::memory_order_relaxed)) return;
    failure_ = std::move(status);
    failed_.store(true, std::memory_order_seq_cst);
  }
  cv_.notify_all();
}

}  // namespace ral::cpu
