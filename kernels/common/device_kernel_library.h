// A library of device kernels built into libral: one binary per target, all with the same entry
// points (kernels/gpu: a cubin per CUDA architecture and PTX for newer ones, an HSA code object
// per AMD architecture). A kernel
// asks for it through load(): the variant the execution's driver ranks best is loaded into the
// execution's Context on first use ("load if not loaded, then launch") and cached there, so later
// launches take no lock and each Context frees its own copy.
//
// Libraries are immutable once built (each device's is a function-local static); load() is
// thread-safe (Context::getOrCreate).
#ifndef RAL_KERNELS_COMMON_DEVICE_KERNEL_LIBRARY_H_
#define RAL_KERNELS_COMMON_DEVICE_KERNEL_LIBRARY_H_

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/common/devices.h"
#include "ral/driver.h"
#include "ral/status.h"

namespace ral::kernels {

struct DeviceKernelVariant {
  ExecutableFormat format;
  std::string target;  // ExecutableSpec::target: "gfx90a", "sm_90"; empty: any GPU of the format
  const void* data;    // the binary, built into libral: never freed
  size_t size;
};

class DeviceKernelLibrary {
 public:
  // `name` prefixes each variant's ExecutableSpec::name (drivers cache loads by name, so it
  // must change when the binaries do); `entries` are the kernels' names in launch-index order;
  // `targets_from` says where the list of targets comes from, for the error when none fits.
  // The driver ranks the variants (Driver::targetRank); the first of the best rank loads.
  DeviceKernelLibrary(std::string name, std::vector<std::string> entries,
                      std::vector<DeviceKernelVariant> variants, std::string targets_from = "");

  // The library loaded for env's driver, cached in env's Context. FailedPrecondition naming the
  // device and the targets built when no variant runs there; a driver's load error otherwise.
  StatusOr<Executable*> load(const KernelEnv& env) const;

  // The ExecutableSpec of one variant (tests load and inspect them themselves).
  ExecutableSpec spec(const DeviceKernelVariant& variant) const;
  const std::vector<std::string>& entries() const { return entries_; }
  const std::vector<DeviceKernelVariant>& variants() const { return variants_; }

 private:
  std::string name_;
  std::vector<std::string> entries_;
  std::vector<DeviceKernelVariant> variants_;
  std::string targets_from_;
};

}  // namespace ral::kernels

#endif  // RAL_KERNELS_COMMON_DEVICE_KERNEL_LIBRARY_H_
