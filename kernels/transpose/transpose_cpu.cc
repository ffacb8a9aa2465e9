// ral_transpose for device "cpu" (kernels/transpose/transpose.h).
#include "kernels/transpose/transpose.h"

namespace ral::kernels::cpu {
namespace {

using Dev = Tag;
constexpr char kDevice[] = "cpu";
RAL_REGISTER_TRANSPOSE()

}  // namespace
}  // namespace ral::kernels::cpu
