#include "drivers/hsa/hsa_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

#include "drivers/common/dynamic_library.h"

namespace ral::hsa {
namespace {

std::string visibleDevices() {
  const char* env = std::getenv("ROCR_VISIBLE_DEVICES");
  return env == nullptr ? std::string("unset") : "'" + std::string(env) + "'";
}

}  // namespace

std::string hsaRuntimePath() {
  return drivers::libraryCandidates(kHsaRuntimePathEnv, {kHsaRuntimeName}).front();
}

StatusOr<const HsaLibrary*> HsaLibrary::get(const std::string& path) {
  static std::mutex* const mutex = new std::mutex();
  static auto* const loaded = new std::map<std::string, StatusOr<const HsaLibrary*>>();
  const std::string resolved = path.empty() ? hsaRuntimePath() : path;
  std::lock_guard<std::mutex> lock(*mutex);
  auto it = loaded->find(resolved);
  if (it == loaded->end()) it = loaded->emplace(resolved, load(resolved)).first;
  return it->second;
}

StatusOr<const HsaLibrary*> HsaLibrary::load(const std::string& path) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return unavailable("hsa: cannot load the HSA runtime '", path,
                       "': ", why != nullptr ? why : "unknown dlopen error",
                       ". Install libhsa-runtime64-1 or point ", kHsaRuntimePathEnv, " at it");
  }
  // Never deleted or dlclose-d: the runtime's threads outlive every driver.
  auto* lib = new HsaLibrary();
  lib->handle_ = handle;
  lib->path_ = path;
#define RAL_HSA_LOAD_SYMBOL(name)                                                  \
  lib->symbols_.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));  \
  if (lib->symbols_.name == nullptr) {                                             \
    delete lib;                                                                    \
    return unavailable("hsa: the HSA runtime '", path, "' has no symbol '", #name, \
                       "' (RAL needs ROCm 5 or newer; point ", kHsaRuntimePathEnv, \
                       " at a complete libhsa-runtime64.so.1)");                   \
  }
  RAL_HSA_SYMBOLS(RAL_HSA_LOAD_SYMBOL)
#undef RAL_HSA_LOAD_SYMBOL
  const hsa_status_t init = lib->symbols_.hsa_init();
  if (init != HSA_STATUS_SUCCESS) {
    std::string why = lib->describe(init);
    delete lib;
    return unavailable("hsa: no GPU agent: hsa_init of the HSA runtime at '", path,
                       "' failed: ", why,
                       " (is an AMD GPU and the amdgpu kernel driver (/dev/kfd) present? "
                       "ROCR_VISIBLE_DEVICES=",
                       visibleDevices(), ")");
  }
  return lib;
}

std::string HsaLibrary::describe(hsa_status_t status) const {
  const char* text = nullptr;
  if (symbols_.hsa_status_string != nullptr &&
      symbols_.hsa_status_string(status, &text) == HSA_STATUS_SUCCESS && text != nullptr)
    return text;
  return "hsa_status_t " + std::to_string(static_cast<int>(status));
}

Status HsaLibrary::check(hsa_status_t status, std::string_view call) const {
  if (status == HSA_STATUS_SUCCESS || status == HSA_STATUS_INFO_BREAK) return Status();
  StatusCode code = StatusCode::kInternal;
  switch (status) {
    case HSA_STATUS_ERROR_OUT_OF_RESOURCES:
    case HSA_STATUS_ERROR_INVALID_ALLOCATION:
      code = StatusCode::kOutOfMemory;
      break;
    case HSA_STATUS_ERROR_INVALID_ARGUMENT:
    case HSA_STATUS_ERROR_INVALID_CODE_OBJECT:
    case HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER:
    case HSA_STATUS_ERROR_INVALID_EXECUTABLE:
    case HSA_STATUS_ERROR_INVALID_ISA:
    case HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS:
    case HSA_STATUS_ERROR_INVALID_SYMBOL_NAME:
      code = StatusCode::kInvalidArgument;
      break;
    case HSA_STATUS_ERROR_NOT_INITIALIZED:
      code = StatusCode::kUnavailable;
      break;
    default:
      break;
  }
  return Status(code, internal::strCat("hsa: ", call, " failed: ", describe(status)));
}

}  // namespace ral::hsa
