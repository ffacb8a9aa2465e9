// ral_transpose for device "cpu" (kernels/transpose/transpose.h).
#include "kernels/transpose/transpose.h"
#include "ral/registration.h"

namespace ral::kernels::cpu {
namespace {

using Dev = Tag;
constexpr char kDevice[] = "cpu";
RAL_REGISTER_TRANSPOSE()

}  // namespace
}  // namespace ral::kernels::cpu

RAL_REGISTRATION_ANCHOR(kernels_transpose_cpu);
