#include "contexts/torch/torch_context.h"

#include <ATen/core/Tensor.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/ScalarTypeToTypeMeta.h>
#include <c10/core/Storage.h>
#include <c10/core/TensorImpl.h>
#include <c10/core/TensorOptions.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <utility>

#include "contexts/torch/torch_allocator.h"
#include "contexts/torch/torch_cpu_driver.h"
#include "contexts/torch/torch_cuda.h"
#include "contexts/torch/torch_dtype.h"
#include "ral/io_checks.h"
#include "ral/layout.h"
#include "ral/module_spec.h"

namespace ral::torch_host {

const ContextType TorchExecutionContext::kType = {"torch", &ExecutionContext::kType};

namespace {

// Elements from the first to one past the last element a (non-negative) strided view touches.
int64_t extentOf(const int64_t* sizes, const int64_t* strides, int rank) {
  int64_t last = 0;
  for (int d = 0; d < rank; ++d) {
    if (sizes[d] == 0) return 0;
    last += (sizes[d] - 1) * strides[d];
  }
  return last + 1;
}

std::string describeTensor(const at::Tensor& t) {
  std::ostringstream os;
  for (int64_t s : t.sizes()) os << s << "x";
  os << t.scalar_type() << " on " << t.device();
  return os.str();
}

// A tensor over `storage` with the given element type, view and device: what at::from_blob
// builds, without a deleter closure or a dispatcher call.
at::Tensor makeTensor(c10::Storage storage, c10::ScalarType type, c10::Device device,
                      int64_t offset, c10::IntArrayRef sizes, c10::IntArrayRef strides) {
  at::Tensor t = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::computeDispatchKey(type, c10::kStrided, device)),
      c10::scalarTypeToTypeMeta(type));
  t.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, strides);
  t.unsafeGetTensorImpl()->set_storage_offset(offset);
  return t;
}

}  // namespace

// ---- TorchExecutionContext ------------------------------------------------------------------

TorchExecutionContext::TorchExecutionContext(TorchContext* context)
    : ExecutionContext(context, &kType),
      torch_(context),
      bindings_(context->module().inputs().size()),
      copies_(context->module().inputs().size()) {
  live_.reserve(8);
  exported_.reserve(context->module().outputs().size());
}

TorchExecutionContext::~TorchExecutionContext() { freeAll(); }

void TorchExecutionContext::freeAll() {
  for (const Allocation& a : live_) (void)a.allocator->deallocate(a.ptr);
  live_.clear();
  exported_.clear();
  for (at::Tensor& c : copies_) c = at::Tensor();
  inputs_ = nullptr;
  outputs_ = nullptr;
  device_allocator_ = nullptr;
}

void TorchExecutionContext::reset() {
  freeAll();
  ExecutionContext::reset();
}

Status TorchExecutionContext::bindInputs(const std::vector<at::Tensor>& inputs) {
  const Module& module = torch_->module();
  const std::vector<TensorSignature>& sigs = module.inputs();
  if (inputs.size() != sigs.size()) {
    std::string expected;
    for (const TensorSignature& s : sigs)
      expected += (expected.empty() ? "" : ", ") + s.typeString();
    return invalidArgument("module '", module.name(), "' takes ", sigs.size(), " input(s) (",
                           expected, "), got ", inputs.size());
  }
  c10::optional<c10::Device> cuda_device;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& t = inputs[i];
    const TensorSignature& sig = sigs[i];
    if (!t.defined()) return invalidArgument("input ", i, " (", sig.typeString(), ") is undefined");
    if (t.layout() != c10::kStrided)
      return invalidArgument("input ", i, ": expected a dense tensor (", sig.typeString(),
                             "), got layout ", t.layout());
    const DType dtype = fromScalarType(t.scalar_type());
    if (dtype != sig.dtype)
      return invalidArgument("input ", i, ": expected element type ", dtypeName(sig.dtype), " (",
                             sig.typeString(), "), got ", t.scalar_type(), " (", describeTensor(t),
                             ")");
    const int rank = static_cast<int>(t.dim());
    if (rank != sig.rank())
      return invalidArgument("input ", i, ": expected rank ", sig.rank(), " (", sig.typeString(),
                             "), got rank ", rank, " (", describeTensor(t), ")");
    const c10::IntArrayRef sizes = t.sizes();
    for (int d = 0; d < rank; ++d)
      if (sig.dims[d] != kDynamicDim && sig.dims[d] != sizes[d])
        return invalidArgument("input ", i, ": dimension ", d, " must be ", sig.dims[d], " (",
                               sig.typeString(), "), got ", sizes[d], " (", describeTensor(t), ")");
    const c10::Device device = t.device();
    const bool device_ok = sig.device == DeviceKind::kCpu    ? device.is_cpu()
                           : sig.device == DeviceKind::kCuda ? device.is_cuda()
                                                             : false;
    if (!device_ok)
      return invalidArgument("input ", i, ": expected a tensor on ", deviceKindName(sig.device),
                             " (", sig.typeString(), "), got one on ", device);
    if (device.is_cuda()) {
      if (cuda_device && *cuda_device != device)
        return invalidArgument("input ", i, " is on ", device, " but an earlier input is on ",
                               *cuda_device, "; all CUDA inputs must share one device");
      cuda_device = device;
    }
    // The layout contract: a view the compiled code would misread is bound as a copy in the
    // module's layout (on the tensor's device), or refused in strict zero-copy mode.
    const at::Tensor* bound = &t;
    RAL_ASSIGN_OR_RETURN(InputBinding how,
                         chooseInputBinding(sig, i, sizes.data(), t.strides().data(), rank,
                                            torch_->strictZeroCopy()));
    if (how == InputBinding::kCopy) {
      int64_t target[kMaxMemRefRank];
      auto elements = layoutFor(sig, sizes.data(), rank, target);
      if (!elements.ok()) return elements.status().withContext(internal::strCat("input ", i));
      try {
        copies_[i] = at::empty_strided(sizes, c10::IntArrayRef(target, rank), t.options());
        copies_[i].copy_(t);
      } catch (const c10::Error& e) {
        copies_[i] = at::Tensor();
        return outOfMemory("copying input ", i, " (", describeTensor(t), ") into layout ",
                           sig.layoutString(), ": ", e.what_without_backtrace());
      }
      bound = &copies_[i];
    } else if (copies_[i].defined()) {
      copies_[i] = at::Tensor();  // an earlier run's copy: not this input
    }
    Binding& b = bindings_[i];
    const c10::IntArrayRef strides = bound->strides();
    for (int d = 0; d < rank; ++d) {
      b.sizes[d] = sizes[d];
      b.strides[d] = strides[d];
    }
    b.offset = bound->storage_offset();
    b.base =
        static_cast<char*>(bound->data_ptr()) - b.offset * static_cast<int64_t>(t.element_size());
  }
  return Status();
}

Status TorchExecutionContext::run(const std::vector<at::Tensor>& inputs,
                                  std::vector<at::Tensor>* outputs) {
  const Module& module = torch_->module();
  outputs->clear();
  RAL_RETURN_IF_ERROR(bindInputs(inputs));
  // CUDA executions run with their inputs' device current, on torch's current stream there.
  std::optional<c10::DeviceGuard> guard;
  device_allocator_ = torch_->cpuAllocator();
  if (torch_->usesCuda()) {
    c10::optional<c10::Device> device;
    for (const at::Tensor& t : inputs)
      if (t.is_cuda()) {
        device = t.device();
        break;
      }
    if (!device) {
      RAL_ASSIGN_OR_RETURN(int index, currentCudaDevice());
      device = c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index));
    }
    guard.emplace(*device);
    RAL_ASSIGN_OR_RETURN(Stream * stream, currentCudaStream(*context(), *device));
    setStream(stream);
    RAL_ASSIGN_OR_RETURN(device_allocator_, torch_->cudaAllocator(device->index()));
  }
  outputs->resize(module.outputs().size());
  inputs_ = &inputs;
  outputs_ = outputs;
  module.entry()(abi());
  inputs_ = nullptr;
  outputs_ = nullptr;
  if (failed()) {
    outputs->clear();
    return status().withContext(internal::strCat("module '", module.name(), "'"));
  }
  for (size_t i = 0; i < outputs->size(); ++i)
    if (!(*outputs)[i].defined()) {
      outputs->clear();
      return internalError("module '", module.name(), "' finished without sending output ", i);
    }
  return Status();
}

const TorchExecutionContext::Binding* TorchExecutionContext::checkInput(int64_t index, DType dtype,
                                                                        int rank) {
  const Module& module = torch_->module();
  if (inputs_ == nullptr) {
    signalError(failedPrecondition("ral_recv_input: no execution is running"));
    return nullptr;
  }
  // The tensors were checked against the signature; here the module's request is.
  if (Status s = io_checks::checkInputRequest(module, index, dtype, rank); !s.ok()) {
    signalError(std::move(s));
    return nullptr;
  }
  return &bindings_[index];
}

void TorchExecutionContext::setOutput(int64_t index, DType dtype, int rank, void* allocated,
                                      void* data, const int64_t* sizes, const int64_t* strides) {
  const Module& module = torch_->module();
  if (outputs_ == nullptr) {
    signalError(failedPrecondition("ral_send_output: no execution is running"));
    return;
  }
  if (Status s = io_checks::checkOutput(module, index, dtype, rank, sizes, data); !s.ok()) {
    signalError(std::move(s));
    return;
  }
  at::Tensor& out = (*outputs_)[index];
  const TensorSignature& sig = module.outputs()[index];
  if (out.defined()) {
    signalError(failedPrecondition("ral_send_output: output ", index, " was sent twice"));
    return;
  }
  const int64_t numel = io_checks::numelOf(sizes, rank);  // valid: checked above
  for (int d = 0; d < rank; ++d) {
    if (strides[d] < 0) {
      signalError(unsupported("ral_send_output: output ", index, " has a negative stride in ",
                              "dimension ", d, ", which a torch tensor cannot represent"));
      return;
    }
  }
  const c10::ScalarType type = *toScalarType(dtype);  // checked for every signature at creation
  const int64_t elem = static_cast<int64_t>(dtypeSize(dtype));
  const int64_t extent_bytes = extentOf(sizes, strides, rank) * elem;
  const c10::IntArrayRef size_ref(sizes, static_cast<size_t>(rank));
  const c10::IntArrayRef stride_ref(strides, static_cast<size_t>(rank));
  auto* first = static_cast<char*>(data);
  try {
    // 1. Memory this execution allocated: it becomes the tensor's storage as it is.
    auto it = allocated != nullptr
                  ? std::find_if(live_.rbegin(), live_.rend(),
                                 [&](const Allocation& a) { return a.ptr == allocated; })
                  : live_.rend();
    if (it != live_.rend()) {
      const Allocation a = *it;
      live_.erase(std::next(it).base());
      exported_.push_back(a.ptr);
      c10::DataPtr owned = a.allocator->release(a.ptr);
      auto* base = static_cast<char*>(owned.get());
      const int64_t nbytes = static_cast<int64_t>(a.bytes) + (static_cast<char*>(a.ptr) - base);
      const int64_t offset_bytes = first - base;
      if (offset_bytes < 0 || offset_bytes % elem != 0 || offset_bytes + extent_bytes > nbytes) {
        signalError(invalidArgument("ral_send_output: output ", index, " (",
                                    shapeString(dtype, sizes, rank),
                                    ") does not lie inside the buffer it was allocated in"));
        return;  // `owned` frees the buffer
      }
      const c10::Device device = owned.device();
      c10::Storage storage(c10::Storage::use_byte_size_t(), nbytes, std::move(owned),
                           a.allocator->torchAllocator(), /*resizable=*/true);
      out = makeTensor(std::move(storage), type, device, offset_bytes / elem, size_ref, stride_ref);
    } else {
      // 2. Inside an input's storage: a view of that input (shares its memory).
      for (size_t i = 0; i < inputs_->size(); ++i) {
        const at::Tensor& in = copies_[i].defined() ? copies_[i] : (*inputs_)[i];
        if (in.scalar_type() != type || numel == 0) continue;
        const c10::Storage& storage = in.storage();
        auto* base = static_cast<char*>(storage.data_ptr().get());
        const int64_t nbytes = static_cast<int64_t>(storage.nbytes());
        const int64_t offset_bytes = first - base;
        if (base == nullptr || offset_bytes < 0 || offset_bytes >= nbytes ||
            offset_bytes % elem != 0 || offset_bytes + extent_bytes > nbytes)
          continue;
        out = in.as_strided(size_ref, stride_ref, offset_bytes / elem);
        break;
      }
      // 3. Anything else (constants, static data): copied into a tensor of its own.
      if (!out.defined()) {
        const c10::Device device = device_allocator_ != nullptr && sig.device == DeviceKind::kCuda
                                       ? device_allocator_->device()
                                       : c10::Device(c10::DeviceType::CPU);
        c10::Storage borrowed(c10::Storage::use_byte_size_t(), extent_bytes,
                              c10::DataPtr(first, device), /*allocator=*/nullptr,
                              /*resizable=*/false);
        out = makeTensor(std::move(borrowed), type, device, 0, size_ref, stride_ref)
                  .clone(c10::MemoryFormat::Contiguous);
      }
    }
    // A module may compute on one device and promise its output on another.
    const bool on_cpu = sig.device == DeviceKind::kCpu;
    if (on_cpu != out.is_cpu())
      out = out.to(on_cpu ? c10::Device(c10::DeviceType::CPU) : device_allocator_->device());
  } catch (const c10::Error& e) {
    out = at::Tensor();
    signalError(internalError("ral_send_output: output ", index, ": ", e.what_without_backtrace()));
  }
}

TorchAllocator* TorchExecutionContext::allocator() {
  return device_allocator_ != nullptr ? device_allocator_ : torch_->cpuAllocator();
}

void* TorchExecutionContext::alloc(int64_t bytes) {
  if (bytes < 0) {
    signalError(invalidArgument("ral_alloc: negative size ", bytes));
    return nullptr;
  }
  TorchAllocator* a = allocator();
  auto p = a->allocate(std::max<size_t>(static_cast<size_t>(bytes), 1), 64);
  if (!p.ok()) {
    signalError(p.status().withContext(internal::strCat("ral_alloc of ", bytes, " bytes")));
    return nullptr;
  }
  live_.push_back({*p, std::max<size_t>(static_cast<size_t>(bytes), 1), a});
  return *p;
}

void TorchExecutionContext::dealloc(void* ptr) {
  if (ptr == nullptr) return;
  auto it =
      std::find_if(live_.rbegin(), live_.rend(), [&](const Allocation& a) { return a.ptr == ptr; });
  if (it != live_.rend()) {
    const Allocation a = *it;
    live_.erase(std::next(it).base());
    RAL_SIGNAL_IF_ERROR(this, a.allocator->deallocate(a.ptr));
    return;
  }
  if (auto e = std::find(exported_.begin(), exported_.end(), ptr); e != exported_.end()) {
    exported_.erase(e);  // an output tensor owns it now
    return;
  }
  signalError(invalidArgument("ral_dealloc: pointer ", ptr,
                              " was not allocated by ral_alloc in this execution (or was already "
                              "freed)"));
}

// ---- TorchContext ---------------------------------------------------------------------------

TorchContext::TorchContext(std::shared_ptr<Module> module)
    : Context(&TorchExecutionContext::kType), module_(std::move(module)) {}

StatusOr<std::shared_ptr<TorchContext>> TorchContext::create(std::shared_ptr<Module> module) {
  if (module == nullptr) return invalidArgument("no module given");
  if (!module->hostLibraryLoaded())
    return failedPrecondition("module '", module->name(),
                              "' was loaded without its host library and cannot run");
  bool uses_cuda = false;
  for (const auto* list : {&module->inputs(), &module->outputs()})
    for (const TensorSignature& sig : *list) {
      auto type = toScalarType(sig.dtype);
      if (!type.ok())
        return type.status().withContext(
            internal::strCat("module '", module->name(), "' (", sig.typeString(), ")"));
      auto device = toDeviceType(sig.device);
      if (!device.ok())
        return device.status().withContext(
            internal::strCat("module '", module->name(), "' (", sig.typeString(), ")"));
      uses_cuda = uses_cuda || sig.device == DeviceKind::kCuda;
    }
  std::shared_ptr<TorchContext> ctx(new TorchContext(module));
  ctx->uses_cuda_ = uses_cuda;
  RAL_RETURN_IF_ERROR(ctx->setDriverFactory(DeviceKind::kCpu, torchCpuDriverFactory()));
  RAL_RETURN_IF_ERROR(module->link(*ctx));
  RAL_RETURN_IF_ERROR(ctx->setModule(module));
  auto driver = ctx->driver<TorchCpuDriver>();
  if (!driver.ok()) return driver.status().withContext("the torch context needs a CPU driver");
  ctx->cpu_allocator_ = &(*driver)->memory();
  return ctx;
}

StatusOr<std::shared_ptr<TorchContext>> TorchContext::load(const std::string& path) {
  RAL_ASSIGN_OR_RETURN(std::shared_ptr<Module> module, Module::load(path));
  return create(std::move(module));
}

StatusOr<std::shared_ptr<TorchContext>> TorchContext::load(const void* data, size_t size) {
  RAL_ASSIGN_OR_RETURN(std::shared_ptr<Module> module, Module::load(data, size));
  return create(std::move(module));
}

StatusOr<TorchAllocator*> TorchContext::cudaAllocator(int index) {
  if (index < 0) return invalidArgument("CUDA device index ", index, " is negative");
  return getOrCreate<TorchAllocator>(
      static_cast<uint64_t>(index), [index]() -> StatusOr<std::unique_ptr<TorchAllocator>> {
        if (!torchHasCuda()) return unavailable("torch has no CUDA device");
        try {
          return std::make_unique<TorchAllocator>(
              at::detail::getCUDAHooks().getCUDADeviceAllocator(),
              c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index)));
        } catch (const c10::Error& e) {
          return unavailable("the CUDA caching allocator: ", e.what_without_backtrace());
        }
      });
}

std::unique_ptr<ExecutionContext> TorchContext::newExecutionContext() {
  return std::make_unique<TorchExecutionContext>(this);
}

Status TorchContext::run(const std::vector<at::Tensor>& inputs, std::vector<at::Tensor>* outputs) {
  ExecutionHandle execution = acquireExecution();
  return static_cast<TorchExecutionContext*>(execution.get())->run(inputs, outputs);
}

std::vector<at::Tensor> TorchContext::forward(const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> outputs;
  const Status status = run(inputs, &outputs);
  TORCH_CHECK(status.ok(), status.toString());
  return outputs;
}

}  // namespace ral::torch_host
