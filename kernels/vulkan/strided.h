// Strided copies and fills on Vulkan (shaders/strided_copy.glsl, strided_fill.glsl): the element
// offsets of both views are computed per element from sizes and strides, so any layout works
// (transposes, slices, negative strides).
#ifndef RAL_KERNELS_VULKAN_STRIDED_H_
#define RAL_KERNELS_VULKAN_STRIDED_H_

#include <cstddef>
#include <cstdint>

#include "kernels/vulkan/kernel_util.h"

namespace ral::kernels::vulkan {

inline constexpr int kMaxStridedRank = 6;

// dst[idx] = src[idx] for every row-major index idx of `sizes` (rank <= 6), elements of
// `elem_size` bytes (1, 2, 4 or 8).
Status stridedCopy(VulkanDriver* driver, Stream* stream, const char* kernel, size_t elem_size,
                   int rank, const int64_t* sizes, const Binding& src, const int64_t* src_strides,
                   const Binding& dst, const int64_t* dst_strides);
// dst[idx] = value (`elem_size` bytes at `value`).
Status stridedFill(VulkanDriver* driver, Stream* stream, const char* kernel, size_t elem_size,
                   int rank, const int64_t* sizes, const Binding& dst, const int64_t* dst_strides,
                   const void* value);

}  // namespace ral::kernels::vulkan

#endif  // RAL_KERNELS_VULKAN_STRIDED_H_
