// SPIR-V kernels for device "vulkan" (disc-ral-outline-kernels{device=vulkan}).
//
// An outermost parallel loop becomes a `spirv.module @ral_kernel_N` (marked disc_ral.kernel)
// with one GLCompute entry point of kSpirvWorkgroupSize invocations. Invocation g of the grid
// runs iterations g, g + grid * size, ... of the loop (grid-stride, so a grid capped at the
// portable 65535 workgroups covers any trip count); inner loops run sequentially in it
// (the outline pass first gives the grid every parallel dimension it can: grid_parallelism.h).
//
// Interface (what the Vulkan driver derives from the module, drivers/vulkan/vulkan_executable.h):
//   - binding k of set 0: captured memref k, as a runtime array of its element type from the
//     memref's aligned pointer; the launch passes that pointer;
//   - one push-constant block: the trip count, the loop's lower bound and step, every captured
//     scalar, and the offset, strides and sizes of the memrefs that are not compile-time
//     constants. Index values are 64-bit; integers narrower than 32 bits travel as i32, f16 as
//     f32.
// Loads and stores address each buffer as offset + sum(index_d * stride_d), so any strided view
// works. Host code launches the kernel with disc_ral.launch: args are the pointers, then the
// push-constant members in order.
#ifndef RAL_COMPILER_PASSES_CONVERSION_SPIRV_SPIRV_KERNELS_H_
#define RAL_COMPILER_PASSES_CONVERSION_SPIRV_SPIRV_KERNELS_H_

#include <cstdint>

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Support/LogicalResult.h"

namespace mlir {
namespace disc_ral {

inline constexpr int64_t kSpirvWorkgroupSize = 64;
// Vulkan guarantees at least this many workgroups per grid dimension.
inline constexpr int64_t kSpirvMaxGroups = 65535;
// Push-constant bytes every Vulkan device accepts.
inline constexpr int64_t kSpirvMaxPushConstantBytes = 128;

// Replaces `loop` (an outermost one-dimensional scf.parallel that only loads, stores and
// computes) by a launch of a new SPIR-V kernel named `name`. Fails, with an error on the loop,
// when its body cannot run on the device (the error says what).
LogicalResult outlineSpirvKernel(scf::ParallelOp loop, Value ctx, StringRef name,
                                 SymbolTable& symbols);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_CONVERSION_SPIRV_SPIRV_KERNELS_H_
