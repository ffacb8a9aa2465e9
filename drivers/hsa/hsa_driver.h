// HsaDriver: the Driver for AMD GPUs, over the HSA runtime (ROCr) loaded at run time
// (hsa_library.h); this header uses no HSA type, so hosts and kernels include it freely.
//  - device: one GPU agent (HsaDriverOptions::device, else $RAL_HSA_DEVICE, else 0) among those
//    the runtime enumerates (ROCR_VISIBLE_DEVICES applies);
//  - memory: block pools over the agent's coarse-grained pool (kDevice) and the CPU agent's
//    fine-grained pool (kHostVisible); copies are hsa_amd_memory_async_copy ordered on the
//    stream; fills are exact for every 1-, 2- and 4-byte pattern at any offset (a staged pattern
//    copied, then doubled in place);
//  - executables: HSACO code objects, loaded once and cached by name (hsa_executable.h);
//    launch writes one AQL kernel-dispatch packet (grid in work-items = grid x block);
//  - streams: HSA queues (hsa_stream.h); nullptr is the driver's own queue;
//  - semaphores: HsaSemaphore (host value, device waits as barrier-AND packets).
// Creation fails with Unavailable naming HSA and the cause (no runtime, a missing symbol,
// hsa_init failing, no GPU agent). Every member function is thread-safe.
#ifndef RAL_DRIVERS_HSA_HSA_DRIVER_H_
#define RAL_DRIVERS_HSA_HSA_DRIVER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "ral/driver.h"
#include "ral/status.h"

namespace ral::hsa {

class HsaDevice;
class HsaExecutable;
class HsaStream;

struct HsaDriverOptions {
  int device = -1;             // < 0: $RAL_HSA_DEVICE, else 0
  std::string library_path;    // empty: $RAL_HSA_RUNTIME_PATH, else libhsa-runtime64.so.1
  uint32_t queue_size = 1024;  // AQL packets per stream queue
};

class HsaDriver final : public Driver {
 public:
  static constexpr DeviceKind kDeviceKind = DeviceKind::kHsa;  // for Context::driver<HsaDriver>()
  static StatusOr<std::unique_ptr<HsaDriver>> create(HsaDriverOptions options = {});
  ~HsaDriver() override;

  DeviceKind kind() const override { return DeviceKind::kHsa; }
  std::string deviceName() const override;

  StatusOr<void*> allocate(size_t bytes, size_t alignment = 64,
                           MemoryKind kind = MemoryKind::kDevice) override;
  Status deallocate(void* ptr) override;
  Status copy(void* dst, const void* src, size_t bytes, CopyKind kind,
              Stream* stream = nullptr) override;
  Status fill(void* dst, size_t bytes, const void* pattern, size_t pattern_size,
              Stream* stream = nullptr) override;
  MemoryStats memoryStats() const override;
  // Memory of the device's or the host's pool of this driver (pageable host memory is not).
  bool kernelsCanAccess(const void* ptr, size_t bytes) const override;
  Status trim() override;

  StatusOr<Executable*> load(const ExecutableSpec& spec) override;
  Status launch(Executable* executable, uint32_t entry, const LaunchConfig& config,
                const KernelArgs& args, Stream* stream = nullptr) override;
  // kHsaco for exactly this agent's processor ("gfx90a"): 1; the empty target: 0; else -1.
  int targetRank(ExecutableFormat format, std::string_view target) const override;

  StatusOr<std::unique_ptr<Stream>> createStream() override;
  Status synchronize(Stream* stream = nullptr) override;
  StatusOr<std::shared_ptr<Semaphore>> createSemaphore(uint64_t initial_value = 0) override;
  Status queueSignal(Stream* stream, Semaphore* semaphore, uint64_t value) override;
  Status queueWait(Stream* stream, Semaphore* semaphore, uint64_t value) override;

  // The agent's processor ("gfx90a") and ordinal.
  const std::string& arch() const;
  int deviceOrdinal() const;

 private:
  explicit HsaDriver(std::shared_ptr<HsaDevice> device);
  StatusOr<HsaStream*> resolveStream(Stream* stream);

  const std::shared_ptr<HsaDevice> device_;
  std::unique_ptr<HsaStream> default_stream_;
  std::mutex executables_mutex_;
  std::unordered_map<std::string, std::unique_ptr<HsaExecutable>> executables_;
};

// A factory for Context::setDriverFactory with `options`.
DriverFactory hsaDriverFactory(HsaDriverOptions options = {});

}  // namespace ral::hsa

#endif  // RAL_DRIVERS_HSA_HSA_DRIVER_H_
