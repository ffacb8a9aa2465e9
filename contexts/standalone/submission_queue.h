// The submission queue of a StandaloneContext (ral/submission.h has the contract): one thread,
// started at the first submit, that runs the context's submissions in order. For a module on a
// device whose driver frees memory in stream order (Vulkan, CUDA), that thread only queues each
// execution's work and goes on with the next submission, and a burst of consecutive executions
// shares one signal of a device semaphore (so the driver submits them as one batch); a second
// thread waits for the device and then hands out the outputs and sets the submission's
// semaphores, in the same order. A later submission of the context binds such queued outputs at
// once (its work runs behind theirs on the same stream), so chains run on the device without a
// host round trip between their executions.
//
// A job that can start at once (its waits reached, its inputs ready, nothing queued or running
// before it) of a CPU module whose recent executions took under kInlineLimit, with inputs no
// larger than those of such an execution, runs on the submitting thread instead: handing it to
// the queue thread would cost more than running it. Longer modules, larger inputs, and the first
// execution (not measured yet) always go to the queue thread.
//
// A queued job holds its context, so the context (and this queue) lives until its jobs are done;
// the context's destructor stops the threads (joins them, or detaches the one the last reference
// went away on). Thread-safe.
#ifndef RAL_CONTEXTS_STANDALONE_SUBMISSION_QUEUE_H_
#define RAL_CONTEXTS_STANDALONE_SUBMISSION_QUEUE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ral/driver.h"
#include "ral/status.h"
#include "ral/submission.h"

namespace ral::standalone {

class StandaloneContext;

class SubmissionQueue {
 public:
  struct Job {
    std::shared_ptr<StandaloneContext> context;
    std::vector<SubmitInput> inputs;
    std::vector<SemaphoreValue> waits;
    std::vector<SemaphoreValue> signals;
    std::vector<SemaphoreValue> output_signals;  // empty or one per output
    std::shared_ptr<Submission> submission;
  };

  // Starts the queue of `context` (its device ordering and completion thread where its device
  // has them).
  static StatusOr<std::shared_ptr<SubmissionQueue>> start(StandaloneContext& context);
  // Hands output `index` of `submission` to its waiters (before the output's semaphore is set).
  static void publish(Submission& submission, size_t index, SharedTensor output);
  // Queues `job`, or runs it at once on the calling thread (see below); FailedPrecondition once
  // stopped.
  Status push(Job job);
  // The calling thread's shortcut for a job with plain tensor inputs and no semaphores: runs it
  // at once into `submission` (which no other thread holds yet) and returns true when push()
  // would have run it inline; false (nothing done) otherwise. Skips building the Job.
  bool runPlainInline(StandaloneContext& context, const std::vector<SubmitInput>& inputs,
                      Submission& submission);
  // Ends the threads once the jobs queued so far are done (called by ~StandaloneContext, when
  // none can be left, since each holds the context).
  void stop();
  // Output `index` of `submission` when it is an output of `context` whose work is still queued
  // on the device; null otherwise.
  static SharedTensor queuedOutput(const Submission& submission, size_t index,
                                   const StandaloneContext* context);

  // What an execution left to hand out once its device work is done.
  struct Outcome {
    Status status;
    std::vector<SharedTensor> late;  // per output: taken at the end, not yet handed out
    std::vector<bool> published;     // per output: handed out as it was sent (or empty: none)
    bool isPublished(size_t k) const { return k < published.size() && published[k]; }
  };

 private:
  struct Completion {
    Job job;
    Outcome outcome;
    uint64_t device_value = 0;             // 0: nothing to wait for (a failed execution)
    std::vector<SemaphoreValue> deferred;  // waits left to stream order, checked at the end
    // Earlier submissions whose queued outputs it bound: one that fails at its completion fails
    // this one too (its kernels read what the failed one left).
    std::vector<std::shared_ptr<Submission>> upstream;
  };

  SubmissionQueue() = default;
  void loop();
  // Whether `job` has nothing to wait for (its waits reached, its inputs bound at once).
  static bool readyNow(const Job& job);
  // Runs `job` and updates the estimate of the module's execution time (not every job: reading
  // the clock costs as much as a tiny execution).
  void runTimed(Job& job);
  // runTimed()'s clock around `run` and the estimate's update, with the job's input bytes.
  template <typename Run>
  void timed(uint64_t bytes, Run run);
  // Whether a job with `bytes` of inputs runs on the submitting thread (under mutex_).
  bool runsInline(uint64_t bytes) const;
  // The bytes of a job's inputs (those from earlier submissions only once these are done).
  static uint64_t inputBytes(const std::vector<SubmitInput>& inputs);
  void complete();  // the completion thread
  // Runs one job on the queue thread: its waits, the execution, then finish() (or, device
  // ordered, a completion for the other thread).
  void run(Job& job);
  // Hands out the outputs left, sets (or fails) the semaphores, finishes the submission.
  static void finish(Job& job, Outcome& outcome);
  // Device ordering: whether `job` can run without blocking the queue thread (its waits reached
  // or set by queued work, its inputs ready or bound at once).
  bool runsWithoutBlocking(const Job& job);
  // Signals device_done_ for the executions of group_ and hands them to the completion thread.
  void flushGroup();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::thread thread_;
  // Device ordering (null otherwise): a semaphore of the device's driver each execution's work
  // signals, and the completions waiting for it.
  std::shared_ptr<Semaphore> device_done_;
  uint64_t device_value_ = 0;  // queue thread only
  // Queue thread only: the highest value each semaphore is set to by work already queued on the
  // device. A later submission's wait for at most that value is met in stream order, so the
  // queue thread need not wait for it (the completion checks it did not fail).
  // Held weakly: a semaphore that went away is stale here (another may take its address).
  struct QueuedSignal {
    std::weak_ptr<Semaphore> semaphore;
    uint64_t value = 0;
  };
  std::unordered_map<const Semaphore*, QueuedSignal> queued_signals_;
  // Whether work queued on the device sets `w` (queue thread only).
  bool queuedSignalCovers(const SemaphoreValue& w);
  void recordQueuedSignal(const SemaphoreValue& s);
  std::deque<Completion> completions_;
  // Queue thread only: executions queued on the device since the last signal of device_done_.
  // Consecutive submissions share one signal (one batch of device work, where the driver
  // batches), up to kMaxGroup; the group is signalled when the queue runs dry, when it is full,
  // after a failure, and before a job that may block the thread.
  std::vector<Completion> group_;
  static constexpr size_t kMaxGroup = 16;
  std::condition_variable completion_cv_;
  std::thread completion_thread_;
  // Jobs pushed so far: an idle queue thread watches it for kSpin before it sleeps, since
  // submissions come in bursts and a wake-up costs microseconds (drivers/cpu/thread_pool.h does
  // the same).
  std::atomic<uint64_t> pushed_{0};
  static constexpr std::chrono::microseconds kSpin{50};
  // A job runs (on either thread) while set; guarded by mutex_. Keeps submission order when
  // jobs run on submitting threads.
  bool busy_ = false;
  bool inline_allowed_ = false;  // CPU modules (a device's work is asynchronous anyway)
  // The estimate of the module's execution time that decides which jobs run inline: written by
  // the thread holding busy_, read under mutex_ while busy_ is clear.
  int64_t average_ns_ = -1;   // moving average of timed executions (-1: none yet)
  uint64_t short_bytes_ = 0;  // the most input bytes of a timed execution under kInlineLimit
  uint32_t untimed_ = 0;      // jobs run since the last timed one
  static constexpr uint32_t kTimedEvery = 16;
  static constexpr std::chrono::microseconds kInlineLimit{20};
};

}  // namespace ral::standalone

#endif  // RAL_CONTEXTS_STANDALONE_SUBMISSION_QUEUE_H_
