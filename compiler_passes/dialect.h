// The disc_ral dialect (DESIGN.md §7): the execution context type and the operations that model
// how a compiled module talks to RAL.
//
//   %ctx : !disc_ral.context
//   %x = disc_ral.recv_input %ctx, 0 : memref<?x4xf32>
//   disc_ral.send_output %ctx, 0, %y : memref<?x8xf32>
//   disc_ral.dispatch %ctx, "ral_gemm", "cpu" (%a, %b, %c, %f, %f)
//       : (memref<?x4xf32>, memref<4x8xf32>, memref<?x8xf32>, i1, i1) -> ()
//   %m = disc_ral.alloc %ctx(%n) : memref<?x8xf32>
//   disc_ral.dealloc %ctx, %m : memref<?x8xf32>
//
// The ops are written by hand rather than with ODS to keep the build free of TableGen steps.
#ifndef RAL_COMPILER_PASSES_DIALECT_H_
#define RAL_COMPILER_PASSES_DIALECT_H_

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

namespace mlir {
namespace disc_ral {

class DiscRalDialect : public Dialect {
 public:
  explicit DiscRalDialect(MLIRContext* context);
  static StringRef getDialectNamespace() { return "disc_ral"; }
  Type parseType(DialectAsmParser& parser) const override;
  void printType(Type type, DialectAsmPrinter& printer) const override;
};

// !disc_ral.context: the per-execution context; a `void*` (ral_exec_header*) at run time.
class ContextType : public Type::TypeBase<ContextType, Type, TypeStorage> {
 public:
  using Base::Base;
};

// %m = disc_ral.recv_input %ctx, <index> : memref<...>
class RecvInputOp : public Op<RecvInputOp, OpTrait::OneResult, OpTrait::OneTypedResult<Type>::Impl,
                              OpTrait::OneOperand, OpTrait::ZeroRegion, OpTrait::ZeroSuccessor> {
 public:
  using Op::Op;
  static StringRef getOperationName() { return "disc_ral.recv_input"; }
  static ArrayRef<StringRef> getAttributeNames();
  static void build(OpBuilder& builder, OperationState& state, Type type, Value ctx, int64_t index);
  Value ctx() { return getOperand(); }
  int64_t index();
  LogicalResult verify();
  static ParseResult parse(OpAsmParser& parser, OperationState& state);
  void print(OpAsmPrinter& p);
};

// disc_ral.send_output %ctx, <index>, %value : memref<...>
class SendOutputOp : public Op<SendOutputOp, OpTrait::ZeroResult, OpTrait::NOperands<2>::Impl,
                               OpTrait::ZeroRegion, OpTrait::ZeroSuccessor> {
 public:
  using Op::Op;
  static StringRef getOperationName() { return "disc_ral.send_output"; }
  static ArrayRef<StringRef> getAttributeNames();
  static void build(OpBuilder& builder, OperationState& state, Value ctx, int64_t index,
                    Value value);
  Value ctx() { return getOperand(0); }
  Value value() { return getOperand(1); }
  int64_t index();
  LogicalResult verify();
  static ParseResult parse(OpAsmParser& parser, OperationState& state);
  void print(OpAsmPrinter& p);
};

// %r... = disc_ral.dispatch %ctx, "<target>", "<device>" (%args...) : (types) -> (types)
// A call of the RAL function `target` registered for `device`; its full name is encoded from the
// operand and result types.
class DispatchOp
    : public Op<DispatchOp, OpTrait::VariadicResults, OpTrait::AtLeastNOperands<1>::Impl,
                OpTrait::ZeroRegion, OpTrait::ZeroSuccessor> {
 public:
  using Op::Op;
  static StringRef getOperationName() { return "disc_ral.dispatch"; }
  static ArrayRef<StringRef> getAttributeNames();
  static void build(OpBuilder& builder, OperationState& state, TypeRange results, Value ctx,
                    StringRef target, StringRef device, ValueRange args);
  Value ctx() { return getOperand(0); }
  // The operands after the context.
  OperandRange args() { return getOperands().drop_front(); }
  StringRef target();
  StringRef device();
  LogicalResult verify();
  static ParseResult parse(OpAsmParser& parser, OperationState& state);
  void print(OpAsmPrinter& p);
};

// %m = disc_ral.alloc %ctx(%dynamic_sizes...) : memref<...>
// Memory owned by the host context (64-byte aligned), so an output needs no copy.
class AllocOp
    : public Op<AllocOp, OpTrait::OneResult, OpTrait::OneTypedResult<MemRefType>::Impl,
                OpTrait::AtLeastNOperands<1>::Impl, OpTrait::ZeroRegion, OpTrait::ZeroSuccessor> {
 public:
  using Op::Op;
  static StringRef getOperationName() { return "disc_ral.alloc"; }
  static ArrayRef<StringRef> getAttributeNames() { return {}; }
  static void build(OpBuilder& builder, OperationState& state, MemRefType type, Value ctx,
                    ValueRange dynamic_sizes);
  Value ctx() { return getOperand(0); }
  OperandRange dynamicSizes() { return getOperands().drop_front(); }
  MemRefType getType() { return getResult().getType().cast<MemRefType>(); }
  LogicalResult verify();
  static ParseResult parse(OpAsmParser& parser, OperationState& state);
  void print(OpAsmPrinter& p);
};

// disc_ral.dealloc %ctx, %m : memref<...>
class DeallocOp : public Op<DeallocOp, OpTrait::ZeroResult, OpTrait::NOperands<2>::Impl,
                            OpTrait::ZeroRegion, OpTrait::ZeroSuccessor> {
 public:
  using Op::Op;
  static StringRef getOperationName() { return "disc_ral.dealloc"; }
  static ArrayRef<StringRef> getAttributeNames() { return {}; }
  static void build(OpBuilder& builder, OperationState& state, Value ctx, Value memref);
  Value ctx() { return getOperand(0); }
  Value memref() { return getOperand(1); }
  LogicalResult verify();
  static ParseResult parse(OpAsmParser& parser, OperationState& state);
  void print(OpAsmPrinter& p);
};

// Attributes that mark a function declaration as a RAL custom call:
//   func private @softmax(memref<?x?xf32>, memref<?x?xf32>)
//       attributes {disc_ral.custom_call = "ral_softmax", disc_ral.device = "cpu"}
inline constexpr const char kCustomCallAttr[] = "disc_ral.custom_call";
inline constexpr const char kCustomCallDeviceAttr[] = "disc_ral.device";

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_DIALECT_H_
