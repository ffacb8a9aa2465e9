// ral_gemm and ral_batch_gemm on AMD GPUs (kernels/gemm/gemm.h has the contract): the GPU
// library's tiled ral_gemm_<type> kernel (kernels/gpu/device_kernels.py: 16x16 tiles of a and b
// staged in workgroup memory, f32 accumulation, f64 for f64) over strided operands, so transposed
// and strided views run without copies; one launch per matrix of c for ral_batch_gemm. c must
// not overlap a or b.
#include <type_traits>

#include "kernels/gemm/gemm.h"
#include "kernels/gpu/gpu_library.h"
#include "ral/registration.h"

namespace ral::kernels::hsa {
namespace {

using namespace gpu;  // NOLINT: the library's argument structs and launches

// One matrix, shapes checked.
struct OneMatrix {
  template <typename T>
  static Status run(ExecutionContext* ctx, const MemRef<T, 2>& a, const MemRef<T, 2>& b,
                    const MemRef<T, 2>& c, bool ta, bool tb, int64_t k) {
    const int64_t m = c.sizes[0], n = c.sizes[1];
    if (m == 0 || n == 0) return Status();
    if (overlaps(c, a) || overlaps(c, b)) return invalidArgument("ral_gemm: c overlaps an input");
    RAL_ASSIGN_OR_RETURN(GpuEnv env, gpuEnv(ctx, DeviceKind::kHsa));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, a, "ral_gemm", "a"));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, b, "ral_gemm", "b"));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, c, "ral_gemm", "c"));
    GemmArgs p{};
    p.a = a.data();
    p.b = b.data();
    p.c = c.data();
    p.m = m;
    p.n = n;
    p.k = k;
    p.a_rs = ta ? a.strides[1] : a.strides[0];
    p.a_cs = ta ? a.strides[0] : a.strides[1];
    p.b_rs = tb ? b.strides[1] : b.strides[0];
    p.b_cs = tb ? b.strides[0] : b.strides[1];
    p.c_rs = c.strides[0];
    p.c_cs = c.strides[1];
    LaunchConfig config;
    config.grid = Dim3{static_cast<uint32_t>((n + kGemmTile - 1) / kGemmTile),
                       static_cast<uint32_t>((m + kGemmTile - 1) / kGemmTile), 1};
    config.block = Dim3{kGemmTile, kGemmTile, 1};
    return launch(env, entryAfter(Entry::kGemmF32, floatTypeIndex<T>()), config, p);
  }
};

using Impl = PerMatrixGemm<OneMatrix>;

constexpr char kDevice[] = "hsa";
RAL_KERNEL_FLOAT_TYPES(RAL_REGISTER_GEMM)

}  // namespace
}  // namespace ral::kernels::hsa

RAL_REGISTRATION_ANCHOR(kernels_gemm_hsa);
