// HsaTopology: what the HSA runtime reports about this machine, read once per driver: the CPU
// agent, and the GPU agents in the runtime's enumeration order (ROCR_VISIBLE_DEVICES is applied
// by the runtime itself), each with its memory pools (coarse-grained device memory, fine-grained
// host-visible memory and the kernarg pool, the last two from the CPU agent), their allocation
// granules, its ISA and queue limits and its UUID.
//
// A plain value: copies are independent, and nothing in it needs freeing (agents and pools
// belong to the runtime). discover() may be called from any thread.
#ifndef RAL_DRIVERS_HSA_HSA_TOPOLOGY_H_
#define RAL_DRIVERS_HSA_HSA_TOPOLOGY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "drivers/hsa/hsa_library.h"
#include "ral/status.h"

namespace ral::hsa {

struct HsaPool {
  hsa_amd_memory_pool_t pool{0};
  size_t granule = 0;  // HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE
  size_t size = 0;     // HSA_AMD_MEMORY_POOL_INFO_SIZE
};

struct HsaGpuAgent {
  hsa_agent_t agent{0};
  int ordinal = 0;              // index among the GPU agents
  std::string uuid;             // "GPU-<hex>", or empty when the runtime reports none
  std::string name;             // HSA_AGENT_INFO_NAME, e.g. "gfx90a"
  std::string product;          // HSA_AMD_AGENT_INFO_PRODUCT_NAME, e.g. "AMD Instinct MI210"
  std::string isa;              // e.g. "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"
  std::string arch;             // the processor part of the ISA name, e.g. "gfx90a"
  uint32_t queue_min_size = 0;  // packets
  uint32_t queue_max_size = 0;
  HsaPool device_pool;   // coarse-grained, on the GPU
  HsaPool host_pool;     // fine-grained, host memory the GPU can reach
  HsaPool kernarg_pool;  // where kernel arguments live
};

struct HsaTopology {
  hsa_agent_t cpu{0};
  std::vector<HsaGpuAgent> gpus;

  static StatusOr<HsaTopology> discover(const HsaLibrary& lib);
  // The GPU agent of `ordinal`; Unavailable ("no GPU agent", naming the runtime and the causes to
  // check) when there is none, NotFound (listing the agents) for an ordinal out of range.
  StatusOr<const HsaGpuAgent*> gpu(const HsaLibrary& lib, int ordinal) const;
};

// "gfx90a" from "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-" (the text after the last '-' of
// the target triple, without target features).
std::string processorOfIsa(const std::string& isa);

}  // namespace ral::hsa

#endif  // RAL_DRIVERS_HSA_HSA_TOPOLOGY_H_
