#include "drivers/cpu/cpu_stream.h"

#include <exception>
#include <utility>

namespace ral::cpu {

CpuStream::CpuStream() : thread_([this] { loop(); }) {}

CpuStream::~CpuStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_one();
  thread_.join();
}

void CpuStream::enqueue(std::function<Status()> op, std::function<void(const Status&)> on_skip) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ops_.push_back(Op{std::move(op), std::move(on_skip)});
  }
  work_cv_.notify_one();
}

Status CpuStream::synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_cv_.wait(lock, [&] { return ops_.empty() && !busy_; });
  return std::exchange(error_, Status());
}

void CpuStream::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    work_cv_.wait(lock, [&] { return stop_ || !ops_.empty(); });
    if (ops_.empty()) return;  // stop_ and drained
    Op op = std::move(ops_.front());
    ops_.pop_front();
    const Status skipped_for = error_;
    busy_ = true;
    lock.unlock();
    Status status;
    if (!skipped_for.ok()) {
      if (op.on_skip) op.on_skip(skipped_for);
    } else {
      try {
        status = op.run();
      } catch (const std::exception& e) {
        status = internalError("exception in stream work: ", e.what());
      } catch (...) {
        status = internalError("unknown exception in stream work");
      }
    }
    op = Op();
    lock.lock();
    busy_ = false;
    if (!status.ok() && error_.ok()) error_ = std::move(status);
    if (ops_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace ral::cpu
