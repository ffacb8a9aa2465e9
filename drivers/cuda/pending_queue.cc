#include "drivers/cuda/pending_queue.h"

#include <algorithm>

namespace ral::cuda {

size_t QueueStream::heldBackCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_.size();
}

std::shared_ptr<PendingQueueActions> PendingQueueActions::create(
    std::shared_ptr<SyncResources> resources) {
  std::shared_ptr<PendingQueueActions> queue(new PendingQueueActions(std::move(resources)));
  queue->worker_ = std::thread([q = queue.get()] { q->workerLoop(); });
  return queue;
}

PendingQueueActions::~PendingQueueActions() { shutdown(); }

void PendingQueueActions::shutdown() {
  std::vector<std::shared_ptr<QueueStream>> streams;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    streams = active_;
  }
  wake_.notify_all();
  if (worker_.joinable()) {
    if (worker_.get_id() == std::this_thread::get_id()) {
      worker_.detach();
    } else {
      worker_.join();
    }
  }
  for (auto& s : streams)
    close(*s, cancelled("cuda: the driver was destroyed with work still "
                        "waiting for a semaphore"));
}

void PendingQueueActions::notify(void* self, bool on_host_thread) {
  auto* queue = static_cast<PendingQueueActions*>(self);
  if (on_host_thread) {
    queue->processAll();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(queue->mutex_);
    if (queue->stopped_) return;
    queue->dirty_ = true;
  }
  queue->wake_.notify_one();
}

void PendingQueueActions::workerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return dirty_ || stopped_; });
    if (stopped_) return;
    dirty_ = false;
    lock.unlock();
    processAll();
    lock.lock();
  }
}

void PendingQueueActions::processAll() {
  std::vector<std::shared_ptr<QueueStream>> streams;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) return;
    streams = active_;
  }
  for (auto& s : streams) {
    std::lock_guard<std::mutex> lock(s->mutex_);
    processLocked(*s);
  }
}

void PendingQueueActions::setActive(QueueStream& s, bool active) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find_if(active_.begin(), active_.end(),
                         [&](const std::shared_ptr<QueueStream>& p) { return p.get() == &s; });
  if (active && it == active_.end()) active_.push_back(s.shared_from_this());
  if (!active && it != active_.end()) active_.erase(it);
}

void PendingQueueActions::processLocked(QueueStream& s) {
  EventBackend& backend = *resources_->backend;
  while (!s.held_.empty()) {
    QueueStream::Action& action = s.held_.front();
    Status result;
    switch (action.kind) {
      case QueueStream::Action::Kind::kWait: {
        const auto state = action.wait->state.load(std::memory_order_acquire);
        if (state == Timepoint::State::kPending) return;  // still held back
        if (state == Timepoint::State::kFailed) {
          result = action.wait->failure;
        } else if (state == Timepoint::State::kEvent) {
          result = backend.streamWaitEvent(s.stream_, action.wait->event->handle());
        }
        action.semaphore->releaseDeviceWait(action.wait);
        action.wait = nullptr;
        break;
      }
      case QueueStream::Action::Kind::kWork:
        result = action.issue(s.stream_);
        break;
      case QueueStream::Action::Kind::kSignal:
        result = action.semaphore->deviceSignal(s.stream_, s.callback_stream_, action.value);
        break;
    }
    s.held_.pop_front();
    if (!result.ok()) {
      failLocked(s, result);
      return;
    }
  }
  setActive(s, false);
  s.drained_.notify_all();
}

void PendingQueueActions::failLocked(QueueStream& s, const Status& status) {
  if (s.error_.ok()) s.error_ = status;
  std::deque<QueueStream::Action> dropped;
  dropped.swap(s.held_);
  for (QueueStream::Action& action : dropped) {
    if (action.kind == QueueStream::Action::Kind::kWait) {
      action.semaphore->releaseDeviceWait(action.wait);
    } else if (action.kind == QueueStream::Action::Kind::kSignal) {
      action.semaphore->failWith(status, /*on_host_thread=*/false);
    }
  }
  setActive(s, false);
  s.drained_.notify_all();
}

Status PendingQueueActions::wait(QueueStream& s, TimelineSemaphore& semaphore, uint64_t value) {
  std::lock_guard<std::mutex> lock(s.mutex_);
  if (!s.error_.ok()) return s.error_;
  Timepoint* tp = semaphore.addDeviceWait(value, &PendingQueueActions::notify, shared_from_this());
  if (s.held_.empty()) {
    const auto state = tp->state.load(std::memory_order_acquire);
    if (state != Timepoint::State::kPending) {
      Status result;
      if (state == Timepoint::State::kEvent) {
        result = resources_->backend->streamWaitEvent(s.stream_, tp->event->handle());
      } else if (state == Timepoint::State::kFailed) {
        result = tp->failure;
        s.error_ = result;
      }
      semaphore.releaseDeviceWait(tp);
      return result;
    }
  }
  QueueStream::Action action;
  action.kind = QueueStream::Action::Kind::kWait;
  action.semaphore = semaphore.shared_from_this();
  action.wait = tp;
  s.held_.push_back(std::move(action));
  setActive(s, true);
  // The wait may have resolved between addDeviceWait() and now.
  processLocked(s);
  return Status();
}

Status PendingQueueActions::signal(QueueStream& s, TimelineSemaphore& semaphore, uint64_t value) {
  RAL_RETURN_IF_ERROR(semaphore.checkSignal(value));
  std::lock_guard<std::mutex> lock(s.mutex_);
  if (!s.error_.ok()) {
    // The work before this signal failed, so the signal never happens: tell its waiters.
    semaphore.failWith(s.error_, /*on_host_thread=*/false);
    return s.error_;
  }
  if (s.held_.empty()) return semaphore.deviceSignal(s.stream_, s.callback_stream_, value);
  QueueStream::Action action;
  action.kind = QueueStream::Action::Kind::kSignal;
  action.semaphore = semaphore.shared_from_this();
  action.value = value;
  s.held_.push_back(std::move(action));
  return Status();
}

Status PendingQueueActions::drain(QueueStream& s) {
  std::unique_lock<std::mutex> lock(s.mutex_);
  s.drained_.wait(lock, [&] { return s.held_.empty(); });
  Status error = std::move(s.error_);
  s.error_ = Status();
  return error;
}

void PendingQueueActions::close(QueueStream& s, const Status& why) {
  std::lock_guard<std::mutex> lock(s.mutex_);
  if (s.held_.empty()) return;
  failLocked(s, why);
}

}  // namespace ral::cuda
