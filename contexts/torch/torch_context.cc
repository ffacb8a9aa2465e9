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

const ContextType TorchExecutionContext::kType = {"torch", &HostExecutionContext::kType};

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
    : HostExecutionContext(context, context->module(), &kType),
      torch_(context),
      copies_(context->module().inputs().size()) {}

TorchExecutionContext::~TorchExecutionContext() { releaseExecutionMemory(); }

void TorchExecutionContext::reset() {
  HostExecutionContext::reset();
  inputs_ = nullptr;
  outputs_ = nullptr;
  device_allocator_ = nullptr;
}

bool TorchExecutionContext::strictZeroCopy() const { return torch_->strictZeroCopy(); }

namespace {
const at::Tensor& tensorOf(const HostTensor& t) { return *static_cast<const at::Tensor*>(t.host); }
}  // namespace

std::string TorchExecutionContext::describe(const HostTensor& t) const {
  return describeTensor(tensorOf(t));
}

std::string TorchExecutionContext::typeName(const HostTensor& t) const {
  return c10::toString(tensorOf(t).scalar_type());
}

std::string TorchExecutionContext::deviceName(const HostTensor& t) const {
  return tensorOf(t).device().str();
}

DeviceMatch TorchExecutionContext::matchDevice(const HostTensor& t,
                                               const TensorSignature& sig) const {
  const c10::Device device = tensorOf(t).device();
  const bool same = sig.device == DeviceKind::kCpu    ? device.is_cpu()
                    : sig.device == DeviceKind::kCuda ? device.is_cuda()
                                                      : false;
  return same ? DeviceMatch::kSame : DeviceMatch::kMismatch;
}

StatusOr<void*> TorchExecutionContext::copyInput(size_t index, const HostTensor& t,
                                                 const int64_t* strides, int64_t /*elements*/) {
  // The copy stays on the tensor's device, in the module's layout.
  const at::Tensor& src = tensorOf(t);
  try {
    copies_[index] =
        at::empty_strided(src.sizes(), c10::IntArrayRef(strides, t.rank), src.options());
    copies_[index].copy_(src);
  } catch (const c10::Error& e) {
    copies_[index] = at::Tensor();
    return outOfMemory("copying input ", index, " (", describeTensor(src), ") into layout ",
                       module().inputs()[index].layoutString(), ": ", e.what_without_backtrace());
  }
  return copies_[index].data_ptr();
}

void TorchExecutionContext::dropInputCopy(size_t index) { copies_[index] = at::Tensor(); }

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
    const c10::Device device = t.device();
    if (device.is_cuda()) {
      if (cuda_device && *cuda_device != device)
        return invalidArgument("input ", i, " is on ", device, " but an earlier input is on ",
                               *cuda_device, "; all CUDA inputs must share one device");
      cuda_device = device;
    }
    HostTensor h;
    h.dtype = fromScalarType(t.scalar_type());
    h.rank = static_cast<int>(t.dim());
    h.shape = t.sizes().data();
    h.strides = t.strides().data();
    h.offset = t.storage_offset();
    h.base = static_cast<char*>(t.data_ptr()) - h.offset * static_cast<int64_t>(t.element_size());
    h.device = device.is_cpu()    ? std::optional<DeviceKind>(DeviceKind::kCpu)
               : device.is_cuda() ? std::optional<DeviceKind>(DeviceKind::kCuda)
                                  : std::nullopt;
    h.host = &t;
    RAL_RETURN_IF_ERROR(bindInput(i, h));
  }
  return Status();
}

StatusOr<c10::Device> TorchExecutionContext::cudaDeviceOf(const std::vector<at::Tensor>& inputs) {
  for (const at::Tensor& t : inputs)
    if (t.is_cuda()) return t.device();
  RAL_ASSIGN_OR_RETURN(int index, currentCudaDevice());
  return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index));
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
    RAL_ASSIGN_OR_RETURN(c10::Device device, cudaDeviceOf(inputs));
    guard.emplace(device);
    RAL_ASSIGN_OR_RETURN(Stream * stream, currentCudaStream(*context(), device));
    setStream(stream);
    RAL_ASSIGN_OR_RETURN(device_allocator_, torch_->cudaAllocator(device.index()));
  }
  setAllocator(device_allocator_);
  outputs->resize(module.outputs().size());
  inputs_ = &inputs;
  outputs_ = outputs;
  Status status = execute();
  inputs_ = nullptr;
  outputs_ = nullptr;
  if (!status.ok()) outputs->clear();
  return status;
}

Status TorchExecutionContext::acceptOutput(size_t index, const OutputBuffer& buffer) {
  const int rank = buffer.rank;
  const int64_t* sizes = buffer.sizes;
  const int64_t* strides = buffer.strides;
  at::Tensor& out = (*outputs_)[index];
  const TensorSignature& sig = module().outputs()[index];
  // An execution allocation not turned into a tensor below is freed here, as the core expects.
  c10::DataPtr owned;
  if (buffer.allocation != nullptr)
    owned = static_cast<TorchAllocator*>(buffer.allocator)->release(buffer.allocation);
  for (int d = 0; d < rank; ++d)
    if (strides[d] < 0)
      return unsupported("ral_send_output: output ", index, " has a negative stride in ",
                         "dimension ", d, ", which a torch tensor cannot represent");
  const int64_t numel = io_checks::numelOf(sizes, rank);     // valid: checked by the core
  const c10::ScalarType type = *toScalarType(buffer.dtype);  // checked for every signature
  const int64_t elem = static_cast<int64_t>(dtypeSize(buffer.dtype));
  const int64_t extent_bytes = extentOf(sizes, strides, rank) * elem;
  const c10::IntArrayRef size_ref(sizes, static_cast<size_t>(rank));
  const c10::IntArrayRef stride_ref(strides, static_cast<size_t>(rank));
  auto* first = static_cast<char*>(buffer.data);
  try {
    if (owned) {
      // 1. Memory this execution allocated: it becomes the tensor's storage as it is.
      auto* allocator = static_cast<TorchAllocator*>(buffer.allocator);
      auto* base = static_cast<char*>(owned.get());
      const int64_t nbytes = static_cast<int64_t>(buffer.allocation_bytes) +
                             (static_cast<char*>(buffer.allocation) - base);
      const int64_t offset_bytes = first - base;
      if (offset_bytes < 0 || offset_bytes % elem != 0 || offset_bytes + extent_bytes > nbytes)
        return invalidArgument("ral_send_output: output ", index, " (",
                               shapeString(buffer.dtype, sizes, rank),
                               ") does not lie inside the buffer it was allocated in");
      const c10::Device device = owned.device();
      c10::Storage storage(c10::Storage::use_byte_size_t(), nbytes, std::move(owned),
                           allocator->torchAllocator(), /*resizable=*/true);
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
    return internalError("ral_send_output: output ", index, ": ", e.what_without_backtrace());
  }
  return Status();
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
