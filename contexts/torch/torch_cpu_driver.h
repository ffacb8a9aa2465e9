// TorchCpuDriver: RAL's CPU driver with torch's CPU allocator underneath. Everything but memory
// (launches on the workgroup thread pool, streams, semaphores, copies) is the CPU driver's own, so
// kernels run unchanged; their scratch memory and the modules' ral_alloc come from torch. The
// thread pool is sized by torch's intra-op thread count (torch.set_num_threads) at creation.
#ifndef RAL_CONTEXTS_TORCH_TORCH_CPU_DRIVER_H_
#define RAL_CONTEXTS_TORCH_TORCH_CPU_DRIVER_H_

#include <memory>

#include "contexts/torch/torch_allocator.h"
#include "drivers/cpu/cpu_driver.h"
#include "ral/driver.h"
#include "ral/status.h"

namespace ral::torch_host {

class TorchCpuDriver final : public cpu::CpuDriver {
 public:
  // `threads` 0: torch's intra-op thread count.
  static StatusOr<std::unique_ptr<TorchCpuDriver>> create(int threads = 0);

  StatusOr<void*> allocate(size_t bytes, size_t alignment = 64,
                           MemoryKind kind = MemoryKind::kDevice) override;
  Status deallocate(void* ptr) override;
  MemoryStats memoryStats() const override { return memory_.stats(); }
  // Torch owns any caching of CPU memory; nothing is held here.
  Status trim() override { return Status(); }

  TorchAllocator& memory() { return memory_; }

 private:
  TorchCpuDriver(const cpu::CpuDriverOptions& options, std::unique_ptr<cpu::ThreadPool> pool);

  TorchAllocator memory_;
};

// For Context::setDriverFactory(DeviceKind::kCpu, ...).
DriverFactory torchCpuDriverFactory();

}  // namespace ral::torch_host

#endif  // RAL_CONTEXTS_TORCH_TORCH_CPU_DRIVER_H_
