// Asynchronous executions of a StandaloneContext (StandaloneContext::submit).
//
//   auto a = ctx_a->submit({&x}, /*waits=*/{}, /*signals=*/{{sem, 1}});  // returns at once
//   auto b = ctx_b->submit({SubmitInput(*a, 0)}, {{sem, 1}}, {{sem, 2}});  // a's output 0
//   sem->wait(2);                                   // or (*b)->wait()
//   auto outputs = (*b)->outputs();                 // StatusOr<vector<SharedTensor>>
//
// A submission waits for its wait semaphores to reach their values, then runs the module's entry
// once, then sets each signal semaphore to its value, once its outputs are ready. Partial
// execution: inputs may be bound only when the module receives them (SubmitInput), and each
// output may have a semaphore of its own, set as soon as the module sent that output (the
// compiler sends each output right after it is final), so a consumer can start on output 0 while
// output 1 is still being computed. A failure (of a wait semaphore, of an earlier submission it
// takes outputs from, of its own execution) fails every signal semaphore and the submission with
// that status, so the first error of a chain reaches whoever waits at its end; nothing is thrown
// and nothing blocks the submitting thread.
//
// Where the work runs: each context has one submission queue, a thread of its own that runs the
// context's submissions one after another in submission order, like work on one device queue
// (submissions from many threads are serialized there; run() from several threads executes
// concurrently). A submission of a CPU module whose recent executions took under 20 us (with
// inputs as large as its own), with nothing to wait for and nothing queued before it, runs at
// once on the submitting thread instead (handing it over would cost more than running it; it is
// done when submit returns).
// Waits for semaphores are host waits on that thread. A module compiled for
// Vulkan or CUDA has its executions queued on the device without a host wait between them: the
// queue thread queues one execution's work and a device semaphore signal and goes on with the
// next (which binds the earlier one's outputs at once, its work running behind theirs, and skips
// waits that queued work sets), and a second thread waits for the device, then hands out the
// outputs and sets the semaphores, in order. For HSA modules the queue thread waits for the
// device at the end of each execution (the HSA driver returns freed memory to its pool at once,
// so an execution's temporaries must not outlive its kernels' completion).
// A submission that waits for a semaphore only a later submission of the same context signals
// never starts (as with one device stream); one whose semaphore is never signaled stays pending,
// and keeps its context alive, until the semaphore is signaled or failed.
//
// Lifetimes: tensors given as inputs are borrowed until the submission is done (their data and
// their shape and strides arrays); the context lives until its pending submissions are done, so a
// context handle may be dropped with submissions in flight. Outputs are shared: outputs() may be
// called any number of times, from any thread, and the tensors outlive the submission and the
// context. Every member is thread-safe.
#ifndef RAL_SUBMISSION_H_
#define RAL_SUBMISSION_H_

#include <dlpack/dlpack.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ral/driver.h"
#include "ral/status.h"

namespace ral::standalone {

// A point on a timeline semaphore: reached once the semaphore's value is >= value.
struct SemaphoreValue {
  std::shared_ptr<Semaphore> semaphore;
  uint64_t value = 0;
};

// An output tensor shared by whoever holds it (its memory is released with the last holder; its
// DLManagedTensor deleter is null, the references own it).
using SharedTensor = std::shared_ptr<DLManagedTensor>;

class Submission;

// An input of submit(): a tensor the caller owns, or output `index` of an earlier submission.
// Partial execution: an input with a `ready` point, or from an earlier submission, is bound only
// when the module first receives it (the compiler receives each input right before its first
// use), once `ready` is reached or that output is ready; the module runs until then. A failed
// `ready` semaphore, or an earlier submission that failed before that output was ready, fails
// this submission.
struct SubmitInput {
  SubmitInput(const DLTensor* t) : tensor(t) {}   // NOLINT(google-explicit-constructor)
  SubmitInput(const DLTensor& t) : tensor(&t) {}  // NOLINT(google-explicit-constructor)
  SubmitInput(const DLTensor* t, SemaphoreValue ready_at) : tensor(t), ready(std::move(ready_at)) {}
  SubmitInput(std::shared_ptr<Submission> submission, size_t output)
      : from(std::move(submission)), index(output) {}

  const DLTensor* tensor = nullptr;
  SemaphoreValue ready;  // null semaphore: ready at submission
  std::shared_ptr<Submission> from;
  size_t index = 0;
};

// One submitted execution: its completion, status and outputs.
class Submission {
 public:
  // Not value-initialized (make_shared<Submission>() would zero the whole object first).
  Submission() {}  // NOLINT(modernize-use-equals-default)
  // Blocks until the execution is done and returns its status, or returns DeadlineExceeded when
  // `timeout` passes first (the execution goes on).
  Status wait(Timeout timeout = kInfiniteTimeout) const;
  // Whether it is done (without waiting).
  bool done() const;
  // Waits until done; the outputs, in the module's order, or the execution's error.
  StatusOr<std::vector<SharedTensor>> outputs() const;
  // Waits until output `index` is ready (the module sent it: partial execution) or the
  // submission is done; that output, or the error that came first. An output handed out stays
  // valid if the execution fails later.
  StatusOr<SharedTensor> output(size_t index) const;

 private:
  friend class SubmissionQueue;
  void publish(size_t index, SharedTensor output);  // before its signals
  void publishAll(std::vector<SharedTensor>&& outputs);  // every output at once
  // Done with `status`; with `outputs`, every output is handed out at the same time.
  void finish(Status status, std::vector<SharedTensor>* outputs = nullptr);
  // finish() for a submission no other thread can reach yet (run on the submitting thread before
  // submit() returns it): no lock, no waiter to wake.
  void finishUnshared(Status status, std::vector<SharedTensor>&& outputs);
  // Outputs whose work is queued on `owner`'s device (SubmissionQueue): visible to that
  // context's later submissions only, until the work is done.
  void setQueued(size_t index, SharedTensor output, const void* owner);
  void clearQueued();
  SharedTensor queued(size_t index, const void* owner) const;

  mutable std::mutex mutex_;
  mutable std::condition_variable done_cv_;
  std::atomic<bool> done_{false};  // set under mutex_, read without it
  Status status_;                  // set before done_, then never again
  std::vector<SharedTensor> outputs_;  // published so far (null: not yet)
  std::vector<SharedTensor> queued_;
  const void* queued_owner_ = nullptr;
};

}  // namespace ral::standalone

#endif  // RAL_SUBMISSION_H_
