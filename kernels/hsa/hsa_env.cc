#include "kernels/hsa/hsa_env.h"

#include <memory>

#include "kernels/hsa/embedded_library.h"
#include "ral/context.h"

namespace ral::kernels::hsa {
namespace {

constexpr const char* kEntryNames[] = {
    "ral_strided_copy_1",  "ral_strided_copy_2",  "ral_strided_copy_4",  "ral_strided_copy_8",
    "ral_strided_fill_1",  "ral_strided_fill_2",  "ral_strided_fill_4",  "ral_strided_fill_8",
    "ral_rng_uniform_f32", "ral_rng_uniform_f64", "ral_rng_uniform_f16", "ral_rng_uniform_bf16",
    "ral_gemm_f32",        "ral_gemm_f64",        "ral_gemm_f16",        "ral_gemm_bf16",
    "ral_order_rows_f32",  "ral_order_rows_f64",  "ral_order_rows_i32",  "ral_order_rows_i64",
};
static_assert(sizeof(kEntryNames) / sizeof(kEntryNames[0]) == static_cast<size_t>(Entry::kCount),
              "one name per entry");

// The loaded library, cached per Context so the hot path takes no lock.
struct LoadedKernels {
  Executable* executable;
};

// The variant the driver ranks best, or FailedPrecondition naming the GPU and the variants.
StatusOr<const LibraryVariant*> pickVariant(Driver* driver) {
  const LibraryVariant* best = nullptr;
  int best_rank = 0;
  std::string built;
  for (const LibraryVariant& v : kernelLibrary()) {
    built += (built.empty() ? "" : ", ") + v.arch;
    const int rank = driver->targetRank(ExecutableFormat::kHsaco, v.arch);
    if (rank > best_rank) {
      best = &v;
      best_rank = rank;
    }
  }
  if (best == nullptr)
    return failedPrecondition("the HSA library kernels are built for ", built,
                              " (RAL_HSA_ARCHS at build time); this GPU is ", driver->deviceName());
  return best;
}

}  // namespace

const std::vector<LibraryVariant>& kernelLibrary() {
  static const std::vector<LibraryVariant>* const library = [] {
    auto* v = new std::vector<LibraryVariant>();
    for (size_t i = 0; i < embeddedLibraryCount(); ++i) {
      const EmbeddedCodeObject& o = embeddedLibrary(i);
      v->push_back(LibraryVariant{o.arch, o.begin, static_cast<size_t>(o.end - o.begin)});
    }
    return v;
  }();
  return *library;
}

const std::vector<std::string>& kernelEntryNames() {
  static const std::vector<std::string>* const names =
      new std::vector<std::string>(std::begin(kEntryNames), std::end(kEntryNames));
  return *names;
}

StatusOr<HsaEnv> hsaEnv(ExecutionContext* ctx) {
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kHsa));
  return hsaEnv(env);
}

StatusOr<HsaEnv> hsaEnv(const KernelEnv& env) {
  Driver* driver = env.driver;
  static const char kKey = 0;
  RAL_ASSIGN_OR_RETURN(LoadedKernels * loaded,
                       env.context->getOrCreate<LoadedKernels>(
                           &kKey, [&]() -> StatusOr<std::unique_ptr<LoadedKernels>> {
                             RAL_ASSIGN_OR_RETURN(const LibraryVariant* variant,
                                                  pickVariant(driver));
                             ExecutableSpec spec;
                             spec.name = "ral_hsa_library_kernels_" + variant->arch;
                             spec.format = ExecutableFormat::kHsaco;
                             spec.target = variant->arch;
                             spec.data = variant->data;
                             spec.size = variant->size;
                             for (const char* name : kEntryNames)
                               spec.entries.push_back(EntryPoint{name, {0, 0, 0}});
                             RAL_ASSIGN_OR_RETURN(Executable * exe, driver->load(spec));
                             return std::make_unique<LoadedKernels>(LoadedKernels{exe});
                           }));
  return HsaEnv{driver, env.stream, loaded->executable};
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
