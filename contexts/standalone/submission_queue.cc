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

StatusOr<SharedTensor> Submission::output(size_t index) const {
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] {
    return (index < outputs_.size() && outputs_[index]) || done_.load(std::memory_order_relaxed);
  });
  if (index < outputs_.size() && outputs_[index]) return outputs_[index];
  if (!status_.ok()) return status_;
  return outOfRange("output ", index, " of a submission that has ", outputs_.size(), " output(s)");
}

void Submission::publish(size_t index, SharedTensor output) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (outputs_.size() <= index) outputs_.resize(index + 1);
    outputs_[index] = std::move(output);
  }
  done_cv_.notify_all();
}

void Submission::finish(Status status) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    status_ = std::move(status);
    done_.store(true, std::memory_order_release);
  }
  done_cv_.notify_all();
}

// ---- one job --------------------------------------------------------------------------------

namespace {

SharedTensor share(DLManagedTensor* t) {
  return SharedTensor(t, [](DLManagedTensor* m) {
    if (m != nullptr && m->deleter != nullptr) m->deleter(m);
  });
}

Status waitFor(const SemaphoreValue& point, const char* what, size_t k) {
  Status s = point.semaphore->wait(point.value);
  if (s.ok()) return s;
  return s.withContext(internal::strCat(what, " ", k, " (for value ", point.value, ")"));
}

// One job's execution: binds what is ready, defers the rest to the module's first receive,
// publishes (and signals) each output as it is sent when the job asks for output semaphores,
// the others at the end.
class JobRun {
 public:
  JobRun(SubmissionQueue::Job& job, Execution& exec)
      : job_(job),
        exec_(exec),
        held_(job.inputs.size()),
        published_(exec.ctx()->module().outputs().size()) {}

  Status bind() {
    StandaloneExecutionContext* ctx = exec_.ctx();
    for (size_t i = 0; i < job_.inputs.size(); ++i) {
      const SubmitInput& in = job_.inputs[i];
      if (in.from != nullptr) {
        ctx->bindInputLater(i, [this, i]() -> StatusOr<const DLTensor*> {
          const SubmitInput& from = job_.inputs[i];
          auto t = from.from->output(from.index);
          if (!t.ok())
            return t.status().withContext(internal::strCat("input ", i, " (output ", from.index,
                                                           " of an earlier submission)"));
          held_[i] = *t;
          return &held_[i]->dl_tensor;
        });
      } else if (in.ready.semaphore != nullptr) {
        ctx->bindInputLater(i, [this, i]() -> StatusOr<const DLTensor*> {
          RAL_RETURN_IF_ERROR(waitFor(job_.inputs[i].ready, "ready semaphore of input", i));
          return job_.inputs[i].tensor;
        });
      } else {
        RAL_RETURN_IF_ERROR(exec_.bindInput(i, *in.tensor));
      }
    }
    if (!job_.output_signals.empty())
      ctx->setOutputListener([this](size_t k) { return publish(k, true); });
    return Status();
  }

  // Publishes output `k` (taken from the execution) and sets its semaphore.
  Status publish(size_t k, bool early) {
    auto t = early ? exec_.ctx()->takeSentOutput(k) : exec_.takeOutput(k);
    if (!t.ok()) return t.status();
    SubmissionQueue::publish(*job_.submission, k, share(*t));
    published_[k] = true;
    if (k < job_.output_signals.size() && job_.output_signals[k].semaphore != nullptr) {
      Status s = job_.output_signals[k].semaphore->signal(job_.output_signals[k].value);
      if (!s.ok())
        return s.withContext(
            internal::strCat("output semaphore ", k, " (to ", job_.output_signals[k].value, ")"));
    }
    return Status();
  }

  Status run() {
    RAL_RETURN_IF_ERROR(bind());
    RAL_RETURN_IF_ERROR(exec_.run());
    for (size_t k = 0; k < published_.size(); ++k)
      if (!published_[k]) RAL_RETURN_IF_ERROR(publish(k, false));
    return Status();
  }

  // The output semaphores of outputs not handed out.
  void failRest(const Status& status) {
    for (size_t k = 0; k < job_.output_signals.size(); ++k)
      if (!published_[k] && job_.output_signals[k].semaphore != nullptr)
        job_.output_signals[k].semaphore->fail(status);
  }

 private:
  SubmissionQueue::Job& job_;
  Execution& exec_;
  std::vector<SharedTensor> held_;  // earlier submissions' outputs bound as inputs
  std::vector<bool> published_;
};

}  // namespace

void SubmissionQueue::run(Job& job) {
  StandaloneContext& ctx = *job.context;
  trace::Scope span("submission", "submission", [&] {
    return internal::strCat("\"module\": \"", ctx.module().name(),
                            "\", \"waits\": ", job.waits.size(),
                            ", \"signals\": ", job.signals.size());
  });
  Status status;
  for (size_t k = 0; k < job.waits.size() && status.ok(); ++k)
    status = waitFor(job.waits[k], "wait semaphore", k);
  std::vector<bool> published;
  {
    Execution exec = ctx.newExecution();
    JobRun run(job, exec);
    if (status.ok()) status = run.run();
    if (!status.ok()) {
      status =
          status.withContext(internal::strCat("submission of module '", ctx.module().name(), "'"));
      run.failRest(status);
    }
  }  // the execution (and the inputs it held) is released before anyone is told
  // Outputs were published before the signals, so whoever waits on a signal finds them.
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

void SubmissionQueue::publish(Submission& submission, size_t index, SharedTensor output) {
  submission.publish(index, std::move(output));
}

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
