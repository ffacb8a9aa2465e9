// KernelTimes: the device time of the CUDA driver's kernel launches, for traces (ral/trace.h).
// While a trace records, each launch is bracketed by two timing events on its stream; once both
// completed, the kernel's span is recorded on the stream's trace track ("cuda:0 stream 1").
//
// CUDA measures only the time between two events, so each stream's spans are placed on the
// host's clock by one offset: the first event timed on the stream is its reference, and a
// kernel cannot start before the host queued it, so the offset is the tightest such bound over
// the stream's kernels so far (exact whenever a kernel found its stream idle, the usual case at
// the start of an execution). Durations are exact.
//
// Completed launches are recorded at the next timed launch, after a synchronization
// (publish()), and when the trace stops; a trace that stops before the device finished a kernel
// does not show it. `timed` expects the device's context current. Thread-safe.
#ifndef RAL_DRIVERS_CUDA_KERNEL_TIMES_H_
#define RAL_DRIVERS_CUDA_KERNEL_TIMES_H_

#include <cuda.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "drivers/cuda/cuda_device.h"
#include "ral/status.h"

namespace ral::cuda {

class KernelTimes {
 public:
  explicit KernelTimes(std::shared_ptr<CudaDevice> device);
  ~KernelTimes();
  KernelTimes(const KernelTimes&) = delete;
  KernelTimes& operator=(const KernelTimes&) = delete;

  // Runs `launch` (which queues one kernel on `stream`) between two events, when a trace
  // records; just runs it otherwise. `describe` gives the span's name and args, only when timed.
  Status timed(CUstream stream, const std::function<Status()>& launch,
               const std::function<void(std::string* name, std::string* args)>& describe);
  // Records the spans of the launches that completed.
  void publish();

 private:
  struct Launch {
    CUstream stream;
    CUevent start, end;
    int64_t queued_ns;  // host time just before the launch was queued
    std::string name, args;
  };
  struct StreamClock {
    CUevent reference = nullptr;
    int64_t offset_ns = 0;  // host time of `reference`
    uint32_t track = 0;
  };
  StatusOr<CUevent> eventLocked();
  void publishLocked();
  // The trace stopped: drops the streams' references and the launches not completed.
  void resetClocksLocked();

  std::shared_ptr<CudaDevice> device_;
  std::mutex mutex_;
  std::deque<Launch> pending_;  // in launch order
  std::map<CUstream, StreamClock> clocks_;
  std::vector<CUevent> free_;
  uint32_t streams_seen_ = 0;
};

}  // namespace ral::cuda

#endif  // RAL_DRIVERS_CUDA_KERNEL_TIMES_H_
