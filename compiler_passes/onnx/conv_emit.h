// The convolution's building blocks the ONNX converters share (conv_emit.cc): Conv,
// ConvTranspose, their quantized forms and linear layers by constant weights build on them.
// Each builds tensor-level IR at the node's insertion point; none of them keeps state.
#ifndef RAL_COMPILER_PASSES_ONNX_CONV_EMIT_H_
#define RAL_COMPILER_PASSES_ONNX_CONV_EMIT_H_

#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/onnx/conv_fusion.h"
#include "compiler_passes/onnx/linear_common.h"
#include "compiler_passes/onnx/node_context.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

// The convolution of `xp` (padded already) with w3 [G, Fg, Cg*K...] over the windows of
// `window_geometry`, plus `bias` [F] when given, as im2col and RAL's library GEMM.
Value im2colConvolution(OpBuilder& b, Location loc, Value xp, Value w3, Value bias,
                        const Window& window_geometry, ArrayRef<int64_t> kernel, int64_t group,
                        int64_t filters, int64_t cg);

// disc_ral.conv of x and the filter into `init` (ral_conv at run time; no padding or im2col
// here). A missing bias is an empty one.
Value libraryConvolution(OpBuilder& b, Location loc, Value x, Value filter, Value bias, Value init,
                         const Window& w, int64_t group, bool transposed);

// q's scales, zero points, unsigned flags and activation set on `conv`.
void setQuantization(ConvOp conv, const QuantizedConv& q);

// What a planned epilogue (conv_fusion.h) needs from the node's values.
struct EpilogueValues {
  Value residual;  // null without a residual Add
  float alpha = 0, beta = 0;
  DenseElementsAttr filter, bias;  // with a BatchNormalization folded in
};

// The epilogue's values for a convolution whose output `init` describes; failure when they do
// not allow it (the node is then converted without the epilogue).
FailureOr<EpilogueValues> epilogueValues(NodeContext& n, const ConvEpilogue& e, Value init);

// The epilogue's activation and residual set on `conv`, whose result (or a reshape of it) is
// `result`: it now defines the epilogue's output.
void applyEpilogue(NodeContext& n, ConvEpilogue& e, const EpilogueValues& ev, ConvOp conv,
                   Value result);

// a [..., K] as the rows of a 1x1 convolution (after checking its last dim is `k`): the
// result's dims [..., cols] and the number of rows (the product of a's leading dims).
struct LinearRows {
  SmallVector<OpFoldResult> out_dims;
  OpFoldResult rows;
};
FailureOr<LinearRows> linearRows(NodeContext& n, Value a, int64_t k, int64_t cols);

// a [..., K] convolved as [1, rows, K] with the constant `filter` [N, K, 1] and `bias` (null:
// none) into `init` [1, rows, N]: a 1x1 channels-last disc_ral.conv, returned to be configured
// further (epilogue, quantization).
ConvOp rowsConvolution(OpBuilder& b, Location loc, Value a, OpFoldResult rows, int64_t k,
                       DenseElementsAttr filter, Value bias, Value init);

// A bias of `columns` values for a [..., columns] result of rank `rank`, as [columns], or null.
DenseElementsAttr linearBias(DenseElementsAttr data, int64_t columns, int64_t rank);

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_ONNX_CONV_EMIT_H_
