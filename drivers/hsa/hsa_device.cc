#include "drivers/hsa/hsa_device.h"

#include <algorithm>

namespace ral::hsa {
namespace {

size_t blockSizeFor(size_t granule) {
  size_t block = 64 * 1024;  // at least 64 KiB, and a multiple of the granule
  while (block < granule || block % granule != 0) block <<= 1;
  return block;
}

}  // namespace

HsaDevice::HsaDevice(const HsaLibrary& lib, const HsaGpuAgent& gpu, hsa_agent_t cpu,
                     uint32_t queue_size)
    : lib_(lib), gpu_(gpu), cpu_(cpu), queue_size_(queue_size), signals_(lib) {
  device_memory_ = makePool("hsa device memory", gpu_.device_pool, false);
  host_memory_ = makePool("hsa host-visible memory", gpu_.host_pool, true);
  kernargs_ = makePool("hsa kernarg memory", gpu_.kernarg_pool, true);
  staging_ = makePool("hsa staging memory", gpu_.host_pool, true);
}

std::unique_ptr<BlockPool> HsaDevice::makePool(const char* name, const HsaPool& pool, bool host) {
  const HsaLibrary* lib = &lib_;
  const hsa_agent_t agent = gpu_.agent;
  auto allocate = [lib, pool, agent, host](size_t bytes) -> StatusOr<void*> {
    void* p = nullptr;
    RAL_RETURN_IF_ERROR(RAL_HSA_CALL(*lib, hsa_amd_memory_pool_allocate, pool.pool, bytes, 0, &p));
    if (host) {
      // Host pools belong to the CPU agent: the GPU needs access granted.
      Status access = RAL_HSA_CALL(*lib, hsa_amd_agents_allow_access, 1, &agent, nullptr, p);
      if (!access.ok()) {
        (void)lib->symbols().hsa_amd_memory_pool_free(p);
        return access;
      }
    }
    return p;
  };
  auto release = [lib](void* p, size_t) { (void)lib->symbols().hsa_amd_memory_pool_free(p); };
  return std::make_unique<BlockPool>(name, blockSizeFor(pool.granule), allocate, release);
}

StatusOr<std::shared_ptr<HsaDevice>> HsaDevice::open(const HsaLibrary& lib, int ordinal,
                                                     uint32_t queue_size) {
  RAL_ASSIGN_OR_RETURN(HsaTopology topology, HsaTopology::discover(lib));
  RAL_ASSIGN_OR_RETURN(const HsaGpuAgent* gpu, topology.gpu(lib, ordinal));
  uint32_t size = 1;
  while (size < queue_size) size <<= 1;
  if (gpu->queue_max_size != 0) size = std::min(size, gpu->queue_max_size);
  size = std::max(size, std::max<uint32_t>(gpu->queue_min_size, 2));
  return std::shared_ptr<HsaDevice>(new HsaDevice(lib, *gpu, topology.cpu, size));
}

}  // namespace ral::hsa
