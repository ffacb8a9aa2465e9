// HsaDevice: the state one HSA driver shares with its streams: the runtime, the chosen GPU agent
// (and the CPU agent), the signal pool and the block pools over the agent's memory pools:
//  - device_memory: coarse-grained GPU memory (MemoryKind::kDevice);
//  - host_memory: fine-grained host memory the GPU may access (MemoryKind::kHostVisible);
//  - kernargs: the kernarg pool, one slot per dispatch until it completes;
//  - staging: fine-grained host memory for fill patterns (not in the driver's memoryStats).
// Shared (shared_ptr) by the driver, its streams and executables, so whichever goes last frees
// it. Every member is thread-safe (the pools and the signal pool lock themselves).
#ifndef RAL_DRIVERS_HSA_HSA_DEVICE_H_
#define RAL_DRIVERS_HSA_HSA_DEVICE_H_

#include <cstdint>
#include <memory>

#include "drivers/hsa/block_pool.h"
#include "drivers/hsa/hsa_library.h"
#include "drivers/hsa/hsa_signal_pool.h"
#include "drivers/hsa/hsa_topology.h"
#include "ral/status.h"

namespace ral::hsa {

class HsaDevice {
 public:
  // `queue_size`: packets per stream queue (clamped to the agent's limits, a power of two).
  static StatusOr<std::shared_ptr<HsaDevice>> open(const HsaLibrary& lib, int ordinal,
                                                   uint32_t queue_size);
  HsaDevice(const HsaDevice&) = delete;
  HsaDevice& operator=(const HsaDevice&) = delete;

  const HsaLibrary& lib() const { return lib_; }
  const HsaSymbols& hsa() const { return lib_.symbols(); }
  const HsaGpuAgent& gpu() const { return gpu_; }
  hsa_agent_t cpu() const { return cpu_; }
  uint32_t queueSize() const { return queue_size_; }
  SignalPool& signals() { return signals_; }
  BlockPool& deviceMemory() { return *device_memory_; }
  BlockPool& hostMemory() { return *host_memory_; }
  BlockPool& kernargs() { return *kernargs_; }
  BlockPool& staging() { return *staging_; }
  const BlockPool& deviceMemory() const { return *device_memory_; }
  const BlockPool& hostMemory() const { return *host_memory_; }

 private:
  HsaDevice(const HsaLibrary& lib, const HsaGpuAgent& gpu, hsa_agent_t cpu, uint32_t queue_size);
  std::unique_ptr<BlockPool> makePool(const char* name, const HsaPool& pool, bool host);

  const HsaLibrary& lib_;
  const HsaGpuAgent gpu_;
  const hsa_agent_t cpu_;
  const uint32_t queue_size_;
  SignalPool signals_;
  std::unique_ptr<BlockPool> device_memory_, host_memory_, kernargs_, staging_;
};

}  // namespace ral::hsa

#endif  // RAL_DRIVERS_HSA_HSA_DEVICE_H_
