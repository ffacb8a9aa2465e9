#include "kernels/gpu/gpu_library.h"

#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "ral/driver_services.h"

// The binaries, embedded as read-only data. gpu_binaries.inc (written by
// kernels/gpu/CMakeLists.txt) holds one RAL_GPU_BINARY(symbol, device, format, target, path) per
// binary; gpu_binaries_md5.h names their MD5, so this object is rebuilt (never reused from a
// compiler cache, which cannot see .incbin) whenever one changes. Page-aligned, as code objects
// the HSA runtime reads from memory are at best; PTX gets a terminating NUL.
#include "gpu_binaries_md5.h"

#define RAL_GPU_BINARY(sym, device, format, target, path) \
  __asm__(                                                \
      ".section .rodata\n"                                \
      ".balign 4096\n"                                    \
      ".hidden " #sym                                     \
      "_begin\n"                                          \
      ".hidden " #sym "_end\n" #sym                       \
      "_begin:\n"                                         \
      ".incbin \"" path "\"\n" #sym                       \
      "_end:\n"                                           \
      ".byte 0\n"                                         \
      ".previous\n");                                     \
  extern "C" const unsigned char sym##_begin[];           \
  extern "C" const unsigned char sym##_end[];
#include "gpu_binaries.inc"
#undef RAL_GPU_BINARY

namespace ral::kernels::gpu {
namespace {

struct EmbeddedBinary {
  DeviceKind device;
  ExecutableFormat format;
  const char* target;
  const unsigned char* begin;
  const unsigned char* end;
};

const EmbeddedBinary kBinaries[] = {
#define RAL_GPU_BINARY(sym, device, format, target, path) \
  {DeviceKind::device, ExecutableFormat::format, target, sym##_begin, sym##_end},
#include "gpu_binaries.inc"
#undef RAL_GPU_BINARY
    {DeviceKind::kCpu, ExecutableFormat::kHostFunction, "", nullptr, nullptr},  // (terminator)
};

constexpr const char* kEntryNames[] = {RAL_GPU_KERNELS_ENTRIES(RAL_GPU_LIBRARY_NAME)};
static_assert(std::size(kEntryNames) == static_cast<size_t>(Entry::kCount), "one name per entry");

DeviceKernelLibrary* makeLibrary(DeviceKind kind, const char* targets_from) {
  if (std::size(kBinaries) == 1)
    targets_from =
        "this libral was built without the compiler (RAL_ENABLE_MLIR=OFF), which "
        "builds them";
  std::vector<DeviceKernelVariant> variants;
  for (const EmbeddedBinary& b : kBinaries)
    if (b.device == kind)
      variants.push_back(
          DeviceKernelVariant{b.format, b.target, b.begin, static_cast<size_t>(b.end - b.begin)});
  return new DeviceKernelLibrary(
      std::string("ral_gpu_kernels_") + RAL_GPU_BINARIES_MD5,
      std::vector<std::string>(std::begin(kEntryNames), std::end(kEntryNames)), std::move(variants),
      targets_from);
}

}  // namespace

const DeviceKernelLibrary& kernelLibrary(DeviceKind kind) {
  static const DeviceKernelLibrary* const cuda =
      makeLibrary(DeviceKind::kCuda, "RAL_CUDA_ARCHS at build time");
  static const DeviceKernelLibrary* const hsa =
      makeLibrary(DeviceKind::kHsa, "RAL_HSA_ARCHS at build time");
  return kind == DeviceKind::kCuda ? *cuda : *hsa;
}

StatusOr<GpuEnv> gpuEnv(ExecutionContext* ctx, DeviceKind kind) {
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, kind));
  return gpuEnv(env);
}

StatusOr<GpuEnv> gpuEnv(const KernelEnv& env) {
  const DeviceKind kind = env.driver->kind();
  if (kind != DeviceKind::kCuda && kind != DeviceKind::kHsa)
    return unsupported("the GPU kernel library has no build for device ", deviceKindName(kind));
  RAL_ASSIGN_OR_RETURN(Executable * kernels, kernelLibrary(kind).load(env));
  return GpuEnv{env.driver, env.stream, kernels};
}

bool padView(int rank, const int64_t* sizes, const int64_t* strides, int64_t* padded_sizes,
             int64_t* padded_strides) {
  if (rank > kMaxRank) return false;
  const int lead = kMaxRank - rank;
  for (int d = 0; d < kMaxRank; ++d) {
    padded_sizes[d] = d < lead ? 1 : sizes[d - lead];
    padded_strides[d] = d < lead ? 0 : strides[d - lead];
  }
  return true;
}

}  // namespace ral::kernels::gpu
