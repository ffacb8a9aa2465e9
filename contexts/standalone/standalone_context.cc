#include "ral/standalone_context.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include "contexts/standalone/host_visible_driver.h"
#include "contexts/standalone/submission_queue.h"
#include "ral/gloo_communicator.h"
#include "ral/io_checks.h"
#include "ral/layout.h"
#include "ral/module_spec.h"

namespace ral::standalone {

const ContextType StandaloneExecutionContext::kType = {"standalone", &HostExecutionContext::kType};

// An output handed to the caller: owns its memory (through the context's driver, kept alive by
// `owner`) and the shape/stride arrays the DLTensor points to.
struct OwnedTensor {
  DLManagedTensor managed{};
  int64_t shape[kMaxMemRefRank] = {};
  int64_t strides[kMaxMemRefRank] = {};
  std::shared_ptr<StandaloneContext> owner;
  Driver* driver = nullptr;
  void* allocation = nullptr;
  OwnedTensor() = default;
  OwnedTensor(const OwnedTensor&) = delete;
  OwnedTensor& operator=(const OwnedTensor&) = delete;
  ~OwnedTensor() {
    if (allocation != nullptr) (void)driver->deallocate(allocation);
  }
};

namespace {

void deleteOwnedTensor(DLManagedTensor* t) { delete static_cast<OwnedTensor*>(t->manager_ctx); }

// The lowest and highest element offsets of a non-empty view from its first element; hi < lo
// when it is empty.
std::pair<int64_t, int64_t> spanOf(const HostTensor& t) {
  int64_t strides[kMaxMemRefRank];
  if (t.strides != nullptr)
    std::copy(t.strides, t.strides + t.rank, strides);
  else
    rowMajorStrides(t.shape, t.rank, strides);
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] == 0) return {0, -1};
    const int64_t reach = (t.shape[d] - 1) * strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi};
}

}  // namespace

// ---- StandaloneExecutionContext -------------------------------------------------------------

StandaloneExecutionContext::StandaloneExecutionContext(StandaloneContext* context)
    : HostExecutionContext(context, context->module(), &kType),
      standalone_(context),
      memory_(context->hostMemory()),
      input_copies_(context->module().inputs().size(), nullptr),
      outputs_(context->module().outputs().size()) {
  setAllocator(&memory_);
}

StandaloneExecutionContext::~StandaloneExecutionContext() {
  freeOutputs();
  for (size_t i = 0; i < input_copies_.size(); ++i) dropInputCopy(i);
}

void StandaloneExecutionContext::freeOutputs() {
  for (Output& o : outputs_) {
    if (o.allocation != nullptr) (void)memory_.deallocate(o.allocation);
    o = Output();
  }
}

void StandaloneExecutionContext::resetOutputs() {
  freeOutputs();
  releaseExecutionMemory();
}

void StandaloneExecutionContext::reset() {
  freeOutputs();
  sources_.clear();
  listener_ = nullptr;
  synchronize_at_end_ = true;
  HostExecutionContext::reset();
}

void StandaloneExecutionContext::bindInputLater(size_t index, InputSource source) {
  if (sources_.size() < input_copies_.size()) sources_.resize(input_copies_.size());
  sources_[index] = std::move(source);
  deferInput(index);
}

Status StandaloneExecutionContext::bindDeferredInput(size_t index) {
  if (index >= sources_.size() || !sources_[index])
    return HostExecutionContext::bindDeferredInput(index);
  RAL_ASSIGN_OR_RETURN(const DLTensor* t, sources_[index]());
  return bindInput(index, *t);
}

bool StandaloneExecutionContext::strictZeroCopy() const {
  return standalone_->options().strict_zero_copy;
}

DeviceMatch StandaloneExecutionContext::matchDevice(const HostTensor& t,
                                                    const TensorSignature& sig) const {
  // A device module's CPU inputs cross the boundary as copies into device memory (also where
  // the signature says cpu but the code calls the device), unless the device's kernels reach
  // them already (an earlier execution's output); other devices are refused.
  if (t.device == DeviceKind::kCpu && standalone_->device() != DeviceKind::kCpu) {
    if (t.base != nullptr && t.dtype != DType::kInvalid) {
      const auto [lo, hi] = spanOf(t);
      const size_t elem = dtypeSize(t.dtype);
      const char* first =
          static_cast<const char*>(t.base) + (t.offset + lo) * static_cast<int64_t>(elem);
      if (hi >= lo && standalone_->device_driver_->kernelsCanAccess(
                          first, static_cast<size_t>(hi - lo + 1) * elem))
        return DeviceMatch::kSame;
    }
    return DeviceMatch::kCopyAcross;
  }
  return HostExecutionContext::matchDevice(t, sig);
}

StatusOr<void*> StandaloneExecutionContext::copyInput(size_t index, const HostTensor& t,
                                                      const int64_t* strides, int64_t elements) {
  const TensorSignature& sig = module().inputs()[index];
  int64_t from[kMaxMemRefRank];
  if (t.strides != nullptr)
    std::copy(t.strides, t.strides + t.rank, from);
  else
    rowMajorStrides(t.shape, t.rank, from);
  if (t.device != DeviceKind::kCpu)
    return unsupported("input ", index, " (", describe(t), ") has strides ",
                       stridesString(from, t.rank), " but the module was compiled for layout ",
                       sig.layoutString(),
                       "; the standalone context re-lays out CPU inputs only: pass the tensor in "
                       "that layout");
  const size_t elem = dtypeSize(sig.dtype);
  auto copy = memory_.allocate(std::max<size_t>(static_cast<size_t>(elements) * elem, 1), 64);
  if (!copy.ok())
    return copy.status().withContext(internal::strCat("copying input ", index, " (", describe(t),
                                                      ") into layout ", sig.layoutString()));
  copyStrided(*copy, strides, static_cast<char*>(t.base) + t.offset * elem, from, t.shape, t.rank,
              elem);
  input_copies_[index] = *copy;
  return *copy;
}

void StandaloneExecutionContext::dropInputCopy(size_t index) {
  if (input_copies_[index] != nullptr) (void)memory_.deallocate(input_copies_[index]);
  input_copies_[index] = nullptr;
}

Status StandaloneExecutionContext::bindInput(size_t index, const TensorRef& ref) {
  HostTensor t;
  t.dtype = ref.dtype;
  t.rank = ref.rank;
  t.shape = ref.shape;
  t.strides = ref.strides;
  t.base = ref.data;
  t.device = ref.device;
  return HostExecutionContext::bindInput(index, t);
}

Status StandaloneExecutionContext::bindInput(size_t index, const DLTensor& t) {
  auto dtype = dtypeFromDLPack(t.dtype);
  if (!dtype.ok()) return dtype.status().withContext(internal::strCat("input ", index));
  auto device = deviceFromDLPack(t.device);
  if (!device.ok()) return device.status().withContext(internal::strCat("input ", index));
  if (t.ndim < 0) return invalidArgument("input ", index, " has negative ndim ", t.ndim);
  TensorRef ref;
  ref.data = t.data == nullptr ? nullptr : static_cast<char*>(t.data) + t.byte_offset;
  ref.dtype = *dtype;
  ref.rank = t.ndim;
  ref.shape = t.shape;
  ref.strides = t.strides;
  ref.device = *device;
  return bindInput(index, ref);
}

Status StandaloneExecutionContext::afterEntry() {
  // Kernels were queued; outputs (and freed buffers) are settled once the device caught up.
  Driver* device = standalone_->device_driver_;
  if (device == nullptr || !synchronize_at_end_) return Status();
  Status synced = device->synchronize();
  if (!synced.ok())
    return synced.withContext(internal::strCat("waiting for ", device->deviceName()));
  return Status();
}

Status StandaloneExecutionContext::acceptOutput(size_t index, const OutputBuffer& out) {
  Output& o = outputs_[index];
  const int rank = out.rank;
  if (out.allocation != nullptr) {
    // Memory this execution allocated: hand it over as it is (strides kept).
    o.allocation = out.allocation;
    o.data = out.data;
    std::copy(out.sizes, out.sizes + rank, o.sizes);
    std::copy(out.strides, out.strides + rank, o.strides);
  } else {
    // Memory RAL does not own here (an input, a constant, static data, an output already
    // sent): copy it into a dense buffer of its own. An input may be an earlier submission's
    // output whose kernels are still queued: the host copies once the device caught up.
    Driver* device = standalone_->device_driver_;
    if (device != nullptr && !synchronize_at_end_) {
      Status synced = device->synchronize();
      if (!synced.ok())
        return synced.withContext(internal::strCat("waiting for ", device->deviceName(),
                                                   " before copying output ", index));
    }
    const size_t elem = dtypeSize(out.dtype);
    const int64_t numel = io_checks::numelOf(out.sizes, rank);  // valid: checked by the core
    auto copy = memory_.allocate(std::max<size_t>(static_cast<size_t>(numel) * elem, 1), 64);
    if (!copy.ok())
      return copy.status().withContext(internal::strCat("ral_send_output: copying output ", index));
    std::copy(out.sizes, out.sizes + rank, o.sizes);
    rowMajorStrides(o.sizes, rank, o.strides);
    if (numel > 0) copyStrided(*copy, o.strides, out.data, out.strides, out.sizes, rank, elem);
    o.allocation = *copy;
    o.data = *copy;
  }
  o.set = true;
  if (!listener_) return Status();
  // The output is final once the device caught up with the work queued so far.
  if (Driver* device = standalone_->device_driver_) {
    Status synced = device->synchronize();
    if (!synced.ok())
      return synced.withContext(internal::strCat("waiting for ", device->deviceName(),
                                                 " before handing out output ", index));
  }
  return listener_(index);
}

StatusOr<DLManagedTensor*> StandaloneExecutionContext::takeOutput(size_t index) {
  if (!succeeded()) return failedPrecondition("no outputs: the execution has not run successfully");
  return takeSentOutput(index);
}

Status StandaloneExecutionContext::handOut(size_t index, OwnedTensor& owned) {
  if (index >= outputs_.size())
    return outOfRange("output index ", index, " is out of range: module '", module().name(),
                      "' has ", outputs_.size(), " output(s)");
  Output& o = outputs_[index];
  if (!o.set) return failedPrecondition("output ", index, " was already taken");
  const TensorSignature& sig = module().outputs()[index];
  owned.owner = standalone_->shared_from_this();
  owned.driver = standalone_->hostDriver();
  owned.allocation = o.allocation;
  const int rank = sig.rank();
  std::memcpy(owned.shape, o.sizes, sizeof(int64_t) * rank);
  std::memcpy(owned.strides, o.strides, sizeof(int64_t) * rank);
  DLTensor& t = owned.managed.dl_tensor;
  t.data = o.data;
  t.device = deviceToDLPack(DeviceKind::kCpu);
  t.ndim = rank;
  t.dtype = dtypeToDLPack(sig.dtype);
  t.shape = rank > 0 ? owned.shape : nullptr;
  t.strides = rank > 0 ? owned.strides : nullptr;
  t.byte_offset = 0;
  o = Output();  // taken: the tensor owns the memory now
  return Status();
}

StatusOr<DLManagedTensor*> StandaloneExecutionContext::takeSentOutput(size_t index) {
  std::unique_ptr<OwnedTensor> owned(new (std::nothrow) OwnedTensor());
  if (owned == nullptr) return outOfMemory("allocating an output tensor");
  RAL_RETURN_IF_ERROR(handOut(index, *owned));
  owned->managed.manager_ctx = owned.get();
  owned->managed.deleter = &deleteOwnedTensor;
  return &owned.release()->managed;
}

StatusOr<std::shared_ptr<DLManagedTensor>> StandaloneExecutionContext::takeSharedOutput(
    size_t index) {
  if (!succeeded()) return failedPrecondition("no outputs: the execution has not run successfully");
  return takeSharedSentOutput(index);
}

StatusOr<std::shared_ptr<DLManagedTensor>> StandaloneExecutionContext::takeSharedSentOutput(
    size_t index) {
  std::shared_ptr<OwnedTensor> owned;
  try {
    owned = std::make_shared<OwnedTensor>();
  } catch (const std::bad_alloc&) {
    return outOfMemory("allocating an output tensor");
  }
  RAL_RETURN_IF_ERROR(handOut(index, *owned));
  return std::shared_ptr<DLManagedTensor>(owned, &owned->managed);
}

// ---- StandaloneContext ----------------------------------------------------------------------

StandaloneContext::StandaloneContext(std::shared_ptr<Module> module, const Registry* registry)
    : Context(&StandaloneExecutionContext::kType, registry), module_(std::move(module)) {}

StatusOr<std::shared_ptr<StandaloneContext>> StandaloneContext::create(
    std::shared_ptr<Module> module) {
  return create(std::move(module), Options());
}

StatusOr<std::shared_ptr<StandaloneContext>> StandaloneContext::create(
    std::shared_ptr<Module> module, Options options) {
  if (module == nullptr) return invalidArgument("no module given");
  if (!module->hostLibraryLoaded())
    return failedPrecondition("module '", module->name(),
                              "' was loaded without its host library and cannot run");
  RAL_ASSIGN_OR_RETURN(DeviceKind device, moduleDevice(*module));
  const Registry* registry = options.registry ? options.registry : &Registry::global();
  std::shared_ptr<StandaloneContext> ctx(new StandaloneContext(module, registry));
  ctx->options_.registry = registry;
  ctx->options_.strict_zero_copy = options.strict_zero_copy;
  ctx->device_ = device;
  if (!options.cpu_driver_factory && device != DeviceKind::kCpu)
    options.cpu_driver_factory = hostVisibleCpuDriverFactory(device);
  if (options.cpu_driver_factory)
    RAL_RETURN_IF_ERROR(
        ctx->setDriverFactory(DeviceKind::kCpu, std::move(options.cpu_driver_factory)));
  RAL_RETURN_IF_ERROR(module->link(*ctx));
  RAL_RETURN_IF_ERROR(ctx->setModule(module));
  if (!options.device.empty()) {
    RAL_RETURN_IF_ERROR(ctx->selectDevice(options.device));
    ctx->options_.device = options.device;
  }
  if (device != DeviceKind::kCpu) {
    // Now rather than at the first run: a missing device runtime is a load error.
    auto d = ctx->driver(device);
    if (!d.ok())
      return d.status().withContext(
          internal::strCat("module '", module->name(), "' runs on ", deviceKindName(device)));
    ctx->device_driver_ = *d;
  }
  // Collectives: the communicator given, else this process's rank from its environment, made
  // when a module first calls one (ral/gloo_communicator.h).
  if (options.communicator) {
    ctx->setCommunicator(options.communicator);
    ctx->options_.communicator = std::move(options.communicator);
  } else {
    ctx->setCommunicatorFactory([] { return communicatorFromEnvironment(); });
  }
  auto driver = ctx->driver(DeviceKind::kCpu);
  if (!driver.ok()) return driver.status().withContext("the standalone context needs a CPU driver");
  ctx->host_driver_ = *driver;
  ctx->host_memory_ = std::make_unique<DriverBufferAllocator>(*driver);
  return ctx;
}

StatusOr<std::shared_ptr<StandaloneContext>> StandaloneContext::load(const std::string& path) {
  return load(path, Options());
}

StatusOr<std::shared_ptr<StandaloneContext>> StandaloneContext::load(const std::string& path,
                                                                     Options options) {
  RAL_ASSIGN_OR_RETURN(std::shared_ptr<Module> module, Module::load(path));
  return create(std::move(module), std::move(options));
}

std::unique_ptr<ExecutionContext> StandaloneContext::newExecutionContext() {
  return std::make_unique<StandaloneExecutionContext>(this);
}

StandaloneContext::~StandaloneContext() {
  if (queue_) queue_->stop();
}

StatusOr<std::shared_ptr<Submission>> StandaloneContext::submit(
    std::vector<SubmitInput> inputs, std::vector<SemaphoreValue> waits,
    std::vector<SemaphoreValue> signals, std::vector<SemaphoreValue> output_signals) {
  if (inputs.size() != module_->inputs().size())
    return invalidArgument("module '", module_->name(), "' takes ", module_->inputs().size(),
                           " input(s), got ", inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].tensor == nullptr && inputs[i].from == nullptr)
      return invalidArgument("input ", i, " is null");
  for (size_t k = 0; k < waits.size(); ++k)
    if (waits[k].semaphore == nullptr) return invalidArgument("wait semaphore ", k, " is null");
  for (size_t k = 0; k < signals.size(); ++k)
    if (signals[k].semaphore == nullptr) return invalidArgument("signal semaphore ", k, " is null");
  if (!output_signals.empty() && output_signals.size() != module_->outputs().size())
    return invalidArgument("module '", module_->name(), "' has ", module_->outputs().size(),
                           " output(s), got ", output_signals.size(), " output semaphores");
  SubmissionQueue* queue = started_queue_.load(std::memory_order_acquire);
  if (queue == nullptr) {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    if (!queue_) {
      auto started = SubmissionQueue::start(*this);
      if (!started.ok()) return started.status().withContext("starting the submission queue");
      queue_ = std::move(*started);
      started_queue_.store(queue_.get(), std::memory_order_release);
    }
    queue = queue_.get();
  }
  auto submission = std::make_shared<Submission>();
  if (waits.empty() && signals.empty() && output_signals.empty() &&
      queue->runPlainInline(*this, inputs, *submission))
    return submission;
  RAL_RETURN_IF_ERROR(
      queue->push(SubmissionQueue::Job{shared_from_this(), std::move(inputs), std::move(waits),
                                       std::move(signals), std::move(output_signals), submission}));
  return submission;
}

StatusOr<std::shared_ptr<Semaphore>> StandaloneContext::createSemaphore(uint64_t initial_value) {
  return host_driver_->createSemaphore(initial_value);
}

StatusOr<std::vector<DLTensorPtr>> StandaloneContext::run(
    const std::vector<const DLTensor*>& inputs) {
  if (inputs.size() != module_->inputs().size())
    return invalidArgument("module '", module_->name(), "' takes ", module_->inputs().size(),
                           " input(s), got ", inputs.size());
  Execution exec = newExecution();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr) return invalidArgument("input ", i, " is null");
    RAL_RETURN_IF_ERROR(exec.bindInput(i, *inputs[i]));
  }
  RAL_RETURN_IF_ERROR(exec.run());
  std::vector<DLTensorPtr> outputs;
  outputs.reserve(module_->outputs().size());
  for (size_t i = 0; i < module_->outputs().size(); ++i) {
    RAL_ASSIGN_OR_RETURN(DLManagedTensor * t, exec.takeOutput(i));
    outputs.emplace_back(t);
  }
  return outputs;
}

}  // namespace ral::standalone
