// Index helpers the shape converters share (ops_shape.cc, ops_generate.cc, ops_slice.cc,
// ops_gather.cc, ops_resize.cc): arithmetic on sizes that may be known at import time
// (attributes) or only when the module runs (index values).
#ifndef RAL_COMPILER_PASSES_ONNX_SHAPE_HELPERS_H_
#define RAL_COMPILER_PASSES_ONNX_SHAPE_HELPERS_H_

#include <algorithm>

#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/node_context.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

inline RankedTensorType i64Vector(OpBuilder& b, int64_t n) {
  return RankedTensorType::get({n}, b.getI64Type());
}

// Index arithmetic on values that may be dynamic.
inline Value idx(OpBuilder& b, Location loc, OpFoldResult v) { return indexValue(b, loc, v); }
inline OpFoldResult fold(Value v) { return getAsOpFoldResult(v); }
inline OpFoldResult minIdx(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y) {
  auto cx = constantIndex(x), cy = constantIndex(y);
  if (cx && cy) return b.getIndexAttr(std::min(*cx, *cy));
  return fold(b.create<arith::MinSIOp>(loc, idx(b, loc, x), idx(b, loc, y)));
}
inline OpFoldResult maxIdx(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y) {
  auto cx = constantIndex(x), cy = constantIndex(y);
  if (cx && cy) return b.getIndexAttr(std::max(*cx, *cy));
  return fold(b.create<arith::MaxSIOp>(loc, idx(b, loc, x), idx(b, loc, y)));
}
// v < 0 ? v + size : v, for a size in [0, kMaxSize]: the sum never overflows where it is taken
// (the unchecked add below is only selected for a negative v).
inline OpFoldResult wrap(OpBuilder& b, Location loc, OpFoldResult v, OpFoldResult size) {
  if (auto c = constantIndex(v)) {
    if (*c >= 0) return v;
    return addIndex(b, loc, v, size);
  }
  Value neg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, idx(b, loc, v),
                                      b.create<arith::ConstantIndexOp>(loc, 0));
  Value wrapped = b.create<arith::AddIOp>(loc, idx(b, loc, v), idx(b, loc, size));
  return fold(b.create<arith::SelectOp>(loc, neg, wrapped, idx(b, loc, v)));
}

// The target shape of Reshape, Expand, ConstantOfShape, ... from input `i` (ops_shape.cc).
FailureOr<SmallVector<OpFoldResult>> shapeInput(NodeContext& n, size_t i);

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_ONNX_SHAPE_HELPERS_H_
