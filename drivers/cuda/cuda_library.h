// CudaLibrary: the CUDA driver API (libcuda.so.1), loaded with dlopen so RAL has no link-time
// dependency on it. Every entry point RAL uses is one field of a single symbol table, resolved
// once per process. The library path comes from RAL_CUDA_DRIVER_PATH, else "libcuda.so.1".
//
// This header includes cuda.h for its types only; it stays inside drivers/cuda (and the tests
// and benchmarks of this driver).
#ifndef RAL_DRIVERS_CUDA_CUDA_LIBRARY_H_
#define RAL_DRIVERS_CUDA_CUDA_LIBRARY_H_

#include <cuda.h>

#include <memory>
#include <string>
#include <string_view>

#include "ral/status.h"

namespace ral::cuda {

inline constexpr char kCudaDriverPathEnv[] = "RAL_CUDA_DRIVER_PATH";
inline constexpr char kCudaDriverDefaultPath[] = "libcuda.so.1";

// The exported names, with the _v2 suffix where the ABI versioned the function (not for
// cuEventElapsedTime, whose _v2 only drivers from CUDA 12.8 on have; the headers' macro maps the
// member's name, dlsym looks up the name as written).
#define RAL_CUDA_SYMBOLS(X)       \
  X(cuGetErrorName)               \
  X(cuGetErrorString)             \
  X(cuInit)                       \
  X(cuDriverGetVersion)           \
  X(cuDeviceGetCount)             \
  X(cuDeviceGet)                  \
  X(cuDeviceGetName)              \
  X(cuDeviceGetUuid_v2)           \
  X(cuDeviceGetAttribute)         \
  X(cuDeviceTotalMem_v2)          \
  X(cuDevicePrimaryCtxRetain)     \
  X(cuDevicePrimaryCtxRelease_v2) \
  X(cuCtxGetCurrent)              \
  X(cuCtxSetCurrent)              \
  X(cuCtxPushCurrent_v2)          \
  X(cuCtxPopCurrent_v2)           \
  X(cuCtxSynchronize)             \
  X(cuMemGetInfo_v2)              \
  X(cuMemAlloc_v2)                \
  X(cuMemFree_v2)                 \
  X(cuMemHostAlloc)               \
  X(cuMemFreeHost)                \
  X(cuMemcpyHtoDAsync_v2)         \
  X(cuMemcpyDtoHAsync_v2)         \
  X(cuMemcpyDtoDAsync_v2)         \
  X(cuMemcpyAsync)                \
  X(cuMemsetD8Async)              \
  X(cuMemsetD16Async)             \
  X(cuMemsetD32Async)             \
  X(cuMemsetD2D32Async)           \
  X(cuPointerGetAttribute)        \
  X(cuStreamCreate)               \
  X(cuStreamDestroy_v2)           \
  X(cuStreamSynchronize)          \
  X(cuStreamWaitEvent)            \
  X(cuLaunchHostFunc)             \
  X(cuEventCreate)                \
  X(cuEventRecord)                \
  X(cuEventQuery)                 \
  X(cuEventSynchronize)           \
  X(cuEventElapsedTime)           \
  X(cuEventDestroy_v2)            \
  X(cuModuleLoadDataEx)           \
  X(cuModuleUnload)               \
  X(cuModuleGetFunction)          \
  X(cuFuncSetAttribute)           \
  X(cuLaunchKernel)

struct CudaSymbols {
#define RAL_CUDA_DECLARE_SYMBOL(name) decltype(&::name) name = nullptr;
  RAL_CUDA_SYMBOLS(RAL_CUDA_DECLARE_SYMBOL)
#undef RAL_CUDA_DECLARE_SYMBOL
};

class CudaLibrary {
 public:
  // The process-wide library: loaded and cuInit-ed on the first call. Unavailable, naming the
  // path tried, the dlerror() text and how to fix it, when the library or a symbol is missing or
  // cuInit fails (e.g. no device); the same status is returned to every later caller.
  static StatusOr<const CudaLibrary*> get();
  // Loads `path` without caching (tests use it to check the error for a missing library).
  static StatusOr<std::unique_ptr<CudaLibrary>> loadForTesting(const std::string& path);
  ~CudaLibrary();
  CudaLibrary(const CudaLibrary&) = delete;
  CudaLibrary& operator=(const CudaLibrary&) = delete;

  const CudaSymbols& symbols() const { return symbols_; }
  const std::string& path() const { return path_; }
  int driverVersion() const { return driver_version_; }

  // OK for CUDA_SUCCESS, else an error naming the call and CUDA's name and text for `result`.
  Status check(CUresult result, std::string_view call) const;

 private:
  static StatusOr<std::unique_ptr<CudaLibrary>> load(const std::string& path);
  CudaLibrary() = default;

  void* handle_ = nullptr;
  std::string path_;
  int driver_version_ = 0;
  CudaSymbols symbols_;
};

// The library path that get() uses: $RAL_CUDA_DRIVER_PATH or libcuda.so.1.
std::string cudaDriverPath();

}  // namespace ral::cuda

// RAL_CUDA_CALL(lib, cuFoo(args)) -> Status naming "cuFoo".
#define RAL_CUDA_CALL(lib, fn, ...) (lib).check((lib).symbols().fn(__VA_ARGS__), #fn)

#endif  // RAL_DRIVERS_CUDA_CUDA_LIBRARY_H_
