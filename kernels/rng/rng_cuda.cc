// ral_rng_uniform for device "cuda": the GPU library's (kernels/rng/rng_gpu.h).
#include "kernels/rng/rng_gpu.h"
#include "ral/registration.h"

namespace ral::kernels::cuda {
namespace {

using Impl = gpu::RngImpl<Tag::kKind>;
constexpr char kDevice[] = "cuda";
RAL_KERNEL_FLOAT_TYPES(RAL_REGISTER_RNG_UNIFORM)

}  // namespace
}  // namespace ral::kernels::cuda

RAL_REGISTRATION_ANCHOR(kernels_rng_cuda);
