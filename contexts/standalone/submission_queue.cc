// Asynchronous executions: Submission's completion, the per-context queue thread, and one job's
// run (waits, execution, signals).
#include "contexts/standalone/submission_queue.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "drivers/common/deadline.h"
#include "ral/layout.h"
#include "ral/standalone_context.h"
#include "ral/trace.h"

namespace ral::standalone {

namespace {
constexpr std::chrono::microseconds kWaitSpin{50};
}  // namespace

// ---- Submission -----------------------------------------------------------------------------

Status Submission::wait(Timeout timeout) const {
  // The common case for short executions; status_ no longer changes once done_ is set.
  if (done_.load(std::memory_order_acquire)) return status_;
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

void Submission::publishAll(std::vector<SharedTensor>&& outputs) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    outputs_ = std::move(outputs);  // none was handed out before
  }
  done_cv_.notify_all();
}

void Submission::setQueued(size_t index, SharedTensor output, const void* owner) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (queued_.size() <= index) queued_.resize(index + 1);
  queued_[index] = std::move(output);
  queued_owner_ = owner;
}

void Submission::clearQueued() {
  std::lock_guard<std::mutex> lock(mutex_);
  queued_.clear();
  queued_owner_ = nullptr;
}

SharedTensor Submission::queued(size_t index, const void* owner) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (owner != queued_owner_ || index >= queued_.size()) return nullptr;
  return queued_[index];
}

void Submission::finishUnshared(Status status, std::vector<SharedTensor>&& outputs) {
  outputs_ = std::move(outputs);
  status_ = std::move(status);
  done_.store(true, std::memory_order_release);
}

void Submission::finish(Status status, std::vector<SharedTensor>* outputs) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (outputs != nullptr) outputs_ = std::move(*outputs);  // none was handed out before
    status_ = std::move(status);
    done_.store(true, std::memory_order_release);
  }
  done_cv_.notify_all();
}

// ---- one job --------------------------------------------------------------------------------

namespace {

Status waitFor(const SemaphoreValue& point, const char* what, size_t k) {
  Status s = point.semaphore->wait(point.value);
  if (s.ok()) return s;
  return s.withContext(internal::strCat(what, " ", k, " (for value ", point.value, ")"));
}

// Whether `t` binds as input `index` of `ctx`'s module without a copy.
bool bindsAsIs(const StandaloneContext& ctx, size_t index, const DLTensor& t) {
  const TensorSignature& sig = ctx.module().inputs()[index];
  int64_t strides[kMaxMemRefRank];
  if (t.ndim > kMaxMemRefRank) return false;
  if (t.strides != nullptr)
    std::copy(t.strides, t.strides + t.ndim, strides);
  else
    rowMajorStrides(t.shape, t.ndim, strides);
  auto how = chooseInputBinding(sig, index, t.shape, strides, t.ndim, false);
  return how.ok() && *how == InputBinding::kAsIs;
}

using Outcome = SubmissionQueue::Outcome;

Status signalOutput(SubmissionQueue::Job& job, size_t k) {
  if (k >= job.output_signals.size() || job.output_signals[k].semaphore == nullptr) return Status();
  Status s = job.output_signals[k].semaphore->signal(job.output_signals[k].value);
  if (s.ok()) return s;
  return s.withContext(
      internal::strCat("output semaphore ", k, " (to ", job.output_signals[k].value, ")"));
}

// One job's execution: binds what is ready, defers the rest to the module's first receive,
// hands out (and signals) each output as it is sent when the job asks for output semaphores,
// and takes the others at the end. With `device_ordered`, inputs that are outputs of this
// context's earlier submissions are bound at once, their work being queued before this one's on
// the same device stream.
class JobRun {
 public:
  JobRun(SubmissionQueue::Job& job, Execution& exec, bool device_ordered, Outcome& outcome)
      : job_(job), exec_(exec), device_ordered_(device_ordered), out_(outcome) {
    const size_t n = exec.ctx()->module().outputs().size();
    out_.late.assign(n, nullptr);
    // Outputs are handed out as they are sent only to a job with output semaphores.
    if (!job.output_signals.empty()) out_.published.assign(n, false);
  }

  Status bind() {
    StandaloneExecutionContext* ctx = exec_.ctx();
    for (size_t i = 0; i < job_.inputs.size(); ++i) {
      const SubmitInput& in = job_.inputs[i];
      if (in.from != nullptr) {
        if (held_.empty()) held_.resize(job_.inputs.size());  // only jobs that take outputs
        SharedTensor queued =
            device_ordered_ ? SubmissionQueue::queuedOutput(*in.from, in.index, job_.context.get())
                            : nullptr;
        if (queued && bindsAsIs(*job_.context, i, queued->dl_tensor)) {
          held_[i] = queued;
          upstream_.push_back(in.from);
          RAL_RETURN_IF_ERROR(exec_.bindInput(i, queued->dl_tensor));
          continue;
        }
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
    if (!job_.output_signals.empty()) ctx->setOutputListener([this](size_t k) { return early(k); });
    return Status();
  }

  Status run() {
    RAL_RETURN_IF_ERROR(bind());
    RAL_RETURN_IF_ERROR(exec_.run());
    for (size_t k = 0; k < out_.late.size(); ++k) {
      if (out_.isPublished(k)) continue;
      RAL_ASSIGN_OR_RETURN(out_.late[k], exec_.takeSharedOutput(k));
    }
    return Status();
  }

 private:
  // Output `k` as the module sends it (the execution synchronized the device first).
  Status early(size_t k) {
    RAL_ASSIGN_OR_RETURN(SharedTensor t, exec_.ctx()->takeSharedSentOutput(k));
    SubmissionQueue::publish(*job_.submission, k, std::move(t));
    out_.published[k] = true;
    return signalOutput(job_, k);
  }

  SubmissionQueue::Job& job_;
  Execution& exec_;
  const bool device_ordered_;
  Outcome& out_;
  std::vector<SharedTensor> held_;  // earlier submissions' outputs bound as inputs (or empty)

 public:
  // The earlier submissions whose queued outputs were bound (device ordering).
  std::vector<std::shared_ptr<Submission>> upstream_;
};

}  // namespace

// Hands out what the execution left, then sets (or fails) every semaphore, then finishes.
void SubmissionQueue::finish(Job& job, Outcome& outcome) {
  Status& status = outcome.status;
  const std::string& name = job.context->module().name();
  if (!status.ok())
    status = status.withContext(internal::strCat("submission of module '", name, "'"));
  if (status.ok() && outcome.published.empty() && job.signals.empty()) {
    // Nothing to set between handing out the outputs and finishing: both under one lock.
    job.submission->finish(std::move(status), &outcome.late);
    outcome.late.clear();
    return;
  }
  if (status.ok() && outcome.published.empty()) {
    job.submission->publishAll(std::move(outcome.late));  // no output semaphores to set
  } else {
    for (size_t k = 0; k < outcome.late.size() && status.ok(); ++k) {
      if (outcome.isPublished(k)) continue;
      publish(*job.submission, k, std::move(outcome.late[k]));
      outcome.published[k] = true;
      status = signalOutput(job, k);
    }
  }
  for (size_t k = 0; k < job.signals.size() && status.ok(); ++k) {
    Status s = job.signals[k].semaphore->signal(job.signals[k].value);
    if (!s.ok())
      status = s.withContext(internal::strCat("signal semaphore ", k, " (to ", job.signals[k].value,
                                              ") of module '", name, "'s submission"));
  }
  if (!status.ok()) {
    for (size_t k = 0; k < job.output_signals.size(); ++k)
      if (!outcome.isPublished(k) && job.output_signals[k].semaphore != nullptr)
        job.output_signals[k].semaphore->fail(status);
    for (const SemaphoreValue& sv : job.signals) sv.semaphore->fail(status);
  }
  outcome.late.clear();
  job.submission->finish(std::move(status));
}

void SubmissionQueue::run(Job& job) {
  StandaloneContext& ctx = *job.context;
  // Ends before the submission is done, so a trace stopped by whoever waited for it has it.
  std::optional<trace::Scope> span;
  span.emplace("submission", "submission", [&] {
    return internal::strCat("\"module\": \"", ctx.module().name(),
                            "\", \"waits\": ", job.waits.size(),
                            ", \"signals\": ", job.signals.size());
  });
  Outcome outcome;
  const bool device_ordered = device_done_ != nullptr;
  // This job may block the thread (a wait, an input not ready): the executions queued so far get
  // their completion signal first, since what it waits for may depend on them.
  if (device_ordered && !group_.empty() && !runsWithoutBlocking(job)) flushGroup();
  std::vector<SemaphoreValue> deferred;
  for (size_t k = 0; k < job.waits.size() && outcome.status.ok(); ++k) {
    const SemaphoreValue& w = job.waits[k];
    if (device_ordered && queuedSignalCovers(w)) {
      deferred.push_back(w);  // set by work queued before this one's
      continue;
    }
    outcome.status = waitFor(w, "wait semaphore", k);
  }
  uint64_t device_value = 0;
  std::vector<std::shared_ptr<Submission>> upstream;
  {
    Execution exec = ctx.newExecution();
    if (device_ordered) exec.ctx()->setSynchronizeAtEnd(false);
    JobRun run(job, exec, device_ordered, outcome);
    if (outcome.status.ok()) outcome.status = run.run();
    upstream = std::move(run.upstream_);
    if (device_ordered && outcome.status.ok()) {
      // Later submissions of this context may bind these outputs at once: their work is queued
      // behind this one's.
      for (size_t k = 0; k < outcome.late.size(); ++k)
        if (outcome.late[k]) job.submission->setQueued(k, outcome.late[k], job.context.get());
      for (const SemaphoreValue& sv : job.signals) recordQueuedSignal(sv);
      device_value = 1;  // the group's signal value, set by flushGroup()
    }
  }  // the execution's temporaries are freed in stream order (device_ordered) or now
  if (!device_ordered) {
    span.reset();
    return finish(job, outcome);
  }
  group_.push_back(Completion{std::move(job), std::move(outcome), device_value, std::move(deferred),
                              std::move(upstream)});
  bool more;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    more = !jobs_.empty();
  }
  if (device_value == 0 || !more || group_.size() >= kMaxGroup) flushGroup();
}

bool SubmissionQueue::queuedSignalCovers(const SemaphoreValue& w) {
  auto it = queued_signals_.find(w.semaphore.get());
  if (it == queued_signals_.end()) return false;
  if (it->second.semaphore.expired()) {  // a semaphore gone; another took its address
    queued_signals_.erase(it);
    return false;
  }
  return it->second.value >= w.value;
}

void SubmissionQueue::recordQueuedSignal(const SemaphoreValue& s) {
  if (queued_signals_.size() >= 256) {  // forget semaphores that went away
    for (auto it = queued_signals_.begin(); it != queued_signals_.end();)
      it = it->second.semaphore.expired() ? queued_signals_.erase(it) : std::next(it);
  }
  QueuedSignal& q = queued_signals_[s.semaphore.get()];
  if (q.semaphore.expired()) q = QueuedSignal{s.semaphore, 0};
  q.value = std::max(q.value, s.value);
}

bool SubmissionQueue::runsWithoutBlocking(const Job& job) {
  if (!job.output_signals.empty()) return false;
  for (const SemaphoreValue& w : job.waits) {
    if (queuedSignalCovers(w)) continue;
    auto value = w.semaphore->query();
    if (!value.ok() || *value < w.value) return false;
  }
  for (size_t i = 0; i < job.inputs.size(); ++i) {
    const SubmitInput& in = job.inputs[i];
    if (in.ready.semaphore != nullptr) {
      auto value = in.ready.semaphore->query();
      if (!value.ok() || *value < in.ready.value) return false;
    }
    if (in.from == nullptr || in.from->done()) continue;
    SharedTensor queued = queuedOutput(*in.from, in.index, job.context.get());
    if (!queued || !bindsAsIs(*job.context, i, queued->dl_tensor)) return false;
  }
  return true;
}

void SubmissionQueue::flushGroup() {
  if (group_.empty()) return;
  const bool any = std::any_of(group_.begin(), group_.end(),
                               [](const Completion& c) { return c.device_value != 0; });
  Status signaled;
  uint64_t value = 0;
  if (any) {
    value = ++device_value_;
    signaled =
        group_.front().job.context->deviceDriver()->queueSignal(nullptr, device_done_.get(), value);
  }
  for (Completion& c : group_) {
    if (c.device_value == 0) continue;
    c.device_value = signaled.ok() ? value : 0;
    if (!signaled.ok() && c.outcome.status.ok()) c.outcome.status = signaled;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Completion& c : group_) completions_.push_back(std::move(c));
  }
  group_.clear();
  completion_cv_.notify_one();
}

void SubmissionQueue::complete() {
  for (;;) {
    Completion c;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      completion_cv_.wait(lock, [&] { return stopping_ || !completions_.empty(); });
      if (completions_.empty()) return;
      c = std::move(completions_.front());
      completions_.pop_front();
    }
    if (c.device_value != 0) {
      Status done = device_done_->wait(c.device_value);
      if (!done.ok() && c.outcome.status.ok())
        c.outcome.status = done.withContext(
            internal::strCat("waiting for ", c.job.context->deviceDriver()->deviceName()));
    }
    // The waits left to stream order: the submissions that set them finished before this one
    // (in order, above); one that failed fails this one too.
    for (size_t k = 0; k < c.deferred.size() && c.outcome.status.ok(); ++k) {
      Status reached = c.deferred[k].semaphore->wait(c.deferred[k].value, Timeout::zero());
      if (!reached.ok())
        c.outcome.status = reached.withContext(internal::strCat(
            "a wait semaphore (for value ", c.deferred[k].value, ") of the submission"));
    }
    // Earlier submissions whose outputs it read as they were queued finished before it (in
    // order, above): one that failed fails this one too.
    for (size_t k = 0; k < c.upstream.size() && c.outcome.status.ok(); ++k) {
      Status before = c.upstream[k]->wait(Timeout::zero());
      if (!before.ok())
        c.outcome.status = before.withContext("an earlier submission whose output it takes");
    }
    c.job.submission->clearQueued();
    finish(c.job, c.outcome);
    // Dropping the job may drop the last reference to the context (see stop()).
  }
}

// ---- SubmissionQueue ------------------------------------------------------------------------

void SubmissionQueue::publish(Submission& submission, size_t index, SharedTensor output) {
  submission.publish(index, std::move(output));
}

StatusOr<std::shared_ptr<SubmissionQueue>> SubmissionQueue::start(StandaloneContext& context) {
  std::shared_ptr<SubmissionQueue> queue(new SubmissionQueue());
  // Vulkan frees memory once the work queued before the free is done, and CUDA's allocator
  // hands a freed block only to work queued behind it on the same stream, so an execution's
  // temporaries may go while its kernels still run. HSA returns memory to its pool at once, so
  // its executions (and the CPU's) synchronize at their end, on the queue thread.
  if (context.device() == DeviceKind::kVulkan || context.device() == DeviceKind::kCuda) {
    RAL_ASSIGN_OR_RETURN(queue->device_done_, context.deviceDriver()->createSemaphore(0));
    queue->completion_thread_ = std::thread([self = queue] { self->complete(); });
  }
  queue->inline_allowed_ = context.device() == DeviceKind::kCpu;
  // The threads hold the queue, so a detached thread never outlives what it reads.
  queue->thread_ = std::thread([self = queue] { self->loop(); });
  return queue;
}

SharedTensor SubmissionQueue::queuedOutput(const Submission& submission, size_t index,
                                           const StandaloneContext* context) {
  return submission.queued(index, context);
}

bool SubmissionQueue::readyNow(const Job& job) {
  auto reached = [](const SemaphoreValue& point) {
    auto value = point.semaphore->query();
    return value.ok() && *value >= point.value;
  };
  for (const SubmitInput& in : job.inputs) {
    if (in.from != nullptr && !in.from->done()) return false;
    if (in.ready.semaphore != nullptr && !reached(in.ready)) return false;
  }
  return std::all_of(job.waits.begin(), job.waits.end(), reached);
}

uint64_t SubmissionQueue::inputBytes(const std::vector<SubmitInput>& inputs) {
  uint64_t bytes = 0;
  for (const SubmitInput& in : inputs) {
    SharedTensor from;
    const DLTensor* t = in.tensor;
    if (in.from != nullptr) {
      if (!in.from->done()) continue;  // never wait here (partial execution binds it later)
      auto out = in.from->output(in.index);
      if (!out.ok()) continue;
      from = *out;
      t = &from->dl_tensor;
    }
    uint64_t n = (t->dtype.bits * t->dtype.lanes + 7) / 8;
    for (int d = 0; d < t->ndim; ++d) n *= static_cast<uint64_t>(std::max<int64_t>(t->shape[d], 0));
    bytes += n;
  }
  return bytes;
}

template <typename Run>
void SubmissionQueue::timed(uint64_t bytes, Run run) {
  const auto begin = std::chrono::steady_clock::now();
  run();
  const int64_t took =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - begin)
          .count();
  average_ns_ = average_ns_ < 0 ? took : (3 * average_ns_ + took) / 4;
  // Larger inputs than the short executions had may take longer: those go to the queue thread.
  if (took < std::chrono::nanoseconds(kInlineLimit).count())
    short_bytes_ = std::max(short_bytes_, bytes);
  else
    short_bytes_ = std::min(short_bytes_, bytes > 0 ? bytes - 1 : 0);
}

void SubmissionQueue::runTimed(Job& job) {
  // Reading the clock costs as much as a tiny execution: once measured, one job in kTimedEvery
  // is timed.
  if (average_ns_ >= 0 && ++untimed_ % kTimedEvery != 0) return run(job);
  timed(inline_allowed_ ? inputBytes(job.inputs) : 0, [&] { run(job); });
}

bool SubmissionQueue::runsInline(uint64_t bytes) const {
  return inline_allowed_ && !stopping_ && !busy_ && jobs_.empty() && average_ns_ >= 0 &&
         average_ns_ < std::chrono::nanoseconds(kInlineLimit).count() && bytes <= short_bytes_;
}

bool SubmissionQueue::runPlainInline(StandaloneContext& context,
                                     const std::vector<SubmitInput>& inputs,
                                     Submission& submission) {
  if (!inline_allowed_) return false;
  for (const SubmitInput& in : inputs)
    if (in.from != nullptr || in.ready.semaphore != nullptr) return false;
  const uint64_t bytes = inputBytes(inputs);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!runsInline(bytes)) return false;
    busy_ = true;
  }
  // What run() and finish() do for such a job, without a Job, a JobRun or a lock on the
  // submission nobody else holds yet.
  auto execute = [&] {
    std::optional<trace::Scope> span;
    span.emplace("submission", "submission", [&] {
      return internal::strCat("\"module\": \"", context.module().name(),
                              "\", \"waits\": 0, \"signals\": 0");
    });
    Status status;
    std::vector<SharedTensor> outputs;
    {
      Execution exec = context.newExecution();
      for (size_t i = 0; i < inputs.size() && status.ok(); ++i)
        status = exec.bindInput(i, *inputs[i].tensor);
      if (status.ok()) status = exec.run();
      const size_t n = context.module().outputs().size();
      if (status.ok()) outputs.reserve(n);
      for (size_t k = 0; k < n && status.ok(); ++k) {
        StatusOr<SharedTensor> t = exec.takeSharedOutput(k);
        if (t.ok())
          outputs.push_back(std::move(*t));
        else
          status = t.status();
      }
    }
    if (!status.ok()) {
      status = status.withContext(
          internal::strCat("submission of module '", context.module().name(), "'"));
      outputs.clear();
    }
    span.reset();
    submission.finishUnshared(std::move(status), std::move(outputs));
  };
  if (++untimed_ % kTimedEvery != 0)
    execute();
  else
    timed(bytes, execute);
  bool more;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    busy_ = false;
    more = !jobs_.empty();
  }
  if (more) cv_.notify_one();  // queued behind this one meanwhile
  return true;
}

Status SubmissionQueue::push(Job job) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (stopping_) return failedPrecondition("the context's submission queue has stopped");
  if (runsInline(inline_allowed_ ? inputBytes(job.inputs) : 0) && readyNow(job)) {
    busy_ = true;
    lock.unlock();
    runTimed(job);
    lock.lock();
    busy_ = false;
    const bool more = !jobs_.empty();
    lock.unlock();
    if (more) cv_.notify_one();  // queued behind this one meanwhile
    return Status();
  }
  jobs_.push_back(std::move(job));
  pushed_.fetch_add(1, std::memory_order_release);
  lock.unlock();
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
      cv_.wait(lock, [&] { return stopping_ || (!jobs_.empty() && !busy_); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      busy_ = true;
    }
    runTimed(job);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ = false;
    }
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
  completion_cv_.notify_all();
  for (std::thread* t : {&thread_, &completion_thread_}) {
    if (!t->joinable()) continue;
    if (t->get_id() == std::this_thread::get_id())
      t->detach();
    else
      t->join();
  }
  // The semaphore belongs to the context's device driver, which goes with the context; neither
  // thread touches it any more (a detached one only returns).
  device_done_.reset();
}

}  // namespace ral::standalone
