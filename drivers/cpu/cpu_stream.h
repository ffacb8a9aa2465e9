// CpuStream: an in-order queue of host work run by its own thread, so work queued on a stream
// overlaps with the caller, as on a GPU. The first failure is kept and reported by the next
// synchronize(); work queued behind a failure is skipped until then (a skipped operation's
// `on_skip` is told why, so e.g. a skipped semaphore signal fails its semaphore instead of leaving
// its waiters blocked forever).
#ifndef RAL_DRIVERS_CPU_CPU_STREAM_H_
#define RAL_DRIVERS_CPU_CPU_STREAM_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "ral/driver.h"
#include "ral/status.h"

namespace ral::cpu {

class CpuStream final : public Stream {
 public:
  CpuStream();
  // Finishes the queued work first.
  ~CpuStream() override;

  void enqueue(std::function<Status()> op, std::function<void(const Status&)> on_skip = nullptr);
  // Waits until everything queued so far is done; returns (and clears) the first failure.
  Status synchronize();

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  struct Op {
    std::function<Status()> run;
    std::function<void(const Status&)> on_skip;
  };
  std::deque<Op> ops_;
  bool busy_ = false;
  bool stop_ = false;
  Status error_;
  std::thread thread_;
};

}  // namespace ral::cpu

#endif  // RAL_DRIVERS_CPU_CPU_STREAM_H_
