// What an op converter (onnx/ops_*.cc) sees of the importer: one node's inputs, attributes and
// outputs, a builder positioned in the entry function, and the two ways to fail. Internal to the
// importer.
#ifndef RAL_COMPILER_PASSES_ONNX_NODE_CONTEXT_H_
#define RAL_COMPILER_PASSES_ONNX_NODE_CONTEXT_H_

#include <optional>
#include <string>
#include <vector>

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "onnx/onnx_pb.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

// What NodeContext::error and ::unsupported return: a failure as LogicalResult or FailureOr<T>,
// so a converter can `return n.error(...)` from either kind of function.
struct ImportFailure {
  operator LogicalResult() const { return failure(); }
  template <typename T>
  operator FailureOr<T>() const {
    return failure();
  }
};

// A value of the ONNX graph during import. Constants stay data until an op needs a tensor; small
// integer tensors of rank 0 or 1 also carry their elements as index values (static or computed
// from dims), so shape arithmetic (Shape -> Gather -> Concat -> Reshape) gives Reshape and Expand
// their target shapes at import time, dynamic dims included. An element is always what the
// element type holds (an int8 element lies in [-128, 127]): whatever computes one wraps it.
//
// Unsigned integers (ONNX's uint8..uint64) are signless MLIR integers with `is_unsigned` set:
// MLIR's arith ops are signless, so the sign lives with the value. Only the converters that
// read it (kUnsignedOps in importer.cc) take such inputs; they never carry `elems`.
struct Tensor {
  RankedTensorType type;
  Value value;                                           // null until materialized
  DenseElementsAttr data;                                // the elements, when constant
  std::optional<llvm::SmallVector<OpFoldResult>> elems;  // integer elements as index values
  bool is_unsigned = false;                              // an unsigned integer tensor
};

class Importer;
struct ConvEpilogue;

class NodeContext {
 public:
  NodeContext(Importer& importer, const ::onnx::NodeProto& node, OpBuilder& builder, int64_t opset);

  const ::onnx::NodeProto& node() const { return node_; }
  OpBuilder& b() { return b_; }
  Location loc() const { return loc_; }
  int64_t opset() const { return opset_; }

  // Inputs. An optional input left out ("" or past the end) is absent.
  size_t numInputs() const { return node_.input_size(); }
  bool hasInput(size_t i) const;
  Tensor& input(size_t i);
  RankedTensorType type(size_t i) { return input(i).type; }
  int64_t rank(size_t i) { return input(i).type.getRank(); }
  Type elementType(size_t i) { return input(i).type.getElementType(); }
  // Whether input i holds unsigned integers (Tensor::is_unsigned).
  bool isUnsigned(size_t i) { return hasInput(i) && input(i).is_unsigned; }
  Value value(size_t i);  // the input as a tensor value (constants are materialized)
  // The input's integer elements as index values: constants, or shape arithmetic's results.
  std::optional<llvm::SmallVector<OpFoldResult>> elems(size_t i);
  // elems(), or for an integer vector or scalar of at most kMaxShapeElements elements whose
  // values only exist at run time, its elements read at run time (tensor.extract): what ops
  // whose shape an input gives (Reshape, Expand, Slice, ...) take. Null for anything else.
  std::optional<llvm::SmallVector<OpFoldResult>> shapeElems(size_t i);
  static constexpr int64_t kMaxShapeElements = 16;
  // The input's integer elements when all are known at import time.
  std::optional<llvm::SmallVector<int64_t>> constInts(size_t i);
  // A float or integer input whose value is known (a scalar or one-element tensor).
  std::optional<double> constScalar(size_t i);

  // Attributes (the names a converter reads are declared with its registration).
  bool has(llvm::StringRef name) const;
  int64_t i(llvm::StringRef name, int64_t fallback) const;
  float f(llvm::StringRef name, float fallback) const;
  std::string s(llvm::StringRef name, llvm::StringRef fallback) const;
  llvm::SmallVector<int64_t> ints(llvm::StringRef name) const;
  const ::onnx::AttributeProto* attr(llvm::StringRef name) const;

  // Outputs. An output named "" is not wanted.
  size_t numOutputs() const { return node_.output_size(); }
  bool wantsOutput(size_t i) const { return i < numOutputs() && !node_.output(i).empty(); }
  void setOutput(size_t i, Value v);
  void setOutput(size_t i, Tensor t);
  // An output of unsigned integers that no unsigned input's type parameter makes so (Cast to
  // uint8, QuantizeLinear's default uint8).
  void setUnsignedOutput(size_t i, Value v);

  // The two ways to fail. unsupported(): the node is valid ONNX the importer does not handle
  // (reported with kCompileUnsupported). error(): the model is wrong.
  ImportFailure unsupported(const llvm::Twine& what);
  ImportFailure error(const llvm::Twine& what);

  // A TensorProto of an attribute (Constant's value, ConstantOfShape's value) as a dense constant
  // within the import's constant budget (ImportOptions::max_constant_bytes); fails naming why.
  // `is_unsigned`, when given, accepts unsigned integer data and says whether it was.
  FailureOr<DenseElementsAttr> constant(const ::onnx::TensorProto& t, bool* is_unsigned = nullptr);
  // Charges `bytes` of constant data the converter is about to fold to the budget; an error
  // naming `what` when they do not fit.
  LogicalResult chargeConstant(int64_t bytes, const llvm::Twine& what);
  // Whether `bytes` more of constants would fit the budget (for a converter with another way).
  bool constantFits(int64_t bytes) const;

  // Normalizes an axis attribute or input in [-rank, rank) to [0, rank); fails (error) outside.
  FailureOr<int64_t> axis(int64_t axis, int64_t rank);

  // A subgraph of this node (If's branches, Loop's and Scan's bodies) converted into `block`
  // (appending; the caller adds the terminator), its inputs bound to `inputs` in order: its
  // outputs as tensors materialized in the block. `what` names it in errors ("body"). Names it
  // defines are gone afterwards.
  FailureOr<llvm::SmallVector<Tensor>> subgraph(const ::onnx::GraphProto& graph,
                                                ArrayRef<Tensor> inputs, Block* block,
                                                const std::string& what);

  Importer& importer() { return importer_; }
  // Whether f32 convolutions become disc_ral.conv (ImportOptions::library_conv).
  bool libraryConv() const;
  // Whether f32 MatMul and Gemm by a constant matrix become disc_ral.conv
  // (ImportOptions::library_linear).
  bool libraryLinear() const;
  // Whether host code may loop over tensor elements (ImportOptions::host_reads_tensors); false
  // on GPUs.
  bool hostReadsTensors() const;
  // Whether ONNX's QDQ form around a Conv may become a quantized disc_ral.conv
  // (ImportOptions::int8_conv).
  bool int8Conv() const;
  // A Conv's planned epilogue (conv_fusion.h), or null; the converter sets `fused` when it
  // folded the epilogue's nodes in and defined its output.
  ConvEpilogue* epilogue() const { return epilogue_; }
  void setEpilogue(ConvEpilogue* e) { epilogue_ = e; }
  // Another node's value by name (an epilogue's residual or Clip bound), or null when undefined;
  // and defining one (the epilogue's output).
  Tensor* named(const std::string& name);
  void defineNamed(const std::string& name, Value v, bool is_unsigned = false);
  Value materialize(Tensor& t);

 private:
  Importer& importer_;
  const ::onnx::NodeProto& node_;
  OpBuilder& b_;
  Location loc_;
  int64_t opset_;
  ConvEpilogue* epilogue_ = nullptr;
};

// A TensorProto's data as a dense constant of at most `max_bytes` bytes (tensor_data.cc); fails
// with `error` (and `unsupported` for what the importer does not handle) otherwise.
// With `is_unsigned` given, unsigned integer data is accepted (as signless integers of its
// width) and *is_unsigned says whether it was.
FailureOr<DenseElementsAttr> constantOf(MLIRContext* ctx, const ::onnx::TensorProto& t,
                                        int64_t max_bytes, std::string* error, bool* unsupported,
                                        bool* is_unsigned = nullptr);
// The element type of an ONNX TensorProto data type, null for one the importer does not handle;
// and the data type's name ("UINT8") for messages (tensor_data.cc).
Type elementTypeOf(MLIRContext* ctx, int32_t dtype);
std::string dtypeName(int32_t dtype);
// elementTypeOf, and for UINT8..UINT64 the signless integer of their width with *is_unsigned
// set (Tensor::is_unsigned).
Type storageTypeOf(MLIRContext* ctx, int32_t dtype, bool* is_unsigned);
// A constant as a graph value; small integer vectors also carry their elements (Tensor::elems).
Tensor tensorOfData(DenseElementsAttr data);
// `t` marked unsigned when `is_unsigned` (its elems dropped: they would read as signed).
inline Tensor unsignedAware(Tensor t, bool is_unsigned) {
  if (is_unsigned) {
    t.is_unsigned = true;
    t.elems.reset();
  }
  return t;
}
// An integer tensor known by its elements (rank 0 when `scalar`), each already a value of
// `element` (wrapped to its width; builders.h's wrapToType); with its data when all are constant.
Tensor elemsTensor(SmallVector<OpFoldResult> elems, Type element, bool scalar);

// Two dims that must be equal (`what` names them): an import error when both are static and
// differ, a run-time check (failing the execution) otherwise.
LogicalResult checkSameDim(NodeContext& n, OpFoldResult x, OpFoldResult y, llvm::StringRef what);

// Axes given as an input whose values only exist when the module runs (ONNX's own tests pass
// them so): each read, normalized to [0, rank) and checked when the module runs, no two alike.
// Null when the input is constant or absent; unsupported when its length is not static
// (ops_shape.cc).
FailureOr<std::optional<llvm::SmallVector<Value>>> runtimeAxes(NodeContext& n, size_t input,
                                                               int64_t rank);

// numpy matmul of a and c (1-D operands promoted, batch dims broadcast): GEMMs, or loops for
// integers (ops_linear.cc).
FailureOr<Value> matmulOf(NodeContext& n, Value a, Value c);
// The convolution of x [N, C, D...] with w [F, C/group, K...] by the node's Conv attributes
// (pads, strides, dilations, group, auto_pad), for integer tensors (im2col and an integer GEMM;
// padding reads 0): what ConvInteger and QLinearConv compute once the zero points are subtracted
// (ops_conv.cc).
FailureOr<Value> integerConvolution(NodeContext& n, Value x, Value w);

// An int8 convolution as kernels/conv/qconv.h computes it, for a quantized disc_ral.conv:
// y = act(scales[f] * (sum((x - x_zero_point) * w) + bias[f])), stored as f32 or, with an
// 8-bit result, rounded half to even after y_zero_point is added and saturated.
struct QuantizedConv {
  Value x;  // [N, C, D...] of 8-bit integers
  bool x_unsigned = false;
  int64_t x_zero_point = 0;
  DenseElementsAttr w;              // constant int8 [F, C/group, K...]
  SmallVector<float> scales, bias;  // F values each (bias: none when empty)
  bool int8_result = false, y_unsigned = false;
  int64_t y_zero_point = 0;
  std::string activation = "none";
  float alpha = 0, beta = 0;  // clip's bounds
};
// The node's Conv attributes applied to `q` (its group, pads, strides, dilations, auto_pad) on
// the CPU's ral_qconv (ImportOptions::int8_conv): the result tensor, or null when int8_conv is
// off; fails (naming what) on a geometry error (ops_conv.cc).
FailureOr<Value> quantizedConvolution(NodeContext& n, const QuantizedConv& q);

// Every value of a window-like attribute (kernel_shape, strides, pads, a hidden size) in
// [lo, 2^48], so the import-time arithmetic on them cannot overflow; an import error naming the
// attribute otherwise (ops_conv.cc).
LogicalResult checkWindowAttribute(NodeContext& n, llvm::StringRef name, ArrayRef<int64_t> values,
                                   int64_t lo);

// BatchNormalization's training mode, with the other normalizations (ops_normalize.cc).
LogicalResult convertBatchNormTraining(NodeContext& n);

// A converter and the attributes it reads: any other attribute on a node makes the import fail
// naming it, so an attribute nobody handles can never be silently ignored.
struct OpSpec {
  LogicalResult (*convert)(NodeContext&) = nullptr;
  std::vector<std::string> attributes;
};
using Registry = llvm::StringMap<OpSpec>;

// The converters, by family (one file each).
void addElementwiseOps(Registry& registry);  // ops_elementwise.cc
void addLinearOps(Registry& registry);       // ops_linear.cc: MatMul, Gemm, Einsum
void addConvOps(Registry& registry);         // ops_conv.cc: Conv, ConvTranspose
void addPoolOps(Registry& registry);         // ops_pool.cc: MaxPool, AveragePool, ..., BN
void addReductionOps(Registry& registry);    // ops_reduce.cc: Reduce*, ArgMax, TopK, CumSum
void addNormalizationOps(Registry& registry);  // ops_normalize.cc: Softmax, LayerNorm, losses
void addShapeOps(Registry& registry);        // ops_shape.cc: Reshape, Transpose, Concat, ...
void addGenerateOps(Registry& registry);     // ops_generate.cc: ConstantOfShape, Range, ...
void addSliceOps(Registry& registry);        // ops_slice.cc: Slice, Split, Pad
void addGatherOps(Registry& registry);       // ops_gather.cc: Gather*, Scatter*, OneHot
void addResizeOps(Registry& registry);       // ops_resize.cc: Resize, Upsample
void addRecurrentOps(Registry& registry);    // ops_recurrent.cc: RNN, GRU, LSTM
void addImageOps(Registry& registry);        // ops_image.cc: GridSample, NonMaxSuppression
void addQuantizeOps(Registry& registry);     // ops_quantize.cc: QuantizeLinear, QLinear*, ...
void addSelectOps(Registry& registry);       // ops_select.cc: NonZero, Compress, MaxUnpool
void addControlOps(Registry& registry);      // ops_control.cc: If, Loop, Scan

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_ONNX_NODE_CONTEXT_H_
