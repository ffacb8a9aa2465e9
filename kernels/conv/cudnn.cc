#include "kernels/conv/cudnn.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include "drivers/common/dynamic_library.h"

namespace ral::kernels::cuda {

StatusOr<const CudnnLibrary*> CudnnLibrary::get() {
  static const StatusOr<const CudnnLibrary*>* const loaded =
      []() -> StatusOr<const CudnnLibrary*>* {
    StatusOr<drivers::DynamicLibrary> opened = drivers::openDynamicLibrary(
        "cuda: cannot load cuDNN (libcudnn)", kCudnnPathEnv,
        {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"}, "cuDNN 8 or 9");
    if (!opened.ok()) return new StatusOr<const CudnnLibrary*>(opened.status());
    void* handle = opened->handle;
    auto fail = [handle](Status s) {
      dlclose(handle);
      return new StatusOr<const CudnnLibrary*>(std::move(s));
    };
    const std::string& path = opened->path;
    // Owned here until every check passed: a refused library is released, not leaked.
    std::unique_ptr<CudnnLibrary> lib(new CudnnLibrary());
    lib->path_ = path;
    lib->symbols_ = std::make_unique<CudnnSymbols>();
    CudnnSymbols& s = *lib->symbols_;
#define RAL_CUDNN_LOAD(name)                                                                  \
  s.name = reinterpret_cast<decltype(s.name)>(dlsym(handle, #name));                          \
  if (s.name == nullptr)                                                                      \
    return fail(unavailable("cuda: cuDNN library '", path, "' has no symbol '", #name, "' (", \
                            kCudnnPathEnv, " names the cuDNN to use)"));
    RAL_CUDNN_REQUIRED_SYMBOLS(RAL_CUDNN_LOAD)
#undef RAL_CUDNN_LOAD
#define RAL_CUDNN_LOAD_OPTIONAL(name) \
  s.name = reinterpret_cast<decltype(s.name)>(dlsym(handle, #name));
    RAL_CUDNN_OPTIONAL_SYMBOLS(RAL_CUDNN_LOAD_OPTIONAL)
#undef RAL_CUDNN_LOAD_OPTIONAL
    // cudnnGetVersion: major * 1000 + minor * 100 + patch up to cuDNN 8, major * 10000 +
    // minor * 100 + patch from cuDNN 9.
    const size_t v = s.cudnnGetVersion();
    const bool v9 = v >= 90000;
    lib->major_ = static_cast<int>(v9 ? v / 10000 : v / 1000);
    lib->version_string_ =
        internal::strCat(lib->major_, ".", (v9 ? v % 10000 : v % 1000) / 100, ".", v % 100);
    // The FMA math type (f32 without TF32) and the _v7 algorithm queries are cuDNN 8's.
    if (lib->major_ < 8)
      return fail(unavailable("cuda: cuDNN library '", path, "' is version ", lib->version_string_,
                              "; RAL needs cuDNN 8 or newer (", kCudnnPathEnv,
                              " names the cuDNN to use)"));
    return new StatusOr<const CudnnLibrary*>(lib.release());
  }();
  return *loaded;
}

Status CudnnLibrary::check(cudnn::Status status, const char* call) const {
  if (status == cudnn::kSuccess) return Status();
  const char* text = symbols_->cudnnGetErrorString(status);
  // cuDNN 9 groups its codes by thousands (1xxx not initialized, 2xxx bad parameter, 3xxx not
  // supported, 4xxx internal, 5xxx execution failed); cuDNN 8 numbers them 1..14.
  StatusCode code = StatusCode::kInternal;
  if (notSupported(status)) {
    code = StatusCode::kUnsupported;
  } else if (major_ >= 9) {
    if (status / 1000 == 1) code = StatusCode::kUnavailable;
    if (status / 1000 == 2) code = StatusCode::kInvalidArgument;
    if (status == 4003 || status == 4004) code = StatusCode::kOutOfMemory;  // host, device alloc
  } else {
    if (status == 1) code = StatusCode::kUnavailable;      // NOT_INITIALIZED
    if (status == 2) code = StatusCode::kOutOfMemory;      // ALLOC_FAILED
    if (status == 3) code = StatusCode::kInvalidArgument;  // BAD_PARAM
  }
  // cuDNN 9 also says what went wrong (e.g. "cudaGetDeviceCount(&count) != cudaSuccess").
  char detail[512] = {};
  if (symbols_->cudnnGetLastErrorString != nullptr)
    symbols_->cudnnGetLastErrorString(detail, sizeof detail);
  return Status(code, internal::strCat("cuda: ", call,
                                       " failed: ", text != nullptr ? text : "unknown cuDNN status",
                                       " (", status, ")", detail[0] != '\0' ? ": " : "", detail));
}

StatusOr<std::unique_ptr<CudnnHandle>> CudnnHandle::create(CudaQueueService& queue) {
  RAL_ASSIGN_OR_RETURN(const CudnnLibrary* lib, CudnnLibrary::get());
  RAL_RETURN_IF_ERROR(queue.makeCurrent());
  cudnn::Handle handle = nullptr;
  const Status created = lib->check(lib->symbols().cudnnCreate(&handle), "cudnnCreate");
  // The usual failure is a cuDNN that cannot reach the GPU: name the library that was loaded.
  if (!created.ok())
    return created.withContext(internal::strCat("cuDNN ", lib->versionString(), " from '",
                                                lib->path(), "' (", kCudnnPathEnv,
                                                " names the cuDNN to use)"));
  return std::unique_ptr<CudnnHandle>(new CudnnHandle(&queue, lib, handle));
}

CudnnHandle::~CudnnHandle() {
  if (queue_->makeCurrent().ok()) lib_->symbols().cudnnDestroy(handle_);
}

Status CudnnHandle::enqueue(Stream* stream,
                            std::function<Status(const CudnnLibrary&, cudnn::Handle)> issue) const {
  const CudnnLibrary* lib = lib_;
  const cudnn::Handle handle = handle_;
  return queue_->enqueue(stream, [lib, handle, fn = std::move(issue)](void* cu_stream) {
    RAL_RETURN_IF_ERROR(
        lib->check(lib->symbols().cudnnSetStream(handle, cu_stream), "cudnnSetStream"));
    return fn(*lib, handle);
  });
}

}  // namespace ral::kernels::cuda
