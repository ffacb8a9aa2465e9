#include "kernels/blas/cublas.h"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <vector>

#include "drivers/common/dynamic_library.h"

namespace ral::kernels::cuda {

// The few cuBLAS types RAL needs, declared here (they are plain C enums and pointers in
// cublas_api.h) so no cuBLAS header is needed.
namespace {
using cublasHandle_t = void*;
using cublasStatus = int;
constexpr int kCublasSuccess = 0;
constexpr int kOpN = 0, kOpT = 1;
constexpr int kCudaR32F = 0, kCudaR64F = 1, kCudaR16F = 2, kCudaR16BF = 14;
constexpr int kComputeF32 = 68, kComputeF64 = 70;  // CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_64F
// CUBLAS_GEMM_DEFAULT. The compute types above are exact (no TF32), so f32 stays f32.
constexpr int kGemmDefault = -1;
}  // namespace

struct CublasSymbols {
  cublasStatus (*cublasCreate_v2)(cublasHandle_t*) = nullptr;
  cublasStatus (*cublasDestroy_v2)(cublasHandle_t) = nullptr;
  cublasStatus (*cublasSetStream_v2)(cublasHandle_t, void*) = nullptr;
  const char* (*cublasGetStatusString)(cublasStatus) = nullptr;
  cublasStatus (*cublasGemmEx)(cublasHandle_t, int, int, int, int, int, const void*, const void*,
                               int, int, const void*, int, int, const void*, void*, int, int, int,
                               int) = nullptr;
  cublasStatus (*cublasGemmStridedBatchedEx)(cublasHandle_t, int, int, int, int, int, const void*,
                                             const void*, int, int, long long, const void*, int,
                                             int, long long, const void*, void*, int, int,
                                             long long, int, int, int) = nullptr;
};

StatusOr<const CublasLibrary*> CublasLibrary::get() {
  static const StatusOr<const CublasLibrary*>* const loaded =
      []() -> StatusOr<const CublasLibrary*>* {
    StatusOr<drivers::DynamicLibrary> opened = drivers::openDynamicLibrary(
        "cuda: cannot load cuBLAS", kCublasPathEnv,
        {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, "cuBLAS (CUDA toolkit)");
    if (!opened.ok()) return new StatusOr<const CublasLibrary*>(opened.status());
    void* handle = opened->handle;
    const std::string& path = opened->path;
    // Owned here until every symbol resolved: a refused library is released, not leaked.
    std::unique_ptr<CublasLibrary> lib(new CublasLibrary());
    lib->path_ = path;
    lib->symbols_ = std::make_unique<CublasSymbols>();
    CublasSymbols& s = *lib->symbols_;
#define RAL_CUBLAS_LOAD(name)                                                          \
  s.name = reinterpret_cast<decltype(s.name)>(dlsym(handle, #name));                   \
  if (s.name == nullptr) {                                                             \
    dlclose(handle);                                                                   \
    return new StatusOr<const CublasLibrary*>(                                         \
        unavailable("cuda: cuBLAS library '", path, "' has no symbol '", #name, "'")); \
  }
    RAL_CUBLAS_LOAD(cublasCreate_v2)
    RAL_CUBLAS_LOAD(cublasDestroy_v2)
    RAL_CUBLAS_LOAD(cublasSetStream_v2)
    RAL_CUBLAS_LOAD(cublasGetStatusString)
    RAL_CUBLAS_LOAD(cublasGemmEx)
    RAL_CUBLAS_LOAD(cublasGemmStridedBatchedEx)
#undef RAL_CUBLAS_LOAD
    return new StatusOr<const CublasLibrary*>(lib.release());
  }();
  return *loaded;
}

Status CublasLibrary::check(int status, const char* call) const {
  if (status == kCublasSuccess) return Status();
  const char* text = symbols_->cublasGetStatusString ? symbols_->cublasGetStatusString(status)
                                                     : "unknown cuBLAS status";
  const StatusCode code = status == 3 /* ALLOC_FAILED */      ? StatusCode::kOutOfMemory
                          : status == 7 /* INVALID_VALUE */   ? StatusCode::kInvalidArgument
                          : status == 1 /* NOT_INITIALIZED */ ? StatusCode::kUnavailable
                                                              : StatusCode::kInternal;
  return Status(code, internal::strCat("cuda: ", call, " failed: ", text, " (", status, ")"));
}

StatusOr<std::unique_ptr<CublasHandle>> CublasHandle::create(CudaQueueService& queue) {
  RAL_ASSIGN_OR_RETURN(const CublasLibrary* lib, CublasLibrary::get());
  RAL_RETURN_IF_ERROR(queue.makeCurrent());
  cublasHandle_t handle = nullptr;
  RAL_RETURN_IF_ERROR(lib->check(lib->symbols().cublasCreate_v2(&handle), "cublasCreate_v2"));
  return std::unique_ptr<CublasHandle>(new CublasHandle(&queue, lib, handle));
}

CublasHandle::~CublasHandle() {
  if (queue_->makeCurrent().ok()) lib_->symbols().cublasDestroy_v2(handle_);
}

Status cublasGemmNow(const CublasLibrary& lib, void* handle, void* cu_stream, const GemmDesc& d) {
  for (int64_t v : {d.m, d.n, d.k, d.lda, d.ldb, d.ldc, d.batch})
    if (v > INT_MAX)
      return unsupported("cuda: GEMM dimension ", v, " exceeds cuBLAS's 32-bit sizes");
  int type = kCudaR32F, compute = kComputeF32;
  double alpha64 = 1, beta64 = 0;
  float alpha32 = 1, beta32 = 0;
  const void* alpha = &alpha32;
  const void* beta = &beta32;
  switch (d.type) {
    case BlasType::kF32:
      break;
    case BlasType::kF64:
      type = kCudaR64F, compute = kComputeF64, alpha = &alpha64, beta = &beta64;
      break;
    case BlasType::kF16:
      type = kCudaR16F;
      break;
    case BlasType::kBF16:
      type = kCudaR16BF;
      break;
  }
  const CublasSymbols& s = lib.symbols();
  RAL_RETURN_IF_ERROR(lib.check(s.cublasSetStream_v2(handle, cu_stream), "cublasSetStream_v2"));
  const int ta = d.transpose_a ? kOpT : kOpN, tb = d.transpose_b ? kOpT : kOpN;
  const int m = static_cast<int>(d.m), n = static_cast<int>(d.n), k = static_cast<int>(d.k);
  if (d.batch == 1)
    return lib.check(
        s.cublasGemmEx(handle, ta, tb, m, n, k, alpha, d.a, type, static_cast<int>(d.lda), d.b,
                       type, static_cast<int>(d.ldb), beta, d.c, type, static_cast<int>(d.ldc),
                       compute, kGemmDefault),
        "cublasGemmEx");
  return lib.check(s.cublasGemmStridedBatchedEx(handle, ta, tb, m, n, k, alpha, d.a, type,
                                                static_cast<int>(d.lda), d.stride_a, d.b, type,
                                                static_cast<int>(d.ldb), d.stride_b, beta, d.c,
                                                type, static_cast<int>(d.ldc), d.stride_c,
                                                static_cast<int>(d.batch), compute, kGemmDefault),
                   "cublasGemmStridedBatchedEx");
}

Status CublasHandle::gemm(Stream* stream, const GemmDesc& desc) {
  const CublasLibrary* lib = lib_;
  void* handle = handle_;
  return queue_->enqueue(stream, [lib, handle, desc](void* cu_stream) {
    return cublasGemmNow(*lib, handle, cu_stream, desc);
  });
}

}  // namespace ral::kernels::cuda
