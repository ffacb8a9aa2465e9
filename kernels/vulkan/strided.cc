#include "kernels/vulkan/strided.h"

#include <cstring>

#include "kernels/vulkan/shaders.h"

namespace ral::kernels::vulkan {
namespace {

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

StatusOr<Shader> copyShader(size_t elem_size) {
  switch (elem_size) {
    case 1:
      return RAL_VULKAN_SHADER_REF(copy_x8);
    case 2:
      return RAL_VULKAN_SHADER_REF(copy_x16);
    case 4:
      return RAL_VULKAN_SHADER_REF(copy_x32);
    case 8:
      return RAL_VULKAN_SHADER_REF(copy_x64);
  }
  return invalidArgument("no strided copy for ", elem_size, "-byte elements");
}

StatusOr<Shader> fillShader(size_t elem_size) {
  switch (elem_size) {
    case 1:
      return RAL_VULKAN_SHADER_REF(fill_x8);
    case 2:
      return RAL_VULKAN_SHADER_REF(fill_x16);
    case 4:
      return RAL_VULKAN_SHADER_REF(fill_x32);
    case 8:
      return RAL_VULKAN_SHADER_REF(fill_x64);
  }
  return invalidArgument("no strided fill for ", elem_size, "-byte elements");
}

// Sizes and element count; InvalidArgument when they do not fit 32 bits.
Status shape(const char* kernel, int rank, const int64_t* sizes, int32_t* out, uint32_t* n) {
  if (rank < 1 || rank > kMaxStridedRank)
    return invalidArgument(kernel, ": rank ", rank, " is not in 1..", kMaxStridedRank);
  uint64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    RAL_RETURN_IF_ERROR(toInt32(kernel, sizes[d], &out[d]));
    count *= static_cast<uint64_t>(sizes[d]);
  }
  if (count > INT32_MAX) return unsupported(kernel, ": ", count, " elements exceed 2^31 on Vulkan");
  *n = static_cast<uint32_t>(count);
  return Status();
}

}  // namespace

Status stridedCopy(VulkanDriver* driver, Stream* stream, const char* kernel, size_t elem_size,
                   int rank, const int64_t* sizes, const Binding& src, const int64_t* src_strides,
                   const Binding& dst, const int64_t* dst_strides) {
  CopyPush p{};
  RAL_RETURN_IF_ERROR(shape(kernel, rank, sizes, p.sizes, &p.n));
  if (p.n == 0) return Status();
  p.rank = static_cast<uint32_t>(rank);
  p.src_base = src.base;
  p.dst_base = dst.base;
  for (int d = 0; d < rank; ++d) {
    RAL_RETURN_IF_ERROR(toInt32(kernel, src_strides[d], &p.src_strides[d]));
    RAL_RETURN_IF_ERROR(toInt32(kernel, dst_strides[d], &p.dst_strides[d]));
  }
  RAL_ASSIGN_OR_RETURN(Shader shader, copyShader(elem_size));
  RAL_ASSIGN_OR_RETURN(Executable * exe, executable(driver, shader));
  const Binding bindings[2] = {src, dst};
  return launch(driver, exe, Dim3{groupsFor(p.n), 1, 1}, bindings, 2, &p, sizeof(p), stream);
}

Status stridedFill(VulkanDriver* driver, Stream* stream, const char* kernel, size_t elem_size,
                   int rank, const int64_t* sizes, const Binding& dst, const int64_t* dst_strides,
                   const void* value) {
  FillPush p{};
  RAL_RETURN_IF_ERROR(shape(kernel, rank, sizes, p.sizes, &p.n));
  if (p.n == 0) return Status();
  p.rank = static_cast<uint32_t>(rank);
  p.dst_base = dst.base;
  std::memcpy(p.value, value, elem_size);
  for (int d = 0; d < rank; ++d)
    RAL_RETURN_IF_ERROR(toInt32(kernel, dst_strides[d], &p.dst_strides[d]));
  RAL_ASSIGN_OR_RETURN(Shader shader, fillShader(elem_size));
  RAL_ASSIGN_OR_RETURN(Executable * exe, executable(driver, shader));
  return launch(driver, exe, Dim3{groupsFor(p.n), 1, 1}, &dst, 1, &p, sizeof(p), stream);
}

}  // namespace ral::kernels::vulkan
