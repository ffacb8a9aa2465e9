// ral_memcpy and ral_memset for device "cpu" (kernels/memory_ops/memory_ops.h).
#include "kernels/memory_ops/memory_ops.h"
#include "ral/registration.h"

namespace ral::kernels::cpu {
namespace {

using Dev = Tag;
constexpr char kDevice[] = "cpu";
RAL_REGISTER_MEMORY_OPS()

}  // namespace
}  // namespace ral::kernels::cpu

RAL_REGISTRATION_ANCHOR(kernels_memory_ops_cpu);
