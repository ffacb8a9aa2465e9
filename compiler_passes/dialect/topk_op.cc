// disc_ral.topk (DiscRalOps.td): its verifier, its memory effects and its bufferization model.
// Destination style like disc_ral.conv: one-shot bufferization gives each result the buffer of
// its init, whose old contents are never read.
#include "compiler_passes/dialect/dialect.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir {
namespace disc_ral {

LogicalResult TopKOp::verify() {
  auto input = cast<ShapedType>(getInput().getType());
  auto values = cast<ShapedType>(getValuesInit().getType());
  auto indices = cast<ShapedType>(getIndicesInit().getType());
  const bool tensors = isa<RankedTensorType>(input);
  if (isa<RankedTensorType>(values) != tensors || isa<RankedTensorType>(indices) != tensors)
    return emitOpError("operands must be all tensors or all memrefs");
  if (tensors != (getNumResults() == 2))
    return emitOpError("returns two tensors on tensors and nothing on memrefs");
  if (tensors && (getResults()[0].getType() != values || getResults()[1].getType() != indices))
    return emitOpError("result types must equal the inits'");
  const int64_t rank = input.getRank();
  if (rank < 1 || rank > 4) return emitOpError("input must have rank 1 to 4, got ") << rank;
  if (values.getRank() != rank || indices.getRank() != rank)
    return emitOpError("input, values and indices must have the same rank");
  Type element = input.getElementType();
  if (!element.isF32() && !element.isF64() && !element.isInteger(32) && !element.isInteger(64))
    return emitOpError("takes f32, f64, i32 or i64 elements, got ") << element;
  if (values.getElementType() != element)
    return emitOpError("values must have the input's element type");
  if (!indices.getElementType().isInteger(64)) return emitOpError("indices must be i64");
  for (int64_t d = 0; d + 1 < rank; ++d)
    for (ShapedType out : {values, indices})
      if (!input.isDynamicDim(d) && !out.isDynamicDim(d) &&
          input.getDimSize(d) != out.getDimSize(d))
        return emitOpError() << "dim " << d << " of the outputs must equal the input's ("
                             << input.getDimSize(d) << "), got " << out.getDimSize(d);
  if (!values.isDynamicDim(rank - 1) && !indices.isDynamicDim(rank - 1) &&
      values.getDimSize(rank - 1) != indices.getDimSize(rank - 1))
    return emitOpError("values and indices must have the same last dim (k)");
  return success();
}

void TopKOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>& effects) {
  // Only buffers have effects; on tensors the op is pure.
  if (!isa<MemRefType>(getInput().getType())) return;
  effects.emplace_back(MemoryEffects::Read::get(), &getInputMutable(),
                       SideEffects::DefaultResource::get());
  for (OpOperand& init : getDpsInitsMutable())
    effects.emplace_back(MemoryEffects::Write::get(), &init, SideEffects::DefaultResource::get());
}

namespace {

struct TopKBufferization
    : bufferization::DstBufferizableOpInterfaceExternalModel<TopKBufferization, TopKOp> {
  // Every element of both outputs is overwritten: the inits' contents need no copy.
  bool bufferizesToMemoryRead(Operation* op, OpOperand& operand,
                              const bufferization::AnalysisState&) const {
    return !cast<TopKOp>(op).isDpsInit(&operand);
  }

  LogicalResult bufferize(Operation* op, RewriterBase& rewriter,
                          const bufferization::BufferizationOptions& options) const {
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      if (!isa<TensorType>(operand.getType())) {
        operands.push_back(operand);  // k
        continue;
      }
      FailureOr<Value> buffer = bufferization::getBuffer(rewriter, operand, options);
      if (failed(buffer)) return failure();
      operands.push_back(*buffer);
    }
    rewriter.setInsertionPoint(op);
    rewriter.create<TopKOp>(op->getLoc(), TypeRange{}, operands, op->getAttrs());
    bufferization::replaceOpWithBufferizedValues(rewriter, op, {operands[2], operands[3]});
    return success();
  }
};

}  // namespace

void registerTopKBufferization(MLIRContext* context) {
  TopKOp::attachInterface<TopKBufferization>(*context);
}

}  // namespace disc_ral
}  // namespace mlir
