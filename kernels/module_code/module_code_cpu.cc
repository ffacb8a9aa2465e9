// ral_kernel_launch and ral_constant for device "cpu" (kernels/module_code/module_code.h). Host
// kernels run on the CPU driver's pool before the call returns.
#include "kernels/module_code/module_code.h"
#include "ral/registration.h"

namespace ral::kernels::cpu {
namespace {

constexpr char kModuleCodeDevice[] = "cpu";
constexpr DeviceKind kModuleCodeKind = DeviceKind::kCpu;
RAL_REGISTER_MODULE_CODE()

}  // namespace
}  // namespace ral::kernels::cpu

RAL_REGISTRATION_ANCHOR(kernels_module_code_cpu);
