// Element copies and fills over strided views, for every device: ral_memcpy, ral_memset and
// ral_transpose use them, as do kernels that need a dense temporary (CUDA GEMM).
//
// The walk is written once here: stridedCopy/stridedFill check the element size and rank, count
// the elements, skip empty views and describe the work as a StridedCopy/StridedFill. Each device
// supplies only the primitive that moves the elements (copyPrimitive/fillPrimitive, defined in
// strided_copy_<device>.cc): a parallel loop on the CPU, a kernel launch on CUDA and HSA, a shader
// dispatch on Vulkan. A primitive may refuse what its device cannot address (e.g. 32-bit indices
// on Vulkan) with an error naming the kernel.
//
// Plain functions: safe to call from any thread; pointers must stay valid until the work is done
// on the environment's stream.
#ifndef RAL_KERNELS_COPY_STRIDED_COPY_H_
#define RAL_KERNELS_COPY_STRIDED_COPY_H_

#include <cstddef>
#include <cstdint>

#include "kernels/common/devices.h"
#include "kernels/common/kernel_util.h"
#include "ral/memref.h"
#include "ral/status.h"

namespace ral::kernels {

// dst[i] = src[i] for every row-major index i of `sizes`.
struct StridedCopy {
  const char* kernel;    // for error messages
  const char* src_what;  // "source", "input", ...
  const char* dst_what;  // "destination", "output", ...
  size_t elem_size;      // 1, 2, 4 or 8 bytes
  int size_index;        // log2(elem_size): 0..3
  int rank;              // 1..kMaxMemRefRank
  const int64_t* sizes;  // rank entries
  int64_t count;         // elements, > 0
  const void* src;
  const int64_t* src_strides;  // in elements
  void* dst;
  const int64_t* dst_strides;
};

// dst[i] = value for every index.
struct StridedFill {
  const char* kernel;
  const char* dst_what;
  size_t elem_size;
  int size_index;
  int rank;
  const int64_t* sizes;
  int64_t count;
  void* dst;
  const int64_t* dst_strides;
  uint64_t value;  // the element's bytes in its low elem_size bytes
};

// For GPU primitives: both ends (a copy) or the destination (a fill) are memory env's device can
// access (checkDeviceAccess).
inline Status checkOperands(const KernelEnv& env, const StridedCopy& w) {
  RAL_RETURN_IF_ERROR(checkDeviceAccess(
      *env.driver, byteSpan(w.src, w.rank, w.sizes, w.src_strides, w.elem_size), w.kernel,
      w.src_what));
  return checkDeviceAccess(*env.driver,
                           byteSpan(w.dst, w.rank, w.sizes, w.dst_strides, w.elem_size), w.kernel,
                           w.dst_what);
}
inline Status checkOperands(const KernelEnv& env, const StridedFill& w) {
  return checkDeviceAccess(*env.driver,
                           byteSpan(w.dst, w.rank, w.sizes, w.dst_strides, w.elem_size), w.kernel,
                           w.dst_what);
}

// The device primitives; `work` is checked and non-empty.
Status copyPrimitive(cpu::Tag, const KernelEnv& env, const StridedCopy& work);
Status copyPrimitive(cuda::Tag, const KernelEnv& env, const StridedCopy& work);
Status copyPrimitive(hsa::Tag, const KernelEnv& env, const StridedCopy& work);
Status copyPrimitive(vulkan::Tag, const KernelEnv& env, const StridedCopy& work);
Status fillPrimitive(cpu::Tag, const KernelEnv& env, const StridedFill& work);
Status fillPrimitive(cuda::Tag, const KernelEnv& env, const StridedFill& work);
Status fillPrimitive(hsa::Tag, const KernelEnv& env, const StridedFill& work);
Status fillPrimitive(vulkan::Tag, const KernelEnv& env, const StridedFill& work);
// Reads n int64 values `stride` elements apart (a permutation) into host memory, wherever they
// live (host memory or the device's).
Status readIndices(cpu::Tag, const KernelEnv& env, const int64_t* src, int64_t stride, int n,
                   int64_t* out);
Status readIndices(cuda::Tag, const KernelEnv& env, const int64_t* src, int64_t stride, int n,
                   int64_t* out);
Status readIndices(hsa::Tag, const KernelEnv& env, const int64_t* src, int64_t stride, int n,
                   int64_t* out);
Status readIndices(vulkan::Tag, const KernelEnv& env, const int64_t* src, int64_t stride, int n,
                   int64_t* out);

namespace internal {
// log2 of a 1-, 2-, 4- or 8-byte element; InvalidArgument otherwise. Checks rank and counts
// the elements into *count.
Status checkStrided(const char* kernel, size_t elem_size, int rank, const int64_t* sizes,
                    int* size_index, int64_t* count);
}  // namespace internal

template <class Dev>
Status stridedCopy(Dev dev, const KernelEnv& env, const char* kernel, size_t elem_size, int rank,
                   const int64_t* sizes, const void* src, const int64_t* src_strides, void* dst,
                   const int64_t* dst_strides, const char* src_what = "source",
                   const char* dst_what = "destination") {
  StridedCopy work{kernel, src_what, dst_what, elem_size,   0,   rank,
                   sizes,  0,        src,      src_strides, dst, dst_strides};
  RAL_RETURN_IF_ERROR(
      internal::checkStrided(kernel, elem_size, rank, sizes, &work.size_index, &work.count));
  if (work.count == 0) return Status();
  return copyPrimitive(dev, env, work);
}

template <class Dev>
Status stridedFill(Dev dev, const KernelEnv& env, const char* kernel, size_t elem_size, int rank,
                   const int64_t* sizes, void* dst, const int64_t* dst_strides, uint64_t value,
                   const char* dst_what = "destination") {
  StridedFill work{kernel, dst_what, elem_size, 0, rank, sizes, 0, dst, dst_strides, value};
  RAL_RETURN_IF_ERROR(
      internal::checkStrided(kernel, elem_size, rank, sizes, &work.size_index, &work.count));
  if (work.count == 0) return Status();
  return fillPrimitive(dev, env, work);
}

}  // namespace ral::kernels

#endif  // RAL_KERNELS_COPY_STRIDED_COPY_H_
