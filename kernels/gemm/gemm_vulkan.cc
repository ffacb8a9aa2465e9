// ral_gemm and ral_batch_gemm on Vulkan, f32 (kernels/gemm/gemm.h has the contract): a tiled
// compute shader (shaders/gemm_f32.comp) over strided operands, so transposed and strided views
// run without copies; one dispatch per matrix of c for ral_batch_gemm. Operands must be memory of
// the context's Vulkan driver and c must not overlap a or b.
#include <climits>

#include "kernels/gemm/gemm.h"
#include "kernels/vulkan/shaders.h"
#include "kernels/vulkan/vulkan_env.h"
#include "ral/registration.h"

namespace ral::kernels::vulkan {
namespace {

struct GemmPush {
  uint32_t m, n, k;
  int32_t a_base, b_base, c_base;
  int32_t a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;
};

// One matrix, shapes checked (k = ka).
struct OneMatrix {
  static Status run(ExecutionContext* ctx, const MemRef<float, 2>& a, const MemRef<float, 2>& b,
                    const MemRef<float, 2>& c, bool ta, bool tb, int64_t ka) {
    const char* kKernel = "ral_gemm";
    const int64_t m = c.sizes[0], n = c.sizes[1];
    if (m == 0 || n == 0) return Status();
    if (overlaps(c, a) || overlaps(c, b)) return invalidArgument(kKernel, ": c overlaps an input");
    RAL_ASSIGN_OR_RETURN(VulkanEnv env, vulkanEnv(ctx));
    RAL_ASSIGN_OR_RETURN(Executable * exe, executable(env, RAL_VULKAN_SHADER_REF(gemm_f32)));

    Binding bind[3];
    GemmPush p{};
    p.m = static_cast<uint32_t>(m);
    p.n = static_cast<uint32_t>(n);
    p.k = static_cast<uint32_t>(ka);
    RAL_ASSIGN_OR_RETURN(bind[2], bindView(env, kKernel, "output c", c));
    if (ka > 0) {
      RAL_ASSIGN_OR_RETURN(bind[0], bindView(env, kKernel, "input a", a));
      RAL_ASSIGN_OR_RETURN(bind[1], bindView(env, kKernel, "input b", b));
    } else {
      bind[0] = bind[1] = bind[2];  // k = 0: c = 0 and a, b are never read
    }
    p.a_base = bind[0].base;
    p.b_base = bind[1].base;
    p.c_base = bind[2].base;
    RAL_RETURN_IF_ERROR(toInt32(kKernel, ta ? a.strides[1] : a.strides[0], &p.a_rs));
    RAL_RETURN_IF_ERROR(toInt32(kKernel, ta ? a.strides[0] : a.strides[1], &p.a_cs));
    RAL_RETURN_IF_ERROR(toInt32(kKernel, tb ? b.strides[1] : b.strides[0], &p.b_rs));
    RAL_RETURN_IF_ERROR(toInt32(kKernel, tb ? b.strides[0] : b.strides[1], &p.b_cs));
    RAL_RETURN_IF_ERROR(toInt32(kKernel, c.strides[0], &p.c_rs));
    RAL_RETURN_IF_ERROR(toInt32(kKernel, c.strides[1], &p.c_cs));
    const Dim3 grid{static_cast<uint32_t>((n + 63) / 64), static_cast<uint32_t>((m + 63) / 64), 1};
    return launch(env, exe, grid, bind, 3, &p, sizeof(p));
  }
};

using Impl = PerMatrixGemm<OneMatrix>;

// f32 only: the shader has no other variant.
constexpr char kDevice[] = "vulkan";
RAL_REGISTER_GEMM(float)

}  // namespace
}  // namespace ral::kernels::vulkan

RAL_REGISTRATION_ANCHOR(kernels_gemm_vulkan);
