// cuBLAS for the CUDA kernels, loaded with dlopen like the driver itself: $RAL_CUBLAS_PATH, else
// libcublas.so.13, libcublas.so.12, libcublas.so. The header uses no CUDA type: matrices are
// described with RAL types, and calls are queued on a RAL stream through the driver's
// CudaQueueService::enqueue, so they wait behind semaphore waits like every other operation.
// The library is process-wide and immutable once loaded; a handle serves one stream at a time.
#ifndef RAL_KERNELS_BLAS_CUBLAS_H_
#define RAL_KERNELS_BLAS_CUBLAS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "ral/driver.h"
#include "ral/driver_services.h"
#include "ral/status.h"

namespace ral::kernels::cuda {

struct CublasSymbols;

inline constexpr char kCublasPathEnv[] = "RAL_CUBLAS_PATH";

enum class BlasType : uint8_t { kF32, kF64, kF16, kBF16 };

// C = op(A) * op(B) in cuBLAS's column-major convention (m x n result, k inner), `batch` times
// with element strides between the matrices of a batch (0: the same matrix every time).
struct GemmDesc {
  BlasType type = BlasType::kF32;
  bool transpose_a = false;
  bool transpose_b = false;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t lda = 0;
  const void* b = nullptr;
  int64_t ldb = 0;
  void* c = nullptr;
  int64_t ldc = 0;
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
};

class CublasLibrary {
 public:
  // Loaded once per process; Unavailable, naming what was tried and how to fix it, when missing.
  static StatusOr<const CublasLibrary*> get();
  const CublasSymbols& symbols() const { return *symbols_; }
  const std::string& path() const { return path_; }
  Status check(int status, const char* call) const;

 private:
  CublasLibrary() = default;
  std::string path_;
  std::unique_ptr<CublasSymbols> symbols_;
};

// One cuBLAS handle, for one RAL stream at a time (kernels keep one per Context and stream via
// Context::getOrCreate).
class CublasHandle {
 public:
  // On the device of `queue` (a CUDA driver's service), which must outlive the handle.
  static StatusOr<std::unique_ptr<CublasHandle>> create(CudaQueueService& queue);
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  // Queues the GEMM on `stream` (nullptr: the driver's default stream).
  Status gemm(Stream* stream, const GemmDesc& desc);
  // The raw handle (cublasHandle_t), for benchmarks that call cuBLAS directly.
  void* raw() const { return handle_; }
  const CublasLibrary& library() const { return *lib_; }

 private:
  CublasHandle(CudaQueueService* queue, const CublasLibrary* lib, void* handle)
      : queue_(queue), lib_(lib), handle_(handle) {}
  CudaQueueService* const queue_;
  const CublasLibrary* const lib_;
  void* const handle_;
};

// Issues desc on `cu_stream` with `handle` right now (no queueing); used by CublasHandle::gemm
// and by benchmarks as the direct baseline.
Status cublasGemmNow(const CublasLibrary& lib, void* handle, void* cu_stream, const GemmDesc& desc);

}  // namespace ral::kernels::cuda

#endif  // RAL_KERNELS_BLAS_CUBLAS_H_
