// PendingQueueActions: work whose semaphore waits are not yet satisfied.
//
// Every operation on a stream (copy, fill, launch, signal, wait) goes through submit()/wait()/
// signal(). While nothing on the stream is held back, work is issued to the device at once, and a
// wait is either already satisfied, or becomes a device-side wait on the event of a recorded
// signal that covers it (GPU->GPU, no host involvement). Otherwise the wait and everything queued
// behind it on that stream are held here, in order, and released when the wait resolves: by a
// host signal (issued right away on the signalling thread), or by a device signal being recorded
// or reached (issued by this object's worker thread, since backend callbacks must not call the
// backend). If the semaphore fails, the held work is dropped, the signals queued behind it fail
// their semaphores (so the failure reaches their waiters too), and the stream keeps the error
// until drain() reports it.
#ifndef RAL_DRIVERS_CUDA_PENDING_QUEUE_H_
#define RAL_DRIVERS_CUDA_PENDING_QUEUE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "drivers/cuda/event_backend.h"
#include "drivers/cuda/timeline_semaphore.h"
#include "drivers/cuda/timepoint.h"
#include "ral/status.h"

namespace ral::cuda {

class PendingQueueActions;

// The queue state of one stream: its backend stream, the companion stream that runs the host
// functions of its signals, and the work held back on it.
class QueueStream : public std::enable_shared_from_this<QueueStream> {
 public:
  static std::shared_ptr<QueueStream> create(BackendStream stream, BackendStream callback_stream) {
    return std::shared_ptr<QueueStream>(new QueueStream(stream, callback_stream));
  }
  BackendStream stream() const { return stream_; }
  BackendStream callbackStream() const { return callback_stream_; }
  size_t heldBackCount() const;

 private:
  friend class PendingQueueActions;
  struct Action {
    enum class Kind : uint8_t { kWork, kWait, kSignal };
    Kind kind = Kind::kWork;
    std::function<Status(BackendStream)> issue;    // kWork
    std::shared_ptr<TimelineSemaphore> semaphore;  // kWait, kSignal
    Timepoint* wait = nullptr;                     // kWait
    uint64_t value = 0;                            // kSignal
  };
  QueueStream(BackendStream stream, BackendStream callback_stream)
      : stream_(stream), callback_stream_(callback_stream) {}

  const BackendStream stream_;
  const BackendStream callback_stream_;
  mutable std::mutex mutex_;
  std::condition_variable drained_;
  std::deque<Action> held_;
  Status error_;
};

class PendingQueueActions : public std::enable_shared_from_this<PendingQueueActions> {
 public:
  using IssueFn = std::function<Status(BackendStream)>;

  static std::shared_ptr<PendingQueueActions> create(std::shared_ptr<SyncResources> resources);
  ~PendingQueueActions();
  PendingQueueActions(const PendingQueueActions&) = delete;
  PendingQueueActions& operator=(const PendingQueueActions&) = delete;

  // Issues work: `now(stream)` right away when nothing is held back on `s`; else the closure
  // `later()` returns (which must own what it needs) is held and issued in order. Returns the
  // stream's pending error, if any, without queueing.
  template <typename Now, typename Later>
  Status submit(QueueStream& s, Now&& now, Later&& later) {
    std::lock_guard<std::mutex> lock(s.mutex_);
    if (!s.error_.ok()) return s.error_;
    if (s.held_.empty()) return now(s.stream_);
    QueueStream::Action action;
    action.issue = later();
    s.held_.push_back(std::move(action));
    return Status();
  }
  // Work queued on `s` after this starts once `semaphore` reaches `value`.
  Status wait(QueueStream& s, TimelineSemaphore& semaphore, uint64_t value);
  // `semaphore` reaches `value` when the device gets to this point of `s`.
  Status signal(QueueStream& s, TimelineSemaphore& semaphore, uint64_t value);
  // Blocks until nothing is held back on `s`; returns and clears the stream's error.
  Status drain(QueueStream& s);
  // Drops what is held back on `s` (its signals fail with `why`), e.g. when the stream goes away.
  void close(QueueStream& s, const Status& why);
  // Closes every stream and stops the worker; later notifications are ignored.
  void shutdown();

 private:
  explicit PendingQueueActions(std::shared_ptr<SyncResources> resources)
      : resources_(std::move(resources)) {}
  static void notify(void* self, bool on_host_thread);
  void processAll();
  void processLocked(QueueStream& s);
  void failLocked(QueueStream& s, const Status& status);
  void setActive(QueueStream& s, bool active);
  void workerLoop();

  const std::shared_ptr<SyncResources> resources_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool dirty_ = false;
  bool stopped_ = false;
  std::vector<std::shared_ptr<QueueStream>> active_;  // streams with held-back work
  std::thread worker_;
};

}  // namespace ral::cuda

#endif  // RAL_DRIVERS_CUDA_PENDING_QUEUE_H_
