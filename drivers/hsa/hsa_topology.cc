#include "drivers/hsa/hsa_topology.h"

#include <cstdlib>
#include <cstring>

namespace ral::hsa {
namespace {

struct PoolSearch {
  const HsaLibrary* lib;
  HsaPool* coarse = nullptr;   // wanted: a coarse-grained pool
  HsaPool* fine = nullptr;     // wanted: a fine-grained pool
  HsaPool* kernarg = nullptr;  // wanted: a kernarg pool
  Status status;
};

hsa_status_t visitPool(hsa_amd_memory_pool_t pool, void* data) {
  auto* search = static_cast<PoolSearch*>(data);
  const HsaSymbols& hsa = search->lib->symbols();
  hsa_amd_segment_t segment{};
  bool allowed = false;
  uint32_t flags = 0;
  if (hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment) !=
          HSA_STATUS_SUCCESS ||
      segment != HSA_AMD_SEGMENT_GLOBAL)
    return HSA_STATUS_SUCCESS;
  search->status = RAL_HSA_CALL(*search->lib, hsa_amd_memory_pool_get_info, pool,
                                HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &allowed);
  if (!search->status.ok()) return HSA_STATUS_ERROR;
  if (!allowed) return HSA_STATUS_SUCCESS;
  search->status = RAL_HSA_CALL(*search->lib, hsa_amd_memory_pool_get_info, pool,
                                HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
  if (!search->status.ok()) return HSA_STATUS_ERROR;
  HsaPool info;
  info.pool = pool;
  search->status = RAL_HSA_CALL(*search->lib, hsa_amd_memory_pool_get_info, pool,
                                HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE, &info.granule);
  if (search->status.ok())
    search->status = RAL_HSA_CALL(*search->lib, hsa_amd_memory_pool_get_info, pool,
                                  HSA_AMD_MEMORY_POOL_INFO_SIZE, &info.size);
  if (!search->status.ok()) return HSA_STATUS_ERROR;
  if (info.granule == 0) info.granule = 4096;
  auto take = [&](HsaPool* slot) {
    if (slot != nullptr && slot->pool.handle == 0) *slot = info;
  };
  if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) take(search->coarse);
  if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) take(search->kernarg);
  if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) take(search->fine);
  return HSA_STATUS_SUCCESS;
}

struct AgentSearch {
  const HsaLibrary* lib;
  HsaTopology* topology;
  bool have_cpu = false;
  Status status;
};

std::string infoString(const HsaLibrary& lib, hsa_agent_t agent, int attribute, size_t size) {
  std::string text(size + 1, '\0');
  if (lib.symbols().hsa_agent_get_info(agent, static_cast<hsa_agent_info_t>(attribute),
                                       text.data()) != HSA_STATUS_SUCCESS)
    return "";
  text.resize(std::strlen(text.c_str()));
  return text;
}

hsa_status_t visitIsa(hsa_isa_t isa, void* data) {
  auto* out = static_cast<std::pair<const HsaLibrary*, std::string>*>(data);
  uint32_t length = 0;
  const HsaSymbols& hsa = out->first->symbols();
  if (hsa.hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME_LENGTH, &length) != HSA_STATUS_SUCCESS)
    return HSA_STATUS_SUCCESS;
  std::string name(length + 1, '\0');
  if (hsa.hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME, name.data()) != HSA_STATUS_SUCCESS)
    return HSA_STATUS_SUCCESS;
  name.resize(std::strlen(name.c_str()));
  out->second = name;
  return HSA_STATUS_INFO_BREAK;  // the first (primary) ISA
}

hsa_status_t visitAgent(hsa_agent_t agent, void* data) {
  auto* search = static_cast<AgentSearch*>(data);
  const HsaLibrary& lib = *search->lib;
  hsa_device_type_t type{};
  search->status = RAL_HSA_CALL(lib, hsa_agent_get_info, agent, HSA_AGENT_INFO_DEVICE, &type);
  if (!search->status.ok()) return HSA_STATUS_ERROR;
  if (type == HSA_DEVICE_TYPE_CPU) {
    if (!search->have_cpu) {
      search->have_cpu = true;
      search->topology->cpu = agent;
    }
    return HSA_STATUS_SUCCESS;
  }
  if (type != HSA_DEVICE_TYPE_GPU) return HSA_STATUS_SUCCESS;
  HsaGpuAgent gpu;
  gpu.agent = agent;
  gpu.ordinal = static_cast<int>(search->topology->gpus.size());
  gpu.name = infoString(lib, agent, HSA_AGENT_INFO_NAME, 64);
  gpu.product = infoString(lib, agent, HSA_AMD_AGENT_INFO_PRODUCT_NAME, 64);
  gpu.uuid = infoString(lib, agent, HSA_AMD_AGENT_INFO_UUID, 21);
  if (gpu.uuid == "GPU-XX") gpu.uuid.clear();  // ROCr's answer for devices without a UUID
  std::pair<const HsaLibrary*, std::string> isa{&lib, ""};
  (void)lib.symbols().hsa_agent_iterate_isas(agent, visitIsa, &isa);
  gpu.isa = isa.second;
  gpu.arch = gpu.isa.empty() ? gpu.name : processorOfIsa(gpu.isa);
  (void)lib.symbols().hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUE_MIN_SIZE, &gpu.queue_min_size);
  (void)lib.symbols().hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUE_MAX_SIZE, &gpu.queue_max_size);
  PoolSearch pools{&lib, &gpu.device_pool, nullptr, nullptr, Status()};
  (void)lib.symbols().hsa_amd_agent_iterate_memory_pools(agent, visitPool, &pools);
  if (!pools.status.ok()) {
    search->status = pools.status;
    return HSA_STATUS_ERROR;
  }
  search->topology->gpus.push_back(std::move(gpu));
  return HSA_STATUS_SUCCESS;
}

}  // namespace

std::string processorOfIsa(const std::string& isa) {
  std::string processor = isa.substr(0, isa.find(':'));
  const size_t dash = processor.rfind('-');
  return dash == std::string::npos ? processor : processor.substr(dash + 1);
}

StatusOr<HsaTopology> HsaTopology::discover(const HsaLibrary& lib) {
  HsaTopology topology;
  AgentSearch search{&lib, &topology, false, Status()};
  const hsa_status_t r = lib.symbols().hsa_iterate_agents(visitAgent, &search);
  RAL_RETURN_IF_ERROR(search.status);
  RAL_RETURN_IF_ERROR(lib.check(r, "hsa_iterate_agents"));
  if (!search.have_cpu)
    return unavailable("hsa: the HSA runtime at '", lib.path(), "' reports no CPU agent");
  HsaPool fine, kernarg;
  PoolSearch pools{&lib, nullptr, &fine, &kernarg, Status()};
  (void)lib.symbols().hsa_amd_agent_iterate_memory_pools(topology.cpu, visitPool, &pools);
  RAL_RETURN_IF_ERROR(pools.status);
  if (kernarg.pool.handle == 0) kernarg = fine;
  for (HsaGpuAgent& gpu : topology.gpus) {
    gpu.host_pool = fine;
    gpu.kernarg_pool = kernarg;
  }
  return topology;
}

StatusOr<const HsaGpuAgent*> HsaTopology::gpu(const HsaLibrary& lib, int ordinal) const {
  if (gpus.empty()) {
    const char* visible = std::getenv("ROCR_VISIBLE_DEVICES");
    return unavailable("hsa: no GPU agent: the HSA runtime at '", lib.path(),
                       "' found only CPU agents (is an AMD GPU and the amdgpu kernel driver "
                       "present? ROCR_VISIBLE_DEVICES=",
                       visible == nullptr ? std::string("unset") : "'" + std::string(visible) + "'",
                       ")");
  }
  if (ordinal < 0 || ordinal >= static_cast<int>(gpus.size())) {
    std::string list;
    for (const HsaGpuAgent& g : gpus)
      list += internal::strCat(list.empty() ? "" : ", ", "hsa:", g.ordinal, " (", g.arch, ")");
    return notFound("hsa: no GPU agent ", ordinal, "; the runtime lists ", gpus.size(), ": ", list);
  }
  const HsaGpuAgent& g = gpus[static_cast<size_t>(ordinal)];
  if (g.device_pool.pool.handle == 0 || g.host_pool.pool.handle == 0)
    return unavailable("hsa: GPU agent ", ordinal, " (", g.name,
                       ") has no allocatable device or host memory pool");
  return &g;
}

}  // namespace ral::hsa
