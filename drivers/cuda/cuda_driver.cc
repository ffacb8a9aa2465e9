#include "drivers/cuda/cuda_driver.h"

#include <atomic>
#include <cstring>
#include <utility>
#include <vector>

#include "drivers/common/driver_trace.h"
#include "drivers/cuda/cuda_device.h"
#include "drivers/cuda/cuda_target.h"
#include "drivers/cuda/kernel_times.h"
#include "drivers/cuda/pending_queue.h"
#include "drivers/cuda/stream_allocator.h"
#include "drivers/cuda/timeline_semaphore.h"
#include "ral/context.h"
#include "ral/registration.h"
#include "ral/trace.h"

namespace ral::cuda {

// A RAL stream: a CUDA stream, the companion stream that runs the host functions of its semaphore
// signals, and its pending-queue state. The CUDA stream is the driver's own (non-blocking,
// destroyed with this) or a host's, wrapped (never destroyed here).
class CudaStream final : public Stream {
 public:
  CudaStream(const CudaDriver* owner, std::shared_ptr<CudaDevice> device, CUstream stream,
             CUstream callbacks, std::shared_ptr<PendingQueueActions> queue,
             bool owns_stream = true)
      : owner_(owner),
        owns_stream_(owns_stream),
        device_(std::move(device)),
        queue_(std::move(queue)),
        state_(QueueStream::create(stream, callbacks)) {}
  ~CudaStream() override {
    queue_->close(*state_, cancelled("cuda: the stream was destroyed with work still waiting for "
                                     "a semaphore"));
    if (!device_->makeCurrent().ok()) return;
    for (BackendStream s : {state_->stream(), state_->callbackStream()})
      (void)device_->cu().cuStreamSynchronize(static_cast<CUstream>(s));
    if (owns_stream_) (void)device_->cu().cuStreamDestroy_v2(handle());
    (void)device_->cu().cuStreamDestroy_v2(static_cast<CUstream>(state_->callbackStream()));
  }
  const CudaDriver* owner() const { return owner_; }
  CUstream handle() const { return static_cast<CUstream>(state_->stream()); }
  QueueStream& state() { return *state_; }

 private:
  const CudaDriver* owner_;
  const bool owns_stream_;
  const std::shared_ptr<CudaDevice> device_;
  const std::shared_ptr<PendingQueueActions> queue_;
  const std::shared_ptr<QueueStream> state_;
};

class CudaExecutable final : public Executable {
 public:
  CudaExecutable(const CudaDriver* owner, std::shared_ptr<CudaDevice> device, ExecutableSpec spec,
                 CUmodule module, std::vector<CUfunction> functions)
      : owner_(owner),
        device_(std::move(device)),
        spec_(std::move(spec)),
        module_(module),
        functions_(std::move(functions)),
        shared_limit_(functions_.size()) {
    for (auto& limit : shared_limit_) limit.store(kDefaultSharedLimit, std::memory_order_relaxed);
  }
  ~CudaExecutable() override {
    if (device_->makeCurrent().ok()) (void)device_->cu().cuModuleUnload(module_);
  }
  const ExecutableSpec& spec() const override { return spec_; }
  const CudaDriver* owner() const { return owner_; }
  size_t entryCount() const { return functions_.size(); }
  CUfunction function(uint32_t entry) const { return functions_[entry]; }
  // Dynamic shared memory above 48 KiB must be opted into once per function.
  Status reserveSharedMemory(uint32_t entry, uint32_t bytes) {
    if (bytes <= shared_limit_[entry].load(std::memory_order_relaxed)) return Status();
    RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(device_->lib(), cuFuncSetAttribute, functions_[entry],
                                      CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      static_cast<int>(bytes)));
    shared_limit_[entry].store(bytes, std::memory_order_relaxed);
    return Status();
  }

 private:
  static constexpr uint32_t kDefaultSharedLimit = 48 * 1024;
  const CudaDriver* owner_;
  const std::shared_ptr<CudaDevice> device_;
  const ExecutableSpec spec_;
  const CUmodule module_;
  const std::vector<CUfunction> functions_;
  std::vector<std::atomic<uint32_t>> shared_limit_;
};

namespace {

CUdeviceptr dptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

// Owns a copy of kernel arguments for a launch queued behind a semaphore wait.
struct PackedArgs {
  std::vector<unsigned char> bytes;
  std::vector<size_t> offsets;
  std::vector<void*> pointers;
  static StatusOr<std::shared_ptr<PackedArgs>> from(const KernelArgs& args) {
    if (args.count > 0 && args.sizes == nullptr)
      return invalidArgument(
          "cuda: a launch queued behind a semaphore wait needs KernelArgs::sizes to copy its "
          "arguments");
    auto packed = std::make_shared<PackedArgs>();
    size_t total = 0;
    for (size_t i = 0; i < args.count; ++i) {
      total = (total + 15) / 16 * 16;
      packed->offsets.push_back(total);
      total += args.sizes[i];
    }
    packed->bytes.resize(total);
    for (size_t i = 0; i < args.count; ++i)
      std::memcpy(packed->bytes.data() + packed->offsets[i], args.values[i], args.sizes[i]);
    for (size_t i = 0; i < args.count; ++i)
      packed->pointers.push_back(packed->bytes.data() + packed->offsets[i]);
    return packed;
  }
};

}  // namespace

CudaDriver::CudaDriver(std::shared_ptr<CudaDevice> device) : device_(std::move(device)) {}

StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::create(CudaDriverOptions options) {
  RAL_ASSIGN_OR_RETURN(std::shared_ptr<CudaDevice> device, CudaDevice::open(options.device));
  std::unique_ptr<CudaDriver> driver(new CudaDriver(std::move(device)));
  RAL_RETURN_IF_ERROR(driver->init());
  return driver;
}

Status CudaDriver::init() {
  sync_ = std::make_shared<SyncResources>(std::make_shared<CudaEventBackend>(device_));
  queue_ = PendingQueueActions::create(sync_);
  memory_ = std::make_unique<CudaMemoryBackend>(device_);
  allocator_ = std::make_unique<StreamOrderedAllocator>(memory_.get(), &sync_->events);
  kernel_times_ = std::make_shared<KernelTimes>(device_);
  RAL_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream, createStream());
  default_stream_.reset(static_cast<CudaStream*>(stream.release()));
  return Status();
}

CudaDriver::~CudaDriver() {
  if (queue_) queue_->shutdown();
  if (default_stream_) (void)synchronize(nullptr);
  {
    std::lock_guard<std::mutex> lock(executables_mutex_);
    executables_.clear();
  }
  if (allocator_) allocator_->releaseAll();
  default_stream_.reset();
  if (sync_) sync_->events.trim();
}

std::string CudaDriver::deviceName() const {
  return "cuda:" + std::to_string(device_->ordinal()) + " (" + device_->name() + ", sm_" +
         std::to_string(device_->computeCapability()) + ")";
}

int CudaDriver::targetRank(ExecutableFormat format, std::string_view target) const {
  return cudaTargetRank(format, target, device_->computeCapability());
}

int CudaDriver::deviceOrdinal() const { return device_->ordinal(); }
int CudaDriver::computeCapability() const { return device_->computeCapability(); }
void* CudaDriver::contextHandle() const { return device_->context(); }
Status CudaDriver::makeCurrent() const { return device_->makeCurrent(); }

StatusOr<bool> CudaDriver::isDevicePointer(const void* ptr) const {
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  unsigned int type = 0;
  const CUresult r =
      device_->cu().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr(ptr));
  if (r == CUDA_ERROR_INVALID_VALUE) return false;  // host memory CUDA does not know
  RAL_RETURN_IF_ERROR(device_->lib().check(r, "cuPointerGetAttribute"));
  return type == CU_MEMORYTYPE_DEVICE;
}

bool CudaDriver::kernelsCanAccess(const void* ptr, size_t bytes) const {
  if (bytes == 0) return true;
  if (!device_->makeCurrent().ok()) return false;
  for (const auto* p : {static_cast<const char*>(ptr), static_cast<const char*>(ptr) + bytes - 1}) {
    unsigned int type = 0;
    const CUresult r =
        device_->cu().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr(p));
    if (r == CUDA_ERROR_INVALID_VALUE) return false;  // memory CUDA does not know
  }
  return true;
}

StatusOr<CudaStream*> CudaDriver::resolveStream(Stream* stream) {
  if (stream == nullptr) return default_stream_.get();
  auto* s = dynamic_cast<CudaStream*>(stream);
  if (s == nullptr || s->owner() != this)
    return invalidArgument("cuda: the stream was not created by this CUDA driver");
  return s;
}

StatusOr<void*> CudaDriver::streamHandle(Stream* stream) {
  RAL_ASSIGN_OR_RETURN(CudaStream * s, resolveStream(stream));
  return static_cast<void*>(s->handle());
}

StatusOr<size_t> CudaDriver::heldBackCount(Stream* stream) {
  RAL_ASSIGN_OR_RETURN(CudaStream * s, resolveStream(stream));
  return s->state().heldBackCount();
}

// ---- memory

StatusOr<void*> CudaDriver::allocate(size_t bytes, size_t alignment, MemoryKind kind) {
  return allocator_->allocate(bytes, alignment, kind, default_stream_->handle());
}

StatusOr<void*> CudaDriver::allocateOn(size_t bytes, Stream* stream, MemoryKind kind) {
  RAL_ASSIGN_OR_RETURN(CudaStream * s, resolveStream(stream));
  return allocator_->allocate(bytes, StreamOrderedAllocator::kMaxAlignment, kind, s->handle());
}

Status CudaDriver::deallocate(void* ptr) { return allocator_->deallocate(ptr); }

Status CudaDriver::recordUse(void* ptr, Stream* stream) {
  RAL_ASSIGN_OR_RETURN(CudaStream * s, resolveStream(stream));
  return allocator_->recordUse(ptr, s->handle());
}

MemoryStats CudaDriver::memoryStats() const { return allocator_->stats(); }

Status CudaDriver::trim() {
  RAL_RETURN_IF_ERROR(allocator_->trim());
  sync_->events.trim();
  return Status();
}

Status CudaDriver::enqueue(Stream* stream, std::function<Status(void* cu_stream)> issue) {
  RAL_ASSIGN_OR_RETURN(CudaStream * s, resolveStream(stream));
  auto dev = device_;
  return queue_->submit(
      s->state(),
      [&](BackendStream cs) {
        RAL_RETURN_IF_ERROR(dev->makeCurrent());
        return issue(cs);
      },
      [&] {
        return PendingQueueActions::IssueFn(
            [dev, fn = std::move(issue)](BackendStream cs) -> Status {
              RAL_RETURN_IF_ERROR(dev->makeCurrent());
              return fn(cs);
            });
      });
}

Status CudaDriver::copy(void* dst, const void* src, size_t bytes, CopyKind kind, Stream* stream) {
  auto span = drivers::transferSpan("copy", DeviceKind::kCuda, bytes, drivers::copyKindName(kind));
  if (bytes == 0) return Status();
  if (dst == nullptr || src == nullptr)
    return invalidArgument("cuda: copy of ", bytes, " bytes with a null pointer");
  auto dev = device_;
  return enqueue(stream, [dev, dst, src, bytes, kind](void* cs) -> Status {
    const CudaLibrary& lib = dev->lib();
    auto st = static_cast<CUstream>(cs);
    switch (kind) {
      case CopyKind::kHostToDevice:
        return RAL_CUDA_CALL(lib, cuMemcpyHtoDAsync_v2, dptr(dst), src, bytes, st);
      case CopyKind::kDeviceToHost:
        return RAL_CUDA_CALL(lib, cuMemcpyDtoHAsync_v2, dst, dptr(src), bytes, st);
      case CopyKind::kDeviceToDevice:
        return RAL_CUDA_CALL(lib, cuMemcpyDtoDAsync_v2, dptr(dst), dptr(src), bytes, st);
      case CopyKind::kHostToHost:
        // Unified addressing lets CUDA order a host copy on the stream too.
        return RAL_CUDA_CALL(lib, cuMemcpyAsync, dptr(dst), dptr(src), bytes, st);
    }
    return invalidArgument("cuda: unknown copy kind");
  });
}

Status CudaDriver::fill(void* dst, size_t bytes, const void* pattern, size_t pattern_size,
                        Stream* stream) {
  auto span = drivers::transferSpan("fill", DeviceKind::kCuda, bytes);
  if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8)
    return invalidArgument("cuda: fill pattern of ", pattern_size,
                           " bytes (expected 1, 2, 4 or 8)");
  if (bytes % pattern_size != 0)
    return invalidArgument("cuda: fill of ", bytes, " bytes is not a multiple of the ",
                           pattern_size, "-byte pattern");
  if (reinterpret_cast<uintptr_t>(dst) % pattern_size != 0)
    return invalidArgument("cuda: fill destination is not aligned to its ", pattern_size,
                           "-byte pattern");
  if (bytes == 0) return Status();
  if (dst == nullptr) return invalidArgument("cuda: fill of a null pointer");
  uint64_t value = 0;
  std::memcpy(&value, pattern, pattern_size);
  auto dev = device_;
  return enqueue(stream, [dev, dst, bytes, value, pattern_size](void* cs) -> Status {
    const CudaLibrary& lib = dev->lib();
    auto st = static_cast<CUstream>(cs);
    const size_t n = bytes / pattern_size;
    switch (pattern_size) {
      case 1:
        return RAL_CUDA_CALL(lib, cuMemsetD8Async, dptr(dst), static_cast<unsigned char>(value), n,
                             st);
      case 2:
        return RAL_CUDA_CALL(lib, cuMemsetD16Async, dptr(dst), static_cast<unsigned short>(value),
                             n, st);
      case 4:
        return RAL_CUDA_CALL(lib, cuMemsetD32Async, dptr(dst), static_cast<unsigned int>(value), n,
                             st);
      default: {
        const auto lo = static_cast<unsigned int>(value);
        const auto hi = static_cast<unsigned int>(value >> 32);
        if (lo == hi) return RAL_CUDA_CALL(lib, cuMemsetD32Async, dptr(dst), lo, n * 2, st);
        // An 8-byte pattern is two interleaved 4-byte columns of a pitched 2D fill.
        RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(lib, cuMemsetD2D32Async, dptr(dst), 8, lo, 1, n, st));
        return RAL_CUDA_CALL(lib, cuMemsetD2D32Async, dptr(dst) + 4, 8, hi, 1, n, st);
      }
    }
  });
}

// ---- executables

StatusOr<Executable*> CudaDriver::load(const ExecutableSpec& spec) {
  std::lock_guard<std::mutex> lock(executables_mutex_);
  if (auto it = executables_.find(spec.name); it != executables_.end()) return it->second.get();
  if (spec.format != ExecutableFormat::kPtx && spec.format != ExecutableFormat::kCubin &&
      spec.format != ExecutableFormat::kFatbin)
    return unsupported("cuda: executable '", spec.name, "' is ", executableFormatName(spec.format),
                       "; the CUDA driver loads ptx, cubin and fatbin");
  if (spec.data == nullptr || spec.size == 0)
    return invalidArgument("cuda: executable '", spec.name, "' has no data");
  if (spec.entries.empty())
    return invalidArgument("cuda: executable '", spec.name, "' lists no entry point");
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  std::string ptx;
  const void* image = spec.data;
  if (spec.format == ExecutableFormat::kPtx) {
    ptx.assign(static_cast<const char*>(spec.data), spec.size);  // NUL-terminated copy
    image = ptx.c_str();
  }
  char error_log[4096] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log, reinterpret_cast<void*>(sizeof(error_log) - 1)};
  CUmodule module = nullptr;
  Status loaded =
      RAL_CUDA_CALL(device_->lib(), cuModuleLoadDataEx, &module, image, 2, options, values);
  if (!loaded.ok())
    return Status(loaded.code(),
                  internal::strCat("cuda: loading executable '", spec.name, "' (",
                                   executableFormatName(spec.format), ") for sm_",
                                   device_->computeCapability(), ": ", loaded.message(),
                                   error_log[0] ? "; JIT log: " : "", error_log));
  std::vector<CUfunction> functions;
  for (const EntryPoint& entry : spec.entries) {
    CUfunction fn = nullptr;
    Status s = RAL_CUDA_CALL(device_->lib(), cuModuleGetFunction, &fn, module, entry.name.c_str());
    if (!s.ok()) {
      (void)device_->cu().cuModuleUnload(module);
      return notFound("cuda: executable '", spec.name, "' has no kernel '", entry.name,
                      "': ", s.message());
    }
    functions.push_back(fn);
  }
  ExecutableSpec kept = spec;
  kept.data = nullptr;  // the module holds the code; the caller's bytes may go away
  kept.size = 0;
  auto executable = std::make_unique<CudaExecutable>(this, device_, std::move(kept), module,
                                                     std::move(functions));
  Executable* raw = executable.get();
  executables_.emplace(spec.name, std::move(executable));
  return raw;
}

Status CudaDriver::launch(Executable* executable, uint32_t entry, const LaunchConfig& config,
                          const KernelArgs& args, Stream* stream) {
  auto* exe = dynamic_cast<CudaExecutable*>(executable);
  if (exe == nullptr || exe->owner() != this)
    return invalidArgument("cuda: the executable was not loaded by this CUDA driver");
  if (entry >= exe->entryCount())
    return outOfRange("cuda: entry ", entry, " of executable '", exe->spec().name, "' (it has ",
                      exe->entryCount(), ")");
  if (config.grid.count() == 0 || config.block.count() == 0)
    return invalidArgument("cuda: launch of '", exe->spec().entries[entry].name,
                           "' with an empty grid or block");
  if (config.shared_memory_bytes > 48 * 1024)
    RAL_RETURN_IF_ERROR(exe->reserveSharedMemory(entry, config.shared_memory_bytes));
  RAL_ASSIGN_OR_RETURN(CudaStream * s, resolveStream(stream));
  const CUfunction fn = exe->function(entry);
  const CudaDevice* dev = device_.get();
  KernelTimes* times = kernel_times_.get();
  const std::string* exe_name = &exe->spec().name;
  const std::string* entry_name = &exe->spec().entries[entry].name;
  auto issue = [dev, fn, config, times, exe_name, entry_name](BackendStream cs, void** params) {
    RAL_RETURN_IF_ERROR(dev->makeCurrent());
    const auto stream = static_cast<CUstream>(cs);
    auto launch = [&] {
      return RAL_CUDA_CALL(dev->lib(), cuLaunchKernel, fn, config.grid.x, config.grid.y,
                           config.grid.z, config.block.x, config.block.y, config.block.z,
                           config.shared_memory_bytes, stream, params, nullptr);
    };
    if (!trace::active()) return launch();  // no std::function on the untraced path
    return times->timed(
        stream, launch,
        [&](std::string* name, std::string* args) {
          *name = *entry_name;
          *args =
              internal::strCat("\"executable\": \"", *exe_name, "\", \"grid\": [", config.grid.x,
                               ", ", config.grid.y, ", ", config.grid.z, "], \"block\": [",
                               config.block.x, ", ", config.block.y, ", ", config.block.z, "]");
        });
  };
  Status packing;
  Status result = queue_->submit(
      s->state(), [&](BackendStream cs) { return issue(cs, const_cast<void**>(args.values)); },
      [&]() -> PendingQueueActions::IssueFn {
        auto packed = PackedArgs::from(args);
        if (!packed.ok()) {
          packing = packed.status();
          return [](BackendStream) { return Status(); };
        }
        return [issue, keep = device_, keep_times = kernel_times_, p = *packed](BackendStream cs) {
          return issue(cs, p->pointers.data());
        };
      });
  RAL_RETURN_IF_ERROR(packing);
  return result;
}

// ---- streams and semaphores

StatusOr<std::unique_ptr<Stream>> CudaDriver::createStream() {
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  CUstream stream = nullptr;
  CUstream callbacks = nullptr;
  RAL_RETURN_IF_ERROR(
      RAL_CUDA_CALL(device_->lib(), cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING));
  Status s = RAL_CUDA_CALL(device_->lib(), cuStreamCreate, &callbacks, CU_STREAM_NON_BLOCKING);
  if (!s.ok()) {
    (void)device_->cu().cuStreamDestroy_v2(stream);
    return s;
  }
  return std::unique_ptr<Stream>(new CudaStream(this, device_, stream, callbacks, queue_));
}

StatusOr<std::unique_ptr<Stream>> CudaDriver::wrapNativeStream(void* native) {
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  // Semaphore signals still need a companion stream of their own.
  CUstream callbacks = nullptr;
  RAL_RETURN_IF_ERROR(
      RAL_CUDA_CALL(device_->lib(), cuStreamCreate, &callbacks, CU_STREAM_NON_BLOCKING));
  return std::unique_ptr<Stream>(new CudaStream(this, device_, static_cast<CUstream>(native),
                                                callbacks, queue_, /*owns_stream=*/false));
}

Status CudaDriver::synchronize(Stream* stream) {
  auto span = drivers::waitSpan("synchronize", DeviceKind::kCuda);
  RAL_ASSIGN_OR_RETURN(CudaStream * s, resolveStream(stream));
  Status held = queue_->drain(s->state());
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  Status done = RAL_CUDA_CALL(device_->lib(), cuStreamSynchronize, s->handle());
  // Signals complete on the companion stream: wait for them so query() sees the new values.
  Status signals = RAL_CUDA_CALL(device_->lib(), cuStreamSynchronize,
                                 static_cast<CUstream>(s->state().callbackStream()));
  if (trace::active()) kernel_times_->publish();
  if (!held.ok()) return held;
  if (!done.ok()) return done;
  return signals;
}

StatusOr<std::shared_ptr<Semaphore>> CudaDriver::createSemaphore(uint64_t initial_value) {
  return std::shared_ptr<Semaphore>(TimelineSemaphore::create(sync_, initial_value));
}

namespace {
StatusOr<TimelineSemaphore*> asTimeline(Semaphore* semaphore) {
  auto* t = dynamic_cast<TimelineSemaphore*>(semaphore);
  if (t == nullptr) return invalidArgument("cuda: the semaphore was not created by a CUDA driver");
  return t;
}
}  // namespace

Status CudaDriver::queueSignal(Stream* stream, Semaphore* semaphore, uint64_t value) {
  RAL_ASSIGN_OR_RETURN(CudaStream * s, resolveStream(stream));
  RAL_ASSIGN_OR_RETURN(TimelineSemaphore * t, asTimeline(semaphore));
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  return queue_->signal(s->state(), *t, value);
}

Status CudaDriver::queueWait(Stream* stream, Semaphore* semaphore, uint64_t value) {
  RAL_ASSIGN_OR_RETURN(CudaStream * s, resolveStream(stream));
  RAL_ASSIGN_OR_RETURN(TimelineSemaphore * t, asTimeline(semaphore));
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  return queue_->wait(s->state(), *t, value);
}

DriverFactory cudaDriverFactory(CudaDriverOptions options) {
  return [options](Context& context) -> StatusOr<std::unique_ptr<Driver>> {
    CudaDriverOptions chosen = options;
    // A device the context selected (a device URI) wins over RAL_CUDA_DEVICE.
    if (chosen.device < 0) chosen.device = context.deviceOrdinal(DeviceKind::kCuda);
    RAL_ASSIGN_OR_RETURN(std::unique_ptr<CudaDriver> driver, CudaDriver::create(chosen));
    return std::unique_ptr<Driver>(std::move(driver));
  };
}

RAL_REGISTER_DRIVER(DeviceKind::kCuda, cudaDriverFactory(), listCudaDevices);

}  // namespace ral::cuda

// Defined beside RAL_REGISTER_DRIVER above, so naming it links the registration.
ral::Status ral::registerCudaDriver() {
  return ral::defaultDriverFactory(ral::DeviceKind::kCuda).status();
}
