// Parallel dimensions for device kernels' grids (grid_parallelism.h has the rules).
#include "compiler_passes/conversion/grid_parallelism.h"

#include "compiler_passes/transforms/loop_analysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace disc_ral {

namespace {

bool isPlainParallel(Operation* op) {
  auto p = dyn_cast<scf::ParallelOp>(op);
  return p && p.getNumReductions() == 0;
}

// Ops that may be cloned freely: no memory effects and no regions.
bool isPureLeaf(Operation& op) { return op.getNumRegions() == 0 && isMemoryEffectFree(&op); }

// The one op of `block` (before its terminator) that is not a pure leaf, or null when there are
// none or several.
Operation* soleNonPureOp(Block& block) {
  Operation* found = nullptr;
  for (Operation& op : block.without_terminator()) {
    if (isPureLeaf(op)) continue;
    if (found) return nullptr;
    found = &op;
  }
  return found;
}

bool boundsDefinedOutside(scf::ParallelOp inner, scf::ParallelOp outer) {
  for (ValueRange values : {ValueRange(inner.getLowerBound()), ValueRange(inner.getUpperBound()),
                            ValueRange(inner.getStep())})
    for (Value v : values)
      if (!outer.isDefinedOutsideOfLoop(v)) return false;
  return true;
}

// Whether every buffer `p` writes is written and read in `p` only element-wise in p's
// induction variables (see the header), so p may move outside loops around it.
bool writesElementwise(scf::ParallelOp p) {
  std::optional<SmallVector<MemoryAccess>> accesses = collectAccesses(p);
  if (!accesses) return false;
  auto indicesOf = [](Operation* op) -> ValueRange {
    if (auto load = dyn_cast<memref::LoadOp>(op)) return load.getIndices();
    return cast<memref::StoreOp>(op).getIndices();
  };
  for (const MemoryAccess& w : *accesses) {
    if (!w.write) continue;
    auto type = cast<MemRefType>(w.memref.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(getStridesAndOffset(type, strides, offset))) return false;
    for (int64_t s : strides)
      if (s == 0 || ShapedType::isDynamic(s)) return false;  // distinct indices, distinct elements
    ValueRange at = indicesOf(w.op);
    for (Value iv : p.getInductionVars())
      if (!llvm::is_contained(at, iv)) return false;
    for (const MemoryAccess& a : *accesses) {
      if (a.memref == w.memref) {
        if (!llvm::equal(indicesOf(a.op), at)) return false;
      } else if (mayAlias(a.memref, w.memref)) {
        return false;
      }
    }
  }
  return true;
}

// The inner parallel loop that `loop` can take as its own dimensions: the sole non-pure op of
// its body, or at the end of a chain of scf.for loops (no iteration arguments) each holding pure
// ops and one loop. Null when there is none.
scf::ParallelOp hoistableInner(scf::ParallelOp loop) {
  Operation* op = soleNonPureOp(*loop.getBody());
  bool through_for = false;
  while (auto f = dyn_cast_or_null<scf::ForOp>(op)) {
    if (!f.getInitArgs().empty()) return nullptr;
    op = soleNonPureOp(*f.getBody());
    through_for = true;
  }
  if (!op || !isPlainParallel(op)) return nullptr;
  auto inner = cast<scf::ParallelOp>(op);
  if (!boundsDefinedOutside(inner, loop)) return nullptr;
  if (through_for && !writesElementwise(inner)) return nullptr;
  return inner;
}

// Clones `op` with `mapping`; on the way to `inner`, scf.for loops are rebuilt and `inner` is
// replaced by its body (its induction variables already mapped).
void cloneWithoutInner(OpBuilder& b, Operation& op, IRMapping& mapping, scf::ParallelOp inner) {
  if (&op == inner.getOperation()) {
    for (Operation& o : inner.getBody()->without_terminator()) b.clone(o, mapping);
    return;
  }
  auto f = dyn_cast<scf::ForOp>(&op);
  if (!f || !f->isAncestor(inner)) {
    b.clone(op, mapping);
    return;
  }
  auto copy = b.create<scf::ForOp>(f.getLoc(), mapping.lookupOrDefault(f.getLowerBound()),
                                   mapping.lookupOrDefault(f.getUpperBound()),
                                   mapping.lookupOrDefault(f.getStep()));
  mapping.map(f.getInductionVar(), copy.getInductionVar());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(copy.getBody()->getTerminator());
  for (Operation& o : f.getBody()->without_terminator()) cloneWithoutInner(b, o, mapping, inner);
}

// scf.parallel (outer dims) { ...inner... } -> scf.parallel (outer dims, inner dims) { ... }.
scf::ParallelOp absorb(scf::ParallelOp loop, scf::ParallelOp inner) {
  OpBuilder b(loop);
  auto concat = [](ValueRange a, ValueRange c) {
    SmallVector<Value> all(a.begin(), a.end());
    all.append(c.begin(), c.end());
    return all;
  };
  auto merged = b.create<scf::ParallelOp>(
      loop.getLoc(), concat(loop.getLowerBound(), inner.getLowerBound()),
      concat(loop.getUpperBound(), inner.getUpperBound()),
      concat(loop.getStep(), inner.getStep()));
  IRMapping mapping;
  const unsigned outer_dims = loop.getNumLoops();
  for (unsigned d = 0; d < outer_dims; ++d)
    mapping.map(loop.getInductionVars()[d], merged.getInductionVars()[d]);
  for (unsigned d = 0; d < inner.getNumLoops(); ++d)
    mapping.map(inner.getInductionVars()[d], merged.getInductionVars()[outer_dims + d]);
  b.setInsertionPoint(merged.getBody()->getTerminator());
  for (Operation& op : loop.getBody()->without_terminator())
    cloneWithoutInner(b, op, mapping, inner);
  loop.erase();
  return merged;
}

// A body of two or more parallel loops (and pure ops): one loop per inner loop.
SmallVector<scf::ParallelOp> fission(scf::ParallelOp loop) {
  if (loop.getNumReductions() != 0) return {loop};
  SmallVector<scf::ParallelOp> inners;
  for (Operation& op : loop.getBody()->without_terminator()) {
    if (isPureLeaf(op)) continue;
    if (!isPlainParallel(&op)) return {loop};
    inners.push_back(cast<scf::ParallelOp>(op));
  }
  if (inners.size() < 2) return {loop};
  OpBuilder b(loop);
  SmallVector<scf::ParallelOp> parts;
  for (scf::ParallelOp inner : inners) {
    auto part = b.create<scf::ParallelOp>(loop.getLoc(), loop.getLowerBound(),
                                          loop.getUpperBound(), loop.getStep());
    IRMapping mapping;
    mapping.map(loop.getInductionVars(), part.getInductionVars());
    OpBuilder pb = OpBuilder::atBlockTerminator(part.getBody());
    for (Operation& op : loop.getBody()->without_terminator())
      if (isPureLeaf(op) || &op == inner.getOperation()) pb.clone(op, mapping);
    parts.push_back(part);
  }
  loop.erase();
  return parts;
}

// scf.parallel (i0, ..., ik) -> scf.parallel (t) over the product of the trip counts.
scf::ParallelOp collapse(scf::ParallelOp loop) {
  if (loop.getNumLoops() < 2) return loop;
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  SmallVector<Value> trips;
  Value total;
  for (unsigned d = 0; d < loop.getNumLoops(); ++d) {
    Value span =
        b.createOrFold<arith::SubIOp>(loc, loop.getUpperBound()[d], loop.getLowerBound()[d]);
    Value n = b.createOrFold<arith::CeilDivSIOp>(loc, span, loop.getStep()[d]);
    n = b.createOrFold<arith::MaxSIOp>(loc, n, zero);
    trips.push_back(n);
    total = total ? b.createOrFold<arith::MulIOp>(loc, total, n) : n;
  }
  auto flat = b.create<scf::ParallelOp>(loc, ValueRange{zero}, ValueRange{total}, ValueRange{one});
  OpBuilder ib = OpBuilder::atBlockBegin(flat.getBody());
  Value rest = flat.getInductionVars()[0];
  SmallVector<Value> ivs(loop.getNumLoops());
  for (unsigned d = loop.getNumLoops(); d-- > 0;) {
    Value position = rest;
    if (d > 0) {
      position = ib.createOrFold<arith::RemUIOp>(loc, rest, trips[d]);
      rest = ib.createOrFold<arith::DivUIOp>(loc, rest, trips[d]);
    }
    Value scaled = ib.createOrFold<arith::MulIOp>(loc, position, loop.getStep()[d]);
    ivs[d] = ib.createOrFold<arith::AddIOp>(loc, loop.getLowerBound()[d], scaled);
  }
  Block* body = loop.getBody();
  for (unsigned d = 0; d < loop.getNumLoops(); ++d)
    loop.getInductionVars()[d].replaceAllUsesWith(ivs[d]);
  flat.getBody()->getOperations().splice(flat.getBody()->getTerminator()->getIterator(),
                                         body->getOperations(), body->begin(),
                                         std::prev(body->end()));
  loop.erase();
  return flat;
}

}  // namespace

SmallVector<scf::ParallelOp> exposeGridParallelism(scf::ParallelOp loop) {
  SmallVector<scf::ParallelOp> result;
  for (scf::ParallelOp part : fission(loop)) {
    if (part.getNumReductions() != 0) {
      result.push_back(part);
      continue;
    }
    while (scf::ParallelOp inner = hoistableInner(part)) part = absorb(part, inner);
    result.push_back(collapse(part));
  }
  return result;
}

}  // namespace disc_ral
}  // namespace mlir
