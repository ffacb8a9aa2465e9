// disc_ral.conv (DiscRalOps.td): its verifier, its memory effects and its bufferization model.
// On tensors the op is destination style like a linalg op, so one-shot bufferization gives it
// the buffer of its init (in place when the init is dead afterwards, a copy otherwise).
#include <cmath>

#include "compiler_passes/dialect/dialect.h"
#include "llvm/ADT/StringSwitch.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir {
namespace disc_ral {

int64_t ConvOp::activationCode(StringRef name) {
  // The codes of kernels/conv/conv.h.
  return llvm::StringSwitch<int64_t>(name)
      .Case("none", 0)
      .Case("relu", 1)
      .Case("clip", 2)
      .Case("sigmoid", 3)
      .Case("silu", 4)
      .Case("hardswish", 5)
      .Case("gelu_erf", 6)
      .Case("gelu_tanh", 7)
      .Default(-1);
}

LogicalResult ConvOp::verify() {
  auto input = cast<ShapedType>(getInput().getType());
  auto filter = cast<ShapedType>(getFilter().getType());
  auto bias = cast<ShapedType>(getBias().getType());
  auto init = cast<ShapedType>(getInit().getType());
  const bool tensors = isa<RankedTensorType>(input);
  for (Type t : getOperandTypes())
    if (isa<RankedTensorType>(t) != tensors)
      return emitOpError("operands must be all tensors or all memrefs");
  if (tensors != (getNumResults() == 1))
    return emitOpError("returns one tensor on tensors and nothing on memrefs");
  if (tensors && getResult()[0].getType() != init)
    return emitOpError("result type must equal the init's");
  const int64_t rank = input.getRank();
  if (rank < 3 || rank > 5) return emitOpError("input must have rank 3 to 5, got ") << rank;
  if (filter.getRank() != rank || init.getRank() != rank)
    return emitOpError("input, filter and init must have the same rank");
  if (bias.getRank() != 1) return emitOpError("bias must have rank 1");
  Type element = input.getElementType();
  if (isQuantized()) {
    if (failed(verifyQuantized())) return failure();
  } else {
    if (filter.getElementType() != element || bias.getElementType() != element ||
        init.getElementType() != element)
      return emitOpError("operands must have one element type");
    if (getInputZeroPoint() != 0 || getOutputZeroPoint() != 0 || getInputUnsigned() ||
        getOutputUnsigned())
      return emitOpError("zero points and unsigned operands need 'scales' (a quantized conv)");
  }
  const size_t spatial = static_cast<size_t>(rank - 2);
  for (auto [name, values, least] :
       {std::make_tuple("strides", getStrides(), 1), std::make_tuple("dilations", getDilations(), 1),
        std::make_tuple("pad_begin", getPadBegin(), 0),
        std::make_tuple("pad_end", getPadEnd(), 0)}) {
    if (values.size() != spatial)
      return emitOpError() << "'" << name << "' must have " << spatial << " values, got "
                           << values.size();
    for (int64_t v : values)
      if (v < least) return emitOpError() << "'" << name << "' values must be >= " << least;
  }
  if (activationCode(getActivation()) < 0)
    return emitOpError() << "unknown activation '" << getActivation() << "'";
  return success();
}

LogicalResult ConvOp::verifyQuantized() {
  auto filter = cast<ShapedType>(getFilter().getType());
  Type out = cast<ShapedType>(getInit().getType()).getElementType();
  if (!cast<ShapedType>(getInput().getType()).getElementType().isInteger(8) ||
      !filter.getElementType().isInteger(8))
    return emitOpError("a quantized conv takes i8 input and filter");
  if (!cast<ShapedType>(getBias().getType()).getElementType().isF32())
    return emitOpError("a quantized conv takes an f32 bias");
  if (!out.isInteger(8) && !out.isF32())
    return emitOpError("a quantized conv writes i8 or f32");
  if (getResidual() || getTransposed())
    return emitOpError("a quantized conv has no residual and is not transposed");
  ArrayRef<float> scales = *getScales();
  if (scales.empty() || (scales.size() != 1 && !filter.isDynamicDim(0) &&
                         static_cast<int64_t>(scales.size()) != filter.getDimSize(0)))
    return emitOpError("'scales' must have one value or one per output channel");
  for (float s : scales)
    if (!std::isfinite(s)) return emitOpError("'scales' must be finite");
  auto inRange = [](int64_t v, bool is_unsigned) {
    return is_unsigned ? v >= 0 && v <= 255 : v >= -128 && v <= 127;
  };
  if (!inRange(getInputZeroPoint(), getInputUnsigned()))
    return emitOpError("input_zero_point ") << getInputZeroPoint() << " is out of the input's range";
  if (out.isF32() && (getOutputZeroPoint() != 0 || getOutputUnsigned()))
    return emitOpError("an f32 result has no output zero point and is not unsigned");
  if (!inRange(getOutputZeroPoint(), getOutputUnsigned()))
    return emitOpError("output_zero_point ") << getOutputZeroPoint()
                                             << " is out of the result's range";
  return success();
}

void ConvOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>& effects) {
  // Only buffers have effects; on tensors the op is pure.
  for (OpOperand& operand : getOperation()->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType())) continue;
    const bool out = &operand == &getInitMutable();
    if (!out || getResidual())
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
    if (out)
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

namespace {

struct ConvBufferization
    : bufferization::DstBufferizableOpInterfaceExternalModel<ConvBufferization, ConvOp> {
  // The init is read only as a residual: otherwise every element is overwritten, so its old
  // contents need no copy.
  bool bufferizesToMemoryRead(Operation* op, OpOperand& operand,
                              const bufferization::AnalysisState&) const {
    auto conv = cast<ConvOp>(op);
    return &operand != &conv.getInitMutable() || conv.getResidual();
  }

  LogicalResult bufferize(Operation* op, RewriterBase& rewriter,
                          const bufferization::BufferizationOptions& options) const {
    SmallVector<Value> buffers;
    for (Value operand : op->getOperands()) {
      FailureOr<Value> buffer = bufferization::getBuffer(rewriter, operand, options);
      if (failed(buffer)) return failure();
      buffers.push_back(*buffer);
    }
    rewriter.setInsertionPoint(op);
    rewriter.create<ConvOp>(op->getLoc(), TypeRange{}, buffers, op->getAttrs());
    bufferization::replaceOpWithBufferizedValues(rewriter, op, buffers.back());
    return success();
  }
};

}  // namespace

void registerConvBufferization(MLIRContext* context) {
  ConvOp::attachInterface<ConvBufferization>(*context);
}

}  // namespace disc_ral
}  // namespace mlir
