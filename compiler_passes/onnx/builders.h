// Tensor-level building blocks the ONNX converters share: dims, index arithmetic that folds,
// numpy broadcasting, elementwise linalg.generic, reductions, reshapes and casts. Internal to the
// importer; every function builds at the builder's insertion point.
#ifndef RAL_COMPILER_PASSES_ONNX_BUILDERS_H_
#define RAL_COMPILER_PASSES_ONNX_BUILDERS_H_

#include <functional>
#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

// Dims of a ranked tensor: static sizes as attributes, dynamic ones as tensor.dim values.
SmallVector<OpFoldResult> dimsOf(OpBuilder& b, Location loc, Value tensor);
OpFoldResult dimOf(OpBuilder& b, Location loc, Value tensor, int64_t d);
// Static sizes, ShapedType::kDynamic where a dim is a value.
SmallVector<int64_t> staticSizes(ArrayRef<OpFoldResult> dims);
std::optional<int64_t> constantIndex(OpFoldResult v);
// Whether two dims are the same at import time: equal constants, one value, or tensor.dim of one
// tensor's same dim.
bool sameDim(OpFoldResult x, OpFoldResult y);

// Size arithmetic: sizes, counts, offsets and strides computed from a model's attributes, its
// constants or tensors read at run time are exact or an error, never a wrapped value. Constants
// fold, checked: an overflow is an error emitted at `loc` (which names the node; the importer
// fails it) and a placeholder 0 is returned. Values known only at run time get the wrapped result
// and a check that fails the execution if it wrapped; a division also checks its divisor (0, or
// -1 with INT64_MIN). Data arithmetic (Add on integer tensors) wraps like numpy's instead.
OpFoldResult addIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y);
OpFoldResult subIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y);
OpFoldResult mulIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y);
OpFoldResult floorDivIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y);
OpFoldResult ceilDivIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y);
OpFoldResult product(OpBuilder& b, Location loc, ArrayRef<OpFoldResult> xs);
Value indexValue(OpBuilder& b, Location loc, OpFoldResult v);

// The integer `v` (an index value) as integer type `t` holds it: wrapped to t's width and
// sign-extended back, as numpy's integer casts and arithmetic do. Constants fold. Not size
// arithmetic: an element of an integer tensor that shape arithmetic follows (Tensor::elems).
OpFoldResult wrapToType(OpBuilder& b, Location loc, OpFoldResult v, Type t);

// Whether `v` is tensor.dim of a tensor: a size that exists, needing no check.
bool isDimOfTensor(OpFoldResult v);
// `v` as a size in [0, kMaxSize] (2^48, the runtime's limit): a constant outside is an error
// emitted at `loc` ("<what> is -3 (negative)"); a run-time value is checked when the module runs.
LogicalResult checkSize(OpBuilder& b, Location loc, OpFoldResult v, const llvm::Twine& what);
// checkSize of every dim ("<what> dim 2"), and with `count` of their product: a view (reshape)
// allocates nothing whose size would be checked later.
LogicalResult checkDims(OpBuilder& b, Location loc, ArrayRef<OpFoldResult> dims,
                        const llvm::Twine& what, bool count);

// Fails the execution (disc_ral.signal_error, through cf.assert) with `message` when `ok` is
// false at run time; nothing when it folds to true. The message names the node `loc` carries.
void runtimeCheck(OpBuilder& b, Location loc, Value ok, llvm::StringRef message);
// "node 'x' (Reshape): <message>" for a node's location (a leading "Reshape: " in `message` is
// dropped); `message` for any other.
std::string nodeMessage(Location loc, llvm::StringRef message);

// A tensor.empty of these dims, each checked to be a size (checkDims).
Value emptyTensor(OpBuilder& b, Location loc, ArrayRef<OpFoldResult> dims, Type element);
// A scalar constant of `type` (float or integer; i1 is v != 0).
Value scalarConstant(OpBuilder& b, Location loc, Type type, double v);
TypedAttr scalarAttr(OpBuilder& b, Type type, double v);
// An integer (or index) constant of `type` holding `v` wrapped to its width: exact for every
// int64, where scalarConstant's double is not beyond 2^53.
Value intConstant(OpBuilder& b, Location loc, Type type, int64_t v);
// A tensor of `dims` filled with `scalar`.
Value filled(OpBuilder& b, Location loc, ArrayRef<OpFoldResult> dims, Value scalar);

// The numpy broadcast of the inputs' shapes; a dynamic dim against a dynamic dim is taken to be
// equal (checked at run time by elementwise()).
SmallVector<OpFoldResult> broadcastDims(OpBuilder& b, Location loc, ValueRange inputs);

// Why static shapes do not broadcast ("3 vs 4 in dim 1"), or nullopt when they may.
std::optional<std::string> broadcastError(ValueRange inputs);

// out[i...] = body(inputs[broadcast(i)]...) with numpy broadcasting over `inputs`, as one
// linalg.generic whose result has element type `result`. `dims`, when given, is the result's
// shape (inputs broadcast to it); otherwise the broadcast of the inputs.
using ScalarBody = std::function<Value(OpBuilder&, Location, ValueRange)>;
Value elementwise(OpBuilder& b, Location loc, ValueRange inputs, Type result,
                  const ScalarBody& body, std::optional<ArrayRef<OpFoldResult>> dims = {});

// `init` (a tensor.empty) filled with body(the inputs' elements at `input_maps`) at every
// position (linalg.index gives it): one all-parallel linalg.generic, the body's value yielded.
Value generate(OpBuilder& b, Location loc, Value init, ValueRange inputs,
               ArrayRef<AffineMap> input_maps, const ScalarBody& body);

// Reduces `input` over `axes` (sorted, distinct) with `combine(acc, x)` from `init`; keepdims
// keeps them as size-1 dims.
Value reduce(OpBuilder& b, Location loc, Value input, ArrayRef<int64_t> axes, TypedAttr init,
             const std::function<Value(OpBuilder&, Location, Value, Value)>& combine,
             bool keepdims);

// A reshape to `dims` (same number of elements; the caller checks that); the identity when the
// shape is unchanged. The dims and their product are checked to be sizes.
Value reshape(OpBuilder& b, Location loc, Value input, ArrayRef<OpFoldResult> dims);
// linalg.transpose by `perm`.
Value transpose(OpBuilder& b, Location loc, Value input, ArrayRef<int64_t> perm);
// Converts a scalar between element types with ONNX Cast semantics (float -> int truncates,
// x -> bool is x != 0, bool -> x is 0 or 1).
Value convertScalar(OpBuilder& b, Location loc, Value v, Type to);
// The same with the integers' signs given: an unsigned source widens with zeros and converts to
// float as unsigned; an unsigned target takes the low bits of the truncated value (through i64,
// as numpy's astype on x86 does).
Value convertScalar(OpBuilder& b, Location loc, Value v, Type to, bool from_unsigned,
                    bool to_unsigned);
// The tensor with its elements converted; the tensor itself when the type is already `to`.
Value convertTensor(OpBuilder& b, Location loc, Value v, Type to);
Value convertTensor(OpBuilder& b, Location loc, Value v, Type to, bool from_unsigned,
                    bool to_unsigned);
// Broadcasts `input` to `dims` (numpy rules) as a new tensor.
Value broadcastTo(OpBuilder& b, Location loc, Value input, ArrayRef<OpFoldResult> dims);

inline bool isFloat(Type t) { return isa<FloatType>(t); }

// ONNX's activation `op` of a float scalar: the unary operators Relu, Sigmoid, Tanh, Softsign,
// Softplus, LeakyRelu, ThresholdedRelu, Elu and HardSigmoid, and the recurrent layers' Affine
// (alpha x + beta) and ScaledTanh (alpha tanh(beta x)), with their `alpha` and `beta`. Null for
// another name.
Value floatActivation(OpBuilder& b, Location loc, llvm::StringRef op, Value x, double alpha,
                      double beta);

// The weights of cubic convolution (Keys' kernel with coefficient `a`, -0.75 in PyTorch and
// ONNX's default) for the four taps floor(x) - 1 .. floor(x) + 2 of a coordinate x whose
// fraction is `r` (f64): the kernel at distances 1 + r, r, 1 - r and 2 - r.
SmallVector<Value, 4> cubicWeights(OpBuilder& b, Location loc, Value r, double a);
// Exactly one element, known at import (a dynamic shape may hold any number).
inline bool hasOneElement(RankedTensorType t) {
  return t.hasStaticShape() && t.getNumElements() == 1;
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_ONNX_BUILDERS_H_

namespace mlir {
namespace disc_ral {
namespace onnx {

// The constant with its dims permuted by `perm` (a transpose folded at import time); null for a
// bool or splat constant, which the caller transposes at run time.
DenseElementsAttr transposeConstant(DenseElementsAttr data, ArrayRef<int64_t> perm);
// A float constant built from doubles, rounded to `type`'s element type.
DenseElementsAttr floatConstant(RankedTensorType type, ArrayRef<double> values);
// A float constant's elements as doubles.
SmallVector<double> floatValues(DenseElementsAttr data);
// tensor.pad of `input` with `low`/`high` per dim, filled with `value`.
Value pad(OpBuilder& b, Location loc, Value input, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
          Value value);

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
