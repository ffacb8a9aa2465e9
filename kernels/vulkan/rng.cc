// ral_rng_uniform on Vulkan: Philox4x32-10 (shaders/philox.glsl mirrors kernels/philox.h), so a
// (seed, offset, shape) gives bit for bit the CPU's numbers.
//
//   void rngUniform(ExecutionContext*, MemRef<T, N> out, uint64_t seed, uint64_t offset,
//                   T low, T high)                                      uniform in [low, high)
//     ral_rng_uniform___vulkan___pvoid_m<N>d<T>_ui64_ui64_<T>_<T>___void   T in f32 f64; N 1..4
//
// `offset` counts Philox blocks (philox::blocksFor); low <= high (finite) is checked.
#include <cmath>
#include <type_traits>

#include "kernels/kernel_types.h"
#include "kernels/philox.h"
#include "kernels/vulkan/kernel_util.h"
#include "kernels/vulkan/shaders.h"
#include "ral/api.h"

namespace ral::kernels::vulkan {
namespace {

constexpr int kMaxRank = 4;

struct PushF32 {
  uint32_t n, rank;
  int32_t out_base;
  uint32_t seed_lo, seed_hi, offset_lo, offset_hi;
  float low, span;
  int32_t sizes[kMaxRank], strides[kMaxRank];
};

struct PushF64 {
  double low, span;
  uint32_t n, rank;
  int32_t out_base;
  uint32_t seed_lo, seed_hi, offset_lo, offset_hi;
  int32_t sizes[kMaxRank], strides[kMaxRank];
  uint32_t pad;
};

template <typename T, int N>
Status rngUniformImpl(ExecutionContext* ctx, const MemRef<T, N>& out, uint64_t seed,
                      uint64_t offset, T low, T high) {
  const char* kKernel = "ral_rng_uniform";
  RAL_RETURN_IF_ERROR(checkMemRef(out, kKernel, "output"));
  if (!std::isfinite(low) || !std::isfinite(high) || !(low <= high))
    return invalidArgument(kKernel, ": bounds [", low, ", ", high,
                           ") must be finite with low <= high");
  const int64_t n = out.numel();
  if (n == 0) return Status();
  if (n > INT32_MAX) return unsupported(kKernel, ": ", n, " elements exceed 2^31 on Vulkan");
  RAL_ASSIGN_OR_RETURN(VulkanDriver * driver, vulkanDriver(ctx));
  RAL_ASSIGN_OR_RETURN(Binding b, bindView(driver, kKernel, "output", out));
  using Push = std::conditional_t<std::is_same_v<T, double>, PushF64, PushF32>;
  Push p{};
  p.n = static_cast<uint32_t>(n);
  p.rank = N;
  p.out_base = b.base;
  p.seed_lo = static_cast<uint32_t>(seed);
  p.seed_hi = static_cast<uint32_t>(seed >> 32);
  p.offset_lo = static_cast<uint32_t>(offset);
  p.offset_hi = static_cast<uint32_t>(offset >> 32);
  // The span is computed here exactly as the CPU kernel computes it (high - low, rounded to T).
  p.low = low;
  p.span = high - low;
  for (int d = 0; d < N; ++d) {
    RAL_RETURN_IF_ERROR(toInt32(kKernel, out.sizes[d], &p.sizes[d]));
    RAL_RETURN_IF_ERROR(toInt32(kKernel, out.strides[d], &p.strides[d]));
  }
  const Shader shader = std::is_same_v<T, double> ? RAL_VULKAN_SHADER_REF(rng_uniform_f64)
                                                  : RAL_VULKAN_SHADER_REF(rng_uniform_f32);
  RAL_ASSIGN_OR_RETURN(Executable * exe, executable(driver, shader));
  const uint64_t blocks = philox::blocksFor(std::is_same_v<T, double>, static_cast<uint64_t>(n));
  return launch(driver, exe, Dim3{groupsFor(blocks), 1, 1}, &b, 1, &p, sizeof(p),
                executionStream(ctx));
}

template <typename T, int N>
void rngUniform(ExecutionContext* ctx, MemRef<T, N> out, uint64_t seed, uint64_t offset, T low,
                T high) {
  RAL_SIGNAL_IF_ERROR(ctx, rngUniformImpl(ctx, out, seed, offset, low, high));
}

#define RAL_REGISTER_RNG_RANK(T, N) RAL_API("ral_rng_uniform", "vulkan", rngUniform<T, N>);
#define RAL_REGISTER_RNG(T) RAL_KERNEL_RANKS_1_TO_4(RAL_REGISTER_RNG_RANK, T)
// f32 and f64 only: the shaders have no f16/bf16 variant.
RAL_REGISTER_RNG(float)
RAL_REGISTER_RNG(double)

}  // namespace
}  // namespace ral::kernels::vulkan
