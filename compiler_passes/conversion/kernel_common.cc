#include "compiler_passes/conversion/kernel_common.h"

#include <iterator>

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir {
namespace disc_ral {

llvm::SetVector<Value> kernelUses(scf::ParallelOp loop) {
  llvm::SetVector<Value> used;
  used.insert(loop.getLowerBound()[0]);
  used.insert(loop.getStep()[0]);
  getUsedValuesDefinedAbove(loop.getRegion(), used);
  return used;
}

LogicalResult checkKernelBody(scf::ParallelOp loop, llvm::StringRef kernel_kind,
                              bool constant_dims) {
  WalkResult walk = loop.getBody()->walk([&](Operation* op) {
    if (isa<CallOpInterface>(op) || op->getDialect()->getNamespace() == "disc_ral") {
      op->emitError("cannot run in a ") << kernel_kind << " kernel";
      return WalkResult::interrupt();
    }
    for (Value r : op->getResults())
      if (isa<MemRefType>(r.getType())) {
        op->emitError("creates a buffer or view inside a loop, which a ")
            << kernel_kind << " kernel cannot";
        return WalkResult::interrupt();
      }
    if (isa<memref::LoadOp, memref::StoreOp, memref::DimOp>(op)) {
      if (auto d = dyn_cast<memref::DimOp>(op); constant_dims && d && !d.getConstantIndex()) {
        op->emitError("a ") << kernel_kind << " kernel needs constant dimension indices";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    for (Value o : op->getOperands())
      if (isa<MemRefType>(o.getType())) {
        op->emitError("uses a buffer in a way a ")
            << kernel_kind << " kernel cannot (only load, store, dim)";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

Value tripCount(OpBuilder& b, scf::ParallelOp loop) {
  Location loc = loop.getLoc();
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value span = b.create<arith::SubIOp>(loc, loop.getUpperBound()[0], loop.getLowerBound()[0]);
  return b.create<arith::MaxSIOp>(loc, b.create<arith::CeilDivSIOp>(loc, span, loop.getStep()[0]),
                                  zero);
}

bool isConstantValue(Value v) {
  Operation* def = v.getDefiningOp();
  return def && def->hasTrait<OpTrait::ConstantLike>();
}

std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

Type hostScalarType(Type t) {
  MLIRContext* ctx = t.getContext();
  if (isa<IndexType>(t)) return IntegerType::get(ctx, 64);
  if (auto i = dyn_cast<IntegerType>(t)) return i.getWidth() < 32 ? IntegerType::get(ctx, 32) : t;
  if (isa<Float16Type, BFloat16Type>(t)) return Float32Type::get(ctx);
  return t;
}

LogicalResult sequentializeInnerLoops(Operation* root, llvm::StringRef kernel_kind) {
  llvm::SmallVector<scf::ParallelOp> loops;
  root->walk([&](scf::ParallelOp p) { loops.push_back(p); });  // post-order: inner loops first
  for (scf::ParallelOp p : loops) {
    if (p.getNumResults() != 0)
      return p.emitError("a parallel reduction inside a loop cannot run in a ")
             << kernel_kind << " kernel yet";
    OpBuilder b(p);
    Block* body = p.getBody();
    for (unsigned d = 0; d < p.getNumLoops(); ++d) {
      auto f = b.create<scf::ForOp>(p.getLoc(), p.getLowerBound()[d], p.getUpperBound()[d],
                                    p.getStep()[d]);
      p.getInductionVars()[d].replaceAllUsesWith(f.getInductionVar());
      b.setInsertionPointToStart(f.getBody());
    }
    Block* inner = b.getInsertionBlock();
    inner->getOperations().splice(b.getInsertionPoint(), body->getOperations(), body->begin(),
                                  std::prev(body->end()));
    p.erase();
  }
  return success();
}

}  // namespace disc_ral
}  // namespace mlir
