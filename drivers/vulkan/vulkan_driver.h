// VulkanDriver: the Driver for a Vulkan 1.2 compute device, tested on Mesa's
// llvmpipe.
//  - device: vulkan_device.h (selection by index or name; RAL_VULKAN_DEVICE);
//  - memory: vulkan_memory.h (caching suballocator; device pointers are buffer device
//    addresses, host-visible pointers are mapped host addresses; any interior pointer resolves
//    back to (VkBuffer, offset));
//  - executables: vulkan_executable.h (SPIR-V → compute pipelines, loaded once per driver, i.e.
//    per Context, and cached by name; pipeline_cache.h persists the VkPipelineCache on disk);
//  - streams: vulkan_stream.h (batched command buffers; the default stream when nullptr);
//  - semaphores: vulkan_semaphore.h (native timeline semaphores; submission.h schedules waits
//    queued before their signal and carries failures).
// The loader is opened with dlopen on first use, so libral.so loads where Vulkan is absent and
// the driver's creation reports Unavailable.
#ifndef RAL_DRIVERS_VULKAN_VULKAN_DRIVER_H_
#define RAL_DRIVERS_VULKAN_VULKAN_DRIVER_H_

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "drivers/vulkan/pipeline_cache.h"
#include "drivers/vulkan/submission.h"
#include "drivers/vulkan/vulkan_device.h"
#include "drivers/vulkan/vulkan_executable.h"
#include "drivers/vulkan/vulkan_memory.h"
#include "drivers/vulkan/vulkan_semaphore.h"
#include "drivers/vulkan/vulkan_stream.h"
#include "ral/driver.h"
#include "ral/driver_services.h"
#include "ral/status.h"

namespace ral::vulkan {

struct VulkanDriverOptions {
  VulkanDeviceOptions device;
  // Pipeline cache directory; empty: RAL_VULKAN_PIPELINE_CACHE_DIR or the default; "off": none.
  std::string pipeline_cache_dir;
};

class VulkanDriver : public Driver, public BufferBindingService {
 public:
  static constexpr DeviceKind kDeviceKind = DeviceKind::kVulkan;

  // Unavailable (with the reason) when there is no loader, no driver (ICD), no usable device.
  static StatusOr<std::unique_ptr<VulkanDriver>> create(VulkanDriverOptions options = {});
  ~VulkanDriver() override;

  DeviceKind kind() const override { return DeviceKind::kVulkan; }
  std::string deviceName() const override;

  // kDevice memory is device-local (pointer: device address); kHostVisible memory is mapped
  // (pointer: host address).
  StatusOr<void*> allocate(size_t bytes, size_t alignment = 64,
                           MemoryKind kind = MemoryKind::kDevice) override;
  // Stream-ordered: the block is reused only after queued work that may use it has run.
  Status deallocate(void* ptr) override;
  // Either side may be memory of this driver or plain host memory, as `kind` says. Copies into
  // device memory return once the source was read (staged); copies to plain host memory wait for
  // the stream to reach them.
  Status copy(void* dst, const void* src, size_t bytes, CopyKind kind,
              Stream* stream = nullptr) override;
  // Patterns of 1, 2, 4 or 8 bytes; `bytes` a multiple of the pattern size.
  Status fill(void* dst, size_t bytes, const void* pattern, size_t pattern_size,
              Stream* stream = nullptr) override;
  MemoryStats memoryStats() const override { return memory_->stats(); }
  bool kernelsCanAccess(const void* ptr, size_t bytes) const override {
    return allocationOffset(ptr, bytes).ok();
  }
  Status trim() override;

  // spec.format must be kSpirv; see vulkan_executable.h for the argument layout of launches.
  StatusOr<Executable*> load(const ExecutableSpec& spec) override;
  // config.grid: workgroup counts; config.block must be the compiled workgroup size (or
  // {0,0,0} / {1,1,1}: use the compiled one).
  Status launch(Executable* executable, uint32_t entry, const LaunchConfig& config,
                const KernelArgs& args, Stream* stream = nullptr) override;

  StatusOr<std::unique_ptr<Stream>> createStream() override;
  Status synchronize(Stream* stream = nullptr) override;
  StatusOr<std::shared_ptr<Semaphore>> createSemaphore(uint64_t initial_value = 0) override;
  Status queueSignal(Stream* stream, Semaphore* semaphore, uint64_t value) override;
  Status queueWait(Stream* stream, Semaphore* semaphore, uint64_t value) override;

  // ---- Vulkan specifics (kernels, tests, benchmarks)
  VulkanDevice& device() const { return *device_; }
  // Where a pointer of this driver lies; NotFound for other memory.
  StatusOr<BufferRange> resolve(const void* ptr, size_t bytes = 0) const {
    return memory_->resolve(ptr, bytes);
  }
  // Device address of a pointer of this driver (either memory kind), for buffer_reference
  // shaders.
  StatusOr<VkDeviceAddress> deviceAddress(const void* ptr) const;
  // Offsets of buffer bindings must be multiples of this.
  size_t bindingAlignment() const override;
  // BufferBindingService.
  StatusOr<uint64_t> allocationOffset(const void* ptr, size_t bytes) const override;
  uint64_t maxBindingRange() const override;
  void* queryService(ServiceId id) override {
    return id == ServiceId::kBufferBinding ? static_cast<BufferBindingService*>(this) : nullptr;
  }
  Status savePipelineCache() { return cache_->save(); }
  PipelineCacheStats pipelineCacheStats() const { return cache_->stats(); }
  // The stream behind a ral::Stream of this driver (nullptr: the default stream).
  StatusOr<CommandStream*> commandStream(Stream* stream);

 private:
  VulkanDriver() = default;
  Status init(const VulkanDriverOptions& options);
  UseFence currentFence();
  Status copyToDevice(CommandStream& s, const BufferRange& dst, const void* src, size_t bytes);
  Status copyToHost(CommandStream& s, void* dst, const BufferRange& src, size_t bytes);
  Status fillPieces(CommandStream& s, const BufferRange& dst, size_t bytes, const void* pattern,
                    size_t pattern_size);

  std::shared_ptr<VulkanDevice> device_;
  std::shared_ptr<Scheduler> scheduler_;
  std::unique_ptr<VulkanMemory> memory_;
  std::unique_ptr<PipelineCache> cache_;
  std::mutex executables_mutex_;
  std::unordered_map<std::string, std::unique_ptr<VulkanExecutable>> executables_;
  std::shared_ptr<CommandStream> default_stream_;
  std::mutex streams_mutex_;
  std::vector<std::weak_ptr<CommandStream>> streams_;  // every stream, for stream-ordered frees
};

// A factory for Context::setDriverFactory that creates Vulkan drivers with `options`.
DriverFactory vulkanDriverFactory(VulkanDriverOptions options = {});

}  // namespace ral::vulkan

#endif  // RAL_DRIVERS_VULKAN_VULKAN_DRIVER_H_
