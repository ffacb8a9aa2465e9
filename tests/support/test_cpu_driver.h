// A minimal CPU driver for tests: aligned host memory, counting what it hands out. Tests use it
// to observe allocations (zero-copy outputs), and as the CPU driver when libral was built
// without one.
#ifndef RAL_TESTS_SUPPORT_TEST_CPU_DRIVER_H_
#define RAL_TESTS_SUPPORT_TEST_CPU_DRIVER_H_

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "ral/standalone_context.h"
#include "ral/driver.h"

namespace ral::testing {

struct AllocationCounters {
  std::atomic<int64_t> allocations{0};
  std::atomic<int64_t> deallocations{0};
  // When >= 0, allocations fail once this many are live (an out-of-memory device).
  std::atomic<int64_t> max_live{-1};
  int64_t live() const { return allocations - deallocations; }
};

class TestCpuDriver : public Driver {
 public:
  explicit TestCpuDriver(std::shared_ptr<AllocationCounters> counters)
      : counters_(std::move(counters)) {}
  DeviceKind kind() const override { return DeviceKind::kCpu; }
  std::string deviceName() const override { return "test cpu"; }
  StatusOr<void*> allocate(size_t bytes, size_t alignment, MemoryKind) override {
    if (counters_->max_live >= 0 && counters_->live() >= counters_->max_live)
      return outOfMemory("test driver: ", bytes, " bytes (", counters_->live(), " blocks live)");
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    void* p = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
    if (p == nullptr) return outOfMemory("test driver: ", bytes, " bytes");
    ++counters_->allocations;
    return p;
  }
  Status deallocate(void* ptr) override {
    if (ptr != nullptr) ++counters_->deallocations;
    std::free(ptr);
    return Status();
  }
  Status copy(void* dst, const void* src, size_t bytes, CopyKind, Stream*) override {
    std::memcpy(dst, src, bytes);
    return Status();
  }
  Status fill(void*, size_t, const void*, size_t, Stream*) override {
    return unsupported("test driver");
  }
  MemoryStats memoryStats() const override { return {}; }
  Status trim() override { return Status(); }
  StatusOr<Executable*> load(const ExecutableSpec&) override { return unsupported("test driver"); }
  Status launch(Executable*, uint32_t, const LaunchConfig&, const KernelArgs&, Stream*) override {
    return unsupported("test driver");
  }
  StatusOr<std::unique_ptr<Stream>> createStream() override { return unsupported("test driver"); }
  Status synchronize(Stream*) override { return Status(); }
  StatusOr<std::shared_ptr<Semaphore>> createSemaphore(uint64_t) override {
    return unsupported("test driver");
  }
  Status queueSignal(Stream*, Semaphore*, uint64_t) override { return unsupported("test driver"); }
  Status queueWait(Stream*, Semaphore*, uint64_t) override { return unsupported("test driver"); }

 private:
  std::shared_ptr<AllocationCounters> counters_;
};

inline DriverFactory countingCpuDriverFactory(std::shared_ptr<AllocationCounters> counters) {
  return [counters](Context&) -> StatusOr<std::unique_ptr<Driver>> {
    return std::unique_ptr<Driver>(new TestCpuDriver(counters));
  };
}

// Options for tests that do not care which CPU driver runs: the one built into libral, or the
// test driver when there is none.
inline standalone::StandaloneContext::Options defaultTestOptions() {
  standalone::StandaloneContext::Options o;
  if (!defaultDriverFactory(DeviceKind::kCpu).ok())
    o.cpu_driver_factory = countingCpuDriverFactory(std::make_shared<AllocationCounters>());
  return o;
}

}  // namespace ral::testing

#endif  // RAL_TESTS_SUPPORT_TEST_CPU_DRIVER_H_
