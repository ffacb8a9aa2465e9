#include "kernels/hsa/hsa_env.h"

#include <iterator>
#include <utility>

#include "kernels/hsa/embedded_library.h"

namespace ral::kernels::hsa {
namespace {

constexpr const char* kEntryNames[] = {RAL_HSA_LIBRARY_ENTRIES(RAL_GPU_LIBRARY_NAME)};
static_assert(sizeof(kEntryNames) / sizeof(kEntryNames[0]) == static_cast<size_t>(Entry::kCount),
              "one name per entry");

}  // namespace

const DeviceKernelLibrary& kernelLibrary() {
  static const DeviceKernelLibrary* const lib = [] {
    std::vector<DeviceKernelVariant> variants;
    for (size_t i = 0; i < embeddedLibraryCount(); ++i) {
      const EmbeddedCodeObject& o = embeddedLibrary(i);
      variants.push_back(
          DeviceKernelVariant{o.arch, o.begin, static_cast<size_t>(o.end - o.begin)});
    }
    return new DeviceKernelLibrary(
        "ral_hsa_library_kernels", ExecutableFormat::kHsaco,
        std::vector<std::string>(std::begin(kEntryNames), std::end(kEntryNames)),
        std::move(variants), "RAL_HSA_ARCHS at build time");
  }();
  return *lib;
}

StatusOr<HsaEnv> hsaEnv(ExecutionContext* ctx) {
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kHsa));
  return hsaEnv(env);
}

StatusOr<HsaEnv> hsaEnv(const KernelEnv& env) {
  RAL_ASSIGN_OR_RETURN(Executable * kernels, kernelLibrary().load(env));
  return HsaEnv{env.driver, env.stream, kernels};
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

}  // namespace ral::kernels::hsa
