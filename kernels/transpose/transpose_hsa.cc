// ral_transpose for device "hsa" (kernels/transpose/transpose.h).
#include "kernels/transpose/transpose.h"
#include "ral/registration.h"

namespace ral::kernels::hsa {
namespace {

using Dev = Tag;
constexpr char kDevice[] = "hsa";
RAL_REGISTER_TRANSPOSE()

}  // namespace
}  // namespace ral::kernels::hsa

RAL_REGISTRATION_ANCHOR(kernels_transpose_hsa);
