// The strided copy's primitives (kernels/copy/strided_copy.h) on the GPU library's devices (cuda,
// hsa): one grid-stride launch of ral_strided_copy_<bytes> / ral_strided_fill_<bytes>
// (kernels/gpu/device_kernels.py) on the execution's stream.
#include "kernels/copy/strided_copy.h"
#include "kernels/gpu/gpu_library.h"

namespace ral::kernels {
namespace {

Status tooManyDims(const KernelEnv& env, const char* kernel, int rank) {
  return unsupported(kernel, ": rank ", rank, " exceeds the ", gpu::kMaxRank, " dims of the ",
                     deviceKindName(env.driver->kind()), " strided kernels");
}

Status copyOnGpu(const KernelEnv& kenv, const StridedCopy& w) {
  RAL_RETURN_IF_ERROR(checkOperands(kenv, w));
  gpu::CopyArgs p{};
  int64_t unused[gpu::kMaxRank];
  if (!gpu::padView(w.rank, w.sizes, w.src_strides, p.sizes, p.src_strides) ||
      !gpu::padView(w.rank, w.sizes, w.dst_strides, unused, p.dst_strides))
    return tooManyDims(kenv, w.kernel, w.rank);
  RAL_ASSIGN_OR_RETURN(gpu::GpuEnv env, gpu::gpuEnv(kenv));
  p.src = w.src;
  p.dst = w.dst;
  p.count = w.count;
  return gpu::launchLinear(env, gpu::entryAfter(gpu::Entry::kCopy1, w.size_index), w.count, p);
}

Status fillOnGpu(const KernelEnv& kenv, const StridedFill& w) {
  RAL_RETURN_IF_ERROR(checkOperands(kenv, w));
  gpu::FillArgs p{};
  if (!gpu::padView(w.rank, w.sizes, w.dst_strides, p.sizes, p.dst_strides))
    return tooManyDims(kenv, w.kernel, w.rank);
  RAL_ASSIGN_OR_RETURN(gpu::GpuEnv env, gpu::gpuEnv(kenv));
  p.dst = w.dst;
  p.count = w.count;
  p.value = w.value;
  return gpu::launchLinear(env, gpu::entryAfter(gpu::Entry::kFill1, w.size_index), w.count, p);
}

}  // namespace

Status copyPrimitive(cuda::Tag, const KernelEnv& env, const StridedCopy& w) {
  return copyOnGpu(env, w);
}
Status copyPrimitive(hsa::Tag, const KernelEnv& env, const StridedCopy& w) {
  return copyOnGpu(env, w);
}
Status fillPrimitive(cuda::Tag, const KernelEnv& env, const StridedFill& w) {
  return fillOnGpu(env, w);
}
Status fillPrimitive(hsa::Tag, const KernelEnv& env, const StridedFill& w) {
  return fillOnGpu(env, w);
}

}  // namespace ral::kernels
