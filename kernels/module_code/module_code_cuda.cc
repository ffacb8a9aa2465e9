// ral_kernel_launch and ral_constant for device "cuda" (kernels/module_code/module_code.h):
// launches are queued on the execution's stream; constants are uploaded once per Context.
#include "kernels/module_code/module_code.h"
#include "ral/registration.h"

namespace ral::kernels::cuda {
namespace {

constexpr char kModuleCodeDevice[] = "cuda";
constexpr DeviceKind kModuleCodeKind = DeviceKind::kCuda;
RAL_REGISTER_MODULE_CODE()

}  // namespace
}  // namespace ral::kernels::cuda

RAL_REGISTRATION_ANCHOR(kernels_module_code_cuda);
