#include "compiler_passes/dialect.h"

#include "compiler_passes/type_codes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "ral/memref.h"

namespace mlir {
namespace disc_ral {

// ---- dialect ------------------------------------------------------------------------------------

DiscRalDialect::DiscRalDialect(MLIRContext* context)
    : Dialect(getDialectNamespace(), context, TypeID::get<DiscRalDialect>()) {
  // Name encoding understands !llvm.ptr operands of dispatch.
  context->getOrLoadDialect<LLVM::LLVMDialect>();
  addTypes<ContextType>();
  addOperations<RecvInputOp, SendOutputOp, DispatchOp, AllocOp, DeallocOp>();
}

Type DiscRalDialect::parseType(DialectAsmParser& parser) const {
  StringRef keyword;
  if (parser.parseKeyword(&keyword)) return Type();
  if (keyword == "context") return ContextType::get(getContext());
  parser.emitError(parser.getNameLoc(), "unknown disc_ral type '") << keyword << "'";
  return Type();
}

void DiscRalDialect::printType(Type type, DialectAsmPrinter& printer) const {
  if (type.isa<ContextType>()) printer << "context";
}

namespace {

LogicalResult verifyContext(Operation* op, Value ctx) {
  if (!ctx.getType().isa<ContextType>())
    return op->emitOpError("expects a !disc_ral.context as its first operand, got ")
           << ctx.getType();
  return success();
}

LogicalResult verifyIndex(Operation* op) {
  auto index = op->getAttrOfType<IntegerAttr>("index");
  if (!index) return op->emitOpError("requires an integer 'index' attribute");
  if (index.getInt() < 0) return op->emitOpError("index must be non-negative, got ") << index;
  return success();
}

LogicalResult verifyBindable(Operation* op, Type type, StringRef what) {
  if (!isBindableMemRef(type))
    return op->emitOpError() << what << " must be a ranked memref with a strided layout, rank <= "
                             << ral::kMaxMemRefRank
                             << " and an element type of i1, i8..i64, ui8..ui64, f16, bf16, f32 "
                                "or f64; got "
                             << type;
  return success();
}

ParseResult parseContextOperand(OpAsmParser& parser, OperationState& state) {
  OpAsmParser::OperandType ctx;
  if (parser.parseOperand(ctx)) return failure();
  return parser.resolveOperand(ctx, ContextType::get(parser.getBuilder().getContext()),
                               state.operands);
}

}  // namespace

// ---- recv_input ---------------------------------------------------------------------------------

ArrayRef<StringRef> RecvInputOp::getAttributeNames() {
  static StringRef names[] = {"index"};
  return names;
}

void RecvInputOp::build(OpBuilder& builder, OperationState& state, Type type, Value ctx,
                        int64_t index) {
  state.addOperands(ctx);
  state.addAttribute("index", builder.getI64IntegerAttr(index));
  state.addTypes(type);
}

int64_t RecvInputOp::index() { return (*this)->getAttrOfType<IntegerAttr>("index").getInt(); }

LogicalResult RecvInputOp::verify() {
  if (failed(verifyContext(*this, ctx())) || failed(verifyIndex(*this))) return failure();
  return verifyBindable(*this, getType(), "result");
}

ParseResult RecvInputOp::parse(OpAsmParser& parser, OperationState& state) {
  IntegerAttr index;
  Type type;
  if (parseContextOperand(parser, state) || parser.parseComma() ||
      parser.parseAttribute(index, parser.getBuilder().getI64Type(), "index", state.attributes) ||
      parser.parseOptionalAttrDict(state.attributes) || parser.parseColonType(type))
    return failure();
  state.addTypes(type);
  return success();
}

void RecvInputOp::print(OpAsmPrinter& p) {
  p << ' ' << ctx() << ", " << index();
  p.printOptionalAttrDict((*this)->getAttrs(), {"index"});
  p << " : " << getType();
}

// ---- send_output --------------------------------------------------------------------------------

ArrayRef<StringRef> SendOutputOp::getAttributeNames() {
  static StringRef names[] = {"index"};
  return names;
}

void SendOutputOp::build(OpBuilder& builder, OperationState& state, Value ctx, int64_t index,
                         Value value) {
  state.addOperands({ctx, value});
  state.addAttribute("index", builder.getI64IntegerAttr(index));
}

int64_t SendOutputOp::index() { return (*this)->getAttrOfType<IntegerAttr>("index").getInt(); }

LogicalResult SendOutputOp::verify() {
  if (failed(verifyContext(*this, ctx())) || failed(verifyIndex(*this))) return failure();
  return verifyBindable(*this, value().getType(), "sent value");
}

ParseResult SendOutputOp::parse(OpAsmParser& parser, OperationState& state) {
  IntegerAttr index;
  OpAsmParser::OperandType value;
  Type type;
  if (parseContextOperand(parser, state) || parser.parseComma() ||
      parser.parseAttribute(index, parser.getBuilder().getI64Type(), "index", state.attributes) ||
      parser.parseComma() || parser.parseOperand(value) ||
      parser.parseOptionalAttrDict(state.attributes) || parser.parseColonType(type) ||
      parser.resolveOperand(value, type, state.operands))
    return failure();
  return success();
}

void SendOutputOp::print(OpAsmPrinter& p) {
  p << ' ' << ctx() << ", " << index() << ", " << value();
  p.printOptionalAttrDict((*this)->getAttrs(), {"index"});
  p << " : " << value().getType();
}

// ---- dispatch -----------------------------------------------------------------------------------

ArrayRef<StringRef> DispatchOp::getAttributeNames() {
  static StringRef names[] = {"call_target_name", "device"};
  return names;
}

void DispatchOp::build(OpBuilder& builder, OperationState& state, TypeRange results, Value ctx,
                       StringRef target, StringRef device, ValueRange args) {
  state.addOperands(ctx);
  state.addOperands(args);
  state.addAttribute("call_target_name", builder.getStringAttr(target));
  state.addAttribute("device", builder.getStringAttr(device));
  state.addTypes(results);
}

StringRef DispatchOp::target() {
  return (*this)->getAttrOfType<StringAttr>("call_target_name").getValue();
}
StringRef DispatchOp::device() { return (*this)->getAttrOfType<StringAttr>("device").getValue(); }

LogicalResult DispatchOp::verify() {
  if (failed(verifyContext(*this, ctx()))) return failure();
  for (StringRef attr : getAttributeNames()) {
    auto value = (*this)->getAttrOfType<StringAttr>(attr);
    if (!value || value.getValue().empty())
      return emitOpError("requires a non-empty string '") << attr << "' attribute";
    // "___" separates the parts of an encoded name, '_' separates type codes.
    if (value.getValue().contains("___"))
      return emitOpError("'") << attr << "' must not contain \"___\", got \"" << value.getValue()
                              << "\"";
  }
  for (Value arg : args())
    if (arg.getType().isa<ContextType>())
      return emitOpError("takes the context only as its first operand");
  Type bad;
  if (encodeCallName(target(), device(), args().getTypes(), getResultTypes(), &bad).empty())
    return emitOpError("has no RAL encoding for type ") << bad;
  return success();
}

ParseResult DispatchOp::parse(OpAsmParser& parser, OperationState& state) {
  StringAttr target, device;
  SmallVector<OpAsmParser::OperandType, 8> args;
  FunctionType type;
  llvm::SMLoc args_loc;
  if (parseContextOperand(parser, state) || parser.parseComma() ||
      parser.parseAttribute(target, "call_target_name", state.attributes) || parser.parseComma() ||
      parser.parseAttribute(device, "device", state.attributes) ||
      parser.getCurrentLocation(&args_loc) ||
      parser.parseOperandList(args, OpAsmParser::Delimiter::Paren) ||
      parser.parseOptionalAttrDict(state.attributes) || parser.parseColonType(type) ||
      parser.resolveOperands(args, type.getInputs(), args_loc, state.operands))
    return failure();
  state.addTypes(type.getResults());
  return success();
}

void DispatchOp::print(OpAsmPrinter& p) {
  p << ' ' << ctx() << ", \"" << target() << "\", \"" << device() << "\" (" << args() << ")";
  p.printOptionalAttrDict((*this)->getAttrs(), getAttributeNames());
  p << " : ";
  p.printFunctionalType(args().getTypes(), getResultTypes());
}

// ---- alloc / dealloc ----------------------------------------------------------------------------

void AllocOp::build(OpBuilder&, OperationState& state, MemRefType type, Value ctx,
                    ValueRange dynamic_sizes) {
  state.addOperands(ctx);
  state.addOperands(dynamic_sizes);
  state.addTypes(type);
}

LogicalResult AllocOp::verify() {
  if (failed(verifyContext(*this, ctx()))) return failure();
  MemRefType type = getType();
  if (!type.getLayout().isIdentity())
    return emitOpError("allocates only memrefs with the identity layout, got ") << type;
  if (!type.getElementType().isIntOrIndexOrFloat() || type.getMemorySpace())
    return emitOpError(
               "allocates integer, index or float memrefs in the default memory space, "
               "got ")
           << type;
  if (static_cast<int64_t>(dynamicSizes().size()) != type.getNumDynamicDims())
    return emitOpError("expects ") << type.getNumDynamicDims() << " dynamic sizes for " << type
                                   << ", got " << dynamicSizes().size();
  for (Value size : dynamicSizes())
    if (!size.getType().isIndex()) return emitOpError("dynamic sizes must be of type index");
  return success();
}

ParseResult AllocOp::parse(OpAsmParser& parser, OperationState& state) {
  SmallVector<OpAsmParser::OperandType, 4> sizes;
  Type type;
  if (parseContextOperand(parser, state) ||
      parser.parseOperandList(sizes, OpAsmParser::Delimiter::Paren) ||
      parser.parseOptionalAttrDict(state.attributes) || parser.parseColonType(type) ||
      parser.resolveOperands(sizes, parser.getBuilder().getIndexType(), state.operands))
    return failure();
  state.addTypes(type);
  return success();
}

void AllocOp::print(OpAsmPrinter& p) {
  p << ' ' << ctx() << "(" << dynamicSizes() << ")";
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : " << getType();
}

void DeallocOp::build(OpBuilder&, OperationState& state, Value ctx, Value memref) {
  state.addOperands({ctx, memref});
}

LogicalResult DeallocOp::verify() {
  if (failed(verifyContext(*this, ctx()))) return failure();
  if (!memref().getType().isa<MemRefType>())
    return emitOpError("expects a memref, got ") << memref().getType();
  return success();
}

ParseResult DeallocOp::parse(OpAsmParser& parser, OperationState& state) {
  OpAsmParser::OperandType memref;
  Type type;
  if (parseContextOperand(parser, state) || parser.parseComma() || parser.parseOperand(memref) ||
      parser.parseOptionalAttrDict(state.attributes) || parser.parseColonType(type) ||
      parser.resolveOperand(memref, type, state.operands))
    return failure();
  return success();
}

void DeallocOp::print(OpAsmPrinter& p) {
  p << ' ' << ctx() << ", " << memref();
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : " << memref().getType();
}

}  // namespace disc_ral
}  // namespace mlir
