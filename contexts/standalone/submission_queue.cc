// Asynchronous executions: Submission's completion, the per-context queue thread, and one job's
// run (waits, execution, signals).
#include "contexts/standalone/submission_queue.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "drivers/common/deadline.h"
#include "ral/standalone_context.h"
#include "ral/trace.h"

namespace ral::standalone {

namespace {
constexpr std::chrono::microseconds kWaitSpin{50};
}  // namespace

// ---- Submission -----------------------------------------------------------------------------

Status Submission::wait(Timeout timeout) const {
  const drivers::Deadline deadline(timeout);
  // Executions of small modules end within microseconds: look for a moment before sleeping,
  // since being woken costs more.
  const auto until = std::min(deadline.when(), drivers::Deadline::Clock::now() + kWaitSpin);
  while (!done_.load(std::memory_order_acquire) && drivers::Deadline::Clock::now() < until)
    std::this_thread::yield();
  std::unique_lock<std::mutex> lock(mutex_);
  if (!deadline.wait(done_cv_, lock, [&] { return done_.load(std::memory_order_relaxed); }))
    return deadlineExceeded("the submission is not done: waited ",
                            std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count(),
                            " ms");
  return status_;
}

bool Submission::done() const { return done_.load(std::memory_order_acquire); }

StatusOr<std::vector<SharedTensor>> Submission::outputs() const {
  RAL_RETURN_IF_ERROR(wait());
  std::lock_guard<std::mutex> lock(mutex_);
  return outputs_;
}

void Submission::publish(std::vector<SharedTensor> outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  outputs_ = std::move(outputs);
}

void Submission::finish(Status status) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    status_ = std::move(status);
    if (!status_.ok()) outputs_.clear();
    done_.store(true, std::memory_order_release);
  }
  done_cv_.notify_all();
}

// ---- one job --------------------------------------------------------------------------------

namespace {

SharedTensor share(DLTensorPtr t) {
  return SharedTensor(t.release(), [](DLManagedTensor* m) {
    if (m != nullptr && m->deleter != nullptr) m->deleter(m);
  });
}

// Waits for the job's semaphores and earlier submissions; fills `inputs` (and `held`, which
// keeps earlier submissions' outputs alive while they are read).
Status gatherInputs(SubmissionQueue::Job& job, std::vector<const DLTensor*>& inputs,
                    std::vector<SharedTensor>& held) {
  for (size_t k = 0; k < job.waits.size(); ++k) {
    Status s = job.waits[k].semaphore->wait(job.waits[k].value);
    if (!s.ok())
      return s.withContext(internal::strCat("wait semaphore ", k, " (for value ",
                                            job.waits[k].value, ") of the submission"));
  }
  inputs.resize(job.inputs.size());
  for (size_t i = 0; i < job.inputs.size(); ++i) {
    const SubmitInput& in = job.inputs[i];
    if (in.from == nullptr) {
      inputs[i] = in.tensor;
      continue;
    }
    auto outs = in.from->outputs();
    if (!outs.ok())
      return outs.status().withContext(
          internal::strCat("input ", i, " is output ", in.index, " of a submission that failed"));
    if (in.index >= outs->size())
      return invalidArgument("input ", i, " is output ", in.index, " of a submission that has ",
                             outs->size(), " output(s)");
    held.push_back((*outs)[in.index]);
    inputs[i] = &held.back()->dl_tensor;
  }
  return Status();
}

}  // namespace

void SubmissionQueue::run(Job& job) {
  StandaloneContext& ctx = *job.context;
  trace::Scope span("submission", "submission", [&] {
    return internal::strCat("\"module\": \"", ctx.module().name(),
                            "\", \"waits\": ", job.waits.size(),
                            ", \"signals\": ", job.signals.size());
  });
  std::vector<const DLTensor*> inputs;
  std::vector<SharedTensor> held;
  std::vector<SharedTensor> outputs;
  Status status = gatherInputs(job, inputs, held);
  if (status.ok()) {
    auto run = ctx.run(inputs);
    if (run.ok()) {
      outputs.reserve(run->size());
      for (DLTensorPtr& t : *run) outputs.push_back(share(std::move(t)));
    } else {
      status = run.status();
    }
  }
  held.clear();
  if (!status.ok())
    status =
        status.withContext(internal::strCat("submission of module '", ctx.module().name(), "'"));
  // Outputs are published before the signals, so whoever waits on a signal finds them.
  if (status.ok()) job.submission->publish(std::move(outputs));
  for (size_t k = 0; k < job.signals.size() && status.ok(); ++k) {
    Status s = job.signals[k].semaphore->signal(job.signals[k].value);
    if (!s.ok())
      status =
          s.withContext(internal::strCat("signal semaphore ", k, " (to ", job.signals[k].value,
                                         ") of module '", ctx.module().name(), "'s submission"));
  }
  if (!status.ok())
    for (const SemaphoreValue& sv : job.signals) sv.semaphore->fail(status);
  job.submission->finish(std::move(status));
}

// ---- SubmissionQueue ------------------------------------------------------------------------

std::shared_ptr<SubmissionQueue> SubmissionQueue::start() {
  std::shared_ptr<SubmissionQueue> queue(new SubmissionQueue());
  // The thread holds the queue, so a detached thread never outlives what it reads.
  queue->thread_ = std::thread([self = queue] { self->loop(); });
  return queue;
}

Status SubmissionQueue::push(Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return failedPrecondition("the context's submission queue has stopped");
    jobs_.push_back(std::move(job));
    pushed_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_one();
  return Status();
}

void SubmissionQueue::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (jobs_.empty() && !stopping_) {
        const uint64_t seen = pushed_.load(std::memory_order_acquire);
        lock.unlock();
        const auto until = std::chrono::steady_clock::now() + kSpin;
        while (pushed_.load(std::memory_order_acquire) == seen &&
               std::chrono::steady_clock::now() < until)
          std::this_thread::yield();
        lock.lock();
      }
      cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    run(job);
    // Dropping the job may drop the last reference to the context, whose destructor calls
    // stop() on this very thread.
  }
}

void SubmissionQueue::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (!thread_.joinable()) return;
  if (thread_.get_id() == std::this_thread::get_id())
    thread_.detach();
  else
    thread_.join();
}

}  // namespace ral::standalone
