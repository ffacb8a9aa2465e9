// CpuDriver: the Driver for the host CPU.
//  - memory: a CachingAllocator (64-byte aligned, size buckets, per-thread caches, statistics);
//  - executables: ExecutableFormat::kHostFunction tables of ral_host_kernel (host_kernel.h),
//    launched as workgroups spread over a ThreadPool;
//  - streams: the default stream (nullptr) runs work synchronously in the caller; created streams
//    run their work in order on a thread of their own;
//  - semaphores: HostSemaphore timeline semaphores.
// The thread count comes from CpuDriverOptions::threads, else RAL_CPU_THREADS, else the CPUs in
// the process's affinity mask.
#ifndef RAL_DRIVERS_CPU_CPU_DRIVER_H_
#define RAL_DRIVERS_CPU_CPU_DRIVER_H_

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "drivers/cpu/caching_allocator.h"
#include "drivers/cpu/host_kernel.h"
#include "drivers/cpu/thread_pool.h"
#include "ral/driver.h"
#include "ral/driver_services.h"
#include "ral/status.h"

namespace ral::cpu {

struct CpuDriverOptions {
  int threads = 0;  // 0: defaultThreadCount()
  CachingAllocatorOptions memory;
};

class CpuDriver : public Driver, public HostThreadsService {
 public:
  static constexpr DeviceKind kDeviceKind = DeviceKind::kCpu;

  // InvalidArgument for a negative or absurd thread count; Unavailable when threads cannot start.
  static StatusOr<std::unique_ptr<CpuDriver>> create(CpuDriverOptions options = {});
  ~CpuDriver() override;

  DeviceKind kind() const override { return DeviceKind::kCpu; }
  std::string deviceName() const override;

  StatusOr<void*> allocate(size_t bytes, size_t alignment = 64,
                           MemoryKind kind = MemoryKind::kDevice) override;
  Status deallocate(void* ptr) override;
  Status copy(void* dst, const void* src, size_t bytes, CopyKind kind,
              Stream* stream = nullptr) override;
  // Patterns of 1, 2, 4 or 8 bytes; `bytes` must be a multiple of the pattern size.
  Status fill(void* dst, size_t bytes, const void* pattern, size_t pattern_size,
              Stream* stream = nullptr) override;
  MemoryStats memoryStats() const override { return allocator_.stats(); }
  Status trim() override;

  StatusOr<Executable*> load(const ExecutableSpec& spec) override;
  Status launch(Executable* executable, uint32_t entry, const LaunchConfig& config,
                const KernelArgs& args, Stream* stream = nullptr) override;

  StatusOr<std::unique_ptr<Stream>> createStream() override;
  Status synchronize(Stream* stream = nullptr) override;
  StatusOr<std::shared_ptr<Semaphore>> createSemaphore(uint64_t initial_value = 0) override;
  Status queueSignal(Stream* stream, Semaphore* semaphore, uint64_t value) override;
  Status queueWait(Stream* stream, Semaphore* semaphore, uint64_t value) override;

  int threadCount() const override { return pool_->threadCount(); }
  // HostThreadsService.
  void* queryService(ServiceId id) override {
    return id == ServiceId::kHostThreads ? static_cast<HostThreadsService*>(this) : nullptr;
  }
  ThreadPool& threadPool() { return *pool_; }
  CachingAllocator& allocator() { return allocator_; }

 protected:
  explicit CpuDriver(const CpuDriverOptions& options, std::unique_ptr<ThreadPool> pool);

 private:
  class CpuExecutable;
  Status runLaunch(ral_host_kernel fn, const LaunchConfig& config, void* const* args);

  CachingAllocator allocator_;
  std::unique_ptr<ThreadPool> pool_;
  std::mutex executables_mutex_;
  std::unordered_map<std::string, std::unique_ptr<CpuExecutable>> executables_;
};

// A factory for Context::setDriverFactory that creates CPU drivers with `options`.
DriverFactory cpuDriverFactory(CpuDriverOptions options = {});

}  // namespace ral::cpu

#endif  // RAL_DRIVERS_CPU_CPU_DRIVER_H_
