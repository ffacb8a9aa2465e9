#include "contexts/standalone/standalone_context.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include "contexts/standalone/host_visible_driver.h"
#include "ral/io_checks.h"
#include "ral/layout.h"
#include "ral/module_spec.h"

namespace ral::standalone {

const ContextType StandaloneExecutionContext::kType = {"standalone", &ExecutionContext::kType};

namespace {

// An output handed to the caller: owns its memory (through the context's driver, kept alive by
// `owner`) and the shape/stride arrays the DLTensor points to.
struct OwnedTensor {
  DLManagedTensor managed{};
  int64_t shape[kMaxMemRefRank] = {};
  int64_t strides[kMaxMemRefRank] = {};
  std::shared_ptr<StandaloneContext> owner;
  Driver* driver = nullptr;
  void* allocation = nullptr;
};

void deleteOwnedTensor(DLManagedTensor* t) {
  auto* owned = static_cast<OwnedTensor*>(t->manager_ctx);
  if (owned->allocation != nullptr) (void)owned->driver->deallocate(owned->allocation);
  delete owned;
}

std::string describe(DType dtype, const int64_t* sizes, int rank) {
  return shapeString(dtype, sizes, rank);
}

}  // namespace

// ---- StandaloneExecutionContext -------------------------------------------------------------

StandaloneExecutionContext::StandaloneExecutionContext(StandaloneContext* context)
    : ExecutionContext(context, &kType),
      standalone_(context),
      driver_(context->hostDriver()),
      inputs_(context->module().inputs().size()),
      outputs_(context->module().outputs().size()) {
  live_.reserve(8);
  exported_.reserve(outputs_.size());
}

StandaloneExecutionContext::~StandaloneExecutionContext() {
  freeMemory();
  for (Binding& b : inputs_) freeInputCopy(b);
}

void StandaloneExecutionContext::freeInputCopy(Binding& b) {
  if (b.copy != nullptr) (void)driver_->deallocate(b.copy);
  b.copy = nullptr;
}

void StandaloneExecutionContext::freeMemory() {
  for (void* p : live_) (void)driver_->deallocate(p);
  live_.clear();
  exported_.clear();
  for (Output& o : outputs_) {
    if (o.allocation != nullptr) (void)driver_->deallocate(o.allocation);
    o = Output();
  }
  ran_ = false;
}

void StandaloneExecutionContext::resetOutputs() {
  freeMemory();
  ExecutionContext::reset();
}

void StandaloneExecutionContext::reset() {
  freeMemory();
  for (Binding& b : inputs_) {
    freeInputCopy(b);
    b.bound = false;
  }
  ExecutionContext::reset();
}

Status StandaloneExecutionContext::bindInput(size_t index, const TensorRef& ref) {
  const Module& module = standalone_->module();
  if (index >= inputs_.size())
    return outOfRange("input index ", index, " is out of range: module '", module.name(),
                      "' takes ", inputs_.size(), " input(s)");
  const TensorSignature& sig = module.inputs()[index];
  if (ref.rank < 0 || ref.rank > kMaxMemRefRank)
    return invalidArgument("input ", index, " has rank ", ref.rank, "; at most ", kMaxMemRefRank,
                           " is supported");
  if (ref.rank > 0 && ref.shape == nullptr)
    return invalidArgument("input ", index, " has rank ", ref.rank, " but no shape");
  const int64_t numel = io_checks::numelOf(ref.shape, ref.rank);
  if (numel < 0)
    return invalidArgument("input ", index, " has an invalid shape (negative or too large)");
  const std::string got = describe(ref.dtype, ref.shape, ref.rank);
  if (ref.dtype != sig.dtype)
    return invalidArgument("input ", index, ": expected element type ", dtypeName(sig.dtype), " (",
                           sig.typeString(), "), got ", dtypeName(ref.dtype), " (", got, ")");
  if (ref.rank != sig.rank())
    return invalidArgument("input ", index, ": expected rank ", sig.rank(), " (", sig.typeString(),
                           "), got rank ", ref.rank, " (", got, ")");
  for (int d = 0; d < ref.rank; ++d)
    if (sig.dims[d] != kDynamicDim && sig.dims[d] != ref.shape[d])
      return invalidArgument("input ", index, ": dimension ", d, " must be ", sig.dims[d], " (",
                             sig.typeString(), "), got ", ref.shape[d], " (", got, ")");
  // A device module's CPU inputs cross the boundary as copies into device memory (also where
  // the signature says cpu but the code calls the device); other devices are refused.
  const bool to_device =
      ref.device == DeviceKind::kCpu && standalone_->device() != DeviceKind::kCpu;
  if (ref.device != sig.device && !to_device)
    return invalidArgument("input ", index, ": expected a tensor on ", deviceKindName(sig.device),
                           ", got one on ", deviceKindName(ref.device));
  if (ref.data == nullptr && numel > 0)
    return invalidArgument("input ", index, " (", got, ") has null data");
  int64_t strides[kMaxMemRefRank];
  if (ref.strides != nullptr)
    std::copy(ref.strides, ref.strides + ref.rank, strides);
  else
    rowMajorStrides(ref.shape, ref.rank, strides);
  InputBinding how = InputBinding::kCopy;
  if (!to_device) {
    RAL_ASSIGN_OR_RETURN(how, chooseInputBinding(sig, index, ref.shape, strides, ref.rank,
                                                 standalone_->options().strict_zero_copy));
  }
  Binding& b = inputs_[index];
  freeInputCopy(b);
  b.bound = false;
  b.data = ref.data;
  std::copy(ref.shape, ref.shape + ref.rank, b.sizes);
  std::copy(strides, strides + ref.rank, b.strides);
  if (how == InputBinding::kCopy) {
    // A view the compiled code would misread: bind a copy in the module's layout instead.
    if (ref.device != DeviceKind::kCpu)
      return unsupported("input ", index, " (", got, " on ", deviceKindName(ref.device),
                         ") has strides ", stridesString(strides, ref.rank),
                         " but the module was compiled for layout ", sig.layoutString(),
                         "; the standalone context re-lays out CPU inputs only: pass the tensor "
                         "in that layout");
    auto elements = layoutFor(sig, ref.shape, ref.rank, b.strides);
    if (!elements.ok()) return elements.status().withContext(internal::strCat("input ", index));
    const size_t elem = dtypeSize(sig.dtype);
    auto copy = driver_->allocate(std::max<size_t>(static_cast<size_t>(*elements) * elem, 1), 64);
    if (!copy.ok())
      return copy.status().withContext(internal::strCat("copying input ", index, " (", got,
                                                        ") into layout ", sig.layoutString()));
    copyStrided(*copy, b.strides, ref.data, strides, ref.shape, ref.rank, elem);
    b.copy = *copy;
    b.data = *copy;
  }
  b.bound = true;
  return Status();
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

Status StandaloneExecutionContext::run() {
  const Module& module = standalone_->module();
  if (ran_) return failedPrecondition("this execution already ran; start a new one");
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (!inputs_[i].bound)
      return invalidArgument("input ", i, " (", module.inputs()[i].typeString(),
                             ") is not bound; module '", module.name(), "' takes ", inputs_.size(),
                             " input(s)");
  ran_ = true;
  module.entry()(abi());
  // Kernels were queued; outputs (and freed buffers) are settled once the device caught up.
  if (Driver* device = standalone_->device_driver_) {
    Status synced = device->synchronize();
    if (!synced.ok() && !failed())
      signalError(synced.withContext(internal::strCat("waiting for ", device->deviceName())));
  }
  if (failed()) return status().withContext(internal::strCat("module '", module.name(), "'"));
  for (size_t i = 0; i < outputs_.size(); ++i)
    if (!outputs_[i].set)
      return internalError("module '", module.name(), "' finished without sending output ", i);
  return Status();
}

StatusOr<DLManagedTensor*> StandaloneExecutionContext::takeOutput(size_t index) {
  if (!ran_ || failed())
    return failedPrecondition("no outputs: the execution has not run successfully");
  if (index >= outputs_.size())
    return outOfRange("output index ", index, " is out of range: module '",
                      standalone_->module().name(), "' has ", outputs_.size(), " output(s)");
  Output& o = outputs_[index];
  if (!o.set) return failedPrecondition("output ", index, " was already taken");
  const TensorSignature& sig = standalone_->module().outputs()[index];
  auto* owned = new (std::nothrow) OwnedTensor();
  if (owned == nullptr) return outOfMemory("allocating an output tensor");
  owned->owner = standalone_->shared_from_this();
  owned->driver = driver_;
  owned->allocation = o.allocation;
  const int rank = sig.rank();
  std::memcpy(owned->shape, o.sizes, sizeof(int64_t) * rank);
  std::memcpy(owned->strides, o.strides, sizeof(int64_t) * rank);
  DLTensor& t = owned->managed.dl_tensor;
  t.data = o.data;
  t.device = deviceToDLPack(DeviceKind::kCpu);
  t.ndim = rank;
  t.dtype = dtypeToDLPack(sig.dtype);
  t.shape = rank > 0 ? owned->shape : nullptr;
  t.strides = rank > 0 ? owned->strides : nullptr;
  t.byte_offset = 0;
  owned->managed.manager_ctx = owned;
  owned->managed.deleter = &deleteOwnedTensor;
  o = Output();  // taken: the tensor owns the memory now
  return &owned->managed;
}

const StandaloneExecutionContext::Binding* StandaloneExecutionContext::checkInput(int64_t index,
                                                                                  DType dtype,
                                                                                  int rank) {
  // The binding was checked against the signature; here the module's request is.
  const Module& module = standalone_->module();
  if (Status s = io_checks::checkInputRequest(module, index, dtype, rank); !s.ok()) {
    signalError(std::move(s));
    return nullptr;
  }
  const Binding& b = inputs_[index];
  const TensorSignature& sig = module.inputs()[index];
  if (!b.bound) {
    signalError(failedPrecondition("ral_recv_input: input ", index, " is not bound"));
    return nullptr;
  }
  for (int d = 0; d < rank; ++d)
    if (sig.dims[d] != kDynamicDim && sig.dims[d] != b.sizes[d]) {
      signalError(invalidArgument("ral_recv_input: input ", index, " dimension ", d, " is ",
                                  b.sizes[d], " but the signature says ", sig.dims[d]));
      return nullptr;
    }
  return &b;
}

void StandaloneExecutionContext::setOutput(int64_t index, DType dtype, int rank, void* allocated,
                                           void* data, const int64_t* sizes,
                                           const int64_t* strides) {
  if (Status s = io_checks::checkOutput(standalone_->module(), index, dtype, rank, sizes, data);
      !s.ok()) {
    signalError(std::move(s));
    return;
  }
  Output& o = outputs_[index];
  if (o.set) {
    signalError(failedPrecondition("ral_send_output: output ", index, " was sent twice"));
    return;
  }
  const int64_t numel = io_checks::numelOf(sizes, rank);  // valid: checked above
  auto it = allocated ? std::find(live_.rbegin(), live_.rend(), allocated) : live_.rend();
  if (it != live_.rend()) {
    // Memory this execution allocated: hand it over as it is (strides kept).
    live_.erase(std::next(it).base());
    exported_.push_back(allocated);
    o.allocation = allocated;
    o.data = data;
    for (int d = 0; d < rank; ++d) {
      o.sizes[d] = sizes[d];
      o.strides[d] = strides[d];
    }
  } else {
    // Memory RAL does not own here (an input, a constant, static data, an output already
    // sent): copy it into a dense buffer of its own.
    const size_t elem = dtypeSize(dtype);
    auto copy = driver_->allocate(std::max<size_t>(static_cast<size_t>(numel) * elem, 1), 64);
    if (!copy.ok()) {
      signalError(
          copy.status().withContext(internal::strCat("ral_send_output: copying output ", index)));
      return;
    }
    for (int d = 0; d < rank; ++d) o.sizes[d] = sizes[d];
    rowMajorStrides(o.sizes, rank, o.strides);
    if (numel > 0) copyStrided(*copy, o.strides, data, strides, sizes, rank, elem);
    o.allocation = *copy;
    o.data = *copy;
  }
  o.set = true;
}

void* StandaloneExecutionContext::alloc(int64_t bytes) {
  if (bytes < 0) {
    signalError(invalidArgument("ral_alloc: negative size ", bytes));
    return nullptr;
  }
  auto p = driver_->allocate(std::max<size_t>(static_cast<size_t>(bytes), 1), 64);
  if (!p.ok()) {
    signalError(p.status().withContext(internal::strCat("ral_alloc of ", bytes, " bytes")));
    return nullptr;
  }
  live_.push_back(*p);
  return *p;
}

void StandaloneExecutionContext::dealloc(void* ptr) {
  if (ptr == nullptr) return;
  if (auto it = std::find(live_.rbegin(), live_.rend(), ptr); it != live_.rend()) {
    live_.erase(std::next(it).base());
    (void)driver_->deallocate(ptr);
    return;
  }
  if (auto it = std::find(exported_.begin(), exported_.end(), ptr); it != exported_.end()) {
    exported_.erase(it);  // an output owns it now
    return;
  }
  signalError(invalidArgument("ral_dealloc: pointer ", ptr,
                              " was not allocated by ral_alloc in this execution (or was already "
                              "freed)"));
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
  if (device != DeviceKind::kCpu) {
    // Now rather than at the first run: a missing device runtime is a load error.
    auto d = ctx->driver(device);
    if (!d.ok())
      return d.status().withContext(
          internal::strCat("module '", module->name(), "' runs on ", deviceKindName(device)));
    ctx->device_driver_ = *d;
  }
  auto driver = ctx->driver(DeviceKind::kCpu);
  if (!driver.ok()) return driver.status().withContext("the standalone context needs a CPU driver");
  ctx->host_driver_ = *driver;
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
