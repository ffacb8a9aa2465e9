// ral_memcpy and ral_memset for device "hsa" (kernels/memory_ops/memory_ops.h).
#include "kernels/memory_ops/memory_ops.h"
#include "ral/registration.h"

namespace ral::kernels::hsa {
namespace {

using Dev = Tag;
constexpr char kDevice[] = "hsa";
RAL_REGISTER_MEMORY_OPS()

}  // namespace
}  // namespace ral::kernels::hsa

RAL_REGISTRATION_ANCHOR(kernels_memory_ops_hsa);
