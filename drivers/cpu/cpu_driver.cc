#include "drivers/cpu/cpu_driver.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <system_error>
#include <utility>
#include <vector>

#include "drivers/common/driver_trace.h"
#include "drivers/cpu/cpu_info.h"
#include "drivers/cpu/cpu_stream.h"
#include "drivers/cpu/host_semaphore.h"
#include "ral/device_uri.h"
#include "ral/registration.h"

namespace ral::cpu {
namespace {

constexpr int kMaxThreads = 4096;
// Copies and fills above this size are split over the pool.
constexpr size_t kParallelBytes = size_t{8} << 20;
constexpr size_t kParallelChunkBytes = size_t{2} << 20;

std::string cpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto start = line.find_first_not_of(' ', colon + 1);
        return start == std::string::npos ? std::string() : line.substr(start);
      }
    }
  }
  return "host CPU";
}

StatusOr<CpuStream*> asCpuStream(Stream* stream) {
  auto* s = dynamic_cast<CpuStream*>(stream);
  if (s == nullptr) return invalidArgument("cpu: the stream was not created by a CPU driver");
  return s;
}

template <typename T>
void fillTyped(void* dst, size_t bytes, const void* pattern) {
  T value;
  std::memcpy(&value, pattern, sizeof(T));
  T* out = static_cast<T*>(dst);
  const size_t n = bytes / sizeof(T);
  if (reinterpret_cast<uintptr_t>(dst) % alignof(T) == 0) {
    std::fill(out, out + n, value);
  } else {
    auto* b = static_cast<unsigned char*>(dst);
    for (size_t i = 0; i < n; ++i) std::memcpy(b + i * sizeof(T), &value, sizeof(T));
  }
}

void fillRange(void* dst, size_t bytes, const void* pattern, size_t pattern_size) {
  const auto* p = static_cast<const unsigned char*>(pattern);
  if (std::all_of(p, p + pattern_size, [&](unsigned char c) { return c == p[0]; })) {
    std::memset(dst, p[0], bytes);
    return;
  }
  switch (pattern_size) {
    case 2:
      return fillTyped<uint16_t>(dst, bytes, pattern);
    case 4:
      return fillTyped<uint32_t>(dst, bytes, pattern);
    default:
      return fillTyped<uint64_t>(dst, bytes, pattern);
  }
}

// piece(from, to) over [0, bytes) in kParallelChunkBytes parts on the pool's threads.
template <typename Piece>
Status runInChunks(ThreadPool& pool, size_t bytes, const Piece& piece) {
  struct State {
    const Piece* piece;
    size_t bytes;
  } state{&piece, bytes};
  const uint64_t chunks = (bytes + kParallelChunkBytes - 1) / kParallelChunkBytes;
  return pool.run(
      chunks, 1,
      [](void* p, uint64_t begin, uint64_t end) {
        const auto& st = *static_cast<const State*>(p);
        const size_t from = begin * kParallelChunkBytes;  // a multiple of every fill pattern size
        (*st.piece)(from, std::min(st.bytes, end * kParallelChunkBytes));
        return Status();
      },
      &state);
}

}  // namespace

class CpuDriver::CpuExecutable final : public Executable {
 public:
  CpuExecutable(const CpuDriver* owner, ExecutableSpec spec, std::vector<ral_host_kernel> fns)
      : owner_(owner), spec_(std::move(spec)), fns_(std::move(fns)) {}
  const ExecutableSpec& spec() const override { return spec_; }
  const CpuDriver* owner() const { return owner_; }
  const std::vector<ral_host_kernel>& functions() const { return fns_; }

 private:
  const CpuDriver* owner_;
  ExecutableSpec spec_;  // `data` cleared: the function table is copied into fns_
  std::vector<ral_host_kernel> fns_;
};

// ---- lifetime --------------------------------------------------------------------------------

StatusOr<std::unique_ptr<CpuDriver>> CpuDriver::create(CpuDriverOptions options) {
  if (options.threads < 0 || options.threads > kMaxThreads)
    return invalidArgument("cpu: thread count ", options.threads, " is not in [0, ", kMaxThreads,
                           "] (0 means the default)");
  const int threads = options.threads > 0 ? options.threads : defaultThreadCount();
  std::unique_ptr<ThreadPool> pool;
  try {
    pool = std::make_unique<ThreadPool>(threads);
  } catch (const std::system_error& e) {
    return unavailable("cpu: cannot start ", threads, " threads: ", e.what());
  }
  return std::unique_ptr<CpuDriver>(new CpuDriver(options, std::move(pool)));
}

CpuDriver::CpuDriver(const CpuDriverOptions& options, std::unique_ptr<ThreadPool> pool)
    : allocator_(options.memory), pool_(std::move(pool)) {}

CpuDriver::~CpuDriver() = default;

std::string CpuDriver::deviceName() const {
  static const std::string model = cpuModelName();
  return internal::strCat("cpu: ", model, ", ", threadCount(), " threads");
}

DriverFactory cpuDriverFactory(CpuDriverOptions options) {
  return [options](Context&) -> StatusOr<std::unique_ptr<Driver>> {
    RAL_ASSIGN_OR_RETURN(std::unique_ptr<CpuDriver> driver, CpuDriver::create(options));
    return std::unique_ptr<Driver>(std::move(driver));
  };
}

// The host is one device: cpu:0.
StatusOr<std::vector<DeviceInfo>> listCpuDevices() {
  DeviceInfo d;
  d.kind = DeviceKind::kCpu;
  d.ordinal = 0;
  d.name = internal::strCat("host CPU, ", defaultThreadCount(), " threads");
#if defined(__x86_64__)
  d.arch = "x86_64";
#elif defined(__aarch64__)
  d.arch = "aarch64";
#endif
  return std::vector<DeviceInfo>{d};
}

RAL_REGISTER_DRIVER(DeviceKind::kCpu, cpuDriverFactory(), listCpuDevices);


// ---- memory ----------------------------------------------------------------------------------

StatusOr<void*> CpuDriver::allocate(size_t bytes, size_t alignment, MemoryKind) {
  // Host memory is both the device's memory and host-visible.
  return allocator_.allocate(bytes, alignment);
}

Status CpuDriver::deallocate(void* ptr) { return allocator_.deallocate(ptr); }

Status CpuDriver::trim() {
  allocator_.trim();
  return Status();
}

Status CpuDriver::copy(void* dst, const void* src, size_t bytes, CopyKind kind, Stream* stream) {
  auto span = drivers::transferSpan("copy", DeviceKind::kCpu, bytes, drivers::copyKindName(kind));
  if (bytes == 0) return Status();
  if (dst == nullptr || src == nullptr)
    return invalidArgument("cpu: copy of ", bytes, " bytes with a null pointer");
  const auto d = reinterpret_cast<uintptr_t>(dst), r = reinterpret_cast<uintptr_t>(src);
  if (d < r + bytes && r < d + bytes)
    return invalidArgument("cpu: copy between overlapping ranges");
  auto run = [this, dst, src, bytes]() -> Status {
    if (bytes < kParallelBytes || threadCount() == 1) {
      std::memcpy(dst, src, bytes);
      return Status();
    }
    auto* out = static_cast<unsigned char*>(dst);
    const auto* in = static_cast<const unsigned char*>(src);
    return runInChunks(*pool_, bytes, [&](size_t from, size_t to) {
      std::memcpy(out + from, in + from, to - from);
    });
  };
  if (stream == nullptr) return run();
  RAL_ASSIGN_OR_RETURN(CpuStream * s, asCpuStream(stream));
  s->enqueue(std::move(run));
  return Status();
}

Status CpuDriver::fill(void* dst, size_t bytes, const void* pattern, size_t pattern_size,
                       Stream* stream) {
  auto span = drivers::transferSpan("fill", DeviceKind::kCpu, bytes);
  if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8)
    return invalidArgument("cpu: fill pattern of ", pattern_size, " bytes (expected 1, 2, 4, 8)");
  if (bytes % pattern_size != 0)
    return invalidArgument("cpu: fill of ", bytes, " bytes is not a multiple of the ", pattern_size,
                           "-byte pattern");
  if (bytes == 0) return Status();
  if (dst == nullptr || pattern == nullptr) return invalidArgument("cpu: fill with a null pointer");
  uint64_t value = 0;
  std::memcpy(&value, pattern, pattern_size);  // captured by value for queued work
  auto run = [this, dst, bytes, value, pattern_size]() -> Status {
    if (bytes < kParallelBytes || threadCount() == 1) {
      fillRange(dst, bytes, &value, pattern_size);
      return Status();
    }
    auto* out = static_cast<unsigned char*>(dst);
    return runInChunks(*pool_, bytes, [&](size_t from, size_t to) {
      fillRange(out + from, to - from, &value, pattern_size);
    });
  };
  if (stream == nullptr) return run();
  RAL_ASSIGN_OR_RETURN(CpuStream * s, asCpuStream(stream));
  s->enqueue(std::move(run));
  return Status();
}

// ---- executables -----------------------------------------------------------------------------

StatusOr<Executable*> CpuDriver::load(const ExecutableSpec& spec) {
  std::lock_guard<std::mutex> lock(executables_mutex_);
  auto it = executables_.find(spec.name);
  if (it != executables_.end()) return it->second.get();
  if (spec.format != ExecutableFormat::kHostFunction)
    return unsupported("cpu: executable '", spec.name, "' has format '",
                       executableFormatName(spec.format), "'; the CPU driver runs only 'host'");
  if (spec.entries.empty())
    return invalidArgument("cpu: executable '", spec.name, "' has no entry points");
  if (spec.data == nullptr || spec.size != spec.entries.size() * sizeof(ral_host_kernel))
    return invalidArgument("cpu: executable '", spec.name, "' must hold ", spec.entries.size(),
                           " host function pointers (", spec.size, " bytes given)");
  std::vector<ral_host_kernel> fns(spec.entries.size());
  std::memcpy(fns.data(), spec.data, spec.size);
  for (size_t i = 0; i < fns.size(); ++i) {
    if (fns[i] == nullptr)
      return invalidArgument("cpu: executable '", spec.name, "' entry '", spec.entries[i].name,
                             "' is null");
  }
  ExecutableSpec kept = spec;
  kept.data = nullptr;
  auto exe = std::make_unique<CpuExecutable>(this, std::move(kept), std::move(fns));
  Executable* raw = exe.get();
  executables_.emplace(spec.name, std::move(exe));
  return raw;
}

Status CpuDriver::runLaunch(ral_host_kernel fn, const LaunchConfig& config, void* const* args) {
  struct State {
    ral_host_kernel fn;
    const LaunchConfig* config;
    void* const* args;
    CachingAllocator* allocator;
  } state{fn, &config, args, &allocator_};
  return pool_->run(
      config.grid.count(), 0,
      [](void* p, uint64_t begin, uint64_t end) -> Status {
        const auto& st = *static_cast<State*>(p);
        const LaunchConfig& c = *st.config;
        ral_host_workgroup wg{};
        wg.grid[0] = c.grid.x, wg.grid[1] = c.grid.y, wg.grid[2] = c.grid.z;
        wg.block[0] = c.block.x, wg.block[1] = c.block.y, wg.block[2] = c.block.z;
        wg.shared_memory_bytes = c.shared_memory_bytes;
        if (c.shared_memory_bytes > 0) {
          RAL_ASSIGN_OR_RETURN(wg.shared_memory, st.allocator->allocate(c.shared_memory_bytes));
        }
        const uint64_t plane = uint64_t{c.grid.x} * c.grid.y;
        for (uint64_t i = begin; i < end; ++i) {
          wg.group_id[0] = static_cast<uint32_t>(i % c.grid.x);
          wg.group_id[1] = static_cast<uint32_t>((i / c.grid.x) % c.grid.y);
          wg.group_id[2] = static_cast<uint32_t>(i / plane);
          st.fn(&wg, st.args);
        }
        return st.allocator->deallocate(wg.shared_memory);
      },
      &state);
}

Status CpuDriver::launch(Executable* executable, uint32_t entry, const LaunchConfig& config,
                         const KernelArgs& args, Stream* stream) {
  auto* exe = dynamic_cast<CpuExecutable*>(executable);
  if (exe == nullptr || exe->owner() != this)
    return invalidArgument("cpu: launch of an executable not loaded by this driver");
  if (entry >= exe->functions().size())
    return outOfRange("cpu: executable '", exe->spec().name, "' has ", exe->functions().size(),
                      " entry points, not ", entry + 1);
  const Dim3& g = config.grid;
  const Dim3& b = config.block;
  if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0)
    return invalidArgument("cpu: launch with an empty grid or block (", g.x, "x", g.y, "x", g.z,
                           " workgroups of ", b.x, "x", b.y, "x", b.z, ")");
  if (args.count > 0 && (args.values == nullptr || args.sizes == nullptr))
    return invalidArgument("cpu: launch with ", args.count, " arguments but no argument array");
  for (size_t i = 0; i < args.count; ++i) {
    if (args.values[i] == nullptr) return invalidArgument("cpu: launch argument ", i, " is null");
  }
  const ral_host_kernel fn = exe->functions()[entry];
  if (stream == nullptr) return runLaunch(fn, config, args.values);

  RAL_ASSIGN_OR_RETURN(CpuStream * s, asCpuStream(stream));
  // Queued work outlives the caller's argument storage: copy the argument bytes, 16-aligned.
  struct Packed {
    std::vector<std::max_align_t> storage;
    std::vector<void*> pointers;
  };
  auto packed = std::make_shared<Packed>();
  std::vector<size_t> offsets(args.count);
  size_t total = 0;
  for (size_t i = 0; i < args.count; ++i) {
    offsets[i] = total;
    total += (args.sizes[i] + alignof(std::max_align_t) - 1) & ~(alignof(std::max_align_t) - 1);
  }
  packed->storage.resize(total / sizeof(std::max_align_t) + 1);
  auto* base = reinterpret_cast<unsigned char*>(packed->storage.data());
  for (size_t i = 0; i < args.count; ++i) {
    std::memcpy(base + offsets[i], args.values[i], args.sizes[i]);
    packed->pointers.push_back(base + offsets[i]);
  }
  s->enqueue(
      [this, fn, config, packed]() { return runLaunch(fn, config, packed->pointers.data()); });
  return Status();
}

// ---- streams and semaphores ------------------------------------------------------------------

StatusOr<std::unique_ptr<Stream>> CpuDriver::createStream() {
  try {
    return std::unique_ptr<Stream>(std::make_unique<CpuStream>());
  } catch (const std::system_error& e) {
    return unavailable("cpu: cannot start a stream thread: ", e.what());
  }
}

Status CpuDriver::synchronize(Stream* stream) {
  auto span = drivers::waitSpan("synchronize", DeviceKind::kCpu);
  if (stream == nullptr) return Status();  // the default stream runs synchronously
  RAL_ASSIGN_OR_RETURN(CpuStream * s, asCpuStream(stream));
  return s->synchronize();
}

StatusOr<std::shared_ptr<Semaphore>> CpuDriver::createSemaphore(uint64_t initial_value) {
  return std::shared_ptr<Semaphore>(std::make_shared<HostSemaphore>(initial_value));
}

Status CpuDriver::queueSignal(Stream* stream, Semaphore* semaphore, uint64_t value) {
  if (semaphore == nullptr) return invalidArgument("cpu: queueSignal on a null semaphore");
  if (stream == nullptr) return semaphore->signal(value);
  RAL_ASSIGN_OR_RETURN(CpuStream * s, asCpuStream(stream));
  // Skipped behind a failure, the signal never happens: its waiters get the failure instead.
  s->enqueue([semaphore, value] { return semaphore->signal(value); },
             [semaphore](const Status& why) { semaphore->fail(why); });
  return Status();
}

Status CpuDriver::queueWait(Stream* stream, Semaphore* semaphore, uint64_t value) {
  if (semaphore == nullptr) return invalidArgument("cpu: queueWait on a null semaphore");
  if (stream == nullptr) return semaphore->wait(value);
  RAL_ASSIGN_OR_RETURN(CpuStream * s, asCpuStream(stream));
  s->enqueue([semaphore, value] { return semaphore->wait(value); });
  return Status();
}

}  // namespace ral::cpu

// Defined beside RAL_REGISTER_DRIVER above, so naming it links the registration.
ral::Status ral::registerCpuDriver() {
  return ral::defaultDriverFactory(ral::DeviceKind::kCpu).status();
}
