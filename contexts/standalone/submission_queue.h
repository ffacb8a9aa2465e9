// The submission queue of a StandaloneContext (ral/submission.h has the contract): one thread,
// started at the first submit, that runs the context's submissions in order. A queued job holds
// its context, so the context (and this queue) lives until its jobs are done; the context's
// destructor stops the thread (joins it, or detaches it when the last reference went away on
// that thread itself). Thread-safe.
#ifndef RAL_CONTEXTS_STANDALONE_SUBMISSION_QUEUE_H_
#define RAL_CONTEXTS_STANDALONE_SUBMISSION_QUEUE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

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

  static std::shared_ptr<SubmissionQueue> start();
  // Hands output `index` of `submission` to its waiters (before the output's semaphore is set).
  static void publish(Submission& submission, size_t index, SharedTensor output);
  // Queues `job`; FailedPrecondition once stopped.
  Status push(Job job);
  // Ends the thread once the jobs queued so far are done (called by ~StandaloneContext, when
  // none can be left, since each holds the context).
  void stop();

 private:
  SubmissionQueue() = default;
  void loop();
  // Runs one job on the calling thread: its waits, the execution, its signals (or their
  // failure), then finishes its submission.
  static void run(Job& job);

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::thread thread_;
  // Jobs pushed so far: an idle queue thread watches it for kSpin before it sleeps, since
  // submissions come in bursts and a wake-up costs microseconds (drivers/cpu/thread_pool.h does
  // the same).
  std::atomic<uint64_t> pushed_{0};
  static constexpr std::chrono::microseconds kSpin{50};
};

}  // namespace ral::standalone

#endif  // RAL_CONTEXTS_STANDALONE_SUBMISSION_QUEUE_H_
