// What the linear-layer, convolution and pool converters share (ops_linear.cc, ops_conv.cc,
// ops_pool.cc): the window geometry of convolutions and pools, and the library forms of a linear
// layer by constant weights.
#ifndef RAL_COMPILER_PASSES_ONNX_LINEAR_COMMON_H_
#define RAL_COMPILER_PASSES_ONNX_LINEAR_COMMON_H_

#include "compiler_passes/onnx/conv_fusion.h"
#include "compiler_passes/onnx/node_context.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

// The geometry of a windowed op over the spatial dims (2..rank-1).
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pad_begin, pad_end;
  SmallVector<OpFoldResult> out;  // output spatial sizes
};

// The window of `kernel` over x's spatial dims from the node's strides, dilations, pads and
// auto_pad, every value checked (ops_conv.cc).
FailureOr<Window> windowOf(NodeContext& n, Value x, ArrayRef<int64_t> kernel, bool ceil_mode);

// Input map expression of spatial dim i: out_i * stride + k_i * dilation (ops_conv.cc).
AffineExpr windowExpr(OpBuilder& b, const Window& w, int64_t i, unsigned out_dim, unsigned k_dim);

// A tensor of `dims` filled with zeros of `element` (ops_linear.cc).
Value zeroFilled(OpBuilder& b, Location loc, ArrayRef<OpFoldResult> dims, Type element);
// a [M, K] · c [K, N] as linalg.matmul on a zero-filled result (ops_linear.cc).
Value matmul2d(OpBuilder& b, Location loc, Value a, Value c);

// A MatMul or Gemm of `a` by the constant `w` ([K, N], or [N, K] when `nk`) as a library 1x1
// convolution with the node's planned epilogue; false when the node does not take that form
// (ops_conv.cc).
FailureOr<bool> libraryLinear(NodeContext& n, Value a, DenseElementsAttr w, bool nk,
                              DenseElementsAttr bias);
// ONNX's QDQ form around a MatMul or Gemm as one quantized 1x1 convolution; false when the node
// is not in that form (ops_conv.cc).
FailureOr<bool> quantizedLinear(NodeContext& n, ConvEpilogue& e);

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_ONNX_LINEAR_COMMON_H_
