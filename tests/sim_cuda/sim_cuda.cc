// libral_sim_cuda.so: a simulated CUDA driver library, so the CUDA driver and the driver
// conformance suite run without a GPU (RAL_CUDA_DRIVER_PATH points at it). It exports, with
// CUDA's signatures, exactly the functions RAL loads (RAL_CUDA_SYMBOLS), backed by host memory
// and threads:
//  - one device (RAL_SIM_CUDA_DEVICE_NAME, sm_90) with $RAL_SIM_CUDA_MEMORY_BYTES of memory
//    (default 1 GiB; allocations beyond it fail with CUDA_ERROR_OUT_OF_MEMORY), its primary
//    context and a per-thread current context;
//  - device and pinned host allocations are host memory, tracked so cuPointerGetAttribute tells
//    them apart and copies/fills check their device ranges;
//  - each stream is a worker thread running a FIFO of operations (copies, fills, kernels, host
//    functions, event records and waits). A stream wait binds to the event's latest record at
//    the time of the call, as in CUDA. The legacy stream (0) is an ordinary stream here: RAL
//    never uses it, so its implicit synchronization is not simulated;
//  - kernels are host functions named by a module image (sim_cuda_kernel.h), or standing in for
//    the kernels of a PTX image; anything else (cubin, fatbin) is CUDA_ERROR_INVALID_IMAGE;
//  - a host function that calls back into the API gets CUDA_ERROR_NOT_PERMITTED, as in CUDA;
//  - ral_sim_cuda_stream_synchronizations() counts the host's cuStreamSynchronize and
//    cuCtxSynchronize calls, so tests see whether a path blocks the host on the device.
// Thread-safety: every entry point may be called from any thread; one mutex guards all state.
#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sim_cuda_kernel.h"

namespace {

struct SimStream {
  std::deque<std::function<void()>> ops;
  uint64_t submitted = 0;
  uint64_t completed = 0;
  bool stop = false;
  std::thread worker;
};

struct SimEvent {
  uint64_t recorded = 0;   // generation of the latest record
  uint64_t completed = 0;  // highest generation the stream has reached
  bool timing = true;      // created without CU_EVENT_DISABLE_TIMING
  std::chrono::steady_clock::time_point reached;  // when the stream reached the latest record
};

struct SimFunction {
  RalSimCudaKernel fn = nullptr;
  std::vector<size_t> param_sizes;
  int max_dynamic_shared = 48 * 1024;
};

struct SimModule {
  std::map<std::string, std::unique_ptr<SimFunction>> functions;
};

// RAL_SIM_CUDA_CC_ENV, or 90.
int computeCapability() {
  static const int cc = [] {
    const char* env = std::getenv(RAL_SIM_CUDA_CC_ENV);
    const int v = env != nullptr ? std::atoi(env) : 0;
    return v >= 10 && v < 1000 ? v : 90;
  }();
  return cc;
}

// Bytes of one PTX parameter declaration (".param .u64 name", ".param .align 8 .b8 name[24]");
// 0 if not understood.
size_t ptxParamBytes(const std::string& decl) {
  std::istringstream words(decl);
  std::string word, type, name;
  while (words >> word) {
    if (word == ".param" || word == ".ptr" || word == ".global") continue;
    if (word == ".align") {
      words >> word;
      continue;
    }
    if (type.empty()) {
      type = word;
    } else {
      name = word;
      break;
    }
  }
  if (type.size() < 3 || type[0] != '.') return 0;
  const size_t bits = static_cast<size_t>(std::atoi(type.c_str() + 2));
  size_t count = 1;
  if (const size_t open = name.find('['); open != std::string::npos)
    count = static_cast<size_t>(std::atoll(name.c_str() + open + 1));
  return bits % 8 == 0 ? bits / 8 * count : 0;
}

// The kernels of PTX text, each run by the exported stand-in RAL_SIM_CUDA_PTX_KERNEL_PREFIX
// "<name>"; false (with *why) when the text has no kernel or one has no stand-in.
bool loadPtx(const std::string& ptx, SimModule* m, std::string* why) {
  size_t at = 0;
  while ((at = ptx.find(".entry ", at)) != std::string::npos) {
    const size_t name_begin = at + 7;
    const size_t open = ptx.find('(', name_begin);
    const size_t close = ptx.find(')', name_begin);
    if (open == std::string::npos || close == std::string::npos || close < open) {
      *why = "a PTX .entry without a parameter list";
      return false;
    }
    std::string name = ptx.substr(name_begin, open - name_begin);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
    auto f = std::make_unique<SimFunction>();
    const std::string symbol = RAL_SIM_CUDA_PTX_KERNEL_PREFIX + name;
    f->fn = reinterpret_cast<RalSimCudaKernel>(dlsym(RTLD_DEFAULT, symbol.c_str()));
    if (f->fn == nullptr) {
      *why = "the simulated CUDA device runs only '" RAL_SIM_CUDA_MODULE_MAGIC
             "' images and PTX whose kernels the test binary stands in for; no exported '" +
             symbol + "'";
      return false;
    }
    std::istringstream params(ptx.substr(open + 1, close - open - 1));
    std::string decl;
    while (std::getline(params, decl, ',')) {
      if (decl.find(".param") == std::string::npos) continue;
      const size_t bytes = ptxParamBytes(decl);
      if (bytes == 0) {
        *why = "PTX kernel '" + name + "': parameter '" + decl + "' not understood";
        return false;
      }
      f->param_sizes.push_back(bytes);
    }
    m->functions[name] = std::move(f);
    at = close;
  }
  if (m->functions.empty()) *why = "PTX without a kernel";
  return !m->functions.empty();
}

struct Allocation {
  size_t size = 0;
  bool device = true;
};

// The whole simulated driver. Never destroyed: host functions may still run at process exit.
struct Sim {
  std::mutex mutex;
  std::condition_variable changed;  // any stream progress or event completion
  bool initialized = false;
  int primary_refs = 0;
  size_t total_memory = size_t{1} << 30;
  size_t used_memory = 0;
  std::map<uintptr_t, Allocation> allocations;  // by base address
  std::set<SimStream*> streams;
  std::set<SimEvent*> events;
  std::set<SimModule*> modules;
  std::set<SimFunction*> functions;
  SimStream* legacy = nullptr;
};

Sim& sim() {
  static Sim* const instance = new Sim();
  return *instance;
}

// The primary context; its address is the CUcontext handle.
char primary_context_tag;
CUcontext primaryContext() { return reinterpret_cast<CUcontext>(&primary_context_tag); }
std::atomic<uint64_t> stream_synchronizations{0};
thread_local CUcontext current_context = nullptr;
thread_local bool in_host_function = false;

CUresult checkCall(bool needs_context = true) {
  if (in_host_function) return CUDA_ERROR_NOT_PERMITTED;
  std::lock_guard<std::mutex> lock(sim().mutex);
  if (!sim().initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (needs_context && current_context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  return CUDA_SUCCESS;
}

#define SIM_CHECK(...)                                           \
  do {                                                           \
    if (CUresult sim_r_ = checkCall(__VA_ARGS__)) return sim_r_; \
  } while (0)

void workerLoop(SimStream* s) {
  Sim& S = sim();
  std::unique_lock<std::mutex> lock(S.mutex);
  while (true) {
    S.changed.wait(lock, [&] { return s->stop || !s->ops.empty(); });
    if (s->ops.empty()) return;  // stopped and drained
    std::function<void()> op = std::move(s->ops.front());
    s->ops.pop_front();
    lock.unlock();
    op();
    lock.lock();
    ++s->completed;
    S.changed.notify_all();
  }
}

SimStream* newStream() {
  auto* s = new SimStream();
  s->worker = std::thread(workerLoop, s);
  return s;
}

// The stream behind a handle (0: the legacy stream), or null when the handle is not a stream.
// Called with the mutex held.
SimStream* streamLocked(CUstream handle) {
  Sim& S = sim();
  if (handle == nullptr || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) {
    if (S.legacy == nullptr) S.legacy = newStream();
    return S.legacy;
  }
  auto* s = reinterpret_cast<SimStream*>(handle);
  return S.streams.count(s) ? s : nullptr;
}

CUresult enqueue(CUstream handle, std::function<void()> op) {
  Sim& S = sim();
  std::lock_guard<std::mutex> lock(S.mutex);
  SimStream* s = streamLocked(handle);
  if (s == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  s->ops.push_back(std::move(op));
  ++s->submitted;
  S.changed.notify_all();
  return CUDA_SUCCESS;
}

// Whether [ptr, ptr + bytes) lies inside one allocation (device only, unless `host_ok`).
bool validRange(uintptr_t ptr, size_t bytes, bool host_ok) {
  Sim& S = sim();
  std::lock_guard<std::mutex> lock(S.mutex);
  auto it = S.allocations.upper_bound(ptr);
  if (it == S.allocations.begin()) return false;
  --it;
  if (!it->second.device && !host_ok) return false;
  return ptr - it->first + bytes <= it->second.size;
}

CUresult copyAsync(void* dst, const void* src, size_t bytes, CUstream stream) {
  if (bytes == 0) return CUDA_SUCCESS;
  return enqueue(stream, [=] { std::memmove(dst, src, bytes); });
}

template <typename T>
CUresult setAsync(CUdeviceptr dst, T value, size_t count, CUstream stream) {
  SIM_CHECK();
  if (count == 0) return CUDA_SUCCESS;
  if (dst % sizeof(T) != 0 || !validRange(dst, count * sizeof(T), true))
    return CUDA_ERROR_INVALID_VALUE;
  return enqueue(stream, [=] {
    auto* p = reinterpret_cast<T*>(dst);
    for (size_t i = 0; i < count; ++i) p[i] = value;
  });
}

void waitIdleLocked(std::unique_lock<std::mutex>& lock, SimStream* s) {
  const uint64_t target = s->submitted;
  sim().changed.wait(lock, [&] { return s->completed >= target; });
}

const char* errorName(CUresult r) {
  switch (r) {
#define SIM_ERROR(name) \
  case name:            \
    return #name;
    SIM_ERROR(CUDA_SUCCESS)
    SIM_ERROR(CUDA_ERROR_INVALID_VALUE)
    SIM_ERROR(CUDA_ERROR_OUT_OF_MEMORY)
    SIM_ERROR(CUDA_ERROR_NOT_INITIALIZED)
    SIM_ERROR(CUDA_ERROR_INVALID_DEVICE)
    SIM_ERROR(CUDA_ERROR_INVALID_IMAGE)
    SIM_ERROR(CUDA_ERROR_INVALID_CONTEXT)
    SIM_ERROR(CUDA_ERROR_INVALID_HANDLE)
    SIM_ERROR(CUDA_ERROR_NOT_FOUND)
    SIM_ERROR(CUDA_ERROR_NOT_READY)
    SIM_ERROR(CUDA_ERROR_NOT_PERMITTED)
    SIM_ERROR(CUDA_ERROR_NOT_SUPPORTED)
#undef SIM_ERROR
    default:
      return nullptr;
  }
}

const char* errorText(CUresult r) {
  switch (r) {
    case CUDA_SUCCESS:
      return "no error";
    case CUDA_ERROR_INVALID_VALUE:
      return "invalid argument";
    case CUDA_ERROR_OUT_OF_MEMORY:
      return "out of memory";
    case CUDA_ERROR_NOT_INITIALIZED:
      return "initialization error";
    case CUDA_ERROR_INVALID_DEVICE:
      return "invalid device ordinal";
    case CUDA_ERROR_INVALID_IMAGE:
      return "device kernel image is invalid";
    case CUDA_ERROR_INVALID_CONTEXT:
      return "invalid device context";
    case CUDA_ERROR_INVALID_HANDLE:
      return "invalid resource handle";
    case CUDA_ERROR_NOT_FOUND:
      return "named symbol not found";
    case CUDA_ERROR_NOT_READY:
      return "device not ready";
    case CUDA_ERROR_NOT_PERMITTED:
      return "operation not permitted";
    case CUDA_ERROR_NOT_SUPPORTED:
      return "operation not supported";
    default:
      return nullptr;
  }
}

}  // namespace

extern "C" {

uint64_t ral_sim_cuda_stream_synchronizations(void) {
  return stream_synchronizations.load(std::memory_order_relaxed);
}

// ---- errors, initialization, device

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** str) {
  if (str == nullptr || errorName(error) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *str = errorName(error);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char** str) {
  if (str == nullptr || errorText(error) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *str = errorText(error);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuInit(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Sim& S = sim();
  std::lock_guard<std::mutex> lock(S.mutex);
  if (const char* env = std::getenv(RAL_SIM_CUDA_MEMORY_ENV); env != nullptr && env[0] != '\0')
    S.total_memory = std::strtoull(env, nullptr, 10);
  S.initialized = true;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = 12040;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int* count) {
  SIM_CHECK(false);
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  SIM_CHECK(false);
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice device) {
  SIM_CHECK(false);
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::strncpy(name, RAL_SIM_CUDA_DEVICE_NAME, static_cast<size_t>(len) - 1);
  name[len - 1] = '\0';
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice device) {
  SIM_CHECK(false);
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
  static const unsigned char kUuid[16] = {0x5a, 0x11, 0xc0, 0xda, 0x00, 0x01, 0x40, 0x00,
                                          0x80, 0x00, 0x52, 0x41, 0x4c, 0x53, 0x49, 0x4d};
  std::memcpy(uuid->bytes, kUuid, sizeof(kUuid));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  SIM_CHECK(false);
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = computeCapability() / 10;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = computeCapability() % 10;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = 1;
      break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      *value = 32;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *value = 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
      *value = 1;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *value = 227 * 1024;
      break;
    default:
      *value = 0;
      break;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  SIM_CHECK(false);
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(sim().mutex);
  *bytes = sim().total_memory;
  return CUDA_SUCCESS;
}

// ---- contexts

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice device) {
  SIM_CHECK(false);
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(sim().mutex);
  ++sim().primary_refs;
  *ctx = primaryContext();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  SIM_CHECK(false);
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  std::lock_guard<std::mutex> lock(sim().mutex);
  if (sim().primary_refs == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --sim().primary_refs;  // the simulated context keeps its state: nothing to tear down
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* ctx) {
  SIM_CHECK(false);
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *ctx = current_context;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  SIM_CHECK(false);
  if (ctx != nullptr && ctx != primaryContext()) return CUDA_ERROR_INVALID_CONTEXT;
  current_context = ctx;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx) { return cuCtxSetCurrent(ctx); }

CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext* ctx) {
  SIM_CHECK();
  if (ctx != nullptr) *ctx = current_context;
  current_context = nullptr;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize() {
  SIM_CHECK();
  stream_synchronizations.fetch_add(1, std::memory_order_relaxed);
  Sim& S = sim();
  std::unique_lock<std::mutex> lock(S.mutex);
  std::vector<SimStream*> all(S.streams.begin(), S.streams.end());
  if (S.legacy != nullptr) all.push_back(S.legacy);
  for (SimStream* s : all) waitIdleLocked(lock, s);
  return CUDA_SUCCESS;
}

// ---- memory

CUresult CUDAAPI cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  SIM_CHECK();
  if (free_bytes == nullptr || total_bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(sim().mutex);
  *total_bytes = sim().total_memory;
  *free_bytes = sim().total_memory - sim().used_memory;
  return CUDA_SUCCESS;
}

namespace {
CUresult allocate(void** out, size_t bytes, bool device) {
  SIM_CHECK();
  if (out == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  Sim& S = sim();
  std::lock_guard<std::mutex> lock(S.mutex);
  if (device && bytes > S.total_memory - S.used_memory) return CUDA_ERROR_OUT_OF_MEMORY;
  const size_t rounded = (bytes + 255) / 256 * 256;
  if (rounded < bytes) return CUDA_ERROR_OUT_OF_MEMORY;
  void* p = std::aligned_alloc(256, rounded);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  if (device) S.used_memory += bytes;
  S.allocations[reinterpret_cast<uintptr_t>(p)] = Allocation{bytes, device};
  *out = p;
  return CUDA_SUCCESS;
}

CUresult release(void* p, bool device) {
  SIM_CHECK();
  Sim& S = sim();
  std::lock_guard<std::mutex> lock(S.mutex);
  auto it = S.allocations.find(reinterpret_cast<uintptr_t>(p));
  if (it == S.allocations.end() || it->second.device != device) return CUDA_ERROR_INVALID_VALUE;
  if (device) S.used_memory -= it->second.size;
  S.allocations.erase(it);
  std::free(p);
  return CUDA_SUCCESS;
}
}  // namespace

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytes) {
  if (dptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  CUresult r = allocate(&p, bytes, /*device=*/true);
  if (r == CUDA_SUCCESS) *dptr = reinterpret_cast<CUdeviceptr>(p);
  return r;
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr) {
  return release(reinterpret_cast<void*>(dptr), /*device=*/true);
}

CUresult CUDAAPI cuMemHostAlloc(void** pp, size_t bytes, unsigned int /*flags*/) {
  return allocate(pp, bytes, /*device=*/false);
}

CUresult CUDAAPI cuMemFreeHost(void* p) { return release(p, /*device=*/false); }

CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes,
                                      CUstream stream) {
  SIM_CHECK();
  if (bytes > 0 && (src == nullptr || !validRange(dst, bytes, true)))
    return CUDA_ERROR_INVALID_VALUE;
  return copyAsync(reinterpret_cast<void*>(dst), src, bytes, stream);
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  SIM_CHECK();
  if (bytes > 0 && (dst == nullptr || !validRange(src, bytes, true)))
    return CUDA_ERROR_INVALID_VALUE;
  return copyAsync(dst, reinterpret_cast<const void*>(src), bytes, stream);
}

CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                      CUstream stream) {
  SIM_CHECK();
  if (bytes > 0 && (!validRange(dst, bytes, true) || !validRange(src, bytes, true)))
    return CUDA_ERROR_INVALID_VALUE;
  return copyAsync(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes, stream);
}

// Unified addressing: either side may be any host or device address.
CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  SIM_CHECK();
  if (bytes > 0 && (dst == 0 || src == 0)) return CUDA_ERROR_INVALID_VALUE;
  return copyAsync(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes, stream);
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream) {
  return setAsync(dst, value, n, stream);
}

CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t n,
                                  CUstream stream) {
  return setAsync(dst, value, n, stream);
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t n, CUstream stream) {
  return setAsync(dst, value, n, stream);
}

CUresult CUDAAPI cuMemsetD2D32Async(CUdeviceptr dst, size_t pitch, unsigned int value, size_t width,
                                    size_t height, CUstream stream) {
  SIM_CHECK();
  if (width == 0 || height == 0) return CUDA_SUCCESS;
  if (dst % 4 != 0 || pitch % 4 != 0 || pitch < width * 4 ||
      !validRange(dst, pitch * (height - 1) + width * 4, true))
    return CUDA_ERROR_INVALID_VALUE;
  return enqueue(stream, [=] {
    for (size_t row = 0; row < height; ++row) {
      auto* p = reinterpret_cast<unsigned int*>(dst + row * pitch);
      for (size_t i = 0; i < width; ++i) p[i] = value;
    }
  });
}

CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  SIM_CHECK();
  if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (attribute != CU_POINTER_ATTRIBUTE_MEMORY_TYPE) return CUDA_ERROR_NOT_SUPPORTED;
  Sim& S = sim();
  std::lock_guard<std::mutex> lock(S.mutex);
  auto it = S.allocations.upper_bound(ptr);
  if (it == S.allocations.begin()) return CUDA_ERROR_INVALID_VALUE;  // memory CUDA does not know
  --it;
  if (ptr - it->first >= it->second.size) return CUDA_ERROR_INVALID_VALUE;
  *static_cast<unsigned int*>(data) = it->second.device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  return CUDA_SUCCESS;
}

// ---- streams

CUresult CUDAAPI cuStreamCreate(CUstream* stream, unsigned int flags) {
  SIM_CHECK();
  if (stream == nullptr || (flags & ~CU_STREAM_NON_BLOCKING) != 0) return CUDA_ERROR_INVALID_VALUE;
  SimStream* s = newStream();
  std::lock_guard<std::mutex> lock(sim().mutex);
  sim().streams.insert(s);
  *stream = reinterpret_cast<CUstream>(s);
  return CUDA_SUCCESS;
}

// CUDA returns at once and lets the queued work finish; the simulation finishes it first.
CUresult CUDAAPI cuStreamDestroy_v2(CUstream stream) {
  SIM_CHECK();
  Sim& S = sim();
  auto* s = reinterpret_cast<SimStream*>(stream);
  {
    std::lock_guard<std::mutex> lock(S.mutex);
    if (stream == nullptr || S.streams.erase(s) == 0) return CUDA_ERROR_INVALID_HANDLE;
    s->stop = true;
    S.changed.notify_all();
  }
  s->worker.join();
  delete s;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream stream) {
  SIM_CHECK();
  stream_synchronizations.fetch_add(1, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(sim().mutex);
  SimStream* s = streamLocked(stream);
  if (s == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  waitIdleLocked(lock, s);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream stream, CUhostFn fn, void* user) {
  SIM_CHECK();
  if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return enqueue(stream, [fn, user] {
    in_host_function = true;
    fn(user);
    in_host_function = false;
  });
}

// ---- events

CUresult CUDAAPI cuEventCreate(CUevent* event, unsigned int flags) {
  SIM_CHECK();
  if (event == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto* e = new SimEvent();
  e->timing = (flags & CU_EVENT_DISABLE_TIMING) == 0;
  std::lock_guard<std::mutex> lock(sim().mutex);
  sim().events.insert(e);
  *event = reinterpret_cast<CUevent>(e);
  return CUDA_SUCCESS;
}

// Destroying an event whose record is still queued is allowed; the record then completes
// nothing (the object is kept, unreachable, as CUDA defers the release).
CUresult CUDAAPI cuEventDestroy_v2(CUevent event) {
  SIM_CHECK();
  std::lock_guard<std::mutex> lock(sim().mutex);
  auto* e = reinterpret_cast<SimEvent*>(event);
  if (sim().events.erase(e) == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (e->completed >= e->recorded) delete e;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream) {
  SIM_CHECK();
  Sim& S = sim();
  std::lock_guard<std::mutex> lock(S.mutex);
  auto* e = reinterpret_cast<SimEvent*>(event);
  SimStream* s = streamLocked(stream);
  if (S.events.count(e) == 0 || s == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  const uint64_t generation = ++e->recorded;
  s->ops.push_back([e, generation] {
    std::lock_guard<std::mutex> op_lock(sim().mutex);
    if (e->completed < generation) {
      e->completed = generation;
      e->reached = std::chrono::steady_clock::now();
    }
    if (sim().events.count(e) == 0 && e->completed >= e->recorded) delete e;
  });
  ++s->submitted;
  S.changed.notify_all();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventQuery(CUevent event) {
  SIM_CHECK();
  std::lock_guard<std::mutex> lock(sim().mutex);
  auto* e = reinterpret_cast<SimEvent*>(event);
  if (sim().events.count(e) == 0) return CUDA_ERROR_INVALID_HANDLE;
  return e->completed >= e->recorded ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuEventSynchronize(CUevent event) {
  SIM_CHECK();
  std::unique_lock<std::mutex> lock(sim().mutex);
  auto* e = reinterpret_cast<SimEvent*>(event);
  if (sim().events.count(e) == 0) return CUDA_ERROR_INVALID_HANDLE;
  const uint64_t target = e->recorded;
  sim().changed.wait(lock, [&] { return e->completed >= target; });
  return CUDA_SUCCESS;
}

// As in CUDA: both events recorded and reached, both timing, else an error. RAL loads the
// unversioned name (every driver has it); CUDA 12.8's headers map it to the _v2 one.
#undef cuEventElapsedTime
CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  SIM_CHECK();
  if (ms == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(sim().mutex);
  auto* a = reinterpret_cast<SimEvent*>(start);
  auto* b = reinterpret_cast<SimEvent*>(end);
  if (sim().events.count(a) == 0 || sim().events.count(b) == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (!a->timing || !b->timing || a->recorded == 0 || b->recorded == 0)
    return CUDA_ERROR_INVALID_HANDLE;
  if (a->completed < a->recorded || b->completed < b->recorded) return CUDA_ERROR_NOT_READY;
  *ms = std::chrono::duration<float, std::milli>(b->reached - a->reached).count();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  SIM_CHECK();
  if (flags != CU_EVENT_WAIT_DEFAULT) return CUDA_ERROR_INVALID_VALUE;
  uint64_t target = 0;
  auto* e = reinterpret_cast<SimEvent*>(event);
  {
    std::lock_guard<std::mutex> lock(sim().mutex);
    if (sim().events.count(e) == 0) return CUDA_ERROR_INVALID_HANDLE;
    target = e->recorded;  // the latest record now, not whatever is recorded later
    if (e->completed >= target)
      return streamLocked(stream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  }
  return enqueue(stream, [e, target] {
    std::unique_lock<std::mutex> lock(sim().mutex);
    sim().changed.wait(lock, [&] { return e->completed >= target; });
  });
}

// ---- modules and kernels

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int num_options,
                                    CUjit_option* options, void** values) {
  SIM_CHECK();
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  char* log = nullptr;
  size_t log_size = 0;
  for (unsigned int i = 0; i < num_options; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER) log = static_cast<char*>(values[i]);
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      log_size = reinterpret_cast<size_t>(values[i]);
  }
  auto fail = [&](const std::string& why) {
    if (log != nullptr && log_size > 0) {
      std::strncpy(log, why.c_str(), log_size - 1);
      log[log_size - 1] = '\0';
    }
    return CUDA_ERROR_INVALID_IMAGE;
  };
  const char* text = static_cast<const char*>(image);
  const size_t magic = std::strlen(RAL_SIM_CUDA_MODULE_MAGIC);
  auto m = std::make_unique<SimModule>();
  if (std::strncmp(text, RAL_SIM_CUDA_MODULE_MAGIC, magic) != 0 ||
      (text[magic] != '\n' && text[magic] != '\0')) {
    // PTX is NUL-terminated text with a .version directive; a cubin is an ELF file.
    const bool elf = std::strncmp(text,
                                  "\x7f"
                                  "ELF",
                                  4) == 0;
    const std::string ptx = elf ? std::string() : std::string(text);
    std::string why;
    if (ptx.find(".version") == std::string::npos)
      return fail("the simulated CUDA device runs only '" RAL_SIM_CUDA_MODULE_MAGIC
                  "' images and PTX");
    if (!loadPtx(ptx, m.get(), &why)) return fail(why);
    std::lock_guard<std::mutex> lock(sim().mutex);
    for (auto& [name, f] : m->functions) sim().functions.insert(f.get());
    *module = reinterpret_cast<CUmodule>(m.get());
    sim().modules.insert(m.release());
    return CUDA_SUCCESS;
  }
  std::istringstream lines(text + magic);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string entry, symbol;
    if (!(fields >> entry)) continue;
    if (!(fields >> symbol)) return fail("entry '" + entry + "' names no symbol");
    auto f = std::make_unique<SimFunction>();
    f->fn = reinterpret_cast<RalSimCudaKernel>(dlsym(RTLD_DEFAULT, symbol.c_str()));
    if (f->fn == nullptr) return fail("no exported symbol '" + symbol + "'");
    size_t bytes = 0;
    while (fields >> bytes) f->param_sizes.push_back(bytes);
    if (!fields.eof()) return fail("entry '" + entry + "': bad parameter size");
    m->functions[entry] = std::move(f);
  }
  std::lock_guard<std::mutex> lock(sim().mutex);
  for (auto& [name, f] : m->functions) sim().functions.insert(f.get());
  *module = reinterpret_cast<CUmodule>(m.get());
  sim().modules.insert(m.release());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) {
  SIM_CHECK();
  std::lock_guard<std::mutex> lock(sim().mutex);
  auto* m = reinterpret_cast<SimModule*>(module);
  if (sim().modules.erase(m) == 0) return CUDA_ERROR_INVALID_HANDLE;
  for (auto& [name, f] : m->functions) sim().functions.erase(f.get());
  delete m;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  SIM_CHECK();
  if (function == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(sim().mutex);
  auto* m = reinterpret_cast<SimModule*>(module);
  if (sim().modules.count(m) == 0) return CUDA_ERROR_INVALID_HANDLE;
  auto it = m->functions.find(name);
  if (it == m->functions.end()) return CUDA_ERROR_NOT_FOUND;
  *function = reinterpret_cast<CUfunction>(it->second.get());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute,
                                    int value) {
  SIM_CHECK();
  std::lock_guard<std::mutex> lock(sim().mutex);
  auto* f = reinterpret_cast<SimFunction*>(function);
  if (sim().functions.count(f) == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (value < 0 || value > 227 * 1024) return CUDA_ERROR_INVALID_VALUE;
    f->max_dynamic_shared = value;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction function, unsigned int gx, unsigned int gy,
                                unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz,
                                unsigned int shared_bytes, CUstream stream, void** params,
                                void** extra) {
  SIM_CHECK();
  if (extra != nullptr) return CUDA_ERROR_NOT_SUPPORTED;
  if (uint64_t{gx} * gy * gz == 0 || uint64_t{bx} * by * bz == 0 || uint64_t{bx} * by * bz > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  auto* f = reinterpret_cast<SimFunction*>(function);
  std::vector<size_t> sizes;
  RalSimCudaKernel fn = nullptr;
  {
    std::lock_guard<std::mutex> lock(sim().mutex);
    if (sim().functions.count(f) == 0) return CUDA_ERROR_INVALID_HANDLE;
    if (static_cast<int>(shared_bytes) > f->max_dynamic_shared) return CUDA_ERROR_INVALID_VALUE;
    sizes = f->param_sizes;
    fn = f->fn;
  }
  if (!sizes.empty() && params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // Parameters are copied now, as CUDA does: the caller's storage may be gone when it runs.
  auto storage = std::make_shared<std::vector<std::vector<unsigned char>>>();
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto* p = static_cast<const unsigned char*>(params[i]);
    storage->emplace_back(p, p + sizes[i]);
  }
  const RalSimCudaLaunch launch{{gx, gy, gz}, {bx, by, bz}, shared_bytes};
  return enqueue(stream, [fn, launch, storage] {
    std::vector<void*> pointers;
    for (auto& bytes : *storage) pointers.push_back(bytes.data());
    fn(&launch, pointers.data());
  });
}

}  // extern "C"
