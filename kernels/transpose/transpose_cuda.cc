// ral_transpose for device "cuda" (kernels/transpose/transpose.h).
#include "kernels/transpose/transpose.h"
#include "ral/registration.h"

namespace ral::kernels::cuda {
namespace {

using Dev = Tag;
constexpr char kDevice[] = "cuda";
RAL_REGISTER_TRANSPOSE()

}  // namespace
}  // namespace ral::kernels::cuda

RAL_REGISTRATION_ANCHOR(kernels_transpose_cuda);
