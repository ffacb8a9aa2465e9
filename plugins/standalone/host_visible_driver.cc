#include "host_visible_driver.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "drivers/cpu/cpu_driver.h"
#include "ral/context.h"

namespace ral::standalone {
namespace {

class HostVisibleCpuDriver final : public Driver {
 public:
  HostVisibleCpuDriver(std::unique_ptr<Driver> cpu, std::unique_ptr<Driver> device)
      : cpu_(std::move(cpu)), device_(std::move(device)) {}

  DeviceKind kind() const override { return DeviceKind::kCpu; }
  std::string deviceName() const override {
    return cpu_->deviceName() + " with memory from " + device_->deviceName();
  }
  StatusOr<void*> allocate(size_t bytes, size_t alignment, MemoryKind) override {
    // GPU host-visible allocations are at least 256-byte aligned.
    return device_->allocate(bytes, std::min<size_t>(alignment, 256), MemoryKind::kHostVisible);
  }
  Status deallocate(void* ptr) override { return device_->deallocate(ptr); }
  Status copy(void* dst, const void* src, size_t bytes, CopyKind kind, Stream* stream) override {
    return cpu_->copy(dst, src, bytes, kind, stream);
  }
  Status fill(void* dst, size_t bytes, const void* pattern, size_t pattern_size,
              Stream* stream) override {
    return cpu_->fill(dst, bytes, pattern, pattern_size, stream);
  }
  MemoryStats memoryStats() const override { return device_->memoryStats(); }
  Status trim() override { return device_->trim(); }
  StatusOr<Executable*> load(const ExecutableSpec& spec) override { return cpu_->load(spec); }
  Status launch(Executable* executable, uint32_t entry, const LaunchConfig& config,
                const KernelArgs& args, Stream* stream) override {
    return cpu_->launch(executable, entry, config, args, stream);
  }
  StatusOr<std::unique_ptr<Stream>> createStream() override { return cpu_->createStream(); }
  Status synchronize(Stream* stream) override { return cpu_->synchronize(stream); }
  StatusOr<std::shared_ptr<Semaphore>> createSemaphore(uint64_t initial_value) override {
    return cpu_->createSemaphore(initial_value);
  }
  Status queueSignal(Stream* stream, Semaphore* semaphore, uint64_t value) override {
    return cpu_->queueSignal(stream, semaphore, value);
  }
  Status queueWait(Stream* stream, Semaphore* semaphore, uint64_t value) override {
    return cpu_->queueWait(stream, semaphore, value);
  }

 private:
  std::unique_ptr<Driver> cpu_;
  // A driver instance of its own (a factory must not ask its Context for another driver while
  // the Context creates this one); host-visible memory serves every instance in the process.
  std::unique_ptr<Driver> device_;
};

}  // namespace

DriverFactory hostVisibleCpuDriverFactory(DeviceKind device) {
  return [device](Context& context) -> StatusOr<std::unique_ptr<Driver>> {
    RAL_ASSIGN_OR_RETURN(DriverFactory make_device, defaultDriverFactory(device));
    RAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> gpu, make_device(context));
    RAL_ASSIGN_OR_RETURN(std::unique_ptr<cpu::CpuDriver> cpu, cpu::CpuDriver::create());
    return std::unique_ptr<Driver>(new HostVisibleCpuDriver(std::move(cpu), std::move(gpu)));
  };
}

}  // namespace ral::standalone
