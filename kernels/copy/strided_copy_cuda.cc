// The CUDA primitive of the strided copy (kernels/copy/strided_copy.h): one grid-stride launch of
// the embedded ral_strided_copy_<bytes> / ral_strided_fill_<bytes> kernel on the execution's
// stream.
#include <cstring>

#include "kernels/copy/strided_copy.h"
#include "kernels/cuda/cuda_env.h"

namespace ral::kernels {
namespace {

using cuda::CudaEnv;
using cuda::Entry;

cuda::StridedView view(int rank, const int64_t* sizes, const int64_t* strides) {
  cuda::StridedView v{};
  v.rank = rank;
  for (int d = 0; d < rank; ++d) {
    v.sizes[d] = sizes[d];
    v.strides[d] = strides[d];
  }
  return v;
}

// Entries of one element size follow each other: 1, 2, 4, 8 bytes.
Entry entryFor(Entry first, int size_index) {
  return static_cast<Entry>(static_cast<uint32_t>(first) + static_cast<uint32_t>(size_index));
}

}  // namespace

Status copyPrimitive(cuda::Tag, const KernelEnv& kenv, const StridedCopy& w) {
  RAL_RETURN_IF_ERROR(checkOperands(kenv, w));
  RAL_ASSIGN_OR_RETURN(CudaEnv env, cuda::cudaEnv(kenv));
  cuda::CopyParams p{};
  p.src = view(w.rank, w.sizes, w.src_strides);
  p.dst = view(w.rank, w.sizes, w.dst_strides);
  p.count = w.count;
  p.src_ptr = w.src;
  p.dst_ptr = w.dst;
  return cuda::launchLinear(env, entryFor(Entry::kCopy1, w.size_index), w.count, p);
}

Status fillPrimitive(cuda::Tag, const KernelEnv& kenv, const StridedFill& w) {
  RAL_RETURN_IF_ERROR(checkOperands(kenv, w));
  RAL_ASSIGN_OR_RETURN(CudaEnv env, cuda::cudaEnv(kenv));
  cuda::FillParams p{};
  p.dst = view(w.rank, w.sizes, w.dst_strides);
  p.count = w.count;
  p.dst_ptr = w.dst;
  p.value = w.value;
  return cuda::launchLinear(env, entryFor(Entry::kFill1, w.size_index), w.count, p);
}

Status readIndices(cuda::Tag, const KernelEnv& kenv, const int64_t* src, int64_t stride, int n,
                   int64_t* out) {
  RAL_ASSIGN_OR_RETURN(CudaQueueService * queue,
                       requireService<CudaQueueService>(kenv.driver, "a CUDA queue"));
  RAL_ASSIGN_OR_RETURN(const bool is_device, queue->isDevicePointer(src));
  if (!is_device) {
    for (int d = 0; d < n; ++d) out[d] = src[d * stride];
    return Status();
  }
  for (int d = 0; d < n; ++d)
    RAL_RETURN_IF_ERROR(kenv.driver->copy(&out[d], src + d * stride, sizeof(int64_t),
                                          CopyKind::kDeviceToHost, kenv.stream));
  return kenv.driver->synchronize(kenv.stream);
}

}  // namespace ral::kernels
