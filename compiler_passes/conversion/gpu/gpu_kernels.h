// GPU kernels for devices "cuda" and "hsa" (disc-ral-outline-kernels{device=cuda|hsa}).
//
// An outermost parallel loop becomes a `gpu.module @ral_kernel_N` (marked disc_ral.kernel) whose
// targets are one #nvvm.target or #rocdl.target per architecture of --gpu-arch, holding one
// kernel `gpu.func @ral_kernel_N` of kGpuBlockSize threads per block. Thread t of the grid runs
// iterations t, t + grid * block, ... of the loop (grid-stride, so a grid capped at
// kGpuMaxGroups blocks covers any trip count); inner loops run sequentially in it
// (the outline pass first gives the grid every parallel dimension it can: grid_parallelism.h).
//
// Kernel parameters (what the launch passes, in order; each by value):
//   - per captured memref: its aligned pointer (a global-memory `!llvm.ptr<1>`, 8 bytes);
//   - the trip count, the grid's thread count (the grid-stride), every captured scalar, and the
//     offset, strides and sizes of the memrefs that are not compile-time constants. Index values
//     are i64; integers narrower than 32 bits travel as i32, f16 and bf16 as f32.
// Loads and stores address each buffer as offset + sum(index_d * stride_d) elements from its
// pointer (LLVM getelementptr), so any strided view works. Host code launches the kernel with
// disc_ral.launch: args are the pointers, then the scalars, as above.
#ifndef RAL_COMPILER_PASSES_CONVERSION_GPU_GPU_KERNELS_H_
#define RAL_COMPILER_PASSES_CONVERSION_GPU_GPU_KERNELS_H_

#include <cstdint>

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Support/LogicalResult.h"

namespace mlir {
namespace disc_ral {

inline constexpr int64_t kGpuBlockSize = 256;
// Blocks per grid the launch asks for at most (every CUDA and HSA device takes this many).
inline constexpr int64_t kGpuMaxGroups = 65535;

// Replaces `loop` (an outermost one-dimensional scf.parallel that only loads, stores and
// computes) by a launch of a new kernel `name` for `device` ("cuda" or "hsa") with the GPU
// target attributes `targets`. Fails, with an error on the loop, when its body cannot run on
// the device (the error says what).
LogicalResult outlineGpuKernel(scf::ParallelOp loop, Value ctx, StringRef name,
                               SymbolTable& symbols, StringRef device, ArrayAttr targets);

// The target attributes of `archs` (comma-separated, checked by parseGpuArchs) for `device`:
// #nvvm.target<chip = arch, features = ptxFeature(arch)> or #rocdl.target<chip = arch>. Null,
// with an error at `loc`, when the list is invalid.
ArrayAttr gpuTargets(Location loc, StringRef device, StringRef archs);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_CONVERSION_GPU_GPU_KERNELS_H_
