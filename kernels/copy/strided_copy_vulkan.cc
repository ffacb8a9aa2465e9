// The Vulkan primitive of the strided copy (kernels/copy/strided_copy.h): shaders/copy_x*.comp and
// fill_x*.comp compute both views' element offsets per element from sizes and strides, so any
// layout works (transposes, slices, negative strides). Shapes, strides and offsets must fit the
// shaders' 32-bit indices and rank 6.
#include <cstring>

#include "kernels/copy/strided_copy.h"
#include "kernels/vulkan/shaders.h"
#include "kernels/vulkan/vulkan_env.h"

namespace ral::kernels {
namespace {

using vulkan::Binding;
using vulkan::Shader;
using vulkan::toInt32;

constexpr int kMaxStridedRank = 6;

struct CopyPush {
  uint32_t n, rank;
  int32_t src_base, dst_base;
  int32_t sizes[kMaxStridedRank], src_strides[kMaxStridedRank], dst_strides[kMaxStridedRank];
};

struct FillPush {
  uint32_t value[2];
  uint32_t n, rank;
  int32_t dst_base, pad;
  int32_t sizes[kMaxStridedRank], dst_strides[kMaxStridedRank];
};

// Indexed by log2 of the element size.
Shader copyShader(int size_index) {
  namespace spirv = vulkan::spirv;
  using vulkan::Shader;
  const Shader shaders[] = {RAL_VULKAN_SHADER_REF(copy_x8), RAL_VULKAN_SHADER_REF(copy_x16),
                            RAL_VULKAN_SHADER_REF(copy_x32), RAL_VULKAN_SHADER_REF(copy_x64)};
  return shaders[size_index];
}

Shader fillShader(int size_index) {
  namespace spirv = vulkan::spirv;
  using vulkan::Shader;
  const Shader shaders[] = {RAL_VULKAN_SHADER_REF(fill_x8), RAL_VULKAN_SHADER_REF(fill_x16),
                            RAL_VULKAN_SHADER_REF(fill_x32), RAL_VULKAN_SHADER_REF(fill_x64)};
  return shaders[size_index];
}

// Sizes and element count in 32 bits.
Status shape(const char* kernel, int rank, const int64_t* sizes, int64_t count, int32_t* out,
             uint32_t* n) {
  if (rank > kMaxStridedRank)
    return invalidArgument(kernel, ": rank ", rank, " is not in 1..", kMaxStridedRank);
  for (int d = 0; d < rank; ++d) RAL_RETURN_IF_ERROR(toInt32(kernel, sizes[d], &out[d]));
  if (count > INT32_MAX) return unsupported(kernel, ": ", count, " elements exceed 2^31 on Vulkan");
  *n = static_cast<uint32_t>(count);
  return Status();
}

StatusOr<Binding> bindStrided(const vulkan::VulkanEnv& env, const char* kernel, const char* what,
                              const void* data, int rank, const int64_t* sizes,
                              const int64_t* strides, size_t elem_size) {
  const auto [lo, hi] = byteSpan(data, rank, sizes, strides, elem_size);
  return vulkan::bindRange(env, kernel, what, reinterpret_cast<uintptr_t>(data), lo, hi, elem_size);
}

}  // namespace

Status copyPrimitive(vulkan::Tag, const KernelEnv& kenv, const StridedCopy& w) {
  RAL_ASSIGN_OR_RETURN(vulkan::VulkanEnv env, vulkan::vulkanEnv(kenv));
  RAL_ASSIGN_OR_RETURN(Binding src, bindStrided(env, w.kernel, w.src_what, w.src, w.rank, w.sizes,
                                                w.src_strides, w.elem_size));
  RAL_ASSIGN_OR_RETURN(Binding dst, bindStrided(env, w.kernel, w.dst_what, w.dst, w.rank, w.sizes,
                                                w.dst_strides, w.elem_size));
  CopyPush p{};
  RAL_RETURN_IF_ERROR(shape(w.kernel, w.rank, w.sizes, w.count, p.sizes, &p.n));
  p.rank = static_cast<uint32_t>(w.rank);
  p.src_base = src.base;
  p.dst_base = dst.base;
  for (int d = 0; d < w.rank; ++d) {
    RAL_RETURN_IF_ERROR(toInt32(w.kernel, w.src_strides[d], &p.src_strides[d]));
    RAL_RETURN_IF_ERROR(toInt32(w.kernel, w.dst_strides[d], &p.dst_strides[d]));
  }
  RAL_ASSIGN_OR_RETURN(Executable * exe, vulkan::executable(env, copyShader(w.size_index)));
  const Binding bindings[2] = {src, dst};
  return vulkan::launch(env, exe, Dim3{vulkan::groupsFor(p.n), 1, 1}, bindings, 2, &p, sizeof(p));
}

Status fillPrimitive(vulkan::Tag, const KernelEnv& kenv, const StridedFill& w) {
  RAL_ASSIGN_OR_RETURN(vulkan::VulkanEnv env, vulkan::vulkanEnv(kenv));
  RAL_ASSIGN_OR_RETURN(Binding dst, bindStrided(env, w.kernel, w.dst_what, w.dst, w.rank, w.sizes,
                                                w.dst_strides, w.elem_size));
  FillPush p{};
  RAL_RETURN_IF_ERROR(shape(w.kernel, w.rank, w.sizes, w.count, p.sizes, &p.n));
  p.rank = static_cast<uint32_t>(w.rank);
  p.dst_base = dst.base;
  std::memcpy(p.value, &w.value, w.elem_size);
  for (int d = 0; d < w.rank; ++d)
    RAL_RETURN_IF_ERROR(toInt32(w.kernel, w.dst_strides[d], &p.dst_strides[d]));
  RAL_ASSIGN_OR_RETURN(Executable * exe, vulkan::executable(env, fillShader(w.size_index)));
  return vulkan::launch(env, exe, Dim3{vulkan::groupsFor(p.n), 1, 1}, &dst, 1, &p, sizeof(p));
}

Status readIndices(vulkan::Tag, const KernelEnv& kenv, const int64_t* src, int64_t stride, int n,
                   int64_t* out) {
  RAL_ASSIGN_OR_RETURN(vulkan::VulkanEnv env, vulkan::vulkanEnv(kenv));
  for (int d = 0; d < n; ++d) {
    const int64_t* p = src + d * stride;
    if (env.buffers->allocationOffset(p, sizeof(int64_t)).ok()) {
      RAL_RETURN_IF_ERROR(
          env.driver->copy(&out[d], p, sizeof(int64_t), CopyKind::kDeviceToHost, env.stream));
    } else {
      out[d] = *p;
    }
  }
  return Status();
}

}  // namespace ral::kernels
