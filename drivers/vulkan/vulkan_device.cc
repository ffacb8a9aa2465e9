#include "drivers/vulkan/vulkan_device.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "ral/trace.h"

namespace ral::vulkan {
namespace {

constexpr uint32_t kRequiredApi = VK_API_VERSION_1_2;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string versionString(uint32_t v) {
  return internal::strCat(VK_API_VERSION_MAJOR(v), ".", VK_API_VERSION_MINOR(v), ".",
                          VK_API_VERSION_PATCH(v));
}

int typeRank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 3;
    default:
      return 4;
  }
}

bool hasExtension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  return std::any_of(exts.begin(), exts.end(), [name](const VkExtensionProperties& e) {
    return std::strcmp(e.extensionName, name) == 0;
  });
}

// A queue family with compute; a compute-only family (no graphics) first: it is the dedicated
// compute engine on GPUs that have one.
std::optional<uint32_t> computeFamily(const VulkanApi& api, VkPhysicalDevice pd) {
  uint32_t count = 0;
  api.vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  api.vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, families.data());
  std::optional<uint32_t> any;
  for (uint32_t i = 0; i < count; ++i) {
    const auto flags = families[i].queueFlags;
    if (!(flags & VK_QUEUE_COMPUTE_BIT) || families[i].queueCount == 0) continue;
    if (!(flags & VK_QUEUE_GRAPHICS_BIT)) return i;
    if (!any) any = i;
  }
  return any;
}

// Valid bits of the timestamps the queue family writes (0: none).
uint32_t timestampBits(const VulkanApi& api, VkPhysicalDevice pd, uint32_t family) {
  uint32_t count = 0;
  api.vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  api.vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, families.data());
  return family < count ? families[family].timestampValidBits : 0;
}

// Whether the device's clock and CLOCK_MONOTONIC can be read together.
bool canCalibrate(const VulkanApi& api, VkPhysicalDevice pd) {
  if (api.vkGetPhysicalDeviceCalibrateableTimeDomainsEXT == nullptr) return false;
  uint32_t count = 0;
  if (api.vkGetPhysicalDeviceCalibrateableTimeDomainsEXT(pd, &count, nullptr) != VK_SUCCESS)
    return false;
  std::vector<VkTimeDomainEXT> domains(count);
  if (api.vkGetPhysicalDeviceCalibrateableTimeDomainsEXT(pd, &count, domains.data()) != VK_SUCCESS)
    return false;
  auto has = [&](VkTimeDomainEXT d) {
    return std::find(domains.begin(), domains.end(), d) != domains.end();
  };
  return has(VK_TIME_DOMAIN_DEVICE_EXT) && has(VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT);
}

std::optional<uint32_t> findMemoryType(const VkPhysicalDeviceMemoryProperties& props,
                                       VkMemoryPropertyFlags required,
                                       VkMemoryPropertyFlags preferred) {
  std::optional<uint32_t> fallback;
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    const auto flags = props.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (!fallback) fallback = i;
  }
  return fallback;
}

}  // namespace

// One VkInstance per process, created on first use and kept: destroying it would unload the ICD
// (and its JIT, threads and caches) under later drivers, and make every Context pay for
// instance creation again. A failed creation is not remembered, so a later call may succeed.
Status VulkanDevice::createInstance() {
  struct Shared {
    std::mutex mutex;
    VulkanApi api;
    VkInstance instance = VK_NULL_HANDLE;
  };
  static Shared* shared = new Shared();
  std::lock_guard<std::mutex> lock(shared->mutex);
  if (shared->instance == VK_NULL_HANDLE) {
    RAL_RETURN_IF_ERROR(newInstance());
    shared->api = api_;
    shared->instance = instance_;
    return Status();
  }
  api_ = shared->api;
  instance_ = shared->instance;
  return Status();
}

StatusOr<std::shared_ptr<VulkanDevice>> VulkanDevice::create(const VulkanDeviceOptions& options) {
  std::shared_ptr<VulkanDevice> device(new VulkanDevice());
  RAL_RETURN_IF_ERROR(device->init(options));
  return device;
}

Status VulkanDevice::init(const VulkanDeviceOptions& options) {
  RAL_ASSIGN_OR_RETURN(api_, VulkanApi::loadGlobal());
  RAL_RETURN_IF_ERROR(createInstance());
  RAL_RETURN_IF_ERROR(selectPhysicalDevice(options));
  return createLogicalDevice();
}

VulkanDevice::~VulkanDevice() {
  if (device_ != VK_NULL_HANDLE) {
    api_.vkDeviceWaitIdle(device_);
    for (const auto& [tag, sem] : garbage_) api_.vkDestroySemaphore(device_, sem, nullptr);
    if (queue_timeline_ != VK_NULL_HANDLE)
      api_.vkDestroySemaphore(device_, queue_timeline_, nullptr);
    api_.vkDestroyDevice(device_, nullptr);
  }
}

Status VulkanDevice::newInstance() {
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (api_.vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS)
    loader_version = VK_API_VERSION_1_0;
  if (loader_version < kRequiredApi)
    return unavailable("vulkan: the Vulkan loader supports only API ",
                       versionString(loader_version), "; RAL needs 1.2");

  uint32_t ext_count = 0;
  api_.vkEnumerateInstanceExtensionProperties(nullptr, &ext_count, nullptr);
  std::vector<VkExtensionProperties> exts(ext_count);
  api_.vkEnumerateInstanceExtensionProperties(nullptr, &ext_count, exts.data());
  std::vector<const char*> enabled;
  VkInstanceCreateFlags flags = 0;
  // Lists portability (non-conformant) implementations too, e.g. layered drivers.
  if (hasExtension(exts, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    enabled.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "ral";
  app.pEngineName = "ral";
  app.apiVersion = VK_API_VERSION_1_3;  // the highest RAL knows; devices may offer less
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.flags = flags;
  info.pApplicationInfo = &app;
  info.enabledExtensionCount = static_cast<uint32_t>(enabled.size());
  info.ppEnabledExtensionNames = enabled.data();
  const VkResult r = api_.vkCreateInstance(&info, nullptr, &instance_);
  if (r != VK_SUCCESS) {
    instance_ = VK_NULL_HANDLE;
    return unavailable("vulkan: cannot create a Vulkan instance (", vkResultName(r),
                       "); is a Vulkan driver (ICD) installed? Check VK_ICD_FILENAMES / "
                       "VK_DRIVER_FILES");
  }
  Status loaded = api_.loadInstance(instance_);
  if (!loaded.ok()) {
    auto destroy = reinterpret_cast<PFN_vkDestroyInstance>(
        api_.vkGetInstanceProcAddr(instance_, "vkDestroyInstance"));
    if (destroy != nullptr) destroy(instance_, nullptr);
    instance_ = VK_NULL_HANDLE;
  }
  return loaded;
}

StatusOr<std::vector<PhysicalDeviceInfo>> VulkanDevice::listDevices() {
  VulkanDevice device;
  RAL_ASSIGN_OR_RETURN(device.api_, VulkanApi::loadGlobal());
  RAL_RETURN_IF_ERROR(device.createInstance());
  std::vector<VkPhysicalDevice> handles;
  RAL_RETURN_IF_ERROR(device.listPhysicalDevices(&handles));
  return device.all_devices_;
}

Status VulkanDevice::listPhysicalDevices(std::vector<VkPhysicalDevice>* out) {
  uint32_t count = 0;
  VkResult r = api_.vkEnumeratePhysicalDevices(instance_, &count, nullptr);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return vkStatus(r, "vkEnumeratePhysicalDevices");
  if (count == 0)
    return unavailable(
        "vulkan: no Vulkan device found (no driver/ICD loaded; check VK_ICD_FILENAMES / "
        "VK_DRIVER_FILES, or install mesa-vulkan-drivers for the CPU device llvmpipe)");
  std::vector<VkPhysicalDevice> devices(count);
  r = api_.vkEnumeratePhysicalDevices(instance_, &count, devices.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return vkStatus(r, "vkEnumeratePhysicalDevices");
  devices.resize(count);

  all_devices_.clear();
  for (uint32_t i = 0; i < count; ++i) {
    VkPhysicalDeviceProperties props;
    api_.vkGetPhysicalDeviceProperties(devices[i], &props);
    PhysicalDeviceInfo info;
    info.index = i;
    info.name = props.deviceName;
    info.type = props.deviceType;
    info.api_version = props.apiVersion;
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f12;
    if (props.apiVersion < kRequiredApi) {
      info.unusable_reason =
          internal::strCat("offers Vulkan ", versionString(props.apiVersion), ", not 1.2");
    } else {
      api_.vkGetPhysicalDeviceFeatures2(devices[i], &f2);
      if (!f12.timelineSemaphore) {
        info.unusable_reason = "has no timeline semaphores";
      } else if (!f12.bufferDeviceAddress) {
        info.unusable_reason = "has no buffer device addresses";
      } else if (!computeFamily(api_, devices[i])) {
        info.unusable_reason = "has no queue family with compute";
      }
    }
    info.usable = info.unusable_reason.empty();
    if (props.apiVersion >= VK_API_VERSION_1_1) {
      VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
      VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
      p2.pNext = &id;
      api_.vkGetPhysicalDeviceProperties2(devices[i], &p2);
      static const char kHex[] = "0123456789abcdef";
      info.uuid = "GPU-";
      for (uint8_t b : id.deviceUUID) {
        info.uuid.push_back(kHex[b >> 4]);
        info.uuid.push_back(kHex[b & 15]);
      }
    }
    all_devices_.push_back(std::move(info));
  }
  *out = std::move(devices);
  return Status();
}

Status VulkanDevice::selectPhysicalDevice(const VulkanDeviceOptions& options) {
  std::vector<VkPhysicalDevice> devices;
  RAL_RETURN_IF_ERROR(listPhysicalDevices(&devices));

  auto describe = [this]() {
    std::string s;
    for (const auto& d : all_devices_)
      s += internal::strCat(s.empty() ? "" : ", ", d.index, ": '", d.name, "'",
                            d.usable ? "" : " (" + d.unusable_reason + ")");
    return s;
  };

  std::string choice = options.device;
  const char* env = std::getenv("RAL_VULKAN_DEVICE");
  const bool from_env = choice.empty() && env != nullptr && *env != '\0';
  if (from_env) choice = env;
  const PhysicalDeviceInfo* chosen = nullptr;
  if (!choice.empty()) {
    const char* where = from_env ? " (from RAL_VULKAN_DEVICE)" : "";
    const bool numeric = std::all_of(choice.begin(), choice.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
    if (numeric) {
      const unsigned long idx = std::strtoul(choice.c_str(), nullptr, 10);
      if (idx >= all_devices_.size())
        return unavailable("vulkan: device index ", choice, where,
                           " is out of range; devices: ", describe());
      chosen = &all_devices_[idx];
    } else {
      const std::string needle = lower(choice);
      for (const auto& d : all_devices_) {
        if (lower(d.name).find(needle) != std::string::npos) {
          chosen = &d;
          break;
        }
      }
      if (chosen == nullptr)
        return unavailable("vulkan: no device name contains '", choice, "'", where,
                           "; devices: ", describe());
    }
    if (!chosen->usable)
      return unavailable("vulkan: device ", chosen->index, " '", chosen->name, "'", where, " ",
                         chosen->unusable_reason);
  } else {
    for (const auto& d : all_devices_) {
      if (d.usable && (chosen == nullptr || typeRank(d.type) < typeRank(chosen->type))) chosen = &d;
    }
    if (chosen == nullptr)
      return unavailable("vulkan: no usable Vulkan device; devices: ", describe());
  }
  index_ = chosen->index;
  physical_ = devices[index_];
  name_ = chosen->name;
  api_.vkGetPhysicalDeviceProperties(physical_, &properties_);
  return Status();
}

Status VulkanDevice::createLogicalDevice() {
  queue_family_ = *computeFamily(api_, physical_);

  uint32_t ext_count = 0;
  api_.vkEnumerateDeviceExtensionProperties(physical_, nullptr, &ext_count, nullptr);
  std::vector<VkExtensionProperties> exts(ext_count);
  api_.vkEnumerateDeviceExtensionProperties(physical_, nullptr, &ext_count, exts.data());
  std::vector<const char*> enabled;
  if (hasExtension(exts, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME))
    enabled.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  const bool calibrated = hasExtension(exts, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME) &&
                          canCalibrate(api_, physical_) &&
                          timestampBits(api_, physical_, queue_family_) > 0;
  if (calibrated) enabled.push_back(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
  creation_feedback_ = properties_.apiVersion >= VK_API_VERSION_1_3;
  if (!creation_feedback_ && hasExtension(exts, VK_EXT_PIPELINE_CREATION_FEEDBACK_EXTENSION_NAME)) {
    enabled.push_back(VK_EXT_PIPELINE_CREATION_FEEDBACK_EXTENSION_NAME);
    creation_feedback_ = true;
  }

  // Enable every optional shader feature the device has, so module SPIR-V may use them.
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  f11.pNext = &f12;
  VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  supported.pNext = &f11;
  api_.vkGetPhysicalDeviceFeatures2(physical_, &supported);

  VkPhysicalDeviceVulkan12Features e12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  e12.timelineSemaphore = VK_TRUE;
  e12.bufferDeviceAddress = VK_TRUE;
  e12.shaderFloat16 = f12.shaderFloat16;
  e12.shaderInt8 = f12.shaderInt8;
  e12.storageBuffer8BitAccess = f12.storageBuffer8BitAccess;
  e12.uniformAndStorageBuffer8BitAccess = f12.uniformAndStorageBuffer8BitAccess;
  e12.storagePushConstant8 = f12.storagePushConstant8;
  e12.shaderBufferInt64Atomics = f12.shaderBufferInt64Atomics;
  e12.scalarBlockLayout = f12.scalarBlockLayout;
  e12.vulkanMemoryModel = f12.vulkanMemoryModel;
  VkPhysicalDeviceVulkan11Features e11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  e11.pNext = &e12;
  e11.storageBuffer16BitAccess = f11.storageBuffer16BitAccess;
  e11.uniformAndStorageBuffer16BitAccess = f11.uniformAndStorageBuffer16BitAccess;
  e11.storagePushConstant16 = f11.storagePushConstant16;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &e11;
  features.features.shaderInt64 = supported.features.shaderInt64;
  features.features.shaderInt16 = supported.features.shaderInt16;
  features.features.shaderFloat64 = supported.features.shaderFloat64;
  shader_features_.float64 = supported.features.shaderFloat64;
  shader_features_.int64 = supported.features.shaderInt64;
  shader_features_.int16 = supported.features.shaderInt16;
  shader_features_.float16 = f12.shaderFloat16;
  shader_features_.int8 = f12.shaderInt8;
  shader_features_.storage_buffer_16bit = f11.storageBuffer16BitAccess;
  shader_features_.storage_buffer_8bit = f12.storageBuffer8BitAccess;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = queue_family_;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.enabledExtensionCount = static_cast<uint32_t>(enabled.size());
  info.ppEnabledExtensionNames = enabled.data();
  const VkResult r = api_.vkCreateDevice(physical_, &info, nullptr, &device_);
  if (r != VK_SUCCESS) {
    device_ = VK_NULL_HANDLE;
    return vkStatus(r, "vkCreateDevice").withContext(name_);
  }
  RAL_RETURN_IF_ERROR(api_.loadDevice(device_));
  api_.vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
  times_commands_ = calibrated && api_.vkGetCalibratedTimestampsEXT != nullptr &&
                    properties_.limits.timestampPeriod > 0;
  const uint32_t bits = timestampBits(api_, physical_, queue_family_);
  timestamp_mask_ = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  trace_track_ = trace::track(internal::strCat("vulkan:", index_, " queue (", name_, ")"));
  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo sem_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  sem_info.pNext = &type;
  RAL_VK_RETURN_IF_ERROR(api_.vkCreateSemaphore(device_, &sem_info, nullptr, &queue_timeline_),
                         "vkCreateSemaphore (queue timeline)");

  VkPhysicalDeviceMemoryProperties mem;
  api_.vkGetPhysicalDeviceMemoryProperties(physical_, &mem);
  const auto device_type = findMemoryType(mem, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  const auto host_type = findMemoryType(
      mem, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
      VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (!host_type) return unavailable("vulkan: '", name_, "' has no host-visible coherent memory");
  host_memory_type_ = *host_type;
  device_memory_type_ = device_type ? *device_type : *host_type;
  device_memory_host_visible_ = (mem.memoryTypes[device_memory_type_].propertyFlags &
                                 VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0;
  return Status();
}

void VulkanDevice::retireSemaphore(VkSemaphore semaphore) {
  uint64_t submitted;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    submitted = submits_;
  }
  {
    std::lock_guard<std::mutex> lock(garbage_mutex_);
    garbage_.emplace_back(submitted, semaphore);
  }
  collectGarbage();
}

void VulkanDevice::collectGarbage() {
  std::lock_guard<std::mutex> lock(garbage_mutex_);
  if (garbage_.empty()) return;
  uint64_t done = 0;
  if (api_.vkGetSemaphoreCounterValue(device_, queue_timeline_, &done) != VK_SUCCESS) return;
  // Destroyable once a submission made after the retirement has completed.
  auto keep = std::remove_if(garbage_.begin(), garbage_.end(), [&](const auto& entry) {
    if (done <= entry.first) return false;
    api_.vkDestroySemaphore(device_, entry.second, nullptr);
    return true;
  });
  garbage_.erase(keep, garbage_.end());
}

int64_t VulkanDevice::hostTimeNs(uint64_t timestamp, int64_t host_minus_device_ns) const {
  const double ns = static_cast<double>(timestamp & timestamp_mask_) *
                    static_cast<double>(properties_.limits.timestampPeriod);
  return static_cast<int64_t>(ns) + host_minus_device_ns;
}

StatusOr<int64_t> VulkanDevice::hostMinusDeviceNs() const {
  if (!times_commands_) return unsupported("vulkan: '", name_, "' cannot time its commands");
  VkCalibratedTimestampInfoEXT infos[2] = {{VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT},
                                           {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT}};
  infos[0].timeDomain = VK_TIME_DOMAIN_DEVICE_EXT;
  infos[1].timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
  uint64_t stamps[2] = {0, 0};
  uint64_t deviation = 0;
  RAL_VK_RETURN_IF_ERROR(api_.vkGetCalibratedTimestampsEXT(device_, 2, infos, stamps, &deviation),
                         "vkGetCalibratedTimestampsEXT");
  return static_cast<int64_t>(stamps[1]) - hostTimeNs(stamps[0], 0);
}

}  // namespace ral::vulkan
