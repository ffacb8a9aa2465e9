// See kernel_times.h.
#include "drivers/cuda/kernel_times.h"

#include <algorithm>
#include <utility>

#include "ral/trace.h"

namespace ral::cuda {

KernelTimes::KernelTimes(std::shared_ptr<CudaDevice> device) : device_(std::move(device)) {
  trace::addStopHook(this, [this] {
    std::lock_guard<std::mutex> lock(mutex_);
    publishLocked();
    resetClocksLocked();
  });
}

KernelTimes::~KernelTimes() {
  trace::removeStopHook(this);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!device_->makeCurrent().ok()) return;
  for (const Launch& l : pending_) {
    (void)device_->cu().cuEventDestroy_v2(l.start);
    (void)device_->cu().cuEventDestroy_v2(l.end);
  }
  for (const auto& [stream, clock] : clocks_)
    (void)device_->cu().cuEventDestroy_v2(clock.reference);
  for (CUevent e : free_) (void)device_->cu().cuEventDestroy_v2(e);
}

StatusOr<CUevent> KernelTimes::eventLocked() {
  if (!free_.empty()) {
    CUevent e = free_.back();
    free_.pop_back();
    return e;
  }
  CUevent e = nullptr;
  RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(device_->lib(), cuEventCreate, &e, CU_EVENT_DEFAULT));
  return e;
}

Status KernelTimes::timed(CUstream stream, const std::function<Status()>& launch,
                          const std::function<void(std::string*, std::string*)>& describe) {
  if (!trace::active()) return launch();
  std::unique_lock<std::mutex> lock(mutex_);
  publishLocked();
  auto start = eventLocked();
  auto end = start.ok() ? eventLocked() : start;
  if (!start.ok() || !end.ok()) {
    if (start.ok()) free_.push_back(*start);
    lock.unlock();
    return launch();  // no device time for this one, but the kernel runs
  }
  Launch l{stream, *start, *end, trace::nowNs(), {}, {}};
  const bool started = device_->cu().cuEventRecord(l.start, stream) == CUDA_SUCCESS;
  Status launched = launch();
  if (!started || !launched.ok() || device_->cu().cuEventRecord(l.end, stream) != CUDA_SUCCESS) {
    // An event recorded but never waited for is simply reused.
    free_.push_back(l.start);
    free_.push_back(l.end);
    return launched;
  }
  describe(&l.name, &l.args);
  pending_.push_back(std::move(l));
  return launched;
}

void KernelTimes::publish() {
  std::lock_guard<std::mutex> lock(mutex_);
  publishLocked();
}

void KernelTimes::publishLocked() {
  if (pending_.empty() || !device_->makeCurrent().ok()) return;
  const CudaSymbols& cu = device_->cu();
  while (!pending_.empty()) {
    Launch& l = pending_.front();
    if (cu.cuEventQuery(l.end) == CUDA_ERROR_NOT_READY) break;  // later ones are not done either
    StreamClock& clock = clocks_[l.stream];
    if (clock.reference == nullptr) {
      clock.reference = l.start;  // kept while the trace records
      clock.offset_ns = l.queued_ns;
      clock.track =
          trace::track(internal::strCat("cuda:", device_->ordinal(), " stream ", ++streams_seen_));
    } else {
      free_.push_back(l.start);
    }
    float since_reference_ms = 0, duration_ms = 0;
    const bool measured =
        cu.cuEventElapsedTime(&since_reference_ms, clock.reference, l.start) == CUDA_SUCCESS &&
        cu.cuEventElapsedTime(&duration_ms, l.start, l.end) == CUDA_SUCCESS;
    if (measured) {
      const auto since_reference = static_cast<int64_t>(since_reference_ms * 1e6);
      clock.offset_ns = std::max(clock.offset_ns, l.queued_ns - since_reference);
      const int64_t begin = clock.offset_ns + since_reference;
      trace::recordOn(clock.track, "device", std::move(l.name), std::move(l.args), begin,
                      begin + static_cast<int64_t>(duration_ms * 1e6));
    }
    free_.push_back(l.end);
    pending_.pop_front();
  }
}

void KernelTimes::resetClocksLocked() {
  for (const auto& [stream, clock] : clocks_) free_.push_back(clock.reference);
  clocks_.clear();
  streams_seen_ = 0;
  // Launches still running are not shown; their events may be recorded again at once (a record
  // replaces the previous one).
  for (const Launch& l : pending_) {
    free_.push_back(l.start);
    free_.push_back(l.end);
  }
  pending_.clear();
}

}  // namespace ral::cuda
