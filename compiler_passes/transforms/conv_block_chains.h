// Depthwise-separable chains of disc_ral.conv ops on buffers that one ral_conv_block call can run
// (kernels/conv/conv_block.h): an optional pointwise expansion, a depthwise convolution and an
// optional pointwise projection, at least two of them, where each intermediate buffer is written
// by one stage, read by the next and otherwise only freed. disc-ral-lower-to-library-calls turns
// each chain into one dispatch, on the CPU.
#ifndef RAL_COMPILER_PASSES_TRANSFORMS_CONV_BLOCK_CHAINS_H_
#define RAL_COMPILER_PASSES_TRANSFORMS_CONV_BLOCK_CHAINS_H_

#include "compiler_passes/dialect/dialect.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace disc_ral {

struct ConvBlockChain {
  ConvOp expand, depthwise, project;  // expand or project may be null
  // The intermediates' allocations and deallocations, dead once the chain is one call.
  SmallVector<Operation*> intermediates;
  ConvOp first() const { return expand ? expand : depthwise; }
  ConvOp last() const { return project ? project : depthwise; }
};

// The chains in `module`, none sharing an op. The fused call may run where the chain's last op
// is: nothing between its first and last op writes or frees a buffer the chain reads.
SmallVector<ConvBlockChain> findConvBlockChains(ModuleOp module);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_TRANSFORMS_CONV_BLOCK_CHAINS_H_
