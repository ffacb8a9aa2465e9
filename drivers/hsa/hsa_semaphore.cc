#include "drivers/hsa/hsa_semaphore.h"

#include <utility>
#include <vector>

#include "drivers/common/deadline.h"
#include "drivers/common/driver_trace.h"

namespace ral::hsa {

StatusOr<std::shared_ptr<WaitPoint>> WaitPoint::create(const HsaLibrary& lib) {
  hsa_signal_t signal{0};
  RAL_RETURN_IF_ERROR(RAL_HSA_CALL(lib, hsa_signal_create, 1, 0, nullptr, &signal));
  return std::shared_ptr<WaitPoint>(new WaitPoint(lib, signal));
}

WaitPoint::~WaitPoint() { (void)lib_.symbols().hsa_signal_destroy(signal_); }

bool WaitPoint::release() {
  int expected = kPending;
  if (!state_.compare_exchange_strong(expected, kReleased)) return false;
  lib_.symbols().hsa_signal_store_screlease(signal_, 0);
  return true;
}

bool WaitPoint::fail(Status status) {
  int expected = kPending;
  if (!state_.compare_exchange_strong(expected, kFailed)) return false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    failure_ = std::move(status);
  }
  lib_.symbols().hsa_signal_store_screlease(signal_, -1);
  return true;
}

Status WaitPoint::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

StatusOr<uint64_t> HsaSemaphore::query() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_) return failure_;
  return value_;
}

Status HsaSemaphore::signal(uint64_t value) {
  std::vector<std::shared_ptr<WaitPoint>> ready;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_) return failure_;
    if (value < value_)
      return invalidArgument("hsa: semaphore signal to ", value, " below its value ", value_,
                             " (timeline values never decrease)");
    value_ = value;
    auto end = device_waits_.upper_bound(value);
    for (auto it = device_waits_.begin(); it != end; ++it) ready.push_back(std::move(it->second));
    device_waits_.erase(device_waits_.begin(), end);
  }
  changed_.notify_all();
  for (auto& w : ready) w->release();
  return Status();
}

Status HsaSemaphore::wait(uint64_t value, Timeout timeout) {
  auto span = drivers::waitSpan("semaphore_wait", DeviceKind::kHsa, value);
  const drivers::Deadline deadline(timeout);
  std::unique_lock<std::mutex> lock(mutex_);
  auto done = [&] { return failed_ || value_ >= value; };
  if (!deadline.wait(changed_, lock, done))
    return deadlineExceeded("hsa: semaphore wait for ", value, " timed out at ", value_);
  if (failed_) return failure_;
  return Status();
}

void HsaSemaphore::fail(Status status) {
  if (status.ok()) status = internalError("hsa: the semaphore failed without a reason");
  std::multimap<uint64_t, std::shared_ptr<WaitPoint>> waits;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_) return;
    failed_ = true;
    failure_ = status;
    waits.swap(device_waits_);
  }
  changed_.notify_all();
  for (auto& [v, w] : waits) w->fail(status);
}

StatusOr<std::shared_ptr<WaitPoint>> HsaSemaphore::deviceWait(uint64_t value) {
  RAL_ASSIGN_OR_RETURN(std::shared_ptr<WaitPoint> point, WaitPoint::create(lib_));
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_) return failure_;
  if (value_ >= value) {
    point->release();
  } else {
    device_waits_.emplace(value, point);
  }
  return point;
}

bool HsaSemaphore::reached(uint64_t value) {
  std::lock_guard<std::mutex> lock(mutex_);
  return !failed_ && value_ >= value;
}

}  // namespace ral::hsa
