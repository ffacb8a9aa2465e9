// The disc_ral dialect: registration and the verifiers ODS cannot express (DiscRalOps.td).
#include "compiler_passes/dialect/dialect.h"

#include "compiler_passes/dialect/type_codes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "ral/memref.h"
#include "ral/status.h"

// Generated definitions (mlir-tblgen, DiscRalOps.td); they need the headers above.
// clang-format off
#include "compiler_passes/DiscRalOpsDialect.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "compiler_passes/DiscRalOpsTypes.cpp.inc"
#define GET_OP_CLASSES
#include "compiler_passes/DiscRalOps.cpp.inc"
// clang-format on

namespace mlir {
namespace disc_ral {

void DiscRalDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "compiler_passes/DiscRalOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "compiler_passes/DiscRalOps.cpp.inc"
      >();
  registerConvBufferization(getContext());
  registerTopKBufferization(getContext());
}

namespace {

LogicalResult verifyBindable(Operation* op, Type type, StringRef what) {
  if (!isBindableMemRef(type))
    return op->emitOpError() << what << " must be a ranked memref with a strided layout, rank <= "
                             << ral::kMaxMemRefRank
                             << " and an element type of i1, i8..i64, ui8..ui64, f16, bf16, f32 "
                                "or f64; got "
                             << type;
  return success();
}

}  // namespace

LogicalResult RecvInputOp::verify() { return verifyBindable(*this, getType(), "result"); }

LogicalResult SendOutputOp::verify() {
  return verifyBindable(*this, getValue().getType(), "sent value");
}

LogicalResult DispatchOp::verify() {
  for (auto [name, value] :
       {std::pair<StringRef, StringRef>{"call_target_name", getCallTargetName()},
        {"device", getDevice()}}) {
    if (value.empty()) return emitOpError("requires a non-empty '") << name << "'";
    // "___" separates the parts of an encoded name.
    if (value.contains("___"))
      return emitOpError("'") << name << "' must not contain \"___\", got \"" << value << "\"";
  }
  for (Value arg : getArgs())
    if (isa<ContextType>(arg.getType()))
      return emitOpError("takes the context only as its first operand");
  Type bad;
  if (encodeCallName(getCallTargetName(), getDevice(), getArgs().getTypes(), getResultTypes(), &bad)
          .empty())
    return emitOpError("has no RAL encoding for type ") << bad;
  return success();
}

LogicalResult SignalErrorOp::verify() {
  const int32_t code = getCode();
  if (code < static_cast<int32_t>(ral::StatusCode::kCancelled) ||
      code > static_cast<int32_t>(ral::StatusCode::kAborted))
    return emitOpError("code must be a ral::StatusCode from 1 to ")
           << static_cast<int32_t>(ral::StatusCode::kAborted) << ", got " << code;
  return success();
}

LogicalResult AllocOp::verify() {
  MemRefType type = getType();
  if (!type.getLayout().isIdentity())
    return emitOpError("allocates only memrefs with the identity layout, got ") << type;
  if (!type.getElementType().isIntOrIndexOrFloat() || type.getMemorySpace())
    return emitOpError(
               "allocates integer, index or float memrefs in the default memory space, got ")
           << type;
  if (auto align = getAlignment(); align && (*align <= 0 || !llvm::isPowerOf2_64(*align)))
    return emitOpError("alignment must be a positive power of two, got ") << *align;
  if (static_cast<int64_t>(getDynamicSizes().size()) != type.getNumDynamicDims())
    return emitOpError("expects ") << type.getNumDynamicDims() << " dynamic sizes for " << type
                                   << ", got " << getDynamicSizes().size();
  return success();
}

LogicalResult LaunchOp::verify() {
  auto kernel = SymbolTable::lookupNearestSymbolFrom(*this, getKernelAttr());
  if (!kernel) {
    // Serialized already (disc-ral-serialize-kernels): listed by name on the module.
    auto module = (*this)->getParentOfType<ModuleOp>();
    auto serialized = module ? module->getAttrOfType<ArrayAttr>(kDeviceKernelsAttr) : nullptr;
    if (serialized && llvm::any_of(serialized, [&](Attribute a) {
          auto d = dyn_cast<DictionaryAttr>(a);
          auto name = d ? d.getAs<StringAttr>("name") : nullptr;
          return name && name.getValue() == getKernel();
        }))
      return success();
    return emitOpError("kernel @") << getKernel() << " is not defined";
  }
  if (!kernel->hasAttr(kKernelAttr))
    return emitOpError("@") << getKernel() << " is not marked '" << kKernelAttr << "'";
  for (Value arg : getArgs()) {
    Type t = arg.getType();
    if (!isa<MemRefType, IndexType, IntegerType, FloatType>(t))
      return emitOpError("kernel arguments are memrefs, integers, indices or floats; got ") << t;
    if (auto m = dyn_cast<MemRefType>(t); m && !isStrided(m))
      return emitOpError("memref arguments need a strided layout; got ") << t;
  }
  return success();
}

}  // namespace disc_ral
}  // namespace mlir
