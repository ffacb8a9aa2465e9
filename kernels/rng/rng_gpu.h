// ral_rng_uniform on the GPU library's devices (cuda, hsa; kernels/rng/rng.h has the contract):
// the CPU kernel's numbers, bit for bit. The library's ral_rng_uniform_<type> kernels
// (kernels/gpu/device_kernels.py) compute Philox4x32-10 as kernels/rng/philox.h does, rounding
// every + and * separately. rng_<device>.cc registers Impl for its device.
#ifndef RAL_KERNELS_RNG_RNG_GPU_H_
#define RAL_KERNELS_RNG_RNG_GPU_H_

#include <type_traits>

#include "kernels/gpu/gpu_library.h"
#include "kernels/rng/philox.h"
#include "kernels/rng/rng.h"

namespace ral::kernels::gpu {

template <DeviceKind kKind>
struct RngImpl {
  template <typename T, int N>
  static Status uniform(ExecutionContext* ctx, const MemRef<T, N>& out, uint64_t seed,
                        uint64_t offset, const RngParams2<T>& bounds) {
    static_assert(N <= kMaxRank, "rank too large for the GPU library kernels");
    RngArgs p{};
    padView(N, out.sizes, out.strides, p.sizes, p.strides);
    RAL_ASSIGN_OR_RETURN(GpuEnv env, gpuEnv(ctx, kKind));
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
    return launchLinear(env, entryAfter(Entry::kRngF32, floatTypeIndex<T>()), blocks, p);
  }
};

}  // namespace ral::kernels::gpu

#endif  // RAL_KERNELS_RNG_RNG_GPU_H_
