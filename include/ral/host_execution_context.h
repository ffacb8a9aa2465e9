// HostExecutionContext: the host protocol of a compiled module's entry function, written once for
// every host (the standalone context over DLPack, the torch context over at::Tensor, ...).
//
// A module's entry calls four host functions (host_api.cc registers them for this type, so every
// host derived from it answers them):
//
//   MemRef<T,N> ral_recv_input(ctx, int64_t index)    -> recvInput<T,N>()
//   void ral_send_output(ctx, int64_t index, MemRef)  -> sendOutput<T,N>()
//   void* ral_alloc(ctx, int64_t bytes)               -> alloc()
//   void ral_dealloc(ctx, void* ptr)                  -> dealloc()
//
// This class owns what those need and what every host must check:
//  - input bindings: a host describes each tensor (HostTensor) and calls bindInput(), which checks
//    it against the module's signature (element type, rank, static dims, device, layout) and binds
//    it zero-copy, or as a copy in the module's layout made by the host (copyInput());
//  - allocations: ral_alloc memory comes from the host's BufferAllocator (setAllocator()); the
//    context tracks what is live and what was handed over as an output, frees what the module
//    leaks, and reports a failed free;
//  - outputs: sendOutput() checks the request, moves an execution allocation out of the live
//    list, and hands the buffer to the host (acceptOutput()), which turns it into its tensor type;
//  - execute(): the run skeleton (every input bound or deferred, the entry, the host's
//    afterEntry(), errors with the module's name, every output sent);
//  - partial execution: an input may be deferred (deferInput()) and bound by the host when the
//    module first receives it, and each output reaches the host (acceptOutput()) when the module
//    sends it, which the compiler places right after the output is final.
// A host supplies only what is specific to its tensor type: the four virtuals below.
//
// Thread-safety: an execution context serves one execution at a time (Context pools them); the
// module-side calls may come from the entry's thread only, except signalError().
#ifndef RAL_HOST_EXECUTION_CONTEXT_H_
#define RAL_HOST_EXECUTION_CONTEXT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ral/context_type.h"
#include "ral/driver.h"
#include "ral/dtype.h"
#include "ral/execution_context.h"
#include "ral/memref.h"
#include "ral/module.h"
#include "ral/status.h"

namespace ral {

// Where ral_alloc memory comes from. Implementations must be thread-safe; the execution context
// does not own its allocator, which must outlive it.
class BufferAllocator {
 public:
  virtual ~BufferAllocator();
  // At least one byte; `alignment` a power of two.
  virtual StatusOr<void*> allocate(size_t bytes, size_t alignment) = 0;
  virtual Status deallocate(void* ptr) = 0;
};

// A BufferAllocator over a driver's memory of one kind (not owned).
class DriverBufferAllocator final : public BufferAllocator {
 public:
  explicit DriverBufferAllocator(Driver* driver, MemoryKind kind = MemoryKind::kDevice)
      : driver_(driver), kind_(kind) {}
  StatusOr<void*> allocate(size_t bytes, size_t alignment) override;
  Status deallocate(void* ptr) override;
  Driver* driver() const { return driver_; }

 private:
  Driver* driver_;
  MemoryKind kind_;
};

// A host tensor as the core sees it, borrowed for the duration of one bindInput() call.
struct HostTensor {
  DType dtype = DType::kInvalid;  // kInvalid: the host's element type has no RAL dtype
  int rank = 0;
  const int64_t* shape = nullptr;
  const int64_t* strides = nullptr;  // in elements; null: dense row-major
  // The allocation's first element and the view's offset from it, in elements (the MemRef's
  // allocated pointer and offset); data = base + offset.
  void* base = nullptr;
  int64_t offset = 0;
  std::optional<DeviceKind> device = DeviceKind::kCpu;  // nullopt: a device RAL has no driver for
  const void* host = nullptr;  // the host's own tensor object, for its describe()
};

// A buffer the module sent as an output, handed to the host by acceptOutput().
struct OutputBuffer {
  DType dtype = DType::kInvalid;
  int rank = 0;
  void* data = nullptr;  // first element
  const int64_t* sizes = nullptr;
  const int64_t* strides = nullptr;
  // Set when the buffer is memory this execution allocated (ral_alloc): the host owns it from
  // now on, whether acceptOutput() succeeds or not. Null: memory RAL does not own here (an
  // input, a constant, static data, an output already sent), to be copied or viewed.
  void* allocation = nullptr;
  size_t allocation_bytes = 0;
  BufferAllocator* allocator = nullptr;
};

// How a device mismatch between a tensor and its signature is resolved.
enum class DeviceMatch {
  kSame,        // bind as is
  kCopyAcross,  // the host copies the tensor to the module's device (copyInput)
  kMismatch,    // refuse, naming both devices
};

class HostExecutionContext : public ExecutionContext {
 public:
  static const ContextType kType;  // "host", derived from ExecutionContext::kType

  HostExecutionContext(Context* context, const Module& module, const ContextType* type);
  ~HostExecutionContext() override;

  const Module& module() const { return module_; }

  // ---- host side
  // Checks `t` against input `index`'s signature and binds it (see the header comment). Rebinding
  // replaces the earlier binding.
  Status bindInput(size_t index, const HostTensor& t);
  bool inputBound(size_t index) const { return inputs_[index].bound; }
  // Partial execution: input `index` is bound when the module first receives it, by
  // bindDeferredInput() (where the host may wait for it to be ready), so execute() starts
  // without it. Binding it with bindInput() or reset() cancels this.
  void deferInput(size_t index) { inputs_[index].deferred = true; }
  // Every input bound; the entry runs (once until releaseExecutionMemory()); afterEntry(); the
  // first error signalled, with the module's name; every output sent.
  Status execute();
  // Whether execute() ran the entry and it succeeded.
  bool succeeded() const { return ran_ && !failed(); }
  // The allocator ral_alloc uses from now on (not owned).
  void setAllocator(BufferAllocator* allocator) { allocator_ = allocator; }
  BufferAllocator* allocator() const { return allocator_; }
  // Frees what the module allocated and did not hand over, and forgets the outputs, keeping the
  // input bindings.
  void releaseExecutionMemory();
  // Also drops the input bindings.
  void reset() override;

  // ---- module side
  template <typename T, int N>
  MemRef<T, N> recvInput(int64_t index);
  template <typename T, int N>
  void sendOutput(int64_t index, const MemRef<T, N>& m) {
    setOutput(index, kDTypeOf<T>, N, m.allocated, m.data(), sizesOf(m), stridesOf(m));
  }
  void* alloc(int64_t bytes);
  void dealloc(void* ptr);

 protected:
  // ---- what a host supplies
  // Whether to refuse views the module's layout does not accept instead of copying them.
  virtual bool strictZeroCopy() const { return false; }
  // Default: kSame when `t` is on the signature's device, else kMismatch.
  virtual DeviceMatch matchDevice(const HostTensor& t, const TensorSignature& sig) const;
  // Copies input `index` into a buffer laid out with `strides` (row-major or the module's
  // layout; `elements` to allocate) and returns that buffer's first element; the host keeps the
  // copy alive until the input is rebound or the context reset (dropInputCopy()).
  virtual StatusOr<void*> copyInput(size_t index, const HostTensor& t, const int64_t* strides,
                                    int64_t elements) = 0;
  virtual void dropInputCopy(size_t index) = 0;
  // Takes an output buffer (see OutputBuffer::allocation for ownership). An error fails the
  // execution, with the output named.
  virtual Status acceptOutput(size_t index, const OutputBuffer& out) = 0;
  // After the entry returned and before outputs are checked (e.g. wait for a device).
  virtual Status afterEntry() { return Status(); }
  // Binds deferred input `index` (deferInput()) with bindInput(), on the entry's thread, when
  // the module receives it; an error fails the execution. The default has nothing to bind.
  virtual Status bindDeferredInput(size_t index);
  // The tensor in messages (default "2x3xf32"): hosts name their own types and devices.
  virtual std::string describe(const HostTensor& t) const;
  virtual std::string typeName(const HostTensor& t) const;
  virtual std::string deviceName(const HostTensor& t) const;

 private:
  struct Binding {
    void* base = nullptr;
    int64_t offset = 0;
    int64_t sizes[kMaxMemRefRank] = {};
    int64_t strides[kMaxMemRefRank] = {};
    bool bound = false;
    bool copied = false;
    bool deferred = false;  // bound by bindDeferredInput() at the first receive
  };
  struct Allocation {
    void* ptr;
    size_t bytes;
    BufferAllocator* allocator;
  };

  // Checks a recv_input request; signals an error and returns null when it is wrong.
  const Binding* checkInput(int64_t index, DType dtype, int rank);
  void setOutput(int64_t index, DType dtype, int rank, void* allocated, void* data,
                 const int64_t* sizes, const int64_t* strides);
  void unbind(size_t index);

  const Module& module_;
  BufferAllocator* allocator_ = nullptr;
  std::vector<Binding> inputs_;
  std::vector<bool> sent_;
  std::vector<Allocation> live_;  // ral_alloc'ed, not yet freed or sent
  std::vector<void*> exported_;   // sent as outputs; a later ral_dealloc must not free them
  bool ran_ = false;
};

template <typename T, int N>
MemRef<T, N> HostExecutionContext::recvInput(int64_t index) {
  const Binding* b = checkInput(index, kDTypeOf<T>, N);
  if (b == nullptr) return MemRef<T, N>{};
  return viewMemRef<T, N>(static_cast<T*>(b->base), b->offset, b->sizes, b->strides);
}

}  // namespace ral

#endif  // RAL_HOST_EXECUTION_CONTEXT_H_
