// ral_rng_uniform for device "cuda" (kernels/rng/rng.h has the contract): the CPU kernel's
// numbers, bit for bit (the device code mirrors kernels/rng/philox.h in
// kernels/cuda/device_kernels.cu).
#include <type_traits>

#include "kernels/cuda/cuda_env.h"
#include "kernels/rng/rng.h"
#include "ral/registration.h"

namespace ral::kernels::cuda {
namespace {

template <typename T>
constexpr Entry rngEntry() {
  return static_cast<Entry>(static_cast<uint32_t>(Entry::kRngF32) + floatTypeIndex<T>());
}

struct Impl {
  template <typename T, int N>
  static Status uniform(ExecutionContext* ctx, const MemRef<T, N>& out, uint64_t seed,
                        uint64_t offset, const RngParams2<T>& bounds) {
    RAL_ASSIGN_OR_RETURN(CudaEnv env, cudaEnv(ctx));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, out, "ral_rng_uniform", "output"));
    RngParams p{};
    p.low = bounds.a;
    p.span = bounds.b;
    const int64_t n = out.numel();
    p.out = viewOf(out);
    p.count = n;
    p.out_ptr = out.data();
    p.seed = seed;
    p.offset = offset;
    const int64_t per_block = std::is_same_v<T, double> ? 2 : 4;
    return launchLinear(env, rngEntry<T>(), (n + per_block - 1) / per_block, p);
  }
};

constexpr char kDevice[] = "cuda";
RAL_KERNEL_FLOAT_TYPES(RAL_REGISTER_RNG_UNIFORM)

}  // namespace
}  // namespace ral::kernels::cuda

RAL_REGISTRATION_ANCHOR(kernels_rng_cuda);
