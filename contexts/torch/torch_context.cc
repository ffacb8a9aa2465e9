#include "contexts/torch/torch_context.h"

#include <ATen/core/Tensor.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/GradMode.h>
#include <c10/core/ScalarTypeToTypeMeta.h>
#include <c10/core/Storage.h>
#include <c10/core/TensorImpl.h>
#include <c10/core/TensorOptions.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <mutex>
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

// Whether a view's elements may share memory: a sufficient test for "no overlap" (each walked
// dimension, by increasing stride, starts past everything the smaller ones cover) that every view
// torch's slicing and transposing ops make passes; expand() and some as_strided views fail it.
bool mayOverlap(c10::IntArrayRef sizes, c10::IntArrayRef strides) {
  int64_t walked[kMaxMemRefRank];
  int n = 0;
  for (size_t d = 0; d < sizes.size() && n < kMaxMemRefRank; ++d) {
    if (sizes[d] == 0) return false;
    if (sizes[d] > 1) walked[n++] = static_cast<int64_t>(d);
  }
  std::sort(walked, walked + n, [&](int64_t a, int64_t b) { return strides[a] < strides[b]; });
  int64_t covered = 1;  // elements spanned by the dimensions taken so far (checked by the core)
  for (int i = 0; i < n; ++i) {
    const int64_t d = walked[i];
    if (strides[d] < covered) return true;
    covered += strides[d] * (sizes[d] - 1);
  }
  return false;
}

// The lazy flag torch reads `t` through instead of storing the result (its memory holds the
// values before it), with what sets it; null when there is none.
const char* lazyFlagOf(const at::Tensor& t) {
  if (t.is_neg()) return "the negative bit set (a lazy negation: x._neg_view(), z.conj().imag)";
  if (t.is_conj()) return "the conjugate bit set (a lazy conjugation: z.conj())";
  return nullptr;
}

// What TorchExecutionContext::checkTensor() passes, for the common case only (it is on every
// call): a defined dense CPU or CUDA tensor, not requiring grad, contiguous and inside its storage.
// False sends the tensor through checkTensor().
inline bool plainTensor(const at::Tensor& t) {
  if (!t.defined() || t.is_nested() || t.layout() != c10::kStrided || t.is_quantized() ||
      t.requires_grad() || !t.is_contiguous())
    return false;
  const c10::Device device = t.device();
  if (!device.is_cpu() && !device.is_cuda()) return false;
  // unsafe_storage(): storage() and has_storage() are virtual calls.
  const c10::Storage& storage = t.unsafeGetTensorImpl()->unsafe_storage();
  const auto elem = static_cast<int64_t>(t.element_size());
  int64_t first, end;
  return storage && !__builtin_mul_overflow(t.storage_offset(), elem, &first) &&
         !__builtin_mul_overflow(t.numel(), elem, &end) && first >= 0 &&
         end <= static_cast<int64_t>(storage.nbytes()) - first;
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
      copies_(context->module().inputs().size()),
      resolved_(context->module().inputs().size()) {}

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

Status TorchExecutionContext::checkTensor(size_t i, const at::Tensor& t) const {
  const TensorSignature& sig = module().inputs()[i];
  if (!t.defined()) return invalidArgument("input ", i, " (", sig.typeString(), ") is undefined");
  // Tensors without plain strided memory: their sizes, strides or bytes would mislead the module.
  if (t.is_nested())
    return invalidArgument("input ", i, ": expected a dense tensor (", sig.typeString(),
                           "), got a nested tensor; pad it first (to_padded_tensor())");
  if (t.layout() != c10::kStrided)
    return invalidArgument("input ", i, ": expected a dense tensor (", sig.typeString(),
                           "), got layout ", t.layout(), "; pass x.to_dense()");
  if (t.is_quantized())
    return invalidArgument("input ", i, ": expected ", sig.typeString(), ", got a quantized ",
                           t.scalar_type(), " tensor; pass x.dequantize() or x.int_repr()");
  // No autograd: outputs would silently have no history. Grad mode (thread-local) is read only
  // for tensors that require grad.
  if (t.requires_grad() && c10::GradMode::is_enabled())
    return invalidArgument(
        "input ", i, " (", describeTensor(t),
        ") requires grad, but RAL modules are inference-only "
        "(their outputs have no autograd history): call the module under `with torch.no_grad():` "
        "or `with torch.inference_mode():`, or pass x.detach()");
  const c10::Device device = t.device();
  if (!device.is_cpu() && !device.is_cuda()) return Status();  // the core refuses the device
  const c10::Storage& storage = t.unsafeGetTensorImpl()->unsafe_storage();
  if (!storage)
    return invalidArgument("input ", i, " (", describeTensor(t), ") has no storage to read");
  // The view must lie inside its storage: a storage resized after the view was made (resize_(),
  // as FSDP does) would otherwise be read past its end. A contiguous view spans its numel.
  const int64_t elem = static_cast<int64_t>(t.element_size());
  io_checks::ByteSpan span;
  if (t.is_contiguous()) {
    if (__builtin_mul_overflow(t.numel(), elem, &span.end)) return Status();  // refused by the core
  } else if (!io_checks::byteSpanOf(t.sizes().data(), t.strides().data(), static_cast<int>(t.dim()),
                                    elem, &span)) {
    return Status();  // refused by the core
  }
  if (span.end == 0) return Status();  // empty: nothing is read
  const int64_t nbytes = static_cast<int64_t>(storage.nbytes());
  int64_t first;
  if (__builtin_mul_overflow(t.storage_offset(), elem, &first) || first + span.begin < 0 ||
      first > nbytes || span.end > nbytes - first)
    return invalidArgument("input ", i, " (", describeTensor(t), ", storage offset ",
                           t.storage_offset(), ", strides ",
                           stridesString(t.strides().data(), static_cast<int>(t.dim())),
                           ") reaches past the end of its storage, which holds ", nbytes,
                           " bytes (was the storage resized?)");
  return Status();
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
    if (!plainTensor(inputs[i])) RAL_RETURN_IF_ERROR(checkTensor(i, inputs[i]));
    const at::Tensor* t = &inputs[i];
    const c10::Device device = t->device();
    if (device.is_cuda()) {
      if (cuda_device && *cuda_device != device)
        return invalidArgument("input ", i, " is on ", device, " but an earlier input is on ",
                               *cuda_device, "; all CUDA inputs must share one device");
      cuda_device = device;
    }
    const DType dtype = fromScalarType(t->scalar_type());
    const char* flag = dtype == sigs[i].dtype ? lazyFlagOf(*t) : nullptr;  // else refused below
    if (flag != nullptr) {
      // The bytes hold the values before a lazy negation or conjugation: bind a resolved copy,
      // unless copies are refused.
      if (strictZeroCopy())
        return invalidArgument("input ", i, " (", describeTensor(*t), ") has ", flag,
                               ": its memory does not hold its values, and strict zero-copy "
                               "refuses to bind a resolved copy; pass x.resolve_neg() or "
                               "x.resolve_conj()");
      try {
        resolved_[i] = t->resolve_conj().resolve_neg();
      } catch (const c10::Error& e) {
        return outOfMemory("resolving input ", i, " (", describeTensor(*t), "), which has ", flag,
                           ": ", e.what_without_backtrace());
      }
      any_resolved_ = true;
      t = &resolved_[i];
    }
    HostTensor h;
    h.dtype = dtype;
    h.rank = static_cast<int>(t->dim());
    h.shape = t->sizes().data();
    h.strides = t->strides().data();
    h.offset = t->storage_offset();
    h.device = device.is_cpu()    ? std::optional<DeviceKind>(DeviceKind::kCpu)
               : device.is_cuda() ? std::optional<DeviceKind>(DeviceKind::kCuda)
                                  : std::nullopt;
    // Only devices with memory RAL can address have a data pointer to offer.
    if (h.device)
      h.base =
          static_cast<char*>(t->data_ptr()) - h.offset * static_cast<int64_t>(t->element_size());
    h.host = t;
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
  outputs->clear();
  // Resolved inputs are this run's only, however it ends (a torch call may throw).
  struct DropResolved {
    TorchExecutionContext* self;
    ~DropResolved() {
      if (!self->any_resolved_) return;
      for (at::Tensor& t : self->resolved_) t = at::Tensor();
      self->any_resolved_ = false;
    }
  } drop_resolved{this};
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
  outputs->resize(module().outputs().size());
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
  const c10::ScalarType type = *toScalarType(buffer.dtype);  // checked for every signature
  const int64_t elem = static_cast<int64_t>(dtypeSize(buffer.dtype));
  io_checks::ByteSpan span;  // valid: the core checked the output with byteSpanOf
  (void)io_checks::byteSpanOf(sizes, strides, rank, elem, &span);
  const int64_t extent_bytes = span.end;  // no negative strides: the span starts at `first`
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
      if (offset_bytes < 0 || offset_bytes % elem != 0 || extent_bytes > nbytes - offset_bytes)
        return invalidArgument("ral_send_output: output ", index, " (",
                               shapeString(buffer.dtype, sizes, rank),
                               ") does not lie inside the buffer it was allocated in");
      const c10::Device device = owned.device();
      c10::Storage storage(c10::Storage::use_byte_size_t(), nbytes, std::move(owned),
                           allocator->torchAllocator(), /*resizable=*/true);
      out = makeTensor(std::move(storage), type, device, offset_bytes / elem, size_ref, stride_ref);
    } else {
      // 2. Inside an input's storage: a view of that input (shares its memory).
      for (size_t i = 0; i < inputs_->size() && extent_bytes > 0; ++i) {
        const at::Tensor& in = copies_[i].defined()     ? copies_[i]
                               : resolved_[i].defined() ? resolved_[i]
                                                        : (*inputs_)[i];
        if (in.scalar_type() != type) continue;
        const c10::Storage& storage = in.storage();
        auto* base = static_cast<char*>(storage.data_ptr().get());
        const int64_t nbytes = static_cast<int64_t>(storage.nbytes());
        const int64_t offset_bytes = first - base;
        if (base == nullptr || offset_bytes < 0 || offset_bytes >= nbytes ||
            offset_bytes % elem != 0 || extent_bytes > nbytes - offset_bytes)
          continue;
        // An aliasing output is an in-place result: it must share the caller's memory, which a
        // resolved copy does not, and torch refuses in-place results on overlapping memory.
        if (resolved_[i].defined())
          return invalidArgument(
              "ral_send_output: output ", index, " is a view of input ", i, ", which has ",
              lazyFlagOf((*inputs_)[i]),
              "; the module read a resolved copy, so an aliasing (in-place) output cannot share "
              "the input's memory: pass x.resolve_neg() or x.resolve_conj()");
        if (!copies_[i].defined() && mayOverlap(in.sizes(), in.strides()))
          return invalidArgument(
              "ral_send_output: output ", index, " is a view of input ", i, " (",
              describeTensor(in), ", strides ",
              stridesString(in.strides().data(), static_cast<int>(in.dim())),
              "), whose elements share memory (e.g. from expand()); as torch does for in-place "
              "results, aliasing outputs of such inputs are refused (the module may have written "
              "the input): pass x.contiguous()");
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

namespace {
std::mutex& providerMutex() {
  static std::mutex mutex;
  return mutex;
}
Context::CommunicatorFactory& provider() {
  static Context::CommunicatorFactory factory;
  return factory;
}
}  // namespace

void setTorchCommunicatorProvider(Context::CommunicatorFactory factory) {
  std::lock_guard<std::mutex> lock(providerMutex());
  provider() = std::move(factory);
}

TorchContext::TorchContext(std::shared_ptr<Module> module)
    : Context(&TorchExecutionContext::kType), module_(std::move(module)) {}

StatusOr<std::shared_ptr<TorchContext>> TorchContext::create(std::shared_ptr<Module> module) {
  if (module == nullptr) return invalidArgument("no module given");
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
  // After the signatures, which need no code: a module inspected without its library still has
  // them checked.
  if (!module->hostLibraryLoaded())
    return failedPrecondition("module '", module->name(),
                              "' was loaded without its host library and cannot run");
  std::shared_ptr<TorchContext> ctx(new TorchContext(module));
  ctx->uses_cuda_ = uses_cuda;
  RAL_RETURN_IF_ERROR(ctx->setDriverFactory(DeviceKind::kCpu, torchCpuDriverFactory()));
  RAL_RETURN_IF_ERROR(module->link(*ctx));
  RAL_RETURN_IF_ERROR(ctx->setModule(module));
  auto driver = ctx->driver<TorchCpuDriver>();
  if (!driver.ok()) return driver.status().withContext("the torch context needs a CPU driver");
  ctx->cpu_allocator_ = &(*driver)->memory();
  ctx->setCommunicatorFactory([]() -> StatusOr<std::shared_ptr<Communicator>> {
    Context::CommunicatorFactory factory;
    {
      std::lock_guard<std::mutex> lock(providerMutex());
      factory = provider();
    }
    if (!factory)
      return failedPrecondition(
          "this module calls collectives, and inside PyTorch they go through torch.distributed, "
          "which ral_torch reaches from Python: import ral_torch (its _fast extension) first");
    return factory();
  });
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
  TORCH_CHECK(status.ok(), escapeInvalidUtf8(status.toString()));
  return outputs;
}

namespace {

// The length of the UTF-8 sequence starting at s[i] when Python's strict decoder accepts it (no
// overlong forms, surrogates or code points past U+10FFFF), else 0.
size_t utf8SequenceAt(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) low = 0xA0;
    if (c == 0xED) high = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) low = 0x90;
    if (c == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (n > s.size() - i || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

}  // namespace

std::string escapeInvalidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (const size_t n = utf8SequenceAt(s, i)) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    const auto c = static_cast<unsigned char>(s[i++]);
    out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
  }
  return out;
}

}  // namespace ral::torch_host
