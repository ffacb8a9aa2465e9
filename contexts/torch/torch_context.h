// The PyTorch host context: runs a loaded Module on at::Tensors.
//
//   auto ctx = TorchContext::load("add.ralm");           // StatusOr<shared_ptr<TorchContext>>
//   std::vector<at::Tensor> y = (*ctx)->forward({a, b});  // throws c10::Error on failure
//
// - Inputs are bound zero-copy when the module's layout accepts their strides (ral/layout.h):
//   the module's MemRef is {allocated = aligned = the storage's first element, offset = the
//   tensor's storage offset, sizes, strides}, so aligned + offset is tensor.data_ptr(). Any
//   other view (a .t(), a column slice, an expand()) is copied into the module's layout on its
//   device first, or refused when setStrictZeroCopy(true). Element type, rank, static dims and
//   device are checked against the module's signature first; a mismatch is an error naming the
//   input.
// - Tensors whose memory does not hold their values as plain strided elements are errors naming
//   what they are: non-strided layouts (sparse, mkldnn), quantized and nested tensors, views
//   reaching past their storage (a storage resized under them). Shapes and strides whose extent
//   overflows are refused by the core (io_checks::byteSpanOf). A tensor with the negative or
//   conjugate bit is bound as a resolved copy, or refused under strict zero-copy.
// - Modules are inference-only: under grad mode an input that requires grad is an error saying
//   so (outputs would have no autograd history); under no_grad or inference_mode it runs.
// - ral_alloc memory comes from torch's allocator for the execution's device: torch's CPU
//   allocator (through TorchCpuDriver, which kernels use as well) or the CUDA caching allocator
//   of the inputs' device, on torch's current stream.
// - Outputs: a ral_alloc buffer becomes the output tensor's storage without a copy; an output
//   inside an input tensor's storage becomes a view of that input (as_strided: it shares the
//   input's memory, as an in-place op's result would); anything else (constants, static data)
//   is copied into a new tensor. An aliasing output of an input bound as a resolved copy (it
//   cannot share the caller's memory) or of an input whose elements overlap (torch refuses
//   in-place results there) is an error.
// - On CUDA the execution runs with the device of its inputs current and torch's current stream
//   as its stream (ExecutionContext::stream()).
//
// One TorchContext serves many threads at once; each execution borrows a pooled
// TorchExecutionContext. The host protocol (bindings, checks, ral_alloc, outputs and the host
// functions modules import) is the core's (ral/host_execution_context.h); this context supplies
// at::Tensor inputs and outputs and torch's allocators.
//
// This header names at::Tensor only by declaration, so the host-function registrations compile
// without torch's headers.
#ifndef RAL_CONTEXTS_TORCH_TORCH_CONTEXT_H_
#define RAL_CONTEXTS_TORCH_TORCH_CONTEXT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ral/context.h"
#include "ral/driver.h"
#include "ral/dtype.h"
#include "ral/execution_context.h"
#include "ral/host_execution_context.h"
#include "ral/memref.h"
#include "ral/module.h"
#include "ral/status.h"

namespace at {
class Tensor;
}  // namespace at
namespace c10 {
struct Device;
}  // namespace c10

namespace ral::torch_host {

class TorchAllocator;
class TorchContext;

class TorchExecutionContext : public HostExecutionContext {
 public:
  static const ContextType kType;  // "torch", derived from HostExecutionContext::kType

  explicit TorchExecutionContext(TorchContext* context);
  ~TorchExecutionContext() override;

  TorchContext* torch() const { return torch_; }

  // Checks and binds `inputs` (borrowed until run returns), runs the entry once and fills
  // `outputs` with one tensor per module output. On failure `outputs` is left empty.
  Status run(const std::vector<at::Tensor>& inputs, std::vector<at::Tensor>* outputs);
  void reset() override;

 protected:
  bool strictZeroCopy() const override;
  DeviceMatch matchDevice(const HostTensor& t, const TensorSignature& sig) const override;
  StatusOr<void*> copyInput(size_t index, const HostTensor& t, const int64_t* strides,
                            int64_t elements) override;
  void dropInputCopy(size_t index) override;
  Status acceptOutput(size_t index, const OutputBuffer& out) override;
  std::string describe(const HostTensor& t) const override;
  std::string typeName(const HostTensor& t) const override;
  std::string deviceName(const HostTensor& t) const override;

 private:
  // What the core cannot see: tensor kinds without plain strided memory, autograd, and a view
  // reaching past its storage.
  Status checkTensor(size_t index, const at::Tensor& t) const;
  Status bindInputs(const std::vector<at::Tensor>& inputs);
  // The device a CUDA execution runs on: its inputs', else torch's current one.
  static StatusOr<c10::Device> cudaDeviceOf(const std::vector<at::Tensor>& inputs);

  TorchContext* torch_;
  std::vector<at::Tensor> copies_;  // per input: its copy in the module's layout, if it needed one
  // Per input, during run(): its values when it has the negative or conjugate bit set.
  std::vector<at::Tensor> resolved_;
  bool any_resolved_ = false;
  const std::vector<at::Tensor>* inputs_ = nullptr;  // during run()
  std::vector<at::Tensor>* outputs_ = nullptr;       // during run()
  TorchAllocator* device_allocator_ = nullptr;       // set per run: CUDA executions only
};

// The communicator of torch contexts' collectives: torch.distributed's process group, reached
// through Python (ral_torch._fast installs it when ral_torch is imported). Every torch context
// asks the provider at its first collective; none installed: FAILED_PRECONDITION. Thread-safe.
void setTorchCommunicatorProvider(Context::CommunicatorFactory provider);

class TorchContext : public Context, public std::enable_shared_from_this<TorchContext> {
 public:
  // Links `module` (resolves its imports for torch executions). A module serves one execution
  // type: load it for this context (load() below), not one already linked elsewhere.
  static StatusOr<std::shared_ptr<TorchContext>> create(std::shared_ptr<Module> module);
  static StatusOr<std::shared_ptr<TorchContext>> load(const std::string& path);
  static StatusOr<std::shared_ptr<TorchContext>> load(const void* data, size_t size);

  const Module& module() const { return *module_; }
  // Whether any input or output of the module lives on a CUDA device.
  bool usesCuda() const { return uses_cuda_; }
  // Strict zero-copy: refuse inputs the module's layout does not accept instead of copying them.
  // Off by default; may be changed at any time (executions already binding keep their choice).
  void setStrictZeroCopy(bool strict) { strict_zero_copy_.store(strict); }
  bool strictZeroCopy() const { return strict_zero_copy_.load(std::memory_order_relaxed); }

  // One execution on a pooled execution context. Thread-safe.
  Status run(const std::vector<at::Tensor>& inputs, std::vector<at::Tensor>* outputs);
  // The host boundary: run(), throwing c10::Error (a Python RuntimeError) with RAL's message.
  std::vector<at::Tensor> forward(const std::vector<at::Tensor>& inputs);

  // The CPU driver's torch allocator.
  TorchAllocator* cpuAllocator() const { return cpu_allocator_; }
  // The CUDA caching allocator of device `index`, created on first use.
  StatusOr<TorchAllocator*> cudaAllocator(int index);

 protected:
  std::unique_ptr<ExecutionContext> newExecutionContext() override;

 private:
  explicit TorchContext(std::shared_ptr<Module> module);

  std::shared_ptr<Module> module_;
  TorchAllocator* cpu_allocator_ = nullptr;
  bool uses_cuda_ = false;
  std::atomic<bool> strict_zero_copy_{false};
};

// `s` with every byte that is not part of valid UTF-8 (as Python's strict decoder reads it)
// written as \xNN: Python decodes the strings and messages torch hands it as UTF-8, and a module
// file's names are arbitrary bytes.
std::string escapeInvalidUtf8(std::string_view s);

}  // namespace ral::torch_host

#endif  // RAL_CONTEXTS_TORCH_TORCH_CONTEXT_H_
