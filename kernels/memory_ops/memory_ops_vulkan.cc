// ral_memcpy and ral_memset for device "vulkan" (kernels/memory_ops/memory_ops.h).
#include "kernels/memory_ops/memory_ops.h"
#include "ral/registration.h"

namespace ral::kernels::vulkan {
namespace {

using Dev = Tag;
constexpr char kDevice[] = "vulkan";
RAL_REGISTER_MEMORY_OPS()

}  // namespace
}  // namespace ral::kernels::vulkan

RAL_REGISTRATION_ANCHOR(kernels_memory_ops_vulkan);
