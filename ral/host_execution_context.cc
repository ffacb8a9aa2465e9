#include "ral/host_execution_context.h"

#include <algorithm>
#include <utility>

#include "ral/io_checks.h"
#include "ral/layout.h"
#include "ral/module_spec.h"
#include "ral/trace.h"

namespace ral {

const ContextType HostExecutionContext::kType = {"host", &ExecutionContext::kType};

BufferAllocator::~BufferAllocator() = default;

StatusOr<void*> DriverBufferAllocator::allocate(size_t bytes, size_t alignment) {
  return driver_->allocate(bytes, alignment, kind_);
}

Status DriverBufferAllocator::deallocate(void* ptr) { return driver_->deallocate(ptr); }

HostExecutionContext::HostExecutionContext(Context* context, const Module& module,
                                           const ContextType* type)
    : ExecutionContext(context, type),
      module_(module),
      inputs_(module.inputs().size()),
      sent_(module.outputs().size(), false) {
  live_.reserve(8);
  exported_.reserve(sent_.size());
}

// Derived hosts release their input copies and outputs in their own destructors; what is left
// here is the module's memory, freed through allocators that outlive this object.
HostExecutionContext::~HostExecutionContext() {
  for (const Allocation& a : live_) (void)a.allocator->deallocate(a.ptr);
}

// ---- host side ------------------------------------------------------------------------------

DeviceMatch HostExecutionContext::matchDevice(const HostTensor& t,
                                              const TensorSignature& sig) const {
  return t.device == sig.device ? DeviceMatch::kSame : DeviceMatch::kMismatch;
}

std::string HostExecutionContext::typeName(const HostTensor& t) const {
  return std::string(dtypeName(t.dtype));
}

std::string HostExecutionContext::deviceName(const HostTensor& t) const {
  return t.device ? std::string(deviceKindName(*t.device)) : "a device RAL has no driver for";
}

std::string HostExecutionContext::describe(const HostTensor& t) const {
  return shapeString(t.dtype, t.shape, t.rank);
}

// Only the flags: bindInput() writes the rest before setting `bound` again.
void HostExecutionContext::unbind(size_t index) {
  Binding& b = inputs_[index];
  if (b.copied) dropInputCopy(index);
  b.bound = false;
  b.copied = false;
  b.deferred = false;
}

Status HostExecutionContext::bindDeferredInput(size_t index) {
  return failedPrecondition("input ", index, " was deferred but this host binds no input later");
}

Status HostExecutionContext::bindInput(size_t index, const HostTensor& t) {
  if (index >= inputs_.size())
    return outOfRange("input index ", index, " is out of range: module '", module_.name(),
                      "' takes ", inputs_.size(), " input(s)");
  const TensorSignature& sig = module_.inputs()[index];
  if (t.rank < 0 || t.rank > kMaxMemRefRank)
    return invalidArgument("input ", index, " has rank ", t.rank, "; at most ", kMaxMemRefRank,
                           " is supported");
  if (t.rank > 0 && t.shape == nullptr)
    return invalidArgument("input ", index, " has rank ", t.rank, " but no shape");
  // The shape, and the elements the strides reach, in one overflow-checked pass.
  io_checks::ByteSpan span;
  const int64_t numel = t.strides == nullptr ? io_checks::numelOf(t.shape, t.rank) : 0;
  const bool valid = t.strides == nullptr
                         ? numel >= 0
                         : io_checks::byteSpanOf(t.shape, t.strides, t.rank, 1, &span);
  if (!valid && (t.strides == nullptr || io_checks::numelOf(t.shape, t.rank) < 0))
    return invalidArgument("input ", index, " (", describe(t),
                           ") has an invalid shape: a negative size or more than 2^48 elements");
  if (!valid)
    return invalidArgument("input ", index, " (", describe(t), ") has strides ",
                           stridesString(t.strides, t.rank), " that reach more than 2^48 elements");
  const bool empty = t.strides == nullptr ? numel == 0 : span.end == 0;
  if (t.dtype != sig.dtype)
    return invalidArgument("input ", index, ": expected element type ", dtypeName(sig.dtype), " (",
                           sig.typeString(), "), got ", typeName(t), " (", describe(t), ")");
  if (t.rank != sig.rank())
    return invalidArgument("input ", index, ": expected rank ", sig.rank(), " (", sig.typeString(),
                           "), got rank ", t.rank, " (", describe(t), ")");
  for (int d = 0; d < t.rank; ++d)
    if (sig.dims[d] != kDynamicDim && sig.dims[d] != t.shape[d])
      return invalidArgument("input ", index, ": dimension ", d, " must be ", sig.dims[d], " (",
                             sig.typeString(), "), got ", t.shape[d], " (", describe(t), ")");
  const DeviceMatch match = matchDevice(t, sig);
  if (match == DeviceMatch::kMismatch)
    return invalidArgument("input ", index, ": expected a tensor on ", deviceKindName(sig.device),
                           " (", sig.typeString(), "), got one on ", deviceName(t));
  if (t.base == nullptr && !empty)
    return invalidArgument("input ", index, " (", describe(t), ") has null data");

  int64_t strides[kMaxMemRefRank];
  if (t.strides != nullptr)
    std::copy(t.strides, t.strides + t.rank, strides);
  else
    rowMajorStrides(t.shape, t.rank, strides);
  InputBinding how = InputBinding::kCopy;
  if (match == DeviceMatch::kSame) {
    RAL_ASSIGN_OR_RETURN(
        how, chooseInputBinding(sig, index, t.shape, strides, t.rank, strictZeroCopy()));
  }
  unbind(index);
  Binding& b = inputs_[index];
  std::copy(t.shape, t.shape + t.rank, b.sizes);
  if (how == InputBinding::kCopy) {
    // A view the compiled code would misread, or a tensor on another device: bind a copy in the
    // module's layout instead.
    auto elements = layoutFor(sig, t.shape, t.rank, b.strides);
    if (!elements.ok()) return elements.status().withContext(internal::strCat("input ", index));
    RAL_ASSIGN_OR_RETURN(void* copy, copyInput(index, t, b.strides, *elements));
    b.base = copy;
    b.offset = 0;
    b.copied = true;
  } else {
    std::copy(strides, strides + t.rank, b.strides);
    b.base = t.base;
    b.offset = t.offset;
  }
  b.bound = true;
  return Status();
}

Status HostExecutionContext::execute() {
  if (ran_) return failedPrecondition("this execution already ran; start a new one");
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (!inputs_[i].bound && !inputs_[i].deferred)
      return invalidArgument("input ", i, " (", module_.inputs()[i].typeString(),
                             ") is not bound; module '", module_.name(), "' takes ", inputs_.size(),
                             " input(s)");
  ran_ = true;
  {
    trace::Scope span("execution", module_.name());
    module_.entry()(abi());
    // Kernels may still be queued; outputs are settled once the host says so.
    Status after = afterEntry();
    if (!after.ok()) signalError(std::move(after));
  }
  if (failed()) return status().withContext(internal::strCat("module '", module_.name(), "'"));
  for (size_t i = 0; i < sent_.size(); ++i)
    if (!sent_[i])
      return internalError("module '", module_.name(), "' finished without sending output ", i);
  return Status();
}

void HostExecutionContext::releaseExecutionMemory() {
  // Nobody is left to report a failed free to: the allocator keeps its own accounting.
  for (const Allocation& a : live_) (void)a.allocator->deallocate(a.ptr);
  live_.clear();
  exported_.clear();
  std::fill(sent_.begin(), sent_.end(), false);
  ran_ = false;
  ExecutionContext::reset();
}

void HostExecutionContext::reset() {
  releaseExecutionMemory();
  for (size_t i = 0; i < inputs_.size(); ++i) unbind(i);
}

// ---- module side ----------------------------------------------------------------------------

const HostExecutionContext::Binding* HostExecutionContext::checkInput(int64_t index, DType dtype,
                                                                      int rank) {
  // The binding was checked against the signature; here the module's request is.
  if (Status s = io_checks::checkInputRequest(module_, index, dtype, rank); !s.ok()) {
    signalError(std::move(s));
    return nullptr;
  }
  const Binding& b = inputs_[index];
  if (!b.bound && b.deferred) {
    Status bound = bindDeferredInput(static_cast<size_t>(index));
    if (!bound.ok()) {
      signalError(bound.withContext(internal::strCat("ral_recv_input: input ", index)));
      return nullptr;
    }
  }
  if (!b.bound) {
    signalError(failedPrecondition("ral_recv_input: input ", index, " is not bound"));
    return nullptr;
  }
  return &b;
}

void HostExecutionContext::setOutput(int64_t index, DType dtype, int rank, void* allocated,
                                     void* data, const int64_t* sizes, const int64_t* strides) {
  if (Status s = io_checks::checkOutput(module_, index, dtype, rank, sizes, strides, data);
      !s.ok()) {
    signalError(std::move(s));
    return;
  }
  if (sent_[index]) {
    signalError(failedPrecondition("ral_send_output: output ", index, " was sent twice"));
    return;
  }
  sent_[index] = true;
  OutputBuffer out;
  // The signature's type: module code sends an unsigned output as the signless integer of its
  // width (io_checks), and the host hands out what the signature promises.
  out.dtype = module_.outputs()[index].dtype;
  out.rank = rank;
  out.data = data;
  out.sizes = sizes;
  out.strides = strides;
  auto it = allocated != nullptr
                ? std::find_if(live_.rbegin(), live_.rend(),
                               [&](const Allocation& a) { return a.ptr == allocated; })
                : live_.rend();
  if (it != live_.rend()) {
    // Memory this execution allocated: the host takes it over as it is.
    out.allocation = it->ptr;
    out.allocation_bytes = it->bytes;
    out.allocator = it->allocator;
    live_.erase(std::next(it).base());
    exported_.push_back(out.allocation);
  }
  if (Status s = acceptOutput(static_cast<size_t>(index), out); !s.ok()) signalError(std::move(s));
}

void* HostExecutionContext::alloc(int64_t bytes) {
  if (bytes < 0) {
    signalError(invalidArgument("ral_alloc: negative size ", bytes));
    return nullptr;
  }
  if (allocator_ == nullptr) {
    signalError(failedPrecondition("ral_alloc: no execution is running"));
    return nullptr;
  }
  const size_t size = std::max<size_t>(static_cast<size_t>(bytes), 1);
  auto p = allocator_->allocate(size, 64);
  if (!p.ok()) {
    signalError(p.status().withContext(internal::strCat("ral_alloc of ", bytes, " bytes")));
    return nullptr;
  }
  live_.push_back({*p, size, allocator_});
  return *p;
}

void HostExecutionContext::dealloc(void* ptr) {
  if (ptr == nullptr) return;
  auto it =
      std::find_if(live_.rbegin(), live_.rend(), [&](const Allocation& a) { return a.ptr == ptr; });
  if (it != live_.rend()) {
    const Allocation a = *it;
    live_.erase(std::next(it).base());
    Status freed = a.allocator->deallocate(a.ptr);
    if (!freed.ok()) signalError(freed.withContext("ral_dealloc"));
    return;
  }
  if (auto e = std::find(exported_.begin(), exported_.end(), ptr); e != exported_.end()) {
    exported_.erase(e);  // an output owns it now
    return;
  }
  signalError(invalidArgument("ral_dealloc: pointer ", ptr,
                              " was not allocated by ral_alloc in this execution (or was already "
                              "freed)"));
}

}  // namespace ral
