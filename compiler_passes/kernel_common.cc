#include "compiler_passes/kernel_common.h"

#include <iterator>

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir {
namespace disc_ral {

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
