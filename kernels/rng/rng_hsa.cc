// ral_rng_uniform for device "hsa" (kernels/rng/rng.h has the contract): the CPU kernel's
// numbers, bit for bit. The library's ral_rng_uniform_<type> kernels (kernels/hsa/
// device_kernels.py) compute Philox4x32-10 as kernels/rng/philox.h does, rounding every + and *
// separately.
#include <type_traits>

#include "kernels/hsa/hsa_env.h"
#include "kernels/rng/philox.h"
#include "kernels/rng/rng.h"
#include "ral/registration.h"

namespace ral::kernels::hsa {
namespace {

template <typename T>
constexpr Entry rngEntry() {
  return static_cast<Entry>(static_cast<uint32_t>(Entry::kRngF32) + floatTypeIndex<T>());
}

struct Impl {
  template <typename T, int N>
  static Status uniform(ExecutionContext* ctx, const MemRef<T, N>& out, uint64_t seed,
                        uint64_t offset, const RngParams2<T>& bounds) {
    static_assert(N <= kMaxRank, "rank too large for the HSA kernels");
    RngArgs p{};
    padView(N, out.sizes, out.strides, p.sizes, p.strides);
    RAL_ASSIGN_OR_RETURN(HsaEnv env, hsaEnv(ctx));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, out, "ral_rng_uniform", "output"));
    const int64_t n = out.numel();
    p.out = out.data();
    p.count = n;
    p.seed = seed;
    p.offset = offset;
    p.low = bounds.a;
    p.span = bounds.b;
    const auto blocks = static_cast<int64_t>(
        philox::blocksFor(std::is_same_v<T, double>, static_cast<uint64_t>(n)));
    return launchLinear(env, rngEntry<T>(), blocks, p);
  }
};

constexpr char kDevice[] = "hsa";
RAL_KERNEL_FLOAT_TYPES(RAL_REGISTER_RNG_UNIFORM)

}  // namespace
}  // namespace ral::kernels::hsa

RAL_REGISTRATION_ANCHOR(kernels_rng_hsa);
