#include "drivers/vulkan/vulkan_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "drivers/common/dynamic_library.h"

namespace ral::vulkan {
namespace {

constexpr const char* kDefaultLoader = "libvulkan.so.1";
constexpr const char* kLoaderPathEnv = "RAL_VULKAN_LOADER_PATH";

struct LoaderHandle {
  void* handle = nullptr;
  std::string path;
  std::string error;
};

// The loader is opened once per path and never closed: ICDs keep threads and state that must not
// outlive their code.
StatusOr<void*> openLoader(std::string* path_out) {
  static std::mutex mutex;
  static LoaderHandle* cached = new LoaderHandle();
  const std::string path = drivers::libraryCandidates(kLoaderPathEnv, {kDefaultLoader}).front();
  *path_out = path;
  std::lock_guard<std::mutex> lock(mutex);
  if (cached->handle != nullptr && cached->path == path) return cached->handle;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return unavailable("vulkan: cannot load the Vulkan loader '", path,
                       "': ", err != nullptr ? err : "unknown error",
                       " (install libvulkan1 or point ", kLoaderPathEnv, " at it)");
  }
  cached->handle = handle;
  cached->path = path;
  return handle;
}

}  // namespace

StatusOr<VulkanApi> VulkanApi::loadGlobal() {
  std::string path;
  RAL_ASSIGN_OR_RETURN(void* handle, openLoader(&path));
  VulkanApi api;
  api.vkGetInstanceProcAddr =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(handle, "vkGetInstanceProcAddr"));
  if (api.vkGetInstanceProcAddr == nullptr)
    return unavailable("vulkan: '", path, "' does not export vkGetInstanceProcAddr");
#define RAL_VK_LOAD(name)                                                                    \
  api.name = reinterpret_cast<PFN_##name>(api.vkGetInstanceProcAddr(VK_NULL_HANDLE, #name)); \
  if (api.name == nullptr) return unavailable("vulkan: the loader '", path, "' lacks " #name);
  RAL_VK_GLOBAL_FUNCTIONS(RAL_VK_LOAD)
#undef RAL_VK_LOAD
  return api;
}

Status VulkanApi::loadInstance(VkInstance instance) {
#define RAL_VK_LOAD(name)                                                      \
  name = reinterpret_cast<PFN_##name>(vkGetInstanceProcAddr(instance, #name)); \
  if (name == nullptr) return unavailable("vulkan: the instance lacks " #name);
  RAL_VK_INSTANCE_FUNCTIONS(RAL_VK_LOAD)
#undef RAL_VK_LOAD
#define RAL_VK_LOAD_OPTIONAL(name) \
  name = reinterpret_cast<PFN_##name>(vkGetInstanceProcAddr(instance, #name));
  RAL_VK_OPTIONAL_INSTANCE_FUNCTIONS(RAL_VK_LOAD_OPTIONAL)
#undef RAL_VK_LOAD_OPTIONAL
  return Status();
}

Status VulkanApi::loadDevice(VkDevice device) {
#define RAL_VK_LOAD(name)                                                  \
  name = reinterpret_cast<PFN_##name>(vkGetDeviceProcAddr(device, #name)); \
  if (name == nullptr) return unavailable("vulkan: the device lacks " #name);
  RAL_VK_DEVICE_FUNCTIONS(RAL_VK_LOAD)
#undef RAL_VK_LOAD
#define RAL_VK_LOAD_OPTIONAL(name) \
  name = reinterpret_cast<PFN_##name>(vkGetDeviceProcAddr(device, #name));
  RAL_VK_OPTIONAL_DEVICE_FUNCTIONS(RAL_VK_LOAD_OPTIONAL)
#undef RAL_VK_LOAD_OPTIONAL
  return Status();
}

const char* vkResultName(VkResult result) {
  switch (result) {
#define RAL_VK_CASE(r) \
  case r:              \
    return #r;
    RAL_VK_CASE(VK_SUCCESS)
    RAL_VK_CASE(VK_NOT_READY)
    RAL_VK_CASE(VK_TIMEOUT)
    RAL_VK_CASE(VK_EVENT_SET)
    RAL_VK_CASE(VK_EVENT_RESET)
    RAL_VK_CASE(VK_INCOMPLETE)
    RAL_VK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    RAL_VK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    RAL_VK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    RAL_VK_CASE(VK_ERROR_DEVICE_LOST)
    RAL_VK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    RAL_VK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    RAL_VK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    RAL_VK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    RAL_VK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    RAL_VK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    RAL_VK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    RAL_VK_CASE(VK_ERROR_FRAGMENTED_POOL)
    RAL_VK_CASE(VK_ERROR_UNKNOWN)
    RAL_VK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    RAL_VK_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    RAL_VK_CASE(VK_ERROR_FRAGMENTATION)
    RAL_VK_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    RAL_VK_CASE(VK_PIPELINE_COMPILE_REQUIRED)
#undef RAL_VK_CASE
    default:
      return "VK_ERROR_(unknown)";
  }
}

Status vkStatus(VkResult result, const char* what) {
  if (result == VK_SUCCESS) return Status();
  const char* name = vkResultName(result);
  switch (result) {
    case VK_TIMEOUT:
      return deadlineExceeded("vulkan: ", what, ": ", name);
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_FRAGMENTATION:
      return outOfMemory("vulkan: ", what, ": ", name);
    case VK_ERROR_INITIALIZATION_FAILED:
    case VK_ERROR_DEVICE_LOST:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_LAYER_NOT_PRESENT:
      return unavailable("vulkan: ", what, ": ", name);
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_FORMAT_NOT_SUPPORTED:
      return unsupported("vulkan: ", what, ": ", name);
    default:
      return internalError("vulkan: ", what, ": ", name);
  }
}

}  // namespace ral::vulkan
