// What the CUDA kernels share: the context's CUDA driver (through the Driver interface and its
// CudaQueueService), the execution's stream, the embedded device-kernel fatbin (a
// DeviceKernelLibrary: loaded on first use, then cached per Context), strided views of
// MemRefs for the device kernels, and stream-ordered scratch memory. Thread-safe.
//
// The stream is the execution's stream (ExecutionContext::stream(), a Stream of the CUDA driver
// set by the host) or, when unset, the driver's default stream.
#ifndef RAL_KERNELS_CUDA_CUDA_ENV_H_
#define RAL_KERNELS_CUDA_CUDA_ENV_H_

#include <cstdint>

#include "kernels/common/devices.h"
#include "kernels/common/library_entries.h"
#include "kernels/cuda/device_params.h"
#include "ral/driver_services.h"
#include "ral/execution_context.h"
#include "ral/memref.h"
#include "ral/status.h"

namespace ral::kernels::cuda {

// Entry points of the embedded executable: an empty kernel (tests time a launch with it), then
// every library's kernels (kernels/common/library_entries.h); names in kEntryNames (cuda_env.cc).
#define RAL_CUDA_LIBRARY_ENTRIES(X) \
  X(kEmpty, "ral_cuda_empty")       \
  RAL_GPU_LIBRARY_ENTRIES(X)
enum class Entry : uint32_t { RAL_CUDA_LIBRARY_ENTRIES(RAL_GPU_LIBRARY_ENUMERATOR) kCount };

struct CudaEnv {
  Driver* driver = nullptr;
  CudaQueueService* queue = nullptr;  // the same driver's CUDA specifics
  Stream* stream = nullptr;
  Executable* kernels = nullptr;
};

// The CUDA driver, stream and loaded device kernels of this execution.
StatusOr<CudaEnv> cudaEnv(ExecutionContext* ctx);
StatusOr<CudaEnv> cudaEnv(const KernelEnv& env);

// Launches a grid-stride kernel over `count` items with `params` as its only argument.
template <typename P>
Status launchLinear(const CudaEnv& env, Entry entry, int64_t count, const P& params) {
  if (count <= 0) return Status();
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (count + kBlock - 1) / kBlock;
  LaunchConfig config;
  config.grid.x = static_cast<uint32_t>(blocks < 65535 * 4 ? blocks : 65535 * 4);
  config.block.x = kBlock;
  void* values[] = {const_cast<P*>(&params)};
  const size_t sizes[] = {sizeof(P)};
  return env.driver->launch(env.kernels, static_cast<uint32_t>(entry), config,
                            KernelArgs{values, sizes, 1}, env.stream);
}

template <typename T, int N>
StridedView viewOf(const MemRef<T, N>& m) {
  static_assert(N <= kMaxRank, "rank too large for the device kernels");
  StridedView v{};
  v.rank = N;
  for (int d = 0; d < N; ++d) {
    v.sizes[d] = m.sizes[d];
    v.strides[d] = m.strides[d];
  }
  return v;
}

// Device memory for one kernel's temporaries; freed on scope exit, which is safe at once because
// the allocator reuses it only for work queued later on the same stream.
class DeviceScratch {
 public:
  DeviceScratch() = default;
  ~DeviceScratch();
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  Status allocate(const CudaEnv& env, size_t bytes);
  void* get() const { return ptr_; }

 private:
  Driver* driver_ = nullptr;
  void* ptr_ = nullptr;
};

}  // namespace ral::kernels::cuda

#endif  // RAL_KERNELS_CUDA_CUDA_ENV_H_
