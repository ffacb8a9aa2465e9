// RAL's GPU kernel library, shared by every GPU device that runs compiled MLIR (cuda, hsa): the
// kernels of kernels/gpu/device_kernels.py, built at build time into a cubin per CUDA
// architecture (plus PTX that newer GPUs compile at load) and an HSA code object per AMD
// architecture, embedded in libral. An op's GPU code is written once against this header and
// registered for both devices by kernels/gpu_library_ops.h.
//
// The variant the driver ranks best is loaded into each Context on first use and cached there
// (DeviceKernelLibrary). Launches take the argument structs of kernels/gpu/device_args.h, each
// 8-byte field passed as one kernel argument. Everything here is thread-safe.
#ifndef RAL_KERNELS_GPU_GPU_LIBRARY_H_
#define RAL_KERNELS_GPU_GPU_LIBRARY_H_

#include <algorithm>
#include <cstdint>

#include "kernels/common/device_kernel_library.h"
#include "kernels/common/device_scratch.h"
#include "kernels/common/devices.h"
#include "kernels/common/library_entries.h"
#include "kernels/gpu/device_args.h"
#include "ral/driver.h"
#include "ral/execution_context.h"
#include "ral/status.h"

namespace ral::kernels::gpu {

// The library's kernels in launch-index order: every GPU library's (library_entries.h) and the
// GEMMs (used where no vendor BLAS runs them: hsa).
#define RAL_GPU_KERNELS_ENTRIES(X) \
  RAL_GPU_LIBRARY_ENTRIES(X)       \
  X(kGemmF32, "ral_gemm_f32")      \
  X(kGemmF64, "ral_gemm_f64")      \
  X(kGemmF16, "ral_gemm_f16")      \
  X(kGemmBF16, "ral_gemm_bf16")
enum class Entry : uint32_t { RAL_GPU_KERNELS_ENTRIES(RAL_GPU_LIBRARY_ENUMERATOR) kCount };

// The entry `index` places after `first` (entries of one family follow each other by type or
// element size).
inline Entry entryAfter(Entry first, uint32_t index) {
  return static_cast<Entry>(static_cast<uint32_t>(first) + index);
}

// The library built for `kind` (kCuda or kHsa); its variants are empty when this build has none
// for that device, and loading it then names why.
const DeviceKernelLibrary& kernelLibrary(DeviceKind kind);

struct GpuEnv {
  Driver* driver = nullptr;
  Stream* stream = nullptr;  // nullptr: the driver's default stream
  Executable* kernels = nullptr;
};

// The execution's driver and stream for `kind`, with the library loaded.
StatusOr<GpuEnv> gpuEnv(ExecutionContext* ctx, DeviceKind kind);
StatusOr<GpuEnv> gpuEnv(const KernelEnv& env);

// Launches `entry` with `args` (a struct of device_args.h) as its arguments.
template <typename Args>
Status launch(const GpuEnv& env, Entry entry, const LaunchConfig& config, Args& args) {
  static_assert(sizeof(Args) % 8 == 0, "device_args.h structs are 8-byte fields");
  constexpr size_t kFields = sizeof(Args) / 8;
  void* values[kFields];
  size_t sizes[kFields];
  for (size_t i = 0; i < kFields; ++i) {
    values[i] = reinterpret_cast<char*>(&args) + 8 * i;
    sizes[i] = 8;
  }
  return env.driver->launch(env.kernels, static_cast<uint32_t>(entry), config,
                            KernelArgs{values, sizes, kFields}, env.stream);
}

// Launches a grid-stride kernel over `count` items, setting args.threads to the grid's
// work-items (at most 65535 workgroups of kLinearBlock).
template <typename Args>
Status launchLinear(const GpuEnv& env, Entry entry, int64_t count, Args args) {
  if (count <= 0) return Status();
  constexpr int64_t kMaxGroups = 65535;
  const int64_t groups = std::min<int64_t>((count + kLinearBlock - 1) / kLinearBlock, kMaxGroups);
  args.threads = groups * kLinearBlock;
  LaunchConfig config;
  config.grid.x = static_cast<uint32_t>(groups);
  config.block.x = kLinearBlock;
  return launch(env, entry, config, args);
}

// A strided view padded to kMaxRank (leading dims of size 1, stride 0); false when `rank`
// exceeds kMaxRank.
bool padView(int rank, const int64_t* sizes, const int64_t* strides, int64_t* padded_sizes,
             int64_t* padded_strides);

}  // namespace ral::kernels::gpu

#endif  // RAL_KERNELS_GPU_GPU_LIBRARY_H_
