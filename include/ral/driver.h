// The Driver interface every device implements: memory, executables, streams and timeline
// semaphores. Kernels reach a device only through this interface (Context::driver(kind)), which
// is what lets one kernel binary serve every host context; what only one kind of device offers
// (a CPU thread pool, CUDA's stream-ordered queue, Vulkan buffer bindings) is reached through
// Driver::service<T>() (ral/driver_services.h), never by casting to a concrete driver.
#ifndef RAL_DRIVER_H_
#define RAL_DRIVER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ral/status.h"

namespace ral {

class Context;

// The optional, device-specific services a driver may offer (ral/driver_services.h). Values are
// only compared within one process.
enum class ServiceId : uint32_t { kHostThreads, kCudaQueue, kBufferBinding };

// Values are stable: they are stored in module files.
enum class DeviceKind : uint8_t { kCpu = 0, kCuda = 1, kVulkan = 2, kHsa = 3 };
inline constexpr int kNumDeviceKinds = 4;
std::string_view deviceKindName(DeviceKind kind);  // "cpu", "cuda", "vulkan", "hsa"
StatusOr<DeviceKind> deviceKindFromName(std::string_view name);

enum class MemoryKind : uint8_t {
  kDevice = 0,       // fastest for the device; may not be host-addressable
  kHostVisible = 1,  // host-addressable and usable by the device (pinned / mapped)
};

enum class CopyKind : uint8_t { kHostToDevice, kDeviceToHost, kDeviceToDevice, kHostToHost };

// Values are stable: they are stored in module files.
enum class ExecutableFormat : uint8_t {
  kHostFunction = 0,  // a table of host function pointers (CPU driver)
  kPtx = 1,
  kCubin = 2,
  kFatbin = 3,
  kSpirv = 4,
  kHsaco = 5,
};
std::string_view executableFormatName(ExecutableFormat format);

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t{x} * y * z; }
};

// An entry point of an executable and the workgroup size it was compiled for (0: chosen at
// launch).
struct EntryPoint {
  std::string name;
  Dim3 workgroup_size{0, 0, 0};
};

// What to load. `data` must stay valid until load() returns; drivers copy what they keep.
struct ExecutableSpec {
  std::string name;  // cache key within one driver
  ExecutableFormat format = ExecutableFormat::kHostFunction;
  // The device architecture the code was compiled for ("sm_80", "gfx90a"); empty: any device of
  // the driver's kind. Drivers refuse a target their device cannot run (see targetRank).
  std::string target;
  const void* data = nullptr;
  size_t size = 0;
  std::vector<EntryPoint> entries;
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  uint32_t shared_memory_bytes = 0;
};

// Kernel arguments as in cuLaunchKernel: `values[i]` points to argument i, `sizes[i]` bytes.
struct KernelArgs {
  void* const* values = nullptr;
  const size_t* sizes = nullptr;
  size_t count = 0;
};

// A queue of device work, ordered. Created and owned by its driver.
class Stream {
 public:
  virtual ~Stream();
};

class Executable {
 public:
  virtual ~Executable();
  virtual const ExecutableSpec& spec() const = 0;
  // Index of an entry point by name (launches then use the index, never a string).
  StatusOr<uint32_t> entryIndex(std::string_view entry) const;
};

using Timeout = std::chrono::nanoseconds;
inline constexpr Timeout kInfiniteTimeout = Timeout::max();

// A timeline semaphore: a 64-bit value that only increases. Waiting for v returns once the value
// is >= v. A failed semaphore reports its failure to every current and future waiter.
class Semaphore {
 public:
  virtual ~Semaphore();
  virtual StatusOr<uint64_t> query() = 0;
  // Host signal: sets the value to `value` (must not decrease it).
  virtual Status signal(uint64_t value) = 0;
  // Host wait; DeadlineExceeded on timeout.
  virtual Status wait(uint64_t value, Timeout timeout = kInfiniteTimeout) = 0;
  virtual void fail(Status status) = 0;
};

// Memory statistics every caching allocator reports.
struct MemoryStats {
  size_t bytes_in_use = 0;
  size_t bytes_cached = 0;
  size_t peak_bytes_in_use = 0;
  uint64_t allocations = 0;
  uint64_t cache_hits = 0;
};

class Driver {
 public:
  virtual ~Driver();
  virtual DeviceKind kind() const = 0;
  virtual std::string deviceName() const = 0;

  // ---- memory
  virtual StatusOr<void*> allocate(size_t bytes, size_t alignment = 64,
                                   MemoryKind kind = MemoryKind::kDevice) = 0;
  virtual Status deallocate(void* ptr) = 0;
  // On `stream` (nullptr: the default stream); complete when the stream reaches it.
  virtual Status copy(void* dst, const void* src, size_t bytes, CopyKind kind,
                      Stream* stream = nullptr) = 0;
  // Fills `bytes` with a repeated 1-, 2-, 4- or 8-byte pattern (ral_memset of any element).
  virtual Status fill(void* dst, size_t bytes, const void* pattern, size_t pattern_size,
                      Stream* stream = nullptr) = 0;
  virtual MemoryStats memoryStats() const = 0;
  // Whether this device's kernels can read and write [ptr, ptr + bytes): memory of this driver
  // (either kind) or memory the device otherwise maps. Library kernels ask before they hand an
  // operand to the device, so a foreign pointer is an error naming it instead of a device fault.
  // The default, for devices that run on the host, says yes. Thread-safe.
  virtual bool kernelsCanAccess(const void* ptr, size_t bytes) const;
  // Returns cached, unused memory to the system.
  virtual Status trim() = 0;

  // ---- executables ("load if not loaded, then launch")
  // Cached by spec.name: a second load of the same name returns the same executable.
  virtual StatusOr<Executable*> load(const ExecutableSpec& spec) = 0;
  virtual Status launch(Executable* executable, uint32_t entry, const LaunchConfig& config,
                        const KernelArgs& args, Stream* stream = nullptr) = 0;
  // How well this device runs code of `format` compiled for `target` (ExecutableSpec::target):
  // -1 when it cannot, else higher is better (PTX for sm_80 runs on sm_90, below sm_90's own).
  // Used to pick one of several variants of an executable. The default accepts only the empty
  // target, with rank 0.
  virtual int targetRank(ExecutableFormat format, std::string_view target) const;

  // ---- streams and synchronisation
  virtual StatusOr<std::unique_ptr<Stream>> createStream() = 0;
  // Blocks until all work queued on `stream` (nullptr: the default stream) is done.
  virtual Status synchronize(Stream* stream = nullptr) = 0;
  virtual StatusOr<std::shared_ptr<Semaphore>> createSemaphore(uint64_t initial_value = 0) = 0;
  // Queue operations: work queued after a wait starts once the semaphore reaches `value`;
  // a signal happens when the stream reaches it.
  virtual Status queueSignal(Stream* stream, Semaphore* semaphore, uint64_t value) = 0;
  virtual Status queueWait(Stream* stream, Semaphore* semaphore, uint64_t value) = 0;
  // Wraps a stream the host created with the device's native API (a CUstream for CUDA) so RAL
  // work can be queued on it. The wrapper does not own `native`: destroying it waits for the work
  // RAL queued and leaves `native` alive. Unsupported (naming the driver) where the device has no
  // such streams; the default.
  virtual StatusOr<std::unique_ptr<Stream>> wrapNativeStream(void* native);

  // ---- device-specific services
  // The service T (a class of ral/driver_services.h, with a static kServiceId) this driver
  // offers, or nullptr. The driver owns it; it lives as long as the driver.
  template <class T>
  T* service() {
    return static_cast<T*>(queryService(T::kServiceId));
  }
  // Returns the object implementing service `id` (of the class whose kServiceId is `id`), or
  // nullptr; the default offers none.
  virtual void* queryService(ServiceId id);
};

// Creates the driver of one device kind for a Context. Drivers register a default factory
// (see RAL_REGISTER_DRIVER); a host context may install its own (e.g. torch's allocator).
using DriverFactory = std::function<StatusOr<std::unique_ptr<Driver>>(Context&)>;

// One device as its driver enumerates it.
struct DeviceInfo {
  DeviceKind kind = DeviceKind::kCpu;
  int ordinal = 0;   // the index a URI's ordinal selects (ral/device_uri.h)
  std::string uuid;  // "GPU-<hex>" where the runtime has one, else empty
  std::string name;  // marketing / driver name
  std::string arch;  // "sm_90", "gfx90a", "x86_64", ... (what executables are compiled for)
};

// Lists the devices of one kind, without creating a driver. Unavailable (with the driver's own
// reason: no library, no device) when the runtime cannot be used; an empty list is also an
// answer.
using DeviceEnumerator = std::function<StatusOr<std::vector<DeviceInfo>>()>;

// Process-wide default factories and device lists (both AlreadyExists for a kind registered
// before); RAL_REGISTER_DRIVER registers both.
Status registerDriverFactory(DeviceKind kind, DriverFactory factory);
Status registerDeviceEnumerator(DeviceKind kind, DeviceEnumerator enumerator);
// Unavailable, naming the kind, when no driver for it was built into this process.
StatusOr<DriverFactory> defaultDriverFactory(DeviceKind kind);

namespace internal {
struct DriverRegistrar {
  DriverRegistrar(DeviceKind kind, DriverFactory factory, DeviceEnumerator enumerator);
};
}  // namespace internal

}  // namespace ral

#define RAL_DRIVER_CONCAT_INNER_(a, b) a##b
#define RAL_DRIVER_CONCAT_(a, b) RAL_DRIVER_CONCAT_INNER_(a, b)
// A driver registers its factory and its device enumerator together, at static
// initialization, in one line beside its implementation.
#define RAL_REGISTER_DRIVER(kind, factory, enumerator)                                    \
  static const ::ral::internal::DriverRegistrar RAL_DRIVER_CONCAT_(ral_driver_registrar_, \
                                                                   __COUNTER__)(kind, factory, enumerator)

#endif  // RAL_DRIVER_H_
