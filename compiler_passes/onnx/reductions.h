// What the reduction-based converters share (ops_reduce.cc defines them; ops_normalize.cc uses
// them too): axes, element counts and elementwise maps over tensors.
#ifndef RAL_COMPILER_PASSES_ONNX_REDUCTIONS_H_
#define RAL_COMPILER_PASSES_ONNX_REDUCTIONS_H_

#include <functional>

#include "compiler_passes/onnx/node_context.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

// Normalized, sorted, distinct axes; every dim when `axes` is empty.
FailureOr<SmallVector<int64_t>> normalizeAxes(NodeContext& n, ArrayRef<int64_t> axes, int64_t rank);
// The number of elements over `axes`, as a scalar of float type `t`.
Value countOf(OpBuilder& b, Location loc, Value x, ArrayRef<int64_t> axes, Type t);
// x / scalar, elementwise.
Value divideBy(OpBuilder& b, Location loc, Value x, Value scalar);
// f applied to every element of x.
Value mapTensor(OpBuilder& b, Location loc, Value x,
                const std::function<Value(OpBuilder&, Location, Value)>& f);
// +-infinity of a float type; the largest or smallest value of an integer type.
TypedAttr infinity(OpBuilder& b, Type t, bool negative);

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_ONNX_REDUCTIONS_H_
