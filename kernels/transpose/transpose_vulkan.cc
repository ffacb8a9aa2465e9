// ral_transpose for device "vulkan" (kernels/transpose/transpose.h).
#include "kernels/transpose/transpose.h"
#include "ral/registration.h"

namespace ral::kernels::vulkan {
namespace {

using Dev = Tag;
constexpr char kDevice[] = "vulkan";
RAL_REGISTER_TRANSPOSE()

}  // namespace
}  // namespace ral::kernels::vulkan

RAL_REGISTRATION_ANCHOR(kernels_transpose_vulkan);
