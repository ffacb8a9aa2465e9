#include "drivers/vulkan/vulkan_driver.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "drivers/common/driver_trace.h"
#include "ral/context.h"
#include "ral/device_uri.h"
#include "ral/registration.h"

namespace ral::vulkan {
namespace {

bool isDefaultBlock(const Dim3& b) {
  return (b.x == 0 && b.y == 0 && b.z == 0) || (b.x == 1 && b.y == 1 && b.z == 1);
}

}  // namespace

// ---- lifetime --------------------------------------------------------------------------------

StatusOr<std::unique_ptr<VulkanDriver>> VulkanDriver::create(VulkanDriverOptions options) {
  std::unique_ptr<VulkanDriver> driver(new VulkanDriver());
  RAL_RETURN_IF_ERROR(driver->init(options));
  return driver;
}

Status VulkanDriver::init(const VulkanDriverOptions& options) {
  RAL_ASSIGN_OR_RETURN(device_, VulkanDevice::create(options.device));
  scheduler_ = std::make_shared<Scheduler>(device_);
  memory_ = std::make_unique<VulkanMemory>(device_);
  RAL_ASSIGN_OR_RETURN(cache_, PipelineCache::open(device_, options.pipeline_cache_dir));
  RAL_ASSIGN_OR_RETURN(default_stream_, CommandStream::create(device_, scheduler_));
  streams_.push_back(default_stream_);
  return Status();
}

VulkanDriver::~VulkanDriver() {
  if (default_stream_) (void)default_stream_->synchronize();
  default_stream_.reset();
  if (device_) device_->api().vkDeviceWaitIdle(device_->device());
  {
    std::lock_guard<std::mutex> lock(executables_mutex_);
    executables_.clear();
  }
  if (cache_) (void)cache_->save();
  cache_.reset();
  memory_.reset();
}

std::string VulkanDriver::deviceName() const {
  const uint32_t v = device_->properties().apiVersion;
  return internal::strCat("vulkan: ", device_->name(), " (device ", device_->deviceIndex(),
                          ", Vulkan ", VK_API_VERSION_MAJOR(v), ".", VK_API_VERSION_MINOR(v), ".",
                          VK_API_VERSION_PATCH(v), ")");
}

DriverFactory vulkanDriverFactory(VulkanDriverOptions options) {
  return [options](Context& context) -> StatusOr<std::unique_ptr<Driver>> {
    VulkanDriverOptions chosen = options;
    // A device the context selected (a device URI) wins over RAL_VULKAN_DEVICE.
    const int ordinal = context.deviceOrdinal(DeviceKind::kVulkan);
    if (chosen.device.device.empty() && ordinal >= 0)
      chosen.device.device = std::to_string(ordinal);
    RAL_ASSIGN_OR_RETURN(std::unique_ptr<VulkanDriver> driver, VulkanDriver::create(chosen));
    return std::unique_ptr<Driver>(std::move(driver));
  };
}

StatusOr<std::vector<DeviceInfo>> listVulkanDevices() {
  RAL_ASSIGN_OR_RETURN(std::vector<PhysicalDeviceInfo> physical, VulkanDevice::listDevices());
  std::vector<DeviceInfo> devices;
  for (const PhysicalDeviceInfo& p : physical) {
    DeviceInfo d;
    d.kind = DeviceKind::kVulkan;
    d.ordinal = static_cast<int>(p.index);
    d.uuid = p.uuid;
    d.name = p.usable ? p.name : p.name + " [unusable: " + p.unusable_reason + "]";
    d.arch = "spirv";
    devices.push_back(std::move(d));
  }
  return devices;
}

RAL_REGISTER_DRIVER(DeviceKind::kVulkan, vulkanDriverFactory(), listVulkanDevices);


StatusOr<uint64_t> VulkanDriver::allocationOffset(const void* ptr, size_t bytes) const {
  RAL_ASSIGN_OR_RETURN(BufferRange range, resolve(ptr, bytes));
  return static_cast<uint64_t>(range.offset);
}

uint64_t VulkanDriver::maxBindingRange() const { return device_->limits().maxStorageBufferRange; }

size_t VulkanDriver::bindingAlignment() const {
  return static_cast<size_t>(
      std::max<VkDeviceSize>(device_->limits().minStorageBufferOffsetAlignment,
                             device_->limits().minUniformBufferOffsetAlignment));
}

StatusOr<VkDeviceAddress> VulkanDriver::deviceAddress(const void* ptr) const {
  RAL_ASSIGN_OR_RETURN(BufferRange r, memory_->resolve(ptr, 0));
  return r.address;
}

// ---- executables -----------------------------------------------------------------------------

StatusOr<Executable*> VulkanDriver::load(const ExecutableSpec& spec) {
  std::lock_guard<std::mutex> lock(executables_mutex_);
  auto it = executables_.find(spec.name);
  if (it != executables_.end()) {
    if (spec.data != nullptr && !it->second->sameModule(spec))
      return alreadyExists("vulkan: a different SPIR-V module is already loaded as '", spec.name,
                           "'");
    return it->second.get();
  }
  RAL_ASSIGN_OR_RETURN(auto exe, VulkanExecutable::create(device_, cache_.get(), spec, this));
  Executable* raw = exe.get();
  executables_.emplace(spec.name, std::move(exe));
  return raw;
}

Status VulkanDriver::launch(Executable* executable, uint32_t entry, const LaunchConfig& config,
                            const KernelArgs& args, Stream* stream) {
  auto* exe = dynamic_cast<VulkanExecutable*>(executable);
  if (exe == nullptr || exe->owner() != this)
    return invalidArgument("vulkan: launch of an executable not loaded by this driver");
  if (entry >= exe->entryCount())
    return invalidArgument("vulkan: '", exe->spec().name, "' has ", exe->entryCount(),
                           " entry points; ", entry, " is out of range");
  const auto& e = exe->entry(entry);
  const Dim3& b = config.block;
  if (!isDefaultBlock(b) &&
      (b.x != e.workgroup_size.x || b.y != e.workgroup_size.y || b.z != e.workgroup_size.z))
    return invalidArgument("vulkan: '", exe->spec().entries[entry].name,
                           "' is compiled for workgroup size ", e.workgroup_size.x, "x",
                           e.workgroup_size.y, "x", e.workgroup_size.z, "; the launch asks for ",
                           b.x, "x", b.y, "x", b.z);
  const auto& limits = device_->limits();
  if (config.shared_memory_bytes > limits.maxComputeSharedMemorySize)
    return invalidArgument("vulkan: ", config.shared_memory_bytes,
                           " bytes of shared memory exceed the device's ",
                           limits.maxComputeSharedMemorySize);
  const uint32_t grid[3] = {config.grid.x, config.grid.y, config.grid.z};
  for (int d = 0; d < 3; ++d)
    if (grid[d] > limits.maxComputeWorkGroupCount[d])
      return invalidArgument("vulkan: grid dimension ", d, " is ", grid[d], "; the device allows ",
                             limits.maxComputeWorkGroupCount[d]);
  if (args.count > 0 && (args.values == nullptr || args.sizes == nullptr))
    return invalidArgument("vulkan: launch arguments without values or sizes");

  // Buffer bindings first, in binding order.
  const SpirvInfo& info = exe->layoutInfo();
  const size_t nb = info.bindings.size();
  if (args.count < nb)
    return invalidArgument("vulkan: '", exe->spec().name, "' binds ", nb, " buffers; the launch ",
                           "passes ", args.count, " arguments");
  if (nb > 32) return unsupported("vulkan: more than 32 buffer bindings");
  BoundBuffer buffers[32];
  const size_t align = bindingAlignment();
  const VkDeviceSize max_range = limits.maxStorageBufferRange;
  for (size_t i = 0; i < nb; ++i) {
    if (args.sizes[i] != sizeof(void*))
      return invalidArgument("vulkan: argument ", i, " (binding ", info.bindings[i].binding,
                             ") must be a pointer");
    void* ptr;
    std::memcpy(&ptr, args.values[i], sizeof(ptr));
    auto r = memory_->resolve(ptr, 0);
    if (!r.ok())
      return invalidArgument("vulkan: argument ", i, " (binding ", info.bindings[i].binding,
                             "): ", r.status().message());
    if (r->offset % align != 0)
      return invalidArgument("vulkan: argument ", i, " (", ptr, ") lies at offset ", r->offset,
                             " of its buffer; bindings need multiples of ", align);
    const VkDeviceSize range =
        info.bindings[i].type == BindingType::kStorageBuffer
            ? std::min<VkDeviceSize>(r->available, max_range)
            : std::min<VkDeviceSize>(r->available, limits.maxUniformBufferRange);
    buffers[i] = BoundBuffer{r->buffer, r->offset, std::max<VkDeviceSize>(range, 1)};
  }

  // Then push constants: one argument per member, or the whole block in one.
  alignas(16) unsigned char push[256] = {};
  const size_t np = args.count - nb;
  const uint32_t push_size = info.push_constant_size;
  if (push_size > sizeof(push)) return unsupported("vulkan: push constants above 256 bytes");
  if (push_size == 0 && np > 0)
    return invalidArgument("vulkan: '", exe->spec().name, "' has no push constants; the launch ",
                           "passes ", np, " arguments beyond its ", nb, " buffers");
  if (push_size > 0) {
    if (np == 1 && args.sizes[nb] == push_size) {
      std::memcpy(push, args.values[nb], push_size);
    } else if (np == info.push_members.size()) {
      for (size_t j = 0; j < np; ++j) {
        const auto& m = info.push_members[j];
        if (args.sizes[nb + j] != m.size)
          return invalidArgument("vulkan: push constant ", j, " is ", m.size,
                                 " bytes; the launch passes ", args.sizes[nb + j]);
        std::memcpy(push + m.offset, args.values[nb + j], m.size);
      }
    } else {
      return invalidArgument("vulkan: '", exe->spec().name, "' takes ", info.push_members.size(),
                             " push constants (", push_size, " bytes); the launch passes ", np,
                             " arguments");
    }
  }
  if (config.grid.count() == 0) return Status();

  RAL_ASSIGN_OR_RETURN(CommandStream * s, commandStream(stream));
  std::lock_guard<std::mutex> lock(s->mutex());
  return s->dispatchLocked(*exe, entry, config.grid, buffers, nb, push, push_size);
}

// ---- streams and semaphores ------------------------------------------------------------------

StatusOr<CommandStream*> VulkanDriver::commandStream(Stream* stream) {
  if (stream == nullptr) return default_stream_.get();
  auto* vs = dynamic_cast<VulkanStream*>(stream);
  if (vs == nullptr || vs->owner() != this)
    return invalidArgument("vulkan: the stream was not created by this Vulkan driver");
  return &vs->commands();
}

StatusOr<std::unique_ptr<Stream>> VulkanDriver::createStream() {
  RAL_ASSIGN_OR_RETURN(auto s, CommandStream::create(device_, scheduler_));
  {
    std::lock_guard<std::mutex> lock(streams_mutex_);
    streams_.erase(
        std::remove_if(streams_.begin(), streams_.end(), [](const auto& w) { return w.expired(); }),
        streams_.end());
    streams_.push_back(s);
  }
  return std::unique_ptr<Stream>(new VulkanStream(std::move(s), this));
}

Status VulkanDriver::synchronize(Stream* stream) {
  auto span = drivers::waitSpan("synchronize", DeviceKind::kVulkan);
  RAL_ASSIGN_OR_RETURN(CommandStream * s, commandStream(stream));
  return s->synchronize();
}

StatusOr<std::shared_ptr<Semaphore>> VulkanDriver::createSemaphore(uint64_t initial_value) {
  RAL_ASSIGN_OR_RETURN(auto sem, VulkanSemaphore::create(device_, scheduler_, initial_value, this));
  return std::shared_ptr<Semaphore>(std::move(sem));
}

namespace {
StatusOr<VulkanSemaphore*> asOwnSemaphore(Semaphore* semaphore, const void* owner) {
  auto* s = dynamic_cast<VulkanSemaphore*>(semaphore);
  if (s == nullptr || s->owner() != owner)
    return invalidArgument("vulkan: the semaphore was not created by this Vulkan driver");
  return s;
}
}  // namespace

Status VulkanDriver::queueSignal(Stream* stream, Semaphore* semaphore, uint64_t value) {
  RAL_ASSIGN_OR_RETURN(VulkanSemaphore * sem, asOwnSemaphore(semaphore, this));
  RAL_ASSIGN_OR_RETURN(CommandStream * s, commandStream(stream));
  std::lock_guard<std::mutex> lock(s->mutex());
  RAL_RETURN_IF_ERROR(scheduler_->reserveSignal(*sem->state(), value));
  return s->signalLocked({sem->state(), value});
}

Status VulkanDriver::queueWait(Stream* stream, Semaphore* semaphore, uint64_t value) {
  RAL_ASSIGN_OR_RETURN(VulkanSemaphore * sem, asOwnSemaphore(semaphore, this));
  RAL_ASSIGN_OR_RETURN(CommandStream * s, commandStream(stream));
  RAL_RETURN_IF_ERROR(scheduler_->checkWait(*sem->state()));
  std::lock_guard<std::mutex> lock(s->mutex());
  return s->waitLocked({sem->state(), value});
}

}  // namespace ral::vulkan

// Defined beside RAL_REGISTER_DRIVER above, so naming it links the registration.
ral::Status ral::registerVulkanDriver() {
  return ral::defaultDriverFactory(ral::DeviceKind::kVulkan).status();
}
