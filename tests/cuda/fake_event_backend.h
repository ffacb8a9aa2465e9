// FakeEventBackend: an in-process EventBackend with CUDA's semantics, so the timeline-semaphore
// bookkeeping is tested without a GPU. Streams are FIFOs of operations run by one executor thread
// (the "device"); a stream can be paused to stand for a long kernel. Event records, stream waits
// (bound to the event's latest record at call time) and host functions behave as in CUDA, and a
// host function that calls back into the backend is counted as a violation (CUDA refuses it).
#ifndef RAL_TESTS_CUDA_FAKE_EVENT_BACKEND_H_
#define RAL_TESTS_CUDA_FAKE_EVENT_BACKEND_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "drivers/cuda/event_backend.h"

namespace ral::cuda::testing {

class FakeEventBackend final : public EventBackend {
 public:
  FakeEventBackend();
  ~FakeEventBackend() override;

  StatusOr<BackendEvent> createEvent() override;
  void destroyEvent(BackendEvent event) override;
  Status recordEvent(BackendEvent event, BackendStream stream) override;
  StatusOr<bool> queryEvent(BackendEvent event) override;
  Status synchronizeEvent(BackendEvent event) override;
  Status streamWaitEvent(BackendStream stream, BackendEvent event) override;
  Status launchHostFunc(BackendStream stream, HostFn fn, void* user) override;

  // ---- test controls
  BackendStream createStream();
  // Queues `fn` on `stream` as device work (run by the executor thread, in stream order).
  void enqueueWork(BackendStream stream, std::function<void()> fn);
  void pause(BackendStream stream);
  void resume(BackendStream stream);
  // Blocks until nothing runs and nothing can run (streams are empty, paused or blocked).
  void waitIdle();
  // The next recordEvent fails with `status`.
  void failNextRecord(Status status);

  int violations() const;
  int eventsCreated() const;
  int eventsDestroyed() const;
  int streamWaits() const;
  int hostFunctionsRun() const;

 private:
  struct Event {
    uint64_t recorded = 0;
    uint64_t completed = 0;
  };
  struct Op {
    enum class Kind { kRecord, kWait, kHostFn, kWork } kind = Kind::kWork;
    Event* event = nullptr;
    uint64_t generation = 0;
    HostFn fn = nullptr;
    void* user = nullptr;
    std::function<void()> work;
  };
  struct FakeStream {
    std::deque<Op> ops;
    bool paused = false;
    bool running = false;
  };
  Status checkNotInHostFn();
  void run();
  bool runnableLocked(const FakeStream& s) const;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<FakeStream>> streams_;
  std::vector<std::unique_ptr<Event>> events_;
  bool stop_ = false;
  Status next_record_failure_;
  int violations_ = 0;
  int created_ = 0;
  int destroyed_ = 0;
  int stream_waits_ = 0;
  int host_fns_ = 0;
  std::thread executor_;
};

}  // namespace ral::cuda::testing

#endif  // RAL_TESTS_CUDA_FAKE_EVENT_BACKEND_H_
