// HsaExecutable: one code object (HSACO) loaded onto the driver's GPU agent: read from memory
// (hsa_code_object_reader_create_from_memory), loaded into a frozen, validated executable, and
// per entry point the kernel descriptor ("<name>.kd") with what a dispatch needs, read once at
// load: the kernel object, the kernarg segment size and alignment, the group and private segment
// sizes.
//
// The executable owns its HSA executable and reader and destroys them with itself; its driver
// keeps it (cached by ExecutableSpec::name) until the driver goes. Immutable after load, so
// every call is thread-safe.
#ifndef RAL_DRIVERS_HSA_HSA_EXECUTABLE_H_
#define RAL_DRIVERS_HSA_HSA_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "drivers/hsa/hsa_device.h"
#include "ral/driver.h"
#include "ral/status.h"

namespace ral::hsa {

struct HsaKernel {
  uint64_t object = 0;
  uint32_t kernarg_size = 0;
  uint32_t kernarg_alignment = 16;
  uint32_t group_segment_size = 0;
  uint32_t private_segment_size = 0;
};

class HsaExecutable final : public Executable {
 public:
  // InvalidArgument (naming the executable) for a blob that is not a code object for this agent;
  // NotFound for a missing entry point; Unsupported for other formats.
  static StatusOr<std::unique_ptr<HsaExecutable>> load(std::shared_ptr<HsaDevice> device,
                                                       const ExecutableSpec& spec,
                                                       const void* owner);
  ~HsaExecutable() override;
  const ExecutableSpec& spec() const override { return spec_; }
  const void* owner() const { return owner_; }
  size_t kernelCount() const { return kernels_.size(); }
  const HsaKernel& kernel(uint32_t entry) const { return kernels_[entry]; }

 private:
  HsaExecutable(std::shared_ptr<HsaDevice> device, ExecutableSpec spec, const void* owner)
      : device_(std::move(device)), spec_(std::move(spec)), owner_(owner) {}

  const std::shared_ptr<HsaDevice> device_;
  const ExecutableSpec spec_;
  const void* const owner_;
  hsa_code_object_reader_t reader_{0};
  hsa_executable_t executable_{0};
  std::vector<HsaKernel> kernels_;
};

}  // namespace ral::hsa

#endif  // RAL_DRIVERS_HSA_HSA_EXECUTABLE_H_
