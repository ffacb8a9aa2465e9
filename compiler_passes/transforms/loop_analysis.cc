#include "compiler_passes/transforms/loop_analysis.h"

#include "compiler_passes/dialect/dialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace disc_ral {

Value viewRoot(Value memref) {
  while (Operation* def = memref.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      memref = view.getViewSource();
    } else if (auto cast = dyn_cast<memref::CastOp>(def)) {
      memref = cast.getSource();
    } else {
      break;
    }
  }
  return memref;
}

bool isFreshAllocation(Value memref) {
  Operation* def = memref.getDefiningOp();
  return def && isa<memref::AllocOp, memref::AllocaOp, AllocOp>(def);
}

Value rowPreservingAllocation(Value memref) {
  // A reshape keeps rows when its first reassociation group is dimension 0 alone.
  auto keepsFirstDim = [](ArrayRef<ReassociationIndices> groups) {
    return !groups.empty() && groups.front().size() == 1 && groups.front().front() == 0;
  };
  while (Operation* def = memref.getDefiningOp()) {
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(def)) {
      if (!keepsFirstDim(expand.getReassociationIndices())) return nullptr;
      memref = expand.getSrc();
    } else if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def)) {
      if (!keepsFirstDim(collapse.getReassociationIndices())) return nullptr;
      memref = collapse.getSrc();
    } else if (auto cast = dyn_cast<memref::CastOp>(def)) {
      memref = cast.getSource();
    } else {
      break;
    }
  }
  return isFreshAllocation(memref) ? memref : nullptr;
}

bool mayAlias(Value a, Value b) {
  Value ra = viewRoot(a), rb = viewRoot(b);
  if (ra == rb) return true;
  return !isFreshAllocation(ra) && !isFreshAllocation(rb);
}

std::optional<SmallVector<MemoryAccess>> collectAccesses(Operation* root) {
  SmallVector<MemoryAccess> accesses;
  WalkResult walk = root->walk([&](Operation* op) {
    if (op == root) return WalkResult::advance();
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      accesses.push_back({op, load.getMemRef(), false});
      return WalkResult::advance();
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      accesses.push_back({op, store.getMemRef(), true});
      return WalkResult::advance();
    }
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()) return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const auto& e : list) {
      // Allocating scratch inside a loop (alloca) is private to the iteration.
      if (isa<MemoryEffects::Allocate>(e.getEffect())) continue;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted()) return std::nullopt;
  return accesses;
}

bool nothingWritesBetween(Operation* from, Operation* to, const llvm::SmallPtrSetImpl<Value>& roots,
                          const llvm::SmallPtrSetImpl<Operation*>& skip) {
  for (Operation* op = from->getNextNode(); op && op != to; op = op->getNextNode()) {
    if (skip.contains(op)) continue;
    std::optional<SmallVector<MemoryEffects::EffectInstance>> effects = getEffectsRecursively(op);
    if (!effects) return false;
    for (const MemoryEffects::EffectInstance& effect : *effects) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect())) continue;
      Value value = effect.getValue();
      if (!value) return false;
      // A write into a fresh allocation cannot reach what the caller reads.
      Value root = viewRoot(value);
      if (roots.contains(root) || !isFreshAllocation(root)) return false;
    }
  }
  return true;
}

bool indexedByRow(const MemoryAccess& access, Value iv) {
  if (auto load = dyn_cast<memref::LoadOp>(access.op))
    return !load.getIndices().empty() && load.getIndices()[0] == iv;
  if (auto store = dyn_cast<memref::StoreOp>(access.op))
    return !store.getIndices().empty() && store.getIndices()[0] == iv;
  return false;
}

}  // namespace disc_ral
}  // namespace mlir
