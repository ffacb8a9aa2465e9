#include "drivers/cuda/cuda_library.h"

#include <dlfcn.h>

#include <utility>

#include "drivers/common/dynamic_library.h"

namespace ral::cuda {

std::string cudaDriverPath() {
  return drivers::libraryCandidates(kCudaDriverPathEnv, {kCudaDriverDefaultPath}).front();
}

CudaLibrary::~CudaLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

StatusOr<std::unique_ptr<CudaLibrary>> CudaLibrary::load(const std::string& path) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return unavailable("cuda: cannot load the CUDA driver library '", path,
                       "': ", why != nullptr ? why : "unknown dlopen error",
                       ". Install the NVIDIA driver (it provides libcuda.so.1) or point ",
                       kCudaDriverPathEnv, " at the library");
  }
  std::unique_ptr<CudaLibrary> lib(new CudaLibrary());
  lib->handle_ = handle;
  lib->path_ = path;
#define RAL_CUDA_LOAD_SYMBOL(name)                                                          \
  lib->symbols_.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));           \
  if (lib->symbols_.name == nullptr)                                                        \
    return unavailable("cuda: the CUDA driver library '", path, "' has no symbol '", #name, \
                       "' (the NVIDIA driver is too old for RAL; update it)");
  RAL_CUDA_SYMBOLS(RAL_CUDA_LOAD_SYMBOL)
#undef RAL_CUDA_LOAD_SYMBOL
  RAL_RETURN_IF_ERROR(
      lib->check(lib->symbols_.cuInit(0), "cuInit").withContext("cuda: initializing the driver"));
  RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(*lib, cuDriverGetVersion, &lib->driver_version_));
  return lib;
}

StatusOr<std::unique_ptr<CudaLibrary>> CudaLibrary::loadForTesting(const std::string& path) {
  return load(path);
}

StatusOr<const CudaLibrary*> CudaLibrary::get() {
  // Loaded once; never unloaded (CUDA callbacks may still run during process exit).
  static const StatusOr<const CudaLibrary*>* const loaded = [] {
    auto lib = load(cudaDriverPath());
    if (!lib.ok()) return new StatusOr<const CudaLibrary*>(lib.status());
    return new StatusOr<const CudaLibrary*>(lib->release());
  }();
  return *loaded;
}

Status CudaLibrary::check(CUresult result, std::string_view call) const {
  if (result == CUDA_SUCCESS) return Status();
  const char* name = nullptr;
  const char* text = nullptr;
  std::string number;
  if (symbols_.cuGetErrorName == nullptr ||
      symbols_.cuGetErrorName(result, &name) != CUDA_SUCCESS) {
    number = "CUresult " + std::to_string(static_cast<int>(result));
    name = number.c_str();
  }
  if (result == CUDA_ERROR_STUB_LIBRARY) {
    text = "this is the CUDA toolkit's stub library, not the NVIDIA driver";
  } else if (symbols_.cuGetErrorString == nullptr ||
             symbols_.cuGetErrorString(result, &text) != CUDA_SUCCESS) {
    text = "no description";
  }
  StatusCode code = StatusCode::kInternal;
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      code = StatusCode::kOutOfMemory;
      break;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_NOT_FOUND:
      code = StatusCode::kInvalidArgument;
      break;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_OPERATING_SYSTEM:
      code = StatusCode::kUnavailable;
      break;
    case CUDA_ERROR_NOT_READY:
      code = StatusCode::kDeadlineExceeded;
      break;
    default:
      break;
  }
  return Status(code, internal::strCat("cuda: ", call, " failed: ", name, " (", text, ")"));
}

}  // namespace ral::cuda
