// ral_rng_uniform for device "cuda": the CPU kernel's signature and numbers, bit for bit
// (kernels/philox.h; the device code mirrors it in device_kernels.cu):
//   void rngUniform(ExecutionContext*, MemRef<T, N> out, uint64_t seed, uint64_t offset, T low,
//                   T high)        T in f32 f64 f16 bf16; N in 1..4
#include <cmath>
#include <type_traits>

#include "kernels/cuda/cuda_kernel_util.h"
#include "kernels/kernel_types.h"
#include "kernels/kernel_util.h"
#include "ral/api.h"
#include "ral/half.h"

namespace ral::cuda_kernels {
namespace {

template <typename T>
float asFloat(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return v.toFloat();
  } else {
    return static_cast<float>(v);
  }
}

template <typename T>
constexpr Entry rngEntry() {
  if constexpr (std::is_same_v<T, float>) return Entry::kRngF32;
  if constexpr (std::is_same_v<T, double>) return Entry::kRngF64;
  if constexpr (std::is_same_v<T, float16>) return Entry::kRngF16;
  return Entry::kRngBF16;
}

template <typename T, int N>
void rngUniform(ExecutionContext* ctx, MemRef<T, N> out, uint64_t seed, uint64_t offset, T low,
                T high) {
  RAL_SIGNAL_IF_ERROR(ctx, kernels::checkMemRef(out, "ral_rng_uniform", "output"));
  RngParams p{};
  if constexpr (std::is_same_v<T, double>) {
    if (!std::isfinite(low) || !std::isfinite(high) || !(low <= high)) {
      ctx->signalError(invalidArgument("ral_rng_uniform: bounds [", low, ", ", high,
                                       ") must be finite with low <= high"));
      return;
    }
    p.low = low;
    p.span = high - low;
  } else {
    const float l = asFloat(low), h = asFloat(high);
    if (!std::isfinite(l) || !std::isfinite(h) || !(l <= h)) {
      ctx->signalError(invalidArgument("ral_rng_uniform: bounds [", l, ", ", h,
                                       ") must be finite with low <= high"));
      return;
    }
    p.low = l;
    p.span = static_cast<float>(h - l);  // rounded in float, as on the CPU
  }
  const int64_t n = out.numel();
  if (n == 0) return;
  auto env = cudaEnv(ctx);
  RAL_SIGNAL_IF_ERROR(ctx, env.status());
  p.out = viewOf(out);
  p.count = n;
  p.out_ptr = out.data();
  p.seed = seed;
  p.offset = offset;
  const int64_t per_block = std::is_same_v<T, double> ? 2 : 4;
  RAL_SIGNAL_IF_ERROR(ctx, launchLinear(*env, rngEntry<T>(), (n + per_block - 1) / per_block, p));
}

#define RAL_REGISTER_CUDA_RNG_RANK(T, N) RAL_API("ral_rng_uniform", "cuda", rngUniform<T, N>);
#define RAL_REGISTER_CUDA_RNG(T) RAL_KERNEL_RANKS_1_TO_4(RAL_REGISTER_CUDA_RNG_RANK, T)
RAL_KERNEL_FLOAT_TYPES(RAL_REGISTER_CUDA_RNG)

}  // namespace
}  // namespace ral::cuda_kernels
