// ral_kernel_launch and ral_constant for device "vulkan" (kernels/module_code/module_code.h):
// launches are queued on the execution's stream; constants are uploaded once per Context.
#include "kernels/module_code/module_code.h"
#include "ral/registration.h"

namespace ral::kernels::vulkan {
namespace {

constexpr char kModuleCodeDevice[] = "vulkan";
constexpr DeviceKind kModuleCodeKind = DeviceKind::kVulkan;
RAL_REGISTER_MODULE_CODE()

}  // namespace
}  // namespace ral::kernels::vulkan

RAL_REGISTRATION_ANCHOR(kernels_module_code_vulkan);
