#include "contexts/torch/torch_cpu_driver.h"

#include <ATen/Parallel.h>
#include <c10/core/CPUAllocator.h>

#include <algorithm>
#include <system_error>
#include <utility>

namespace ral::torch_host {

TorchCpuDriver::TorchCpuDriver(const cpu::CpuDriverOptions& options,
                               std::unique_ptr<cpu::ThreadPool> pool)
    : CpuDriver(options, std::move(pool)),
      memory_(c10::GetCPUAllocator(), c10::Device(c10::DeviceType::CPU)) {}

StatusOr<std::unique_ptr<TorchCpuDriver>> TorchCpuDriver::create(int threads) {
  if (threads < 0) return invalidArgument("torch cpu driver: negative thread count ", threads);
  cpu::CpuDriverOptions options;
  options.threads = threads > 0 ? threads : std::max(1, at::get_num_threads());
  std::unique_ptr<cpu::ThreadPool> pool;
  try {
    pool = std::make_unique<cpu::ThreadPool>(options.threads);
  } catch (const std::system_error& e) {
    return unavailable("torch cpu driver: cannot start ", options.threads, " threads: ", e.what());
  }
  return std::unique_ptr<TorchCpuDriver>(new TorchCpuDriver(options, std::move(pool)));
}

StatusOr<void*> TorchCpuDriver::allocate(size_t bytes, size_t alignment, MemoryKind) {
  return memory_.allocate(bytes, alignment);
}

Status TorchCpuDriver::deallocate(void* ptr) { return memory_.deallocate(ptr); }

DriverFactory torchCpuDriverFactory() {
  return [](Context&) -> StatusOr<std::unique_ptr<Driver>> {
    RAL_ASSIGN_OR_RETURN(std::unique_ptr<TorchCpuDriver> driver, TorchCpuDriver::create());
    return std::unique_ptr<Driver>(std::move(driver));
  };
}

}  // namespace ral::torch_host
