// The Vulkan kernels' compute shaders, compiled by glslc at build time and embedded
// (cmake/RalSpirv.cmake generates the definitions).
#ifndef RAL_KERNELS_VULKAN_SHADERS_H_
#define RAL_KERNELS_VULKAN_SHADERS_H_

#include <cstddef>
#include <cstdint>

#include "kernels/vulkan/vulkan_env.h"

namespace ral::kernels::vulkan {
namespace spirv {
#define RAL_VULKAN_SHADER(name) \
  extern const uint32_t name[]; \
  extern const size_t name##_size;
RAL_VULKAN_SHADER(gemm_f32)
RAL_VULKAN_SHADER(copy_x8)
RAL_VULKAN_SHADER(copy_x16)
RAL_VULKAN_SHADER(copy_x32)
RAL_VULKAN_SHADER(copy_x64)
RAL_VULKAN_SHADER(fill_x8)
RAL_VULKAN_SHADER(fill_x16)
RAL_VULKAN_SHADER(fill_x32)
RAL_VULKAN_SHADER(fill_x64)
RAL_VULKAN_SHADER(rng_uniform_f32)
RAL_VULKAN_SHADER(rng_uniform_f64)
RAL_VULKAN_SHADER(order_rows_f32)
RAL_VULKAN_SHADER(order_rows_f64)
RAL_VULKAN_SHADER(order_rows_i32)
RAL_VULKAN_SHADER(order_rows_i64)
#undef RAL_VULKAN_SHADER
}  // namespace spirv

#define RAL_VULKAN_SHADER_REF(name) \
  Shader { "ral.vulkan." #name, spirv::name, spirv::name##_size }

}  // namespace ral::kernels::vulkan

#endif  // RAL_KERNELS_VULKAN_SHADERS_H_
