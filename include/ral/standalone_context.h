// The standalone host context: runs a loaded Module on RAL's own drivers, with
// inputs bound from DLPack tensors or raw buffers and outputs returned as owned DLPack tensors.
//
//   auto ctx = StandaloneContext::load("add.ralm");            // StatusOr<shared_ptr<...>>
//   auto outputs = (*ctx)->run({&a.dl_tensor, &b.dl_tensor});  // StatusOr<vector<DLTensorPtr>>
//
// One StandaloneContext serves many threads at once; each execution borrows a pooled
// StandaloneExecutionContext. The host protocol (bindings, checks, ral_alloc, outputs) is the
// core's (ral/host_execution_context.h); this context supplies DLPack tensors and driver memory.
//
// A module compiled for a device (ral-compile --device=vulkan) takes and returns CPU tensors too:
// the context copies inputs into device memory and waits for the device before run() returns.
//
// ral_alloc memory comes from the context's CPU driver and belongs to the execution: a buffer
// passed to ral_send_output becomes the output tensor without a copy (a later ral_dealloc of it
// is then a no-op); any other output (one that aliases an input, a constant, static data) is
// copied. Memory the module does not free is released when the execution ends.
#ifndef RAL_STANDALONE_CONTEXT_H_
#define RAL_STANDALONE_CONTEXT_H_

#include <dlpack/dlpack.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ral/context.h"
#include "ral/dlpack_util.h"
#include "ral/driver.h"
#include "ral/dtype.h"
#include "ral/execution_context.h"
#include "ral/host_execution_context.h"
#include "ral/memref.h"
#include "ral/module.h"
#include "ral/status.h"
#include "ral/submission.h"

namespace ral::standalone {

class StandaloneContext;
class SubmissionQueue;
struct OwnedTensor;  // an output handed out (standalone_context.cc)

// A borrowed view of a host buffer: `strides` in elements (null: dense row-major).
struct TensorRef {
  void* data = nullptr;
  DType dtype = DType::kInvalid;
  int rank = 0;
  const int64_t* shape = nullptr;
  const int64_t* strides = nullptr;
  DeviceKind device = DeviceKind::kCpu;
};

class StandaloneExecutionContext : public HostExecutionContext {
 public:
  static const ContextType kType;  // "standalone", derived from HostExecutionContext::kType

  explicit StandaloneExecutionContext(StandaloneContext* context);
  ~StandaloneExecutionContext() override;

  StandaloneContext* standalone() const { return standalone_; }

  // Checks `ref` against the module's signature for input `index` and binds it: borrowed when
  // the module's layout accepts its strides, else copied into that layout (or refused, with
  // Options::strict_zero_copy). Rebinding an input replaces its earlier binding.
  Status bindInput(size_t index, const TensorRef& ref);
  Status bindInput(size_t index, const DLTensor& tensor);
  // Runs the module's entry once; all inputs must be bound. At most once per borrowing.
  Status run() { return execute(); }
  // The output as an owned DLPack tensor (the caller calls its deleter). Once per output.
  StatusOr<DLManagedTensor*> takeOutput(size_t index);
  // Partial execution (StandaloneContext::submit uses these). Input `index` is bound from what
  // `source` returns when the module first receives it; `source` may wait for the input to be
  // ready, and the tensor must live until the execution ends.
  using InputSource = std::function<StatusOr<const DLTensor*>()>;
  void bindInputLater(size_t index, InputSource source);
  // `listener(index)` runs when the module sends output `index` (for a device module, after the
  // device finished what was queued so far), on the entry's thread; it may take the output with
  // takeSentOutput(). Its error fails the execution.
  void setOutputListener(std::function<Status(size_t)> listener) {
    listener_ = std::move(listener);
  }
  // Output `index` once sent, even before the run ended (from the listener). Once per output.
  StatusOr<DLManagedTensor*> takeSentOutput(size_t index);
  // takeOutput() and takeSentOutput() as a shared tensor, its memory freed with the last
  // reference (one allocation, not a DLManagedTensor plus a shared_ptr's control block). Its
  // `deleter` is null: the references own it.
  StatusOr<std::shared_ptr<DLManagedTensor>> takeSharedOutput(size_t index);
  StatusOr<std::shared_ptr<DLManagedTensor>> takeSharedSentOutput(size_t index);
  // For a device module: whether run() waits for the device before it returns (the default).
  // Without, outputs are final only once the device finished the work queued so far (the
  // submission queue orders that on the device).
  void setSynchronizeAtEnd(bool synchronize) { synchronize_at_end_ = synchronize; }
  // Drops outputs not taken and the error state, keeping the input bindings, so run() can be
  // called again on the same inputs.
  void resetOutputs();
  void reset() override;

 protected:
  bool strictZeroCopy() const override;
  DeviceMatch matchDevice(const HostTensor& t, const TensorSignature& sig) const override;
  StatusOr<void*> copyInput(size_t index, const HostTensor& t, const int64_t* strides,
                            int64_t elements) override;
  void dropInputCopy(size_t index) override;
  Status acceptOutput(size_t index, const OutputBuffer& out) override;
  Status afterEntry() override;
  Status bindDeferredInput(size_t index) override;

 private:
  struct Output {
    void* data = nullptr;        // first element
    void* allocation = nullptr;  // what to free (owned by this execution until taken)
    int64_t sizes[kMaxMemRefRank] = {};
    int64_t strides[kMaxMemRefRank] = {};
    bool set = false;
  };
  void freeOutputs();
  // Moves output `index` (sent, not yet taken) into `owned`.
  Status handOut(size_t index, OwnedTensor& owned);

  StandaloneContext* standalone_;
  BufferAllocator& memory_;          // the context's hostMemory()
  std::vector<void*> input_copies_;  // per input: its copy (owned) or null
  std::vector<Output> outputs_;
  std::vector<InputSource> sources_;  // per input, for bindInputLater()
  std::function<Status(size_t)> listener_;
  bool synchronize_at_end_ = true;
};

// One execution: binds, runs, hands out outputs; returns its context to the pool when destroyed.
class Execution {
 public:
  explicit Execution(ExecutionHandle handle) : handle_(std::move(handle)) {}
  Status bindInput(size_t index, const TensorRef& ref) { return ctx()->bindInput(index, ref); }
  Status bindInput(size_t index, const DLTensor& t) { return ctx()->bindInput(index, t); }
  Status run() { return ctx()->run(); }
  StatusOr<DLManagedTensor*> takeOutput(size_t index) { return ctx()->takeOutput(index); }
  StatusOr<std::shared_ptr<DLManagedTensor>> takeSharedOutput(size_t index) {
    return ctx()->takeSharedOutput(index);
  }
  void resetOutputs() { ctx()->resetOutputs(); }
  StandaloneExecutionContext* ctx() const {
    return static_cast<StandaloneExecutionContext*>(handle_.get());
  }

 private:
  ExecutionHandle handle_;
};

class StandaloneContext : public Context, public std::enable_shared_from_this<StandaloneContext> {
 public:
  struct Options {
    // Creates the CPU driver instead of the one built into libral (e.g. a host's allocator).
    DriverFactory cpu_driver_factory;
    const Registry* registry = &Registry::global();
    // Inputs whose strides the module's layout does not accept are copied into that layout
    // (ral/layout.h); with this set they are refused instead, with an error naming the input.
    bool strict_zero_copy = false;
    // The device to run on, as a device URI (ral/device_uri.h: "vulkan:1", "hsa://GPU-..."): of
    // the kind the module was compiled for. Empty: that kind's default device.
    std::string device;
    // The communicator of the module's collectives (ral/communicator.h). Null: one from this
    // process's environment (communicatorFromEnvironment in ral/gloo_communicator.h), made when
    // the module first calls a collective.
    std::shared_ptr<Communicator> communicator;
  };

  // Links `module` (resolves its imports for standalone executions) and creates the CPU driver.
  static StatusOr<std::shared_ptr<StandaloneContext>> create(std::shared_ptr<Module> module,
                                                             Options options);
  static StatusOr<std::shared_ptr<StandaloneContext>> create(std::shared_ptr<Module> module);
  static StatusOr<std::shared_ptr<StandaloneContext>> load(const std::string& path,
                                                           Options options);
  static StatusOr<std::shared_ptr<StandaloneContext>> load(const std::string& path);

  const Module& module() const { return *module_; }
  const Options& options() const { return options_; }
  // The driver that ral_alloc and outputs use, and its memory as a BufferAllocator.
  Driver* hostDriver() const { return host_driver_; }
  BufferAllocator& hostMemory() const { return *host_memory_; }
  // Where the module's code runs (moduleDevice()): kCpu, or a device whose kernels the module
  // launches. For a device, buffers come from its host-visible memory (unless
  // Options::cpu_driver_factory says otherwise), CPU inputs are copied in at binding, and run()
  // returns once the device finished, so outputs are ordinary CPU tensors.
  DeviceKind device() const { return device_; }
  // The driver of device() (null for kCpu).
  Driver* deviceDriver() const { return device_driver_; }

  Execution newExecution() { return Execution(acquireExecution()); }
  // Binds inputs (borrowed; inputs.size() must match the module), runs, returns every output.
  StatusOr<std::vector<DLTensorPtr>> run(const std::vector<const DLTensor*>& inputs);

  // Queues one execution and returns at once (ral/submission.h): it starts once every wait
  // semaphore reached its value and the submissions it takes outputs from are done, and sets
  // each signal semaphore to its value when its outputs are ready, or fails them with its error.
  // Errors found here (input count, null tensors or semaphores) are returned and queue nothing;
  // every other error (a wrong input, a failed wait, the execution's) arrives through the
  // submission and its signal semaphores.
  // `output_signals`: empty, or one point per output (a null semaphore: none), set when that
  // output is ready.
  StatusOr<std::shared_ptr<Submission>> submit(std::vector<SubmitInput> inputs,
                                               std::vector<SemaphoreValue> waits = {},
                                               std::vector<SemaphoreValue> signals = {},
                                               std::vector<SemaphoreValue> output_signals = {});
  // A timeline semaphore for submit()'s waits and signals (a host semaphore of the CPU driver;
  // any driver's semaphore works, since waits happen on the host).
  StatusOr<std::shared_ptr<Semaphore>> createSemaphore(uint64_t initial_value = 0);

  ~StandaloneContext() override;

 protected:
  std::unique_ptr<ExecutionContext> newExecutionContext() override;

 private:
  friend class StandaloneExecutionContext;
  explicit StandaloneContext(std::shared_ptr<Module> module, const Registry* registry);

  std::shared_ptr<Module> module_;
  Options options_;
  Driver* host_driver_ = nullptr;
  std::unique_ptr<DriverBufferAllocator> host_memory_;
  DeviceKind device_ = DeviceKind::kCpu;
  Driver* device_driver_ = nullptr;  // the device's driver; null for kCpu
  std::mutex queue_mutex_;
  std::shared_ptr<SubmissionQueue> queue_;  // started by the first submit()
  // queue_ once started, read without the lock (it lives as long as this context).
  std::atomic<SubmissionQueue*> started_queue_{nullptr};
};

}  // namespace ral::standalone

#endif  // RAL_STANDALONE_CONTEXT_H_
