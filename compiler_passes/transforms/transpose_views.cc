// Transposes around matrix products as strided views (transpose_views.h).
#include "compiler_passes/transforms/transpose_views.h"

#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/transforms/loop_analysis.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir {
namespace disc_ral {
namespace {

// A view of `source` whose dimension d is `source`'s dimension perm[d]; null when `source` has
// no strided layout.
Value permutedView(OpBuilder& b, Location loc, Value source, ArrayRef<int64_t> perm) {
  auto type = cast<MemRefType>(source.getType());
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (failed(getStridesAndOffset(type, strides, offset))) return Value();
  auto meta = b.create<memref::ExtractStridedMetadataOp>(loc, source);
  SmallVector<OpFoldResult> sizes, view_strides;
  SmallVector<int64_t> shape, static_strides;
  for (int64_t p : perm) {
    sizes.push_back(type.isDynamicDim(p) ? OpFoldResult(meta.getSizes()[p])
                                         : OpFoldResult(b.getIndexAttr(type.getDimSize(p))));
    view_strides.push_back(ShapedType::isDynamic(strides[p])
                               ? OpFoldResult(meta.getStrides()[p])
                               : OpFoldResult(b.getIndexAttr(strides[p])));
    shape.push_back(type.getDimSize(p));
    static_strides.push_back(strides[p]);
  }
  OpFoldResult view_offset = ShapedType::isDynamic(offset) ? OpFoldResult(meta.getOffset())
                                                           : OpFoldResult(b.getIndexAttr(offset));
  auto view_type = MemRefType::get(shape, type.getElementType(),
                                   StridedLayoutAttr::get(b.getContext(), offset, static_strides),
                                   type.getMemorySpace());
  return b.create<memref::ReinterpretCastOp>(loc, view_type, meta.getBaseBuffer(), view_offset,
                                             sizes, view_strides);
}

bool isFree(Operation* op) { return isa<memref::DeallocOp, DeallocOp>(op); }

// The ancestor of `op` in `block` comes after `anchor` (also in `block`).
bool after(Block* block, Operation* anchor, Operation* op) {
  Operation* own = block->findAncestorOpInBlock(*op);
  return own && own != anchor && anchor->isBeforeInBlock(own);
}

// ins(X) outs(B), B read only by products and elementwise ops: they read a view of X.
bool foldIntoReaders(linalg::TransposeOp t) {
  Value x = t.getInput(), b = t.getInit();
  if (!isFreshAllocation(b)) return false;
  Block* block = t->getBlock();
  SmallVector<Operation*> readers, frees;
  for (OpOperand& use : b.getUses()) {
    Operation* user = use.getOwner();
    if (user == t.getOperation()) continue;
    if (user->getBlock() != block || !t->isBeforeInBlock(user)) return false;
    if (isFree(user)) {
      frees.push_back(user);
      continue;
    }
    auto op = dyn_cast<linalg::LinalgOp>(user);
    if (!op || !isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::GenericOp>(user) ||
        !op.hasPureBufferSemantics() || !op.isDpsInput(&use))
      return false;
    readers.push_back(user);
  }
  if (readers.empty()) return false;
  Operation* last = readers.front();
  for (Operation* r : readers)
    if (last->isBeforeInBlock(r)) last = r;
  for (Operation* f : frees)
    if (f->isBeforeInBlock(last)) return false;
  // X stays as the transpose saw it until the last reader: nothing writes or frees it, the
  // readers included (one writing X in place would read its own output through the view).
  const Value root = viewRoot(x);
  for (Operation* r : readers)
    for (Value init : cast<linalg::LinalgOp>(r).getDpsInits())
      if (viewRoot(init) == root) return false;
  // The importer's shape checks (cf.assert) in between touch no buffer.
  llvm::SmallPtrSet<Value, 1> roots = {root};
  llvm::SmallPtrSet<Operation*, 16> checks;
  for (Operation* op = t->getNextNode(); op && op != last; op = op->getNextNode())
    if (isa<cf::AssertOp>(op)) checks.insert(op);
  if (!nothingWritesBetween(t, last, roots, checks)) return false;

  OpBuilder builder(t);
  Value view = permutedView(builder, t.getLoc(), x, t.getPermutation());
  if (!view) return false;
  for (Operation* r : readers) r->replaceUsesOfWith(b, view);
  for (Operation* f : frees) f->erase();
  Operation* alloc = b.getDefiningOp();
  t.erase();
  alloc->erase();
  return true;
}

// ins(C) outs(B), C written only by one product (after an optional fill) and read only by the
// transpose: the product writes a view of B.
bool foldIntoWriter(linalg::TransposeOp t) {
  Value c = t.getInput(), b = t.getInit();
  if (!isFreshAllocation(c) || !isFreshAllocation(b)) return false;
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (failed(getStridesAndOffset(cast<MemRefType>(b.getType()), strides, offset))) return false;
  Block* block = t->getBlock();
  Operation* writer = nullptr;
  Operation* fill = nullptr;
  SmallVector<Operation*> frees;
  for (OpOperand& use : c.getUses()) {
    Operation* user = use.getOwner();
    if (user == t.getOperation()) continue;
    if (user->getBlock() != block) return false;
    if (isFree(user)) {
      if (!t->isBeforeInBlock(user)) return false;
      frees.push_back(user);
      continue;
    }
    auto op = dyn_cast<linalg::LinalgOp>(user);
    if (!op || !op.hasPureBufferSemantics() || !op.isDpsInit(&use) || !user->isBeforeInBlock(t) ||
        op.getNumDpsInits() != 1 || llvm::is_contained(op.getDpsInputs(), c))
      return false;
    if (isa<linalg::FillOp>(user) && !fill) {
      fill = user;
    } else if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(user) && !writer) {
      writer = user;
    } else {
      return false;
    }
  }
  if (!writer || (fill && !fill->isBeforeInBlock(writer))) return false;
  // B holds nothing anyone reads before the transpose wrote it.
  for (Operation* user : b.getUsers())
    if (user != t.getOperation() && !after(block, t, user)) return false;
  // B must exist where the product (or its fill) writes it.
  Operation* first = fill ? fill : writer;
  Operation* alloc = b.getDefiningOp();
  if (alloc->getBlock() != block) return false;
  if (!alloc->isBeforeInBlock(first)) {
    for (Value size : alloc->getOperands()) {
      Operation* def = size.getDefiningOp();
      Operation* own = def ? block->findAncestorOpInBlock(*def) : nullptr;
      if (own && !own->isBeforeInBlock(first)) return false;
    }
    alloc->moveBefore(first);
  }
  SmallVector<int64_t> inverse(t.getPermutation().size());
  for (auto [i, p] : llvm::enumerate(t.getPermutation())) inverse[p] = static_cast<int64_t>(i);
  OpBuilder builder(first);
  Value view = permutedView(builder, t.getLoc(), b, inverse);
  if (!view) return false;
  writer->replaceUsesOfWith(c, view);
  if (fill) fill->replaceUsesOfWith(c, view);
  for (Operation* f : frees) f->erase();
  Operation* c_alloc = c.getDefiningOp();
  t.erase();
  c_alloc->erase();
  return true;
}

}  // namespace

int foldTransposesIntoViews(ModuleOp module) {
  SmallVector<linalg::TransposeOp> transposes;
  module.walk([&](linalg::TransposeOp t) {
    if (t.hasPureBufferSemantics()) transposes.push_back(t);
  });
  int folded = 0;
  for (linalg::TransposeOp t : transposes)
    if (foldIntoReaders(t) || foldIntoWriter(t)) ++folded;
  return folded;
}

}  // namespace disc_ral
}  // namespace mlir
