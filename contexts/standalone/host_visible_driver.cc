#include "contexts/standalone/host_visible_driver.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <utility>

#include "drivers/cpu/cpu_driver.h"
#include "ral/context.h"

namespace ral::standalone {
namespace {

class HostVisibleCpuDriver final : public Driver {
 public:
  HostVisibleCpuDriver(std::unique_ptr<Driver> cpu, Context& context, DeviceKind device)
      : cpu_(std::move(cpu)), context_(context), kind_(device) {}

  DeviceKind kind() const override { return DeviceKind::kCpu; }
  std::string deviceName() const override {
    return cpu_->deviceName() + " with memory from " + std::string(deviceKindName(kind_));
  }
  StatusOr<void*> allocate(size_t bytes, size_t alignment, MemoryKind) override {
    // GPU host-visible allocations are at least 256-byte aligned.
    RAL_ASSIGN_OR_RETURN(Driver * d, device());
    return d->allocate(bytes, std::min<size_t>(alignment, 256), MemoryKind::kHostVisible);
  }
  Status deallocate(void* ptr) override {
    RAL_ASSIGN_OR_RETURN(Driver * d, device());
    return d->deallocate(ptr);
  }
  Status copy(void* dst, const void* src, size_t bytes, CopyKind kind, Stream* stream) override {
    return cpu_->copy(dst, src, bytes, kind, stream);
  }
  Status fill(void* dst, size_t bytes, const void* pattern, size_t pattern_size,
              Stream* stream) override {
    return cpu_->fill(dst, bytes, pattern, pattern_size, stream);
  }
  MemoryStats memoryStats() const override {
    Driver* d = device_.load(std::memory_order_acquire);
    return d != nullptr ? d->memoryStats() : MemoryStats();
  }
  Status trim() override {
    Driver* d = device_.load(std::memory_order_acquire);
    return d != nullptr ? d->trim() : Status();
  }
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
  // The Context's own driver of the device, looked up on first use (a factory must not ask its
  // Context for another driver while the Context creates this one). It must be the same
  // instance the device's kernels use: Vulkan memory belongs to one VkDevice, so another
  // instance's buffers could not be bound.
  StatusOr<Driver*> device() {
    if (Driver* d = device_.load(std::memory_order_acquire)) return d;
    RAL_ASSIGN_OR_RETURN(Driver * d, context_.driver(kind_));
    device_.store(d, std::memory_order_release);
    return d;
  }

  std::unique_ptr<Driver> cpu_;
  Context& context_;
  const DeviceKind kind_;
  std::atomic<Driver*> device_{nullptr};
};

}  // namespace

DriverFactory hostVisibleCpuDriverFactory(DeviceKind device) {
  return [device](Context& context) -> StatusOr<std::unique_ptr<Driver>> {
    RAL_RETURN_IF_ERROR(defaultDriverFactory(device).status());
    RAL_ASSIGN_OR_RETURN(std::unique_ptr<cpu::CpuDriver> cpu, cpu::CpuDriver::create());
    return std::unique_ptr<Driver>(new HostVisibleCpuDriver(std::move(cpu), context, device));
  };
}

}  // namespace ral::standalone
