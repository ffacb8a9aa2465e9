// ral_kernel_launch and ral_constant for device "hsa" (kernels/module_code/module_code.h):
// launches of compiled HSACO kernels are queued on the execution's stream (an HSA queue);
// constants are uploaded once per Context.
#include "kernels/module_code/module_code.h"
#include "ral/registration.h"

namespace ral::kernels::hsa {
namespace {

constexpr char kModuleCodeDevice[] = "hsa";
constexpr DeviceKind kModuleCodeKind = DeviceKind::kHsa;
RAL_REGISTER_MODULE_CODE()

}  // namespace
}  // namespace ral::kernels::hsa

RAL_REGISTRATION_ANCHOR(kernels_module_code_hsa);
