// ral_rng_uniform on Vulkan, f32 and f64 (kernels/rng/rng.h has the contract): Philox4x32-10 in
// shaders/philox.glsl mirrors kernels/rng/philox.h, so a (seed, offset, shape) gives bit for bit
// the CPU's numbers. Shapes and strides must fit the shader's 32-bit indices.
#include <climits>
#include <cmath>
#include <type_traits>

#include "kernels/rng/philox.h"
#include "kernels/rng/rng.h"
#include "kernels/vulkan/shaders.h"
#include "kernels/vulkan/vulkan_env.h"
#include "ral/registration.h"

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

struct Impl {
  template <typename T, int N>
  static Status uniform(ExecutionContext* ctx, const MemRef<T, N>& out, uint64_t seed,
                        uint64_t offset, const RngParams2<T>& bounds) {
    const char* kKernel = "ral_rng_uniform";
    const int64_t n = out.numel();
    if (n > INT32_MAX) return unsupported(kKernel, ": ", n, " elements exceed 2^31 on Vulkan");
    RAL_ASSIGN_OR_RETURN(VulkanEnv env, vulkanEnv(ctx));
    RAL_ASSIGN_OR_RETURN(Binding b, bindView(env, kKernel, "output", out));
    using Push = std::conditional_t<std::is_same_v<T, double>, PushF64, PushF32>;
    Push p{};
    p.n = static_cast<uint32_t>(n);
    p.rank = N;
    p.out_base = b.base;
    p.seed_lo = static_cast<uint32_t>(seed);
    p.seed_hi = static_cast<uint32_t>(seed >> 32);
    p.offset_lo = static_cast<uint32_t>(offset);
    p.offset_hi = static_cast<uint32_t>(offset >> 32);
    p.low = bounds.a;
    p.span = bounds.b;
    for (int d = 0; d < N; ++d) {
      RAL_RETURN_IF_ERROR(toInt32(kKernel, out.sizes[d], &p.sizes[d]));
      RAL_RETURN_IF_ERROR(toInt32(kKernel, out.strides[d], &p.strides[d]));
    }
    const Shader shader = std::is_same_v<T, double> ? RAL_VULKAN_SHADER_REF(rng_uniform_f64)
                                                    : RAL_VULKAN_SHADER_REF(rng_uniform_f32);
    RAL_ASSIGN_OR_RETURN(Executable * exe, executable(env, shader));
    const uint64_t blocks = philox::blocksFor(std::is_same_v<T, double>, static_cast<uint64_t>(n));
    return launch(env, exe, Dim3{groupsFor(blocks), 1, 1}, &b, 1, &p, sizeof(p));
  }
};

// f32 and f64 only: the shaders have no f16/bf16 variant.
constexpr char kDevice[] = "vulkan";
RAL_REGISTER_RNG_UNIFORM(float)
RAL_REGISTER_RNG_UNIFORM(double)

}  // namespace
}  // namespace ral::kernels::vulkan

RAL_REGISTRATION_ANCHOR(kernels_rng_vulkan);
