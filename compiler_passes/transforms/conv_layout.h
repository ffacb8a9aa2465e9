// Channels-last activations between convolutions, decided by the compiler for the whole graph.
//
// oneDNN's fast convolutions (brgconv, and the depthwise brdgmm) read and write [N, D..., C];
// in ONNX's [N, C, D...] it falls back to im2col + GEMM, several times slower. So every
// disc_ral.conv is turned channels-last, with a linalg.transpose on each side, and the
// transposes are then pushed through the graph until they meet and cancel:
//   - transpose(transpose(x)) that compose to the identity is x;
//   - a linalg.generic reading a transpose reads its source through a permuted indexing map;
//   - a linalg.generic whose every user is the same transpose writes the transposed result.
// What is left is a transpose where a chain of convolutions, pools and elementwise ops meets
// something else (a flatten, a MatMul, the entry's result): one copy there, none between layers.
// Runs on tensors, before elementwise fusion and bufferization (disc-ral-bufferize).
#ifndef RAL_COMPILER_PASSES_TRANSFORMS_CONV_LAYOUT_H_
#define RAL_COMPILER_PASSES_TRANSFORMS_CONV_LAYOUT_H_

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace disc_ral {

// Rewrites every disc_ral.conv of `module` channels-last and cancels the transposes it can.
LogicalResult convsToChannelsLast(ModuleOp module);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_TRANSFORMS_CONV_LAYOUT_H_
