#include "drivers/hsa/hsa_driver.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "drivers/common/driver_trace.h"
#include "drivers/hsa/hsa_device.h"
#include "drivers/hsa/hsa_executable.h"
#include "drivers/hsa/hsa_semaphore.h"
#include "drivers/hsa/hsa_stream.h"
#include "ral/context.h"
#include "ral/device_uri.h"
#include "ral/registration.h"

namespace ral::hsa {
namespace {

constexpr size_t kFillChunk = 64 * 1024;

int defaultOrdinal(int requested) {
  if (requested >= 0) return requested;
  const char* env = std::getenv("RAL_HSA_DEVICE");
  return env != nullptr && env[0] != '\0' ? std::atoi(env) : 0;
}

// Kernel arguments in the kernarg segment: each at the next multiple of its size rounded up to a
// power of two, at most 16 (the natural alignment of scalars, pointers and 16-byte vectors).
size_t argAlignment(size_t size) {
  size_t a = 1;
  while (a < size && a < 16) a <<= 1;
  return a;
}

}  // namespace

HsaDriver::HsaDriver(std::shared_ptr<HsaDevice> device) : device_(std::move(device)) {}

StatusOr<std::unique_ptr<HsaDriver>> HsaDriver::create(HsaDriverOptions options) {
  RAL_ASSIGN_OR_RETURN(const HsaLibrary* lib, HsaLibrary::get(options.library_path));
  RAL_ASSIGN_OR_RETURN(
      std::shared_ptr<HsaDevice> device,
      HsaDevice::open(*lib, defaultOrdinal(options.device), std::max(options.queue_size, 2u)));
  std::unique_ptr<HsaDriver> driver(new HsaDriver(std::move(device)));
  RAL_ASSIGN_OR_RETURN(driver->default_stream_, HsaStream::create(driver->device_, driver.get()));
  return driver;
}

HsaDriver::~HsaDriver() {
  if (default_stream_) (void)default_stream_->synchronize();
  default_stream_.reset();
  std::lock_guard<std::mutex> lock(executables_mutex_);
  executables_.clear();
}

std::string HsaDriver::deviceName() const {
  const HsaGpuAgent& gpu = device_->gpu();
  return internal::strCat("hsa:", gpu.ordinal, " (", gpu.arch, gpu.product.empty() ? "" : ", ",
                          gpu.product, ")");
}

const std::string& HsaDriver::arch() const { return device_->gpu().arch; }
int HsaDriver::deviceOrdinal() const { return device_->gpu().ordinal; }

int HsaDriver::targetRank(ExecutableFormat format, std::string_view target) const {
  if (format != ExecutableFormat::kHsaco) return -1;
  if (target.empty()) return 0;
  return target == device_->gpu().arch ? 1 : -1;
}

StatusOr<HsaStream*> HsaDriver::resolveStream(Stream* stream) {
  if (stream == nullptr) return default_stream_.get();
  auto* s = dynamic_cast<HsaStream*>(stream);
  if (s == nullptr || s->owner() != this)
    return invalidArgument("hsa: the stream was not created by this HSA driver");
  return s;
}

// ---- memory

StatusOr<void*> HsaDriver::allocate(size_t bytes, size_t alignment, MemoryKind kind) {
  BlockPool& pool = kind == MemoryKind::kDevice ? device_->deviceMemory() : device_->hostMemory();
  return pool.allocate(bytes, alignment);
}

Status HsaDriver::deallocate(void* ptr) {
  if (ptr == nullptr) return Status();
  if (device_->deviceMemory().contains(ptr, 0)) {
    Status s = device_->deviceMemory().deallocate(ptr);
    if (s.ok()) return s;
  }
  return device_->hostMemory().deallocate(ptr);
}

MemoryStats HsaDriver::memoryStats() const {
  MemoryStats a = device_->deviceMemory().stats();
  const MemoryStats b = device_->hostMemory().stats();
  a.bytes_in_use += b.bytes_in_use;
  a.bytes_cached += b.bytes_cached;
  a.peak_bytes_in_use += b.peak_bytes_in_use;
  a.allocations += b.allocations;
  a.cache_hits += b.cache_hits;
  return a;
}

Status HsaDriver::trim() {
  device_->deviceMemory().trim();
  device_->hostMemory().trim();
  device_->kernargs().trim();
  device_->staging().trim();
  return Status();
}

namespace {

// One side of a copy: the pointer and agent to give hsa_amd_memory_async_copy, and whether it
// is user host memory locked for the copy.
struct Endpoint {
  void* ptr = nullptr;
  hsa_agent_t agent{0};
  bool locked = false;
};

}  // namespace

Status HsaDriver::copy(void* dst, const void* src, size_t bytes, CopyKind kind, Stream* stream) {
  auto span = drivers::transferSpan("copy", DeviceKind::kHsa, bytes, drivers::copyKindName(kind));
  if (bytes == 0) return Status();
  if (dst == nullptr || src == nullptr)
    return invalidArgument("hsa: copy of ", bytes, " bytes with a null pointer");
  RAL_ASSIGN_OR_RETURN(HsaStream * s, resolveStream(stream));
  const bool device_side[2] = {
      kind == CopyKind::kHostToDevice || kind == CopyKind::kDeviceToDevice,
      kind == CopyKind::kDeviceToHost || kind == CopyKind::kDeviceToDevice};
  const char* roles[2] = {"destination", "source"};
  void* pointers[2] = {dst, const_cast<void*>(src)};
  Endpoint ends[2];
  for (int i = 0; i < 2; ++i) {
    Endpoint& e = ends[i];
    e.ptr = pointers[i];
    if (device_->deviceMemory().contains(e.ptr, bytes)) {
      e.agent = device_->gpu().agent;
    } else if (device_->hostMemory().contains(e.ptr, bytes)) {
      e.agent = device_->cpu();
    } else if (device_side[i]) {
      return invalidArgument("hsa: copy ", roles[i], " [", pointers[i], ", +", bytes,
                             ") is not inside one allocation of this driver");
    } else {
      // Pageable host memory: locked (pinned and mapped for the GPU) until the copy is done.
      hsa_agent_t gpu = device_->gpu().agent;
      RAL_RETURN_IF_ERROR(
          RAL_HSA_CALL(device_->lib(), hsa_amd_memory_lock, pointers[i], bytes, &gpu, 1, &e.ptr));
      e.agent = device_->cpu();
      e.locked = true;
    }
  }
  auto dev = device_;
  auto release = [dev, d = ends[0].locked ? dst : nullptr,
                  sp = ends[1].locked ? pointers[1] : nullptr] {
    if (d != nullptr) (void)dev->hsa().hsa_amd_memory_unlock(d);
    if (sp != nullptr) (void)dev->hsa().hsa_amd_memory_unlock(sp);
  };
  return s->copy(ends[0].ptr, ends[0].agent, ends[1].ptr, ends[1].agent, bytes, release);
}

bool HsaDriver::kernelsCanAccess(const void* ptr, size_t bytes) const {
  return device_->deviceMemory().contains(ptr, bytes) || device_->hostMemory().contains(ptr, bytes);
}

Status HsaDriver::fill(void* dst, size_t bytes, const void* pattern, size_t pattern_size,
                       Stream* stream) {
  auto span = drivers::transferSpan("fill", DeviceKind::kHsa, bytes);
  if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8)
    return invalidArgument("hsa: fill pattern of ", pattern_size,
                           " bytes (expected 1, 2, 4 or 8)");
  if (bytes % pattern_size != 0)
    return invalidArgument("hsa: fill of ", bytes, " bytes is not a multiple of the ", pattern_size,
                           "-byte pattern");
  if (bytes == 0) return Status();
  if (dst == nullptr || pattern == nullptr) return invalidArgument("hsa: fill of a null pointer");
  RAL_ASSIGN_OR_RETURN(HsaStream * s, resolveStream(stream));
  hsa_agent_t agent{0};
  if (device_->deviceMemory().contains(dst, bytes)) {
    agent = device_->gpu().agent;
  } else if (device_->hostMemory().contains(dst, bytes)) {
    agent = device_->cpu();
  } else {
    return invalidArgument("hsa: fill destination [", dst, ", +", bytes,
                           ") is not inside one allocation of this driver");
  }
  // Exact for any pattern and offset: the pattern, staged in host memory, is copied to the
  // first chunk; the filled prefix is then copied after itself, doubling, until done.
  const size_t chunk = std::min(bytes, kFillChunk);
  RAL_ASSIGN_OR_RETURN(void* staging, device_->staging().allocate(chunk, 64));
  auto* stage = static_cast<unsigned char*>(staging);
  for (size_t i = 0; i < chunk; ++i)
    stage[i] = static_cast<const unsigned char*>(pattern)[i % pattern_size];
  auto dev = device_;
  RAL_RETURN_IF_ERROR(s->copy(dst, agent, staging, device_->cpu(), chunk,
                              [dev, staging] { (void)dev->staging().deallocate(staging); }));
  auto* base = static_cast<unsigned char*>(dst);
  for (size_t done = chunk; done < bytes;) {
    const size_t n = std::min(done, bytes - done);
    RAL_RETURN_IF_ERROR(s->copy(base + done, agent, base, agent, n, nullptr));
    done += n;
  }
  return Status();
}

// ---- executables

StatusOr<Executable*> HsaDriver::load(const ExecutableSpec& spec) {
  std::lock_guard<std::mutex> lock(executables_mutex_);
  if (auto it = executables_.find(spec.name); it != executables_.end()) return it->second.get();
  RAL_ASSIGN_OR_RETURN(std::unique_ptr<HsaExecutable> exe,
                       HsaExecutable::load(device_, spec, this));
  Executable* raw = exe.get();
  executables_.emplace(spec.name, std::move(exe));
  return raw;
}

Status HsaDriver::launch(Executable* executable, uint32_t entry, const LaunchConfig& config,
                         const KernelArgs& args, Stream* stream) {
  auto* exe = dynamic_cast<HsaExecutable*>(executable);
  if (exe == nullptr || exe->owner() != this)
    return invalidArgument("hsa: the executable was not loaded by this HSA driver");
  if (entry >= exe->kernelCount())
    return outOfRange("hsa: entry ", entry, " of executable '", exe->spec().name, "' (it has ",
                      exe->kernelCount(), ")");
  const std::string& name = exe->spec().entries[entry].name;
  if (config.grid.count() == 0 || config.block.count() == 0)
    return invalidArgument("hsa: launch of '", name, "' with an empty grid or block");
  if (args.count > 0 && (args.sizes == nullptr || args.values == nullptr))
    return invalidArgument("hsa: launch of '", name, "' needs KernelArgs::sizes and values");
  const HsaKernel& kernel = exe->kernel(entry);
  KernelDispatch d;
  const uint32_t grid[3] = {config.grid.x, config.grid.y, config.grid.z};
  const uint32_t block[3] = {config.block.x, config.block.y, config.block.z};
  for (int i = 0; i < 3; ++i) {
    const uint64_t items = uint64_t{grid[i]} * block[i];
    if (block[i] > 0xffff || items > 0xffffffffu)
      return invalidArgument("hsa: launch of '", name, "': dimension ", i, " has ", grid[i],
                             " workgroups of ", block[i],
                             " (AQL allows 65535 per workgroup and 2^32-1 work-items)");
    d.workgroup_size[i] = static_cast<uint16_t>(block[i]);
    d.grid_size[i] = static_cast<uint32_t>(items);
  }
  d.dimensions = d.grid_size[2] > 1 ? 3 : d.grid_size[1] > 1 ? 2 : 1;
  d.kernel_object = kernel.object;
  d.group_segment_size = kernel.group_segment_size + config.shared_memory_bytes;
  d.private_segment_size = kernel.private_segment_size;
  std::vector<size_t> offsets;
  size_t total = 0;
  for (size_t i = 0; i < args.count; ++i) {
    const size_t a = argAlignment(args.sizes[i]);
    total = (total + a - 1) / a * a;
    offsets.push_back(total);
    total += args.sizes[i];
  }
  if (total > kernel.kernarg_size)
    return invalidArgument("hsa: launch of '", name, "': ", args.count, " arguments take ", total,
                           " bytes; the kernel's kernarg segment has ", kernel.kernarg_size);
  RAL_ASSIGN_OR_RETURN(HsaStream * s, resolveStream(stream));
  const size_t segment = std::max<size_t>(kernel.kernarg_size, 16);
  RAL_ASSIGN_OR_RETURN(
      void* kernarg,
      device_->kernargs().allocate(segment, std::min<size_t>(kernel.kernarg_alignment, 4096)));
  auto* bytes = static_cast<unsigned char*>(kernarg);
  std::memset(bytes, 0, segment);
  for (size_t i = 0; i < args.count; ++i)
    std::memcpy(bytes + offsets[i], args.values[i], args.sizes[i]);
  d.kernarg = kernarg;
  auto dev = device_;
  return s->dispatch(d, [dev, kernarg] { (void)dev->kernargs().deallocate(kernarg); });
}

// ---- streams and semaphores

StatusOr<std::unique_ptr<Stream>> HsaDriver::createStream() {
  RAL_ASSIGN_OR_RETURN(std::unique_ptr<HsaStream> s, HsaStream::create(device_, this));
  return std::unique_ptr<Stream>(std::move(s));
}

Status HsaDriver::synchronize(Stream* stream) {
  auto span = drivers::waitSpan("synchronize", DeviceKind::kHsa);
  RAL_ASSIGN_OR_RETURN(HsaStream * s, resolveStream(stream));
  return s->synchronize();
}

StatusOr<std::shared_ptr<Semaphore>> HsaDriver::createSemaphore(uint64_t initial_value) {
  return std::shared_ptr<Semaphore>(std::make_shared<HsaSemaphore>(device_->lib(), initial_value));
}

namespace {
StatusOr<HsaSemaphore*> asHsa(Semaphore* semaphore) {
  auto* s = dynamic_cast<HsaSemaphore*>(semaphore);
  if (s == nullptr) return invalidArgument("hsa: the semaphore was not created by an HSA driver");
  return s;
}
}  // namespace

Status HsaDriver::queueSignal(Stream* stream, Semaphore* semaphore, uint64_t value) {
  RAL_ASSIGN_OR_RETURN(HsaStream * s, resolveStream(stream));
  RAL_ASSIGN_OR_RETURN(HsaSemaphore * sem, asHsa(semaphore));
  return s->signal(sem->shared_from_this(), value);
}

Status HsaDriver::queueWait(Stream* stream, Semaphore* semaphore, uint64_t value) {
  RAL_ASSIGN_OR_RETURN(HsaStream * s, resolveStream(stream));
  RAL_ASSIGN_OR_RETURN(HsaSemaphore * sem, asHsa(semaphore));
  RAL_ASSIGN_OR_RETURN(std::shared_ptr<WaitPoint> point, sem->deviceWait(value));
  if (point->released()) return Status();  // already reached: nothing to wait for
  return s->wait(std::move(point));
}

DriverFactory hsaDriverFactory(HsaDriverOptions options) {
  return [options](Context& context) -> StatusOr<std::unique_ptr<Driver>> {
    HsaDriverOptions chosen = options;
    if (chosen.device < 0) chosen.device = context.deviceOrdinal(DeviceKind::kHsa);
    RAL_ASSIGN_OR_RETURN(std::unique_ptr<HsaDriver> driver, HsaDriver::create(chosen));
    return std::unique_ptr<Driver>(std::move(driver));
  };
}

namespace {

StatusOr<std::vector<DeviceInfo>> enumerateHsaDevices() {
  RAL_ASSIGN_OR_RETURN(const HsaLibrary* lib, HsaLibrary::get());
  RAL_ASSIGN_OR_RETURN(HsaTopology topology, HsaTopology::discover(*lib));
  if (topology.gpus.empty()) return topology.gpu(*lib, 0).status();
  std::vector<DeviceInfo> devices;
  for (const HsaGpuAgent& gpu : topology.gpus) {
    DeviceInfo info;
    info.kind = DeviceKind::kHsa;
    info.ordinal = gpu.ordinal;
    info.uuid = gpu.uuid;
    info.name = gpu.product.empty() ? gpu.name : gpu.product;
    info.arch = gpu.arch;
    devices.push_back(std::move(info));
  }
  return devices;
}

}  // namespace

RAL_REGISTER_DRIVER(DeviceKind::kHsa, hsaDriverFactory(), enumerateHsaDevices);

}  // namespace ral::hsa

// Defined beside RAL_REGISTER_DRIVER above, so naming it links the registration.
ral::Status ral::registerHsaDriver() {
  return ral::defaultDriverFactory(ral::DeviceKind::kHsa).status();
}
