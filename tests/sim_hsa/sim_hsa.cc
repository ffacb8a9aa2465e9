// libral_sim_hsa.so: a simulated HSA runtime, so the HSA driver and the driver conformance suite
// run without an AMD GPU (RAL_HSA_RUNTIME_PATH points at it). It exports, with hsa.h's
// signatures, exactly the functions RAL loads (RAL_HSA_SYMBOLS), backed by host memory and
// threads:
//  - one CPU agent (a fine-grained pool and a kernarg pool) and $RAL_SIM_HSA_GPUS GPU agents
//    (default 1), each with a UUID, a product name, the ISA $RAL_SIM_HSA_ISA and a coarse-grained
//    pool of $RAL_SIM_HSA_MEMORY_BYTES (default 1 GiB; beyond it allocations fail with
//    HSA_STATUS_ERROR_OUT_OF_RESOURCES). ROCR_VISIBLE_DEVICES (ordinals or UUIDs) filters and
//    orders the GPU agents, as in ROCr;
//  - signals: an int64 value; every store wakes every waiter (one mutex and condition variable
//    for the whole runtime). Signals are never freed, so a late waiter never reads freed memory;
//  - queues: a real AQL ring of 64-byte packets with read/write indices and a doorbell signal,
//    and one packet-processor thread per queue that waits for the doorbell and a valid header
//    (acquire), runs kernel-dispatch packets (host functions, sim_hsa_kernel.h), waits for the
//    dependencies of barrier-AND packets (a negative one fails the queue: the error callback
//    runs and the queue stops), decrements completion signals, then invalidates the header and
//    advances the read index, in order;
//  - hsa_amd_memory_async_copy runs on one copy-engine thread, each copy once its dependencies
//    are met (a negative dependency skips the copy and sets its completion signal to -1);
//    hsa_amd_signal_async_handler handlers run on one handler thread;
//  - memory locking is the identity (host memory is what the "GPU" reads anyway).
// Thread-safety: every entry point may be called from any thread.
#include <dlfcn.h>
#include <elf.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sim_hsa_kernel.h"

namespace {

struct SimSignal {
  hsa_signal_value_t value = 0;  // guarded by Sim::mutex
};

struct SimPool {
  uint32_t flags = 0;
  size_t limit = 0;
  size_t used = 0;
  std::map<void*, size_t> allocations;
};

struct SimAgent {
  hsa_device_type_t type = HSA_DEVICE_TYPE_CPU;
  std::string name, product, uuid, isa;
  std::vector<SimPool*> pools;
};

struct SimKernel {
  RalSimHsaKernel fn = nullptr;  // null: a dispatch fails the queue (no host function for it)
  std::string name;
  uint32_t kernarg_bytes = 0;
  uint32_t group_bytes = 0;
  uint32_t private_bytes = 0;
};

struct SimReader {
  std::vector<std::pair<std::string, SimKernel>> kernels;
  std::string processor;  // an ELF code object's processor ("gfx90a"); empty for text ones
};

struct SimExecutable {
  std::map<std::string, std::unique_ptr<SimKernel>> symbols;  // "<name>.kd"
  bool frozen = false;
};

struct SimQueue {
  hsa_queue_t queue{};  // first: the hsa_queue_t* handed out points here
  std::atomic<uint64_t> read{0}, write{0};
  void (*callback)(hsa_status_t, hsa_queue_t*, void*) = nullptr;
  void* data = nullptr;
  bool stop = false;  // guarded by Sim::mutex
  std::thread worker;
  std::vector<unsigned char> ring;
};

struct SimCopy {
  void* dst;
  const void* src;
  size_t size;
  std::vector<SimSignal*> deps;
  SimSignal* completion;
};

struct SimHandler {
  SimSignal* signal;
  hsa_signal_condition_t cond;
  hsa_signal_value_t value;
  hsa_amd_signal_handler fn;
  void* arg;
};

struct Sim {
  std::mutex mutex;
  std::condition_variable changed;
  int init_count = 0;
  bool configured = false;
  std::vector<SimAgent*> agents;  // [0] is the CPU agent; then the visible GPUs
  // Every agent ever made, visible or not: handles stay valid for the life of the process.
  std::vector<std::unique_ptr<SimAgent>> all_agents;
  std::set<SimKernel*> kernels;
  std::string fail_kernel;
  std::list<SimCopy> copies;
  std::list<SimHandler> handlers;
  bool threads_started = false;
  // Every signal ever created. Destroyed ones are kept too: a copy or handler thread may still
  // read one it was given, and the driver pools its signals, so this stays small.
  std::vector<std::unique_ptr<SimSignal>> signals;
};

Sim& sim() {
  static Sim* const instance = new Sim();
  return *instance;
}

SimSignal* sig(hsa_signal_t s) { return reinterpret_cast<SimSignal*>(s.handle); }

bool satisfied(hsa_signal_value_t v, hsa_signal_condition_t cond, hsa_signal_value_t compare) {
  switch (cond) {
    case HSA_SIGNAL_CONDITION_EQ:
      return v == compare;
    case HSA_SIGNAL_CONDITION_NE:
      return v != compare;
    case HSA_SIGNAL_CONDITION_LT:
      return v < compare;
    case HSA_SIGNAL_CONDITION_GTE:
      return v >= compare;
  }
  return false;
}

void storeLocked(SimSignal* s, hsa_signal_value_t v) {
  s->value = v;
  sim().changed.notify_all();
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string envOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? v : fallback;
}

void copyEngine() {
  Sim& S = sim();
  std::unique_lock<std::mutex> lock(S.mutex);
  while (true) {
    auto ready = S.copies.end();
    for (auto it = S.copies.begin(); it != S.copies.end(); ++it) {
      bool ok = true;
      for (SimSignal* d : it->deps) ok = ok && d->value <= 0;
      if (ok) {
        ready = it;
        break;
      }
    }
    if (ready == S.copies.end()) {
      S.changed.wait(lock);
      continue;
    }
    SimCopy c = *ready;
    S.copies.erase(ready);
    bool failed = false;
    for (SimSignal* d : c.deps) failed = failed || d->value < 0;
    if (failed) {
      if (c.completion != nullptr) storeLocked(c.completion, -1);
      continue;
    }
    lock.unlock();
    std::memmove(c.dst, c.src, c.size);
    lock.lock();
    if (c.completion != nullptr) storeLocked(c.completion, c.completion->value - 1);
  }
}

void handlerThread() {
  Sim& S = sim();
  std::unique_lock<std::mutex> lock(S.mutex);
  while (true) {
    auto ready = S.handlers.end();
    for (auto it = S.handlers.begin(); it != S.handlers.end(); ++it)
      if (satisfied(it->signal->value, it->cond, it->value)) {
        ready = it;
        break;
      }
    if (ready == S.handlers.end()) {
      S.changed.wait(lock);
      continue;
    }
    SimHandler h = *ready;
    S.handlers.erase(ready);
    const hsa_signal_value_t value = h.signal->value;
    lock.unlock();
    const bool again = h.fn(value, h.arg);
    lock.lock();
    if (again) S.handlers.push_back(h);
  }
}

// Runs the packets of `q` in order until the queue is destroyed or fails.
void packetProcessor(SimQueue* q) {
  Sim& S = sim();
  SimSignal* doorbell = sig(q->queue.doorbell_signal);
  auto* ring = static_cast<unsigned char*>(q->queue.base_address);
  std::unique_lock<std::mutex> lock(S.mutex);
  while (true) {
    const uint64_t index = q->read.load();
    auto* slot = ring + (index % q->queue.size) * 64;
    auto* header = reinterpret_cast<uint16_t*>(slot);
    auto valid = [&] {
      return doorbell->value >= static_cast<hsa_signal_value_t>(index) &&
             (__atomic_load_n(header, __ATOMIC_ACQUIRE) & 0xff) != HSA_PACKET_TYPE_INVALID;
    };
    S.changed.wait(lock, [&] { return q->stop || valid(); });
    if (q->stop) return;
    const uint16_t type = __atomic_load_n(header, __ATOMIC_ACQUIRE) & 0xff;
    hsa_signal_t completion{0};
    hsa_status_t error = HSA_STATUS_SUCCESS;
    if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH) {
      auto* p = reinterpret_cast<hsa_kernel_dispatch_packet_t*>(slot);
      completion = p->completion_signal;
      auto* kernel = reinterpret_cast<SimKernel*>(p->kernel_object);
      if (S.kernels.count(kernel) == 0 || kernel->fn == nullptr || kernel->name == S.fail_kernel) {
        error = HSA_STATUS_ERROR_EXCEPTION;
      } else {
        RalSimHsaDispatch d{{p->grid_size_x, p->grid_size_y, p->grid_size_z},
                            {p->workgroup_size_x, p->workgroup_size_y, p->workgroup_size_z},
                            p->group_segment_size};
        lock.unlock();
        kernel->fn(&d, p->kernarg_address);
        lock.lock();
      }
    } else if (type == HSA_PACKET_TYPE_BARRIER_AND) {
      auto* p = reinterpret_cast<hsa_barrier_and_packet_t*>(slot);
      completion = p->completion_signal;
      S.changed.wait(lock, [&] {
        if (q->stop) return true;
        for (const hsa_signal_t& d : p->dep_signal)
          if (d.handle != 0 && sig(d)->value > 0) return false;
        return true;
      });
      if (q->stop) return;
      for (const hsa_signal_t& d : p->dep_signal)
        if (d.handle != 0 && sig(d)->value < 0) error = HSA_STATUS_ERROR_INVALID_SIGNAL;
    } else {
      error = HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
    }
    if (error != HSA_STATUS_SUCCESS) {
      // The queue is in error: report it once, then process nothing more.
      lock.unlock();
      if (q->callback != nullptr) q->callback(error, &q->queue, q->data);
      lock.lock();
      S.changed.wait(lock, [&] { return q->stop; });
      return;
    }
    if (completion.handle != 0) storeLocked(sig(completion), sig(completion)->value - 1);
    __atomic_store_n(header, static_cast<uint16_t>(HSA_PACKET_TYPE_INVALID), __ATOMIC_RELEASE);
    q->read.store(index + 1);
    S.changed.notify_all();
  }
}

// With the mutex held: builds the agents from the environment (once per process).
void configureLocked() {
  Sim& S = sim();
  if (S.configured) return;
  S.configured = true;
  S.fail_kernel = envOr(RAL_SIM_HSA_FAIL_KERNEL_ENV, "");
  auto* cpu = new SimAgent();
  cpu->type = HSA_DEVICE_TYPE_CPU;
  cpu->name = "RAL simulated CPU";
  auto* fine = new SimPool{HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED, size_t{8} << 30, 0, {}};
  auto* kernarg = new SimPool{
      HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED | HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT,
      size_t{1} << 30,
      0,
      {}};
  cpu->pools = {fine, kernarg};
  S.agents.push_back(cpu);
  S.all_agents.emplace_back(cpu);
  const int count = std::atoi(envOr(RAL_SIM_HSA_GPUS_ENV, "1").c_str());
  const size_t memory =
      std::strtoull(envOr(RAL_SIM_HSA_MEMORY_ENV, "1073741824").c_str(), nullptr, 10);
  const std::string isa = envOr(RAL_SIM_HSA_ISA_ENV, "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
  std::vector<SimAgent*> physical;
  for (int i = 0; i < count; ++i) {
    auto* gpu = new SimAgent();
    gpu->type = HSA_DEVICE_TYPE_GPU;
    gpu->isa = isa;
    std::string processor = isa.substr(0, isa.find(':'));
    gpu->name = processor.substr(processor.rfind('-') + 1);
    gpu->product = "RAL simulated AMD GPU " + std::to_string(i);
    char uuid[32];
    std::snprintf(uuid, sizeof(uuid), "GPU-%016llx",
                  static_cast<unsigned long long>(RAL_SIM_HSA_UUID_BASE + i));
    gpu->uuid = uuid;
    gpu->pools = {new SimPool{HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, memory, 0, {}}};
    physical.push_back(gpu);
    S.all_agents.emplace_back(gpu);
  }
  const char* visible = std::getenv("ROCR_VISIBLE_DEVICES");
  if (visible == nullptr) {
    for (SimAgent* g : physical) S.agents.push_back(g);
    return;
  }
  // As ROCr: a comma-separated list of ordinals or UUIDs; parsing stops at the first token that
  // names no device.
  std::stringstream tokens(visible);
  std::string token;
  while (std::getline(tokens, token, ',')) {
    SimAgent* found = nullptr;
    if (lower(token).rfind("gpu-", 0) == 0) {
      for (SimAgent* g : physical)
        if (lower(g->uuid) == lower(token)) found = g;
    } else if (!token.empty() && std::isdigit(static_cast<unsigned char>(token[0]))) {
      const size_t i = std::strtoul(token.c_str(), nullptr, 10);
      if (i < physical.size()) found = physical[i];
    }
    if (found == nullptr) break;
    S.agents.push_back(found);
  }
}

SimAgent* agentOf(hsa_agent_t a) {
  Sim& S = sim();
  std::lock_guard<std::mutex> lock(S.mutex);
  if (a.handle == 0 || a.handle > S.agents.size()) return nullptr;
  return S.agents[a.handle - 1];
}

bool initialized() {
  std::lock_guard<std::mutex> lock(sim().mutex);
  return sim().init_count > 0;
}

hsa_status_t copyString(void* out, const std::string& s, size_t size) {
  std::memset(out, 0, size);
  std::memcpy(out, s.data(), std::min(s.size(), size - 1));
  return HSA_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

hsa_status_t hsa_init() {
  Sim& S = sim();
  std::lock_guard<std::mutex> lock(S.mutex);
  configureLocked();
  ++S.init_count;
  if (!S.threads_started) {
    S.threads_started = true;
    std::thread(copyEngine).detach();
    std::thread(handlerThread).detach();
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_status_string(hsa_status_t status, const char** text) {
  if (text == nullptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (status) {
#define SIM_STATUS(name) \
  case name:             \
    *text = #name;       \
    return HSA_STATUS_SUCCESS;
    SIM_STATUS(HSA_STATUS_SUCCESS)
    SIM_STATUS(HSA_STATUS_ERROR)
    SIM_STATUS(HSA_STATUS_ERROR_INVALID_ARGUMENT)
    SIM_STATUS(HSA_STATUS_ERROR_INVALID_AGENT)
    SIM_STATUS(HSA_STATUS_ERROR_INVALID_ALLOCATION)
    SIM_STATUS(HSA_STATUS_ERROR_OUT_OF_RESOURCES)
    SIM_STATUS(HSA_STATUS_ERROR_NOT_INITIALIZED)
    SIM_STATUS(HSA_STATUS_ERROR_INVALID_CODE_OBJECT)
    SIM_STATUS(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME)
    SIM_STATUS(HSA_STATUS_ERROR_INVALID_SIGNAL)
    SIM_STATUS(HSA_STATUS_ERROR_INVALID_PACKET_FORMAT)
    SIM_STATUS(HSA_STATUS_ERROR_EXCEPTION)
    SIM_STATUS(HSA_STATUS_ERROR_INVALID_EXECUTABLE)
    SIM_STATUS(HSA_STATUS_ERROR_FROZEN_EXECUTABLE)
#undef SIM_STATUS
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

hsa_status_t hsa_iterate_agents(hsa_status_t (*callback)(hsa_agent_t, void*), void* data) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  size_t n = 0;
  {
    std::lock_guard<std::mutex> lock(sim().mutex);
    n = sim().agents.size();
  }
  for (size_t i = 0; i < n; ++i) {
    const hsa_status_t r = callback(hsa_agent_t{i + 1}, data);
    if (r == HSA_STATUS_INFO_BREAK) return HSA_STATUS_SUCCESS;
    if (r != HSA_STATUS_SUCCESS) return r;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_get_info(hsa_agent_t agent, hsa_agent_info_t attribute, void* value) {
  SimAgent* a = agentOf(agent);
  if (a == nullptr) return HSA_STATUS_ERROR_INVALID_AGENT;
  switch (static_cast<int>(attribute)) {
    case HSA_AGENT_INFO_DEVICE:
      *static_cast<hsa_device_type_t*>(value) = a->type;
      return HSA_STATUS_SUCCESS;
    case HSA_AGENT_INFO_NAME:
      return copyString(value, a->name, 64);
    case HSA_AMD_AGENT_INFO_PRODUCT_NAME:
      return copyString(value, a->product, 64);
    case HSA_AMD_AGENT_INFO_UUID:
      return copyString(value, a->uuid.empty() ? "CPU-XX" : a->uuid, 21);
    case HSA_AGENT_INFO_QUEUE_MIN_SIZE:
      *static_cast<uint32_t*>(value) = 16;
      return HSA_STATUS_SUCCESS;
    case HSA_AGENT_INFO_QUEUE_MAX_SIZE:
      *static_cast<uint32_t*>(value) = 1u << 17;
      return HSA_STATUS_SUCCESS;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

hsa_status_t hsa_agent_iterate_isas(hsa_agent_t agent, hsa_status_t (*callback)(hsa_isa_t, void*),
                                    void* data) {
  SimAgent* a = agentOf(agent);
  if (a == nullptr) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (a->isa.empty()) return HSA_STATUS_SUCCESS;
  const hsa_status_t r = callback(hsa_isa_t{reinterpret_cast<uint64_t>(a)}, data);
  return r == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : r;
}

hsa_status_t hsa_isa_get_info_alt(hsa_isa_t isa, hsa_isa_info_t attribute, void* value) {
  auto* a = reinterpret_cast<SimAgent*>(isa.handle);
  if (a == nullptr) return HSA_STATUS_ERROR_INVALID_ISA;
  if (attribute == HSA_ISA_INFO_NAME_LENGTH) {
    *static_cast<uint32_t*>(value) = static_cast<uint32_t>(a->isa.size());
    return HSA_STATUS_SUCCESS;
  }
  if (attribute == HSA_ISA_INFO_NAME) {
    std::memcpy(value, a->isa.data(), a->isa.size());
    return HSA_STATUS_SUCCESS;
  }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

hsa_status_t hsa_amd_agent_iterate_memory_pools(
    hsa_agent_t agent, hsa_status_t (*callback)(hsa_amd_memory_pool_t, void*), void* data) {
  SimAgent* a = agentOf(agent);
  if (a == nullptr) return HSA_STATUS_ERROR_INVALID_AGENT;
  for (SimPool* p : a->pools) {
    const hsa_status_t r = callback(hsa_amd_memory_pool_t{reinterpret_cast<uint64_t>(p)}, data);
    if (r == HSA_STATUS_INFO_BREAK) return HSA_STATUS_SUCCESS;
    if (r != HSA_STATUS_SUCCESS) return r;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t pool,
                                          hsa_amd_memory_pool_info_t attribute, void* value) {
  auto* p = reinterpret_cast<SimPool*>(pool.handle);
  if (p == nullptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (attribute) {
    case HSA_AMD_MEMORY_POOL_INFO_SEGMENT:
      *static_cast<hsa_amd_segment_t*>(value) = HSA_AMD_SEGMENT_GLOBAL;
      return HSA_STATUS_SUCCESS;
    case HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS:
      *static_cast<uint32_t*>(value) = p->flags;
      return HSA_STATUS_SUCCESS;
    case HSA_AMD_MEMORY_POOL_INFO_SIZE:
      *static_cast<size_t*>(value) = p->limit;
      return HSA_STATUS_SUCCESS;
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED:
      *static_cast<bool*>(value) = true;
      return HSA_STATUS_SUCCESS;
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE:
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT:
      *static_cast<size_t*>(value) = RAL_SIM_HSA_GRANULE;
      return HSA_STATUS_SUCCESS;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t pool, size_t size, uint32_t,
                                          void** ptr) {
  auto* p = reinterpret_cast<SimPool*>(pool.handle);
  if (p == nullptr || ptr == nullptr || size == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  const size_t rounded =
      (size + RAL_SIM_HSA_GRANULE - 1) / RAL_SIM_HSA_GRANULE * RAL_SIM_HSA_GRANULE;
  std::lock_guard<std::mutex> lock(sim().mutex);
  if (size > p->limit || rounded > p->limit - p->used) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  void* mem = std::aligned_alloc(RAL_SIM_HSA_GRANULE, rounded);
  if (mem == nullptr) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  p->used += rounded;
  p->allocations[mem] = rounded;
  *ptr = mem;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_pool_free(void* ptr) {
  Sim& S = sim();
  std::lock_guard<std::mutex> lock(S.mutex);
  for (SimAgent* a : S.agents)
    for (SimPool* p : a->pools)
      if (auto it = p->allocations.find(ptr); it != p->allocations.end()) {
        p->used -= it->second;
        p->allocations.erase(it);
        std::free(ptr);
        return HSA_STATUS_SUCCESS;
      }
  return HSA_STATUS_ERROR_INVALID_ALLOCATION;
}

hsa_status_t hsa_amd_agents_allow_access(uint32_t num_agents, const hsa_agent_t* agents,
                                         const uint32_t*, const void* ptr) {
  if (num_agents == 0 || agents == nullptr || ptr == nullptr)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < num_agents; ++i)
    if (agentOf(agents[i]) == nullptr) return HSA_STATUS_ERROR_INVALID_AGENT;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_lock(void* host_ptr, size_t size, hsa_agent_t*, int, void** agent_ptr) {
  if (host_ptr == nullptr || size == 0 || agent_ptr == nullptr)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *agent_ptr = host_ptr;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_unlock(void* host_ptr) {
  return host_ptr == nullptr ? HSA_STATUS_ERROR_INVALID_ARGUMENT : HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_async_copy(void* dst, hsa_agent_t dst_agent, const void* src,
                                       hsa_agent_t src_agent, size_t size, uint32_t num_dep_signals,
                                       const hsa_signal_t* dep_signals,
                                       hsa_signal_t completion_signal) {
  if (dst == nullptr || src == nullptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (agentOf(dst_agent) == nullptr || agentOf(src_agent) == nullptr)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  SimCopy c{dst, src, size, {}, sig(completion_signal)};
  for (uint32_t i = 0; i < num_dep_signals; ++i) c.deps.push_back(sig(dep_signals[i]));
  std::lock_guard<std::mutex> lock(sim().mutex);
  sim().copies.push_back(std::move(c));
  sim().changed.notify_all();
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_signal_create(hsa_signal_value_t initial_value, uint32_t, const hsa_agent_t*,
                               hsa_signal_t* signal) {
  if (signal == nullptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  auto owned = std::make_unique<SimSignal>();
  owned->value = initial_value;
  signal->handle = reinterpret_cast<uint64_t>(owned.get());
  std::lock_guard<std::mutex> lock(sim().mutex);
  sim().signals.push_back(std::move(owned));
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_signal_destroy(hsa_signal_t signal) {
  return signal.handle == 0 ? HSA_STATUS_ERROR_INVALID_SIGNAL : HSA_STATUS_SUCCESS;
}

hsa_signal_value_t hsa_signal_load_scacquire(hsa_signal_t signal) {
  std::lock_guard<std::mutex> lock(sim().mutex);
  return sig(signal)->value;
}

void hsa_signal_store_screlease(hsa_signal_t signal, hsa_signal_value_t value) {
  std::lock_guard<std::mutex> lock(sim().mutex);
  storeLocked(sig(signal), value);
}

hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t signal, hsa_signal_condition_t condition,
                                             hsa_signal_value_t compare_value,
                                             uint64_t timeout_hint, hsa_wait_state_t) {
  SimSignal* s = sig(signal);
  std::unique_lock<std::mutex> lock(sim().mutex);
  auto done = [&] { return satisfied(s->value, condition, compare_value); };
  if (timeout_hint == UINT64_MAX) {
    sim().changed.wait(lock, done);
  } else {
    sim().changed.wait_for(lock, std::chrono::nanoseconds(timeout_hint), done);
  }
  return s->value;
}

hsa_status_t hsa_amd_signal_async_handler(hsa_signal_t signal, hsa_signal_condition_t cond,
                                          hsa_signal_value_t value, hsa_amd_signal_handler handler,
                                          void* arg) {
  if (signal.handle == 0 || handler == nullptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(sim().mutex);
  sim().handlers.push_back(SimHandler{sig(signal), cond, value, handler, arg});
  sim().changed.notify_all();
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t,
                              void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                              uint32_t, uint32_t, hsa_queue_t** queue) {
  SimAgent* a = agentOf(agent);
  if (a == nullptr || a->type != HSA_DEVICE_TYPE_GPU) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (queue == nullptr || size < 2 || (size & (size - 1)) != 0)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  auto* q = new SimQueue();
  q->ring.assign(size_t{size} * 64 + 64, 0);
  auto* base = q->ring.data() + (64 - reinterpret_cast<uintptr_t>(q->ring.data()) % 64) % 64;
  for (uint32_t i = 0; i < size; ++i)
    reinterpret_cast<uint16_t*>(base + size_t{i} * 64)[0] = HSA_PACKET_TYPE_INVALID;
  q->queue.type = HSA_QUEUE_TYPE_SINGLE;
  q->queue.base_address = base;
  q->queue.size = size;
  hsa_signal_create(-1, 0, nullptr, &q->queue.doorbell_signal);
  q->callback = callback;
  q->data = data;
  q->worker = std::thread(packetProcessor, q);
  *queue = &q->queue;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_queue_destroy(hsa_queue_t* queue) {
  if (queue == nullptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  auto* q = reinterpret_cast<SimQueue*>(queue);
  {
    std::lock_guard<std::mutex> lock(sim().mutex);
    q->stop = true;
    sim().changed.notify_all();
  }
  q->worker.join();
  delete q;
  return HSA_STATUS_SUCCESS;
}

uint64_t hsa_queue_add_write_index_screlease(const hsa_queue_t* queue, uint64_t value) {
  return reinterpret_cast<SimQueue*>(const_cast<hsa_queue_t*>(queue))->write.fetch_add(value);
}

uint64_t hsa_queue_load_read_index_scacquire(const hsa_queue_t* queue) {
  return reinterpret_cast<const SimQueue*>(queue)->read.load();
}

}  // extern "C"

namespace {

// EF_AMDGPU_MACH values of the processors the simulation names (LLVM's ELF.h).
const char* processorOf(uint32_t mach) {
  switch (mach) {
    case 0x030:
      return "gfx908";
    case 0x03f:
      return "gfx90a";
    case 0x040:
      return "gfx940";
    case 0x04b:
      return "gfx941";
    case 0x04c:
      return "gfx942";
    case 0x041:
      return "gfx1100";
    case 0x036:
      return "gfx1030";
    default:
      return nullptr;
  }
}

// An AMDGPU code object (an ELF shared object): every "<name>.kd" symbol is a kernel whose
// descriptor gives its group, private and kernarg segment sizes; it runs the host function
// RAL_SIM_HSA_ELF_KERNEL_PREFIX<name> when the test binary exports one.
hsa_status_t readElf(const unsigned char* data, size_t size, SimReader* r) {
  auto inside = [&](uint64_t offset, uint64_t bytes) {
    return offset <= size && bytes <= size - offset;
  };
  if (!inside(0, sizeof(Elf64_Ehdr))) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  Elf64_Ehdr eh;
  std::memcpy(&eh, data, sizeof(eh));
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_AMDGPU ||
      eh.e_shentsize != sizeof(Elf64_Shdr) ||
      !inside(eh.e_shoff, uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr)))
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  const char* processor = processorOf(eh.e_flags & 0xff);
  if (processor == nullptr) return HSA_STATUS_ERROR_INVALID_ISA;
  r->processor = processor;
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  std::memcpy(sections.data(), data + eh.e_shoff, sections.size() * sizeof(Elf64_Shdr));
  for (const Elf64_Shdr& symtab : sections) {
    if (symtab.sh_type != SHT_DYNSYM || symtab.sh_link >= sections.size()) continue;
    const Elf64_Shdr& strtab = sections[symtab.sh_link];
    if (!inside(symtab.sh_offset, symtab.sh_size) || !inside(strtab.sh_offset, strtab.sh_size))
      return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= symtab.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, data + symtab.sh_offset + at, sizeof(sym));
      if (sym.st_name >= strtab.sh_size) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
      const char* name_at = reinterpret_cast<const char*>(data + strtab.sh_offset + sym.st_name);
      const std::string name(name_at, strnlen(name_at, strtab.sh_size - sym.st_name));
      if (name.size() <= 3 || name.compare(name.size() - 3, 3, ".kd") != 0) continue;
      // The descriptor's bytes: the section holding its address, at the same distance.
      const Elf64_Shdr* home = nullptr;
      for (const Elf64_Shdr& sh : sections)
        if (sh.sh_type == SHT_PROGBITS && sym.st_value >= sh.sh_addr &&
            sym.st_value + 64 <= sh.sh_addr + sh.sh_size)
          home = &sh;
      if (home == nullptr || !inside(home->sh_offset + (sym.st_value - home->sh_addr), 64))
        return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
      const unsigned char* kd = data + home->sh_offset + (sym.st_value - home->sh_addr);
      SimKernel k;
      k.name = name.substr(0, name.size() - 3);
      std::memcpy(&k.group_bytes, kd + 0, 4);
      std::memcpy(&k.private_bytes, kd + 4, 4);
      std::memcpy(&k.kernarg_bytes, kd + 8, 4);
      const std::string host = std::string(RAL_SIM_HSA_ELF_KERNEL_PREFIX) + k.name;
      k.fn = reinterpret_cast<RalSimHsaKernel>(dlsym(RTLD_DEFAULT, host.c_str()));
      r->kernels.emplace_back(k.name, k);
    }
  }
  return r->kernels.empty() ? HSA_STATUS_ERROR_INVALID_CODE_OBJECT : HSA_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

hsa_status_t hsa_code_object_reader_create_from_memory(const void* code_object, size_t size,
                                                       hsa_code_object_reader_t* reader) {
  if (code_object == nullptr || size == 0 || reader == nullptr)
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  if (size >= 4 && std::memcmp(code_object, ELFMAG, SELFMAG) == 0) {
    auto r = std::make_unique<SimReader>();
    const hsa_status_t s = readElf(static_cast<const unsigned char*>(code_object), size, r.get());
    if (s != HSA_STATUS_SUCCESS) return s;
    reader->handle = reinterpret_cast<uint64_t>(r.release());
    return HSA_STATUS_SUCCESS;
  }
  const std::string text(static_cast<const char*>(code_object), size);
  if (text.back() != '\n' || text.find('\0') != std::string::npos)
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  std::stringstream lines(text);
  std::string line;
  if (!std::getline(lines, line) || line != RAL_SIM_HSA_CODE_OBJECT_MAGIC)
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  auto r = std::make_unique<SimReader>();
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::stringstream fields(line);
    std::string name, symbol, rest;
    long long bytes = -1;
    if (!(fields >> name >> symbol >> bytes) || bytes < 0 || (fields >> rest))
      return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    SimKernel k;
    k.fn = reinterpret_cast<RalSimHsaKernel>(dlsym(RTLD_DEFAULT, symbol.c_str()));
    if (k.fn == nullptr) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    k.name = name;
    k.kernarg_bytes = static_cast<uint32_t>(bytes);
    r->kernels.emplace_back(name, k);
  }
  if (r->kernels.empty()) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  reader->handle = reinterpret_cast<uint64_t>(r.release());
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t reader) {
  delete reinterpret_cast<SimReader*>(reader.handle);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_create_alt(hsa_profile_t, hsa_default_float_rounding_mode_t,
                                       const char*, hsa_executable_t* executable) {
  if (executable == nullptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  executable->handle = reinterpret_cast<uint64_t>(new SimExecutable());
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t executable, hsa_agent_t agent,
                                                   hsa_code_object_reader_t reader, const char*,
                                                   hsa_loaded_code_object_t*) {
  auto* e = reinterpret_cast<SimExecutable*>(executable.handle);
  auto* r = reinterpret_cast<SimReader*>(reader.handle);
  if (e == nullptr || r == nullptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (e->frozen) return HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
  SimAgent* a = agentOf(agent);
  if (a == nullptr || a->type != HSA_DEVICE_TYPE_GPU) return HSA_STATUS_ERROR_INVALID_AGENT;
  // As ROCr: a code object for another processor does not load.
  if (!r->processor.empty()) {
    const size_t dashes = a->isa.find("--");  // amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-
    const std::string agent_processor =
        dashes == std::string::npos ? a->isa
                                    : a->isa.substr(dashes + 2, a->isa.find(':') - dashes - 2);
    if (agent_processor != r->processor) return HSA_STATUS_ERROR_INVALID_ISA;
  }
  std::lock_guard<std::mutex> lock(sim().mutex);
  for (const auto& [name, kernel] : r->kernels) {
    auto k = std::make_unique<SimKernel>(kernel);
    sim().kernels.insert(k.get());
    e->symbols[name + ".kd"] = std::move(k);
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_freeze(hsa_executable_t executable, const char*) {
  auto* e = reinterpret_cast<SimExecutable*>(executable.handle);
  if (e == nullptr) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  e->frozen = true;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_validate(hsa_executable_t executable, uint32_t* result) {
  auto* e = reinterpret_cast<SimExecutable*>(executable.handle);
  if (e == nullptr || result == nullptr) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  *result = e->frozen ? 0 : 1;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_get_symbol_by_name(hsa_executable_t executable, const char* name,
                                               const hsa_agent_t*,
                                               hsa_executable_symbol_t* symbol) {
  auto* e = reinterpret_cast<SimExecutable*>(executable.handle);
  if (e == nullptr || name == nullptr || symbol == nullptr)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  auto it = e->symbols.find(name);
  if (it == e->symbols.end()) return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
  symbol->handle = reinterpret_cast<uint64_t>(it->second.get());
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t symbol,
                                            hsa_executable_symbol_info_t attribute, void* value) {
  auto* k = reinterpret_cast<SimKernel*>(symbol.handle);
  if (k == nullptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (attribute) {
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT:
      *static_cast<uint64_t*>(value) = symbol.handle;
      return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE:
      *static_cast<uint32_t*>(value) = k->kernarg_bytes;
      return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT:
      *static_cast<uint32_t*>(value) = 16;
      return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE:
      *static_cast<uint32_t*>(value) = k->group_bytes;
      return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE:
      *static_cast<uint32_t*>(value) = k->private_bytes;
      return HSA_STATUS_SUCCESS;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

hsa_status_t hsa_executable_destroy(hsa_executable_t executable) {
  auto* e = reinterpret_cast<SimExecutable*>(executable.handle);
  if (e == nullptr) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  {
    std::lock_guard<std::mutex> lock(sim().mutex);
    for (const auto& [name, k] : e->symbols) sim().kernels.erase(k.get());
  }
  delete e;
  return HSA_STATUS_SUCCESS;
}

}  // extern "C"
