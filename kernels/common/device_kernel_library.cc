#include "kernels/common/device_kernel_library.h"

#include <memory>
#include <utility>

namespace ral::kernels {
namespace {

// What a Context caches for one library.
struct Loaded {
  Executable* executable;
};

}  // namespace

DeviceKernelLibrary::DeviceKernelLibrary(std::string name, std::vector<std::string> entries,
                                         std::vector<DeviceKernelVariant> variants,
                                         std::string targets_from)
    : name_(std::move(name)),
      entries_(std::move(entries)),
      variants_(std::move(variants)),
      targets_from_(std::move(targets_from)) {}

ExecutableSpec DeviceKernelLibrary::spec(const DeviceKernelVariant& variant) const {
  ExecutableSpec spec;
  spec.name = name_ + "_" + std::string(executableFormatName(variant.format)) +
              (variant.target.empty() ? "" : "_" + variant.target);
  spec.format = variant.format;
  spec.target = variant.target;
  spec.data = variant.data;
  spec.size = variant.size;
  for (const std::string& entry : entries_) spec.entries.push_back(EntryPoint{entry, {0, 0, 0}});
  return spec;
}

StatusOr<Executable*> DeviceKernelLibrary::load(const KernelEnv& env) const {
  Driver* driver = env.driver;
  // The library's address is its key: one cache slot per library and Context.
  RAL_ASSIGN_OR_RETURN(
      Loaded * loaded,
      env.context->getOrCreate<Loaded>(this, [&]() -> StatusOr<std::unique_ptr<Loaded>> {
        const DeviceKernelVariant* best = nullptr;
        int best_rank = -1;
        std::string built;
        for (const DeviceKernelVariant& v : variants_) {
          built += (built.empty() ? "" : ", ") + std::string(executableFormatName(v.format)) + " " +
                   (v.target.empty() ? "for any target" : v.target);
          const int rank = driver->targetRank(v.format, v.target);
          if (rank > best_rank) {
            best = &v;
            best_rank = rank;
          }
        }
        if (best == nullptr)
          return failedPrecondition("the ", deviceKindName(driver->kind()), " library kernels (",
                                    name_, ") are built for ", built.empty() ? "nothing" : built,
                                    targets_from_.empty() ? "" : " (" + targets_from_ + ")",
                                    "; this device is ", driver->deviceName());
        RAL_ASSIGN_OR_RETURN(Executable * exe, driver->load(spec(*best)));
        return std::make_unique<Loaded>(Loaded{exe});
      }));
  return loaded->executable;
}

}  // namespace ral::kernels
