#include "fake_event_backend.h"

#include <algorithm>

namespace ral::cuda::testing {
namespace {
thread_local bool in_host_fn = false;
}  // namespace

FakeEventBackend::FakeEventBackend() : executor_([this] { run(); }) {}

FakeEventBackend::~FakeEventBackend() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  executor_.join();
}

Status FakeEventBackend::checkNotInHostFn() {
  if (!in_host_fn) return Status();
  std::lock_guard<std::mutex> lock(mutex_);
  ++violations_;
  return failedPrecondition("fake: backend called from a host function");
}

StatusOr<BackendEvent> FakeEventBackend::createEvent() {
  RAL_RETURN_IF_ERROR(checkNotInHostFn());
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::make_unique<Event>());
  ++created_;
  return static_cast<BackendEvent>(events_.back().get());
}

void FakeEventBackend::destroyEvent(BackendEvent event) {
  if (!checkNotInHostFn().ok()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  ++destroyed_;
  // Events stay allocated: an operation still queued may point to one (CUDA defers the release
  // the same way).
  (void)event;
}

Status FakeEventBackend::recordEvent(BackendEvent event, BackendStream stream) {
  RAL_RETURN_IF_ERROR(checkNotInHostFn());
  std::lock_guard<std::mutex> lock(mutex_);
  if (!next_record_failure_.ok()) return std::move(next_record_failure_);
  auto* e = static_cast<Event*>(event);
  Op op;
  op.kind = Op::Kind::kRecord;
  op.event = e;
  op.generation = ++e->recorded;
  static_cast<FakeStream*>(stream)->ops.push_back(std::move(op));
  cv_.notify_all();
  return Status();
}

StatusOr<bool> FakeEventBackend::queryEvent(BackendEvent event) {
  RAL_RETURN_IF_ERROR(checkNotInHostFn());
  std::lock_guard<std::mutex> lock(mutex_);
  auto* e = static_cast<Event*>(event);
  return e->completed >= e->recorded;
}

Status FakeEventBackend::synchronizeEvent(BackendEvent event) {
  RAL_RETURN_IF_ERROR(checkNotInHostFn());
  std::unique_lock<std::mutex> lock(mutex_);
  auto* e = static_cast<Event*>(event);
  const uint64_t target = e->recorded;
  cv_.wait(lock, [&] { return e->completed >= target; });
  return Status();
}

Status FakeEventBackend::streamWaitEvent(BackendStream stream, BackendEvent event) {
  RAL_RETURN_IF_ERROR(checkNotInHostFn());
  std::lock_guard<std::mutex> lock(mutex_);
  auto* e = static_cast<Event*>(event);
  Op op;
  op.kind = Op::Kind::kWait;
  op.event = e;
  op.generation = e->recorded;
  static_cast<FakeStream*>(stream)->ops.push_back(std::move(op));
  ++stream_waits_;
  cv_.notify_all();
  return Status();
}

Status FakeEventBackend::launchHostFunc(BackendStream stream, HostFn fn, void* user) {
  RAL_RETURN_IF_ERROR(checkNotInHostFn());
  std::lock_guard<std::mutex> lock(mutex_);
  Op op;
  op.kind = Op::Kind::kHostFn;
  op.fn = fn;
  op.user = user;
  static_cast<FakeStream*>(stream)->ops.push_back(std::move(op));
  cv_.notify_all();
  return Status();
}

BackendStream FakeEventBackend::createStream() {
  std::lock_guard<std::mutex> lock(mutex_);
  streams_.push_back(std::make_unique<FakeStream>());
  return streams_.back().get();
}

void FakeEventBackend::enqueueWork(BackendStream stream, std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  Op op;
  op.kind = Op::Kind::kWork;
  op.work = std::move(fn);
  static_cast<FakeStream*>(stream)->ops.push_back(std::move(op));
  cv_.notify_all();
}

void FakeEventBackend::pause(BackendStream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  static_cast<FakeStream*>(stream)->paused = true;
}

void FakeEventBackend::resume(BackendStream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  static_cast<FakeStream*>(stream)->paused = false;
  cv_.notify_all();
}

void FakeEventBackend::waitIdle() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] {
    return std::all_of(streams_.begin(), streams_.end(),
                       [&](const auto& s) { return !s->running && !runnableLocked(*s); });
  });
}

void FakeEventBackend::failNextRecord(Status status) {
  std::lock_guard<std::mutex> lock(mutex_);
  next_record_failure_ = std::move(status);
}

bool FakeEventBackend::runnableLocked(const FakeStream& s) const {
  if (s.paused || s.running || s.ops.empty()) return false;
  const Op& op = s.ops.front();
  return op.kind != Op::Kind::kWait || op.event->completed >= op.generation;
}

void FakeEventBackend::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    FakeStream* ready = nullptr;
    cv_.wait(lock, [&] {
      if (stop_) return true;
      for (auto& s : streams_) {
        if (runnableLocked(*s)) {
          ready = s.get();
          return true;
        }
      }
      return false;
    });
    if (stop_) return;
    Op op = std::move(ready->ops.front());
    ready->ops.pop_front();
    switch (op.kind) {
      case Op::Kind::kRecord:
        op.event->completed = std::max(op.event->completed, op.generation);
        break;
      case Op::Kind::kWait:
        break;
      case Op::Kind::kHostFn:
      case Op::Kind::kWork:
        ready->running = true;
        lock.unlock();
        if (op.kind == Op::Kind::kHostFn) {
          in_host_fn = true;
          op.fn(op.user);
          in_host_fn = false;
        } else {
          op.work();
        }
        lock.lock();
        ready->running = false;
        if (op.kind == Op::Kind::kHostFn) ++host_fns_;
        break;
    }
    cv_.notify_all();
  }
}

int FakeEventBackend::violations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return violations_;
}
int FakeEventBackend::eventsCreated() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return created_;
}
int FakeEventBackend::eventsDestroyed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return destroyed_;
}
int FakeEventBackend::streamWaits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stream_waits_;
}
int FakeEventBackend::hostFunctionsRun() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return host_fns_;
}

}  // namespace ral::cuda::testing
