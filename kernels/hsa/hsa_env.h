// What the HSA library kernels share: the context's HSA driver, the execution's stream, and the
// embedded kernel library (kernels/hsa/device_kernels.py, compiled to HSACO per architecture at
// build time; a DeviceKernelLibrary: the variant for the driver's GPU is loaded on first use and
// then cached per Context). Thread-safe.
//
// The stream is the execution's stream (ExecutionContext::stream(), a Stream of the HSA driver
// set by the host) or, when unset, the driver's own queue.
#ifndef RAL_KERNELS_HSA_HSA_ENV_H_
#define RAL_KERNELS_HSA_HSA_ENV_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/device_kernel_library.h"
#include "kernels/common/devices.h"
#include "kernels/common/library_entries.h"
#include "kernels/hsa/device_args.h"
#include "ral/execution_context.h"
#include "ral/memref.h"
#include "ral/status.h"

namespace ral::kernels::hsa {

// Entry points of the kernel library: every library's kernels (kernels/common/library_entries.h)
// and the GEMMs; names in kEntryNames (hsa_env.cc).
#define RAL_HSA_LIBRARY_ENTRIES(X) \
  RAL_GPU_LIBRARY_ENTRIES(X)       \
  X(kGemmF32, "ral_gemm_f32")      \
  X(kGemmF64, "ral_gemm_f64")      \
  X(kGemmF16, "ral_gemm_f16")      \
  X(kGemmBF16, "ral_gemm_bf16")
enum class Entry : uint32_t { RAL_HSA_LIBRARY_ENTRIES(RAL_GPU_LIBRARY_ENUMERATOR) kCount };

struct HsaEnv {
  Driver* driver = nullptr;
  Stream* stream = nullptr;
  Executable* kernels = nullptr;
};

StatusOr<HsaEnv> hsaEnv(ExecutionContext* ctx);
StatusOr<HsaEnv> hsaEnv(const KernelEnv& env);

// The kernel library: its entry names, in Entry order, and a code object per architecture it was
// built for (tests read them).
const DeviceKernelLibrary& kernelLibrary();

// Launches a grid-stride kernel over `count` items with `args` as its only argument, setting
// args.threads to the grid's work-items.
template <typename Args>
Status launchLinear(const HsaEnv& env, Entry entry, int64_t count, Args args) {
  if (count <= 0) return Status();
  constexpr int64_t kMaxGroups = 65535;
  const int64_t groups = std::min<int64_t>((count + kLinearBlock - 1) / kLinearBlock, kMaxGroups);
  args.threads = groups * kLinearBlock;
  LaunchConfig config;
  config.grid.x = static_cast<uint32_t>(groups);
  config.block.x = kLinearBlock;
  void* values[] = {&args};
  const size_t sizes[] = {sizeof(Args)};
  return env.driver->launch(env.kernels, static_cast<uint32_t>(entry), config,
                            KernelArgs{values, sizes, 1}, env.stream);
}

// A strided view padded to kMaxRank (leading dims of size 1, stride 0); false when `rank`
// exceeds kMaxRank.
bool padView(int rank, const int64_t* sizes, const int64_t* strides, int64_t* padded_sizes,
             int64_t* padded_strides);

}  // namespace ral::kernels::hsa

#endif  // RAL_KERNELS_HSA_HSA_ENV_H_
