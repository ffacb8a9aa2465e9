// The GPU architectures ral-compile generates kernels for (--device=cuda|hsa --gpu-arch=...):
// which names are valid (those LLVM's NVPTX and AMDGPU back ends know), the default lists, and
// the PTX ISA version each NVIDIA architecture needs.
#ifndef RAL_COMPILER_PASSES_CONVERSION_GPU_GPU_TARGETS_H_
#define RAL_COMPILER_PASSES_CONVERSION_GPU_GPU_TARGETS_H_

#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace disc_ral {

// Default --gpu-arch lists: sm_75 is the oldest architecture CUDA 13's ptxas still takes.
inline constexpr const char kDefaultCudaArchs[] = "sm_75,sm_80,sm_90";
inline constexpr const char kDefaultHsaArchs[] = "gfx90a,gfx942,gfx1100";

// Every architecture name LLVM accepts for `device` ("cuda": sm_*, "hsa": gfx*), sorted.
std::vector<std::string> knownGpuArchs(llvm::StringRef device);

// Splits the comma-separated `list` (empty: the device's default) into architecture names, each
// one LLVM knows, without duplicates. False with `error` naming the bad name and the accepted
// ones.
bool parseGpuArchs(llvm::StringRef device, llvm::StringRef list, std::vector<std::string>* archs,
                   std::string* error);

// The PTX ISA feature ("+ptx78") of the oldest PTX version that supports NVIDIA architecture
// `arch` ("sm_90"): the newest drivers take it and so do the oldest that know the architecture.
std::string ptxFeature(llvm::StringRef arch);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_CONVERSION_GPU_GPU_TARGETS_H_
