// disc-ral-lower-to-library-calls (pass 2 of DESIGN.md §7).
//
// Ops that have a RAL kernel become disc_ral.dispatch:
//   linalg.matmul       (f16/bf16/f32/f64 memrefs) -> "ral_gemm"(a, b, c, false, false)
//   linalg.batch_matmul                            -> "ral_batch_gemm"(a, b, c, false, false)
//   call @f where @f has {disc_ral.custom_call = "target"} -> "target"(args...)
// and memref.alloc / memref.dealloc become disc_ral.alloc / disc_ral.dealloc, so buffers come
// from the host context (an output buffer is handed to the host without a copy).
//
// The kernels compute c = a·b while linalg accumulates (c += a·b). When c was just zero-filled the
// fill is dropped; otherwise the product goes to a temporary that is added to c.
#include "compiler_passes/dialect.h"
#include "compiler_passes/passes.h"
#include "compiler_passes/type_codes.h"
#include "mlir/Dialect/Arithmetic/IR/Arithmetic.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/StandardOps/IR/Ops.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace disc_ral {
namespace {

// The execution context of the function around `op`, or null.
Value contextOf(Operation* op) {
  auto f = op->getParentOfType<FuncOp>();
  if (f && f.getNumArguments() > 0 && f.getArgument(0).getType().isa<ContextType>())
    return f.getArgument(0);
  return Value();
}

LogicalResult missingContext(Operation* op) {
  auto f = op->getParentOfType<FuncOp>();
  return op->emitError() << "'" << op->getName() << "' needs the RAL execution context, but @"
                         << (f ? f.getName() : StringRef("?"))
                         << " has none (run disc-ral-inject-execution-context first; functions "
                            "not reachable from the entry get no context)";
}

// The buffer a memref value views (through subviews, casts, reshapes).
Value rootBuffer(Value v) {
  while (Operation* def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      v = view.getViewSource();
    } else if (auto cast = dyn_cast<memref::CastOp>(def)) {
      v = cast.source();
    } else {
      break;
    }
  }
  return v;
}

bool isKernelElement(Type t) { return t.isF16() || t.isBF16() || t.isF32() || t.isF64(); }

// A `linalg.fill` of zero into exactly `out`, earlier in the same block, with nothing in between
// that could read or write the buffer. Only for buffers allocated here, which nothing else
// aliases.
linalg::FillOp findZeroFill(Operation* op, Value out) {
  Value root = rootBuffer(out);
  Operation* def = root.getDefiningOp();
  if (!def || !isa<memref::AllocOp, AllocOp>(def)) return nullptr;
  for (Operation* prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.output() == out &&
          (matchPattern(fill.value(), m_AnyZeroFloat()) || matchPattern(fill.value(), m_Zero())))
        return fill;
    }
    for (Value operand : prev->getOperands())
      if (operand.getType().isa<MemRefType>() && rootBuffer(operand) == root) return nullptr;
    // Regions of non-linalg ops could touch the buffer through captured values.
    if (prev->getNumRegions() > 0 && !isa<linalg::LinalgOp>(prev)) return nullptr;
  }
  return nullptr;
}

class LowerToLibraryCallsPass
    : public PassWrapper<LowerToLibraryCallsPass, OperationPass<ModuleOp>> {
 public:
  LowerToLibraryCallsPass() = default;
  LowerToLibraryCallsPass(const LowerToLibraryCallsPass& other) : PassWrapper(other) {}
  explicit LowerToLibraryCallsPass(const std::string& device) { device_ = device; }

  StringRef getArgument() const final { return "disc-ral-lower-to-library-calls"; }
  StringRef getDescription() const final {
    return "Turn ops with a RAL kernel (linalg.matmul, linalg.batch_matmul, calls of functions "
           "marked disc_ral.custom_call) into disc_ral.dispatch, and memref.alloc/dealloc into "
           "RAL allocations owned by the host context";
  }
  void getDependentDialects(DialectRegistry& registry) const override {
    registry.insert<DiscRalDialect, arith::ArithmeticDialect, linalg::LinalgDialect,
                    memref::MemRefDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);

    // Library calls first: the matmul fallback allocates a temporary the second walk converts.
    SmallVector<Operation*> calls;
    module.walk([&](Operation* op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp, CallOp>(op)) calls.push_back(op);
    });
    for (Operation* op : calls) {
      LogicalResult result = success();
      if (auto call = dyn_cast<CallOp>(op)) {
        auto callee = symbols.lookup<FuncOp>(call.getCallee());
        if (callee && callee->hasAttr(kCustomCallAttr)) result = lowerCustomCall(call, callee);
      } else {
        result = lowerMatmul(cast<linalg::LinalgOp>(op),
                             isa<linalg::MatmulOp>(op) ? "ral_gemm" : "ral_batch_gemm");
      }
      if (failed(result)) return signalPassFailure();
    }
    // Custom-call declarations without calls left are dropped: nothing links against them.
    for (FuncOp f : llvm::make_early_inc_range(module.getOps<FuncOp>()))
      if (f->hasAttr(kCustomCallAttr) && SymbolTable::symbolKnownUseEmpty(f, module)) f.erase();

    SmallVector<Operation*> memory;
    module.walk([&](Operation* op) {
      if (isa<memref::AllocOp, memref::DeallocOp>(op)) memory.push_back(op);
    });
    for (Operation* op : memory) {
      if (failed(lowerMemory(op))) return signalPassFailure();
    }
  }

 private:
  LogicalResult lowerCustomCall(CallOp call, FuncOp callee) {
    Value ctx = contextOf(call);
    if (!ctx) return missingContext(call);
    auto target = callee->getAttrOfType<StringAttr>(kCustomCallAttr);
    if (!target || target.getValue().empty())
      return callee.emitError() << "'" << kCustomCallAttr << "' must be a non-empty string";
    StringRef device = device_;
    if (auto d = callee->getAttrOfType<StringAttr>(kCustomCallDeviceAttr)) device = d.getValue();
    Type bad;
    if (encodeCallName(target.getValue(), device, call.getOperandTypes(), call.getResultTypes(),
                       &bad)
            .empty())
      return call.emitError() << "custom call @" << callee.getName() << " (\"" << target.getValue()
                              << "\") has an operand or result of type " << bad
                              << ", which has no RAL encoding";
    OpBuilder builder(call);
    auto dispatch = builder.create<DispatchOp>(call.getLoc(), call.getResultTypes(), ctx,
                                               target.getValue(), device, call.getOperands());
    call.replaceAllUsesWith(dispatch.getResults());
    call.erase();
    return success();
  }

  LogicalResult lowerMatmul(linalg::LinalgOp op, StringRef target) {
    if (!op.hasBufferSemantics()) return success();  // tensors: not ours to lower
    Value a = op.getInputOperand(0)->get();
    Value b = op.getInputOperand(1)->get();
    Value c = op.getOutputOperand(0)->get();
    Type element = c.getType().cast<MemRefType>().getElementType();
    // Integer products and mixed types have no kernel: they stay for linalg -> loops.
    if (!isKernelElement(element) || a.getType().cast<MemRefType>().getElementType() != element ||
        b.getType().cast<MemRefType>().getElementType() != element)
      return success();
    // The kernels assume the output does not alias an input.
    Value root = rootBuffer(c);
    if (rootBuffer(a) == root || rootBuffer(b) == root) return success();
    Value ctx = contextOf(op);
    if (!ctx) return missingContext(op);

    Location loc = op.getLoc();
    OpBuilder builder(op);
    Value no = builder.create<arith::ConstantOp>(loc, builder.getBoolAttr(false));
    if (linalg::FillOp fill = findZeroFill(op, c)) {
      builder.create<DispatchOp>(loc, TypeRange{}, ctx, target, device_,
                                 ValueRange{a, b, c, no, no});
      fill.erase();
      op->erase();
      return success();
    }
    // c += a·b as tmp = a·b; c += tmp.
    auto c_type = c.getType().cast<MemRefType>();
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < c_type.getRank(); ++d)
      if (c_type.isDynamicDim(d)) sizes.push_back(builder.create<memref::DimOp>(loc, c, d));
    auto tmp_type = MemRefType::get(c_type.getShape(), element);
    Value tmp = builder.create<memref::AllocOp>(loc, tmp_type, sizes);
    builder.create<DispatchOp>(loc, TypeRange{}, ctx, target, device_,
                               ValueRange{a, b, tmp, no, no});
    const unsigned rank = static_cast<unsigned>(c_type.getRank());
    AffineMap identity = builder.getMultiDimIdentityMap(rank);
    SmallVector<StringRef> iterators(rank, getParallelIteratorTypeName());
    builder.create<linalg::GenericOp>(loc, TypeRange{}, ValueRange{tmp}, ValueRange{c},
                                      ArrayRef<AffineMap>{identity, identity}, iterators,
                                      [](OpBuilder& b, Location l, ValueRange args) {
                                        Value sum = b.create<arith::AddFOp>(l, args[1], args[0]);
                                        b.create<linalg::YieldOp>(l, sum);
                                      });
    builder.create<memref::DeallocOp>(loc, tmp);
    op->erase();
    return success();
  }

  LogicalResult lowerMemory(Operation* op) {
    Value ctx = contextOf(op);
    if (!ctx) return missingContext(op);
    OpBuilder builder(op);
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      builder.create<DeallocOp>(op->getLoc(), ctx, dealloc.memref());
      op->erase();
      return success();
    }
    auto alloc = cast<memref::AllocOp>(op);
    MemRefType type = alloc.getType();
    if (!type.getLayout().isIdentity())
      return alloc.emitError() << "RAL allocates only memrefs with the identity layout, got "
                               << type;
    if (auto align = alloc.alignment(); align && *align > 64)
      return alloc.emitError() << "RAL allocations are 64-byte aligned; " << *align
                               << " was requested";
    if (!alloc.symbolOperands().empty())
      return alloc.emitError() << "RAL allocations do not take layout symbol operands";
    auto ral_alloc = builder.create<AllocOp>(op->getLoc(), type, ctx, alloc.dynamicSizes());
    alloc.replaceAllUsesWith(ral_alloc.getResult());
    op->erase();
    return success();
  }

  Option<std::string> device_{
      *this, "device", llvm::cl::desc("Device of the library calls and allocations (default: cpu)"),
      llvm::cl::init("cpu")};
};

}  // namespace

std::unique_ptr<Pass> createLowerToLibraryCallsPass(const std::string& device) {
  return std::make_unique<LowerToLibraryCallsPass>(device);
}

void registerLowerToLibraryCallsPass() { PassRegistration<LowerToLibraryCallsPass>(); }

}  // namespace disc_ral
}  // namespace mlir
