// ral_memcpy and ral_memset for device "cuda" (kernels/memory_ops/memory_ops.h).
#include "kernels/memory_ops/memory_ops.h"
#include "ral/registration.h"

namespace ral::kernels::cuda {
namespace {

using Dev = Tag;
constexpr char kDevice[] = "cuda";
RAL_REGISTER_MEMORY_OPS()

}  // namespace
}  // namespace ral::kernels::cuda

RAL_REGISTRATION_ANCHOR(kernels_memory_ops_cuda);
