// The kernels a device does not (yet) have: the one place that says so, and why. A listed test
// still runs and must fail (it stops at the missing kernel's NotFound); a pass is reported as an
// error so the entry gets removed.
#include "kernel_cts.h"

namespace ral::kernel_cts {

const ::ral::testing::ExpectedFailureEntry kExpectedFailures[] = {
    {"Gemm", "F64", "vulkan", "the GEMM shader is f32 only"},
    {"Gemm", "F16", "vulkan", "the GEMM shader is f32 only"},
    {"Gemm", "BF16", "vulkan", "the GEMM shader is f32 only"},
    {"RngUniform", "F16", "vulkan", "the Philox shader writes f32 and f64 only"},
    {"RngUniform", "BF16", "vulkan", "the Philox shader writes f32 and f64 only"},
    {"RngNormal", "F32", "vulkan", "ral_rng_normal is a CPU kernel only"},
    {"RngNormal", "F64", "vulkan", "ral_rng_normal is a CPU kernel only"},
    {"RngNormal", "F32", "cuda", "ral_rng_normal is a CPU kernel only"},
    {"RngNormal", "F64", "cuda", "ral_rng_normal is a CPU kernel only"},
    {"RngNormal", "F32", "hsa", "ral_rng_normal is a CPU kernel only"},
    {"RngNormal", "F64", "hsa", "ral_rng_normal is a CPU kernel only"},
    {"Conv", "MatchesCpu", "vulkan",
     "convolutions on Vulkan are compiled loops (im2col), not a library kernel"},
    {"Conv", "MatchesCpu", "hsa",
     "convolutions on HSA are compiled loops (im2col), not a library kernel"},
    {"QConv", "MatchesIntegerArithmetic", "vulkan", "ral_qconv is a CPU kernel only"},
    {"QConv", "MatchesIntegerArithmetic", "cuda", "ral_qconv is a CPU kernel only"},
    {"QConv", "MatchesIntegerArithmetic", "hsa", "ral_qconv is a CPU kernel only"},
    {"ConvBlock", "MatchesFloat64Arithmetic", "vulkan", "ral_conv_block is a CPU kernel only"},
    {"ConvBlock", "MatchesFloat64Arithmetic", "cuda", "ral_conv_block is a CPU kernel only"},
    {"ConvBlock", "MatchesFloat64Arithmetic", "hsa", "ral_conv_block is a CPU kernel only"},
    {"ConvScaled", "MatchesFloat64Arithmetic", "vulkan", "ral_conv_scaled is a CPU kernel only"},
    {"ConvScaled", "MatchesFloat64Arithmetic", "cuda", "ral_conv_scaled is a CPU kernel only"},
    {"ConvScaled", "MatchesFloat64Arithmetic", "hsa", "ral_conv_scaled is a CPU kernel only"},
    {nullptr, nullptr, nullptr, nullptr},  // (terminator; entries go above)
};

}  // namespace ral::kernel_cts
