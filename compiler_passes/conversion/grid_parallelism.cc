// Parallel dimensions for device kernels' grids (grid_parallelism.h has the rules).
#include "compiler_passes/conversion/grid_parallelism.h"

#include <limits>

#include "compiler_passes/conversion/kernel_common.h"
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/transforms/loop_analysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace disc_ral {

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

TypedAttr reductionIdentity(Operation* op) {
  auto type = dyn_cast<FloatType>(op->getResult(0).getType());
  if (!type) return nullptr;
  const llvm::fltSemantics& sem = type.getFloatSemantics();
  if (isa<arith::AddFOp>(op)) return FloatAttr::get(type, llvm::APFloat::getZero(sem));
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
    return FloatAttr::get(type, llvm::APFloat::getInf(sem, /*Negative=*/true));
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(op))
    return FloatAttr::get(type, llvm::APFloat::getInf(sem, /*Negative=*/false));
  return nullptr;
}

std::optional<Accumulation> matchAccumulation(Block& body) {
  Accumulation a{};
  for (Operation& o : body.without_terminator()) {
    if (auto store = dyn_cast<memref::StoreOp>(&o)) {
      if (a.store) return std::nullopt;
      a.store = store;
    } else if (!isa<memref::LoadOp>(&o) && !isPureLeaf(o)) {
      return std::nullopt;
    }
  }
  if (!a.store) return std::nullopt;
  a.combine = a.store.getValueToStore().getDefiningOp();
  if (!a.combine || a.combine->getNumOperands() != 2 || !reductionIdentity(a.combine))
    return std::nullopt;
  for (Value operand : a.combine->getOperands()) {
    auto load = operand.getDefiningOp<memref::LoadOp>();
    if (load && load.getMemref() == a.store.getMemref() &&
        llvm::equal(load.getIndices(), a.store.getIndices()))
      a.load = load;
  }
  if (!a.load || !a.load->hasOneUse() || !a.combine->getResult(0).hasOneUse() ||
      a.combine->getOperand(0) == a.combine->getOperand(1))
    return std::nullopt;
  return a;
}

int64_t constantTrips(scf::ForOp f) {
  const int64_t lb = *getConstantIntValue(f.getLowerBound());
  const int64_t ub = *getConstantIntValue(f.getUpperBound());
  const int64_t step = *getConstantIntValue(f.getStep());
  if (ub <= lb) return 0;
  const uint64_t span = static_cast<uint64_t>(ub) - static_cast<uint64_t>(lb);
  return static_cast<int64_t>((span - 1) / static_cast<uint64_t>(step) + 1);
}

std::pair<Value, Value> partOfRange(OpBuilder& b, Location loc, scf::ForOp f, int64_t parts,
                                    Value k) {
  const int64_t lb = *getConstantIntValue(f.getLowerBound());
  const int64_t ub = *getConstantIntValue(f.getUpperBound());
  const int64_t step = *getConstantIntValue(f.getStep());
  const int64_t chunk = llvm::divideCeil(constantTrips(f), parts) * step;
  Value from = b.create<arith::AddIOp>(
      loc, b.create<arith::ConstantIndexOp>(loc, lb),
      b.create<arith::MulIOp>(loc, k, b.create<arith::ConstantIndexOp>(loc, chunk)));
  Value to = b.create<arith::MinSIOp>(
      loc, b.create<arith::AddIOp>(loc, from, b.create<arith::ConstantIndexOp>(loc, chunk)),
      b.create<arith::ConstantIndexOp>(loc, ub));
  return {from, to};
}

namespace {

bool isPlainParallel(Operation* op) {
  auto p = dyn_cast<scf::ParallelOp>(op);
  return p && p.getNumReductions() == 0;
}

bool boundsDefinedOutside(scf::ParallelOp inner, scf::ParallelOp outer) {
  for (ValueRange values : {ValueRange(inner.getLowerBound()), ValueRange(inner.getUpperBound()),
                            ValueRange(inner.getStep())})
    for (Value v : values)
      if (!outer.isDefinedOutsideOfLoop(v)) return false;
  return true;
}

// Whether `v` is computed inside `op` (a view made per iteration of a loop, say).
bool definedInside(Value v, Operation* op) {
  return op->isAncestor(v.getParentBlock()->getParentOp());
}

// Whether every buffer `p` writes is written and read in `p` only element-wise in p's
// induction variables (see the header) and is the same buffer in every iteration of `around`
// (the outermost loop p would move out of), so p may move outside the loops around it.
bool writesElementwise(scf::ParallelOp p, Operation* around) {
  std::optional<SmallVector<MemoryAccess>> accesses = collectAccesses(p);
  if (!accesses) return false;
  auto indicesOf = [](Operation* op) -> ValueRange {
    if (auto load = dyn_cast<memref::LoadOp>(op)) return load.getIndices();
    return cast<memref::StoreOp>(op).getIndices();
  };
  for (const MemoryAccess& w : *accesses) {
    if (!w.write) continue;
    if (definedInside(w.memref, around)) return false;
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
  Operation* first_for = dyn_cast_or_null<scf::ForOp>(op);
  while (auto f = dyn_cast_or_null<scf::ForOp>(op)) {
    if (!f.getInitArgs().empty()) return nullptr;
    op = soleNonPureOp(*f.getBody());
  }
  if (!op || !isPlainParallel(op)) return nullptr;
  auto inner = cast<scf::ParallelOp>(op);
  if (!boundsDefinedOutside(inner, loop)) return nullptr;
  if (first_for && !writesElementwise(inner, first_for)) return nullptr;
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
      concat(loop.getUpperBound(), inner.getUpperBound()), concat(loop.getStep(), inner.getStep()));
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
    auto part = b.create<scf::ParallelOp>(loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(),
                                          loop.getStep());
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

// ---- Split reductions ----------------------------------------------------------------------
// scf.parallel (i) { scf.for r1 { ... scf.for rm { B[idx] = B[idx] (+) f(...) } } } with few
// parallel iterations and many reduction steps (a mean over 112x112 positions per channel) runs
// as two kernels: K parts of r1's range each fold their slice into a partial (from the
// operation's identity), then one fold per element adds the K partials to B[idx] in order.

constexpr int64_t kSplitMinSteps = 512;         // reduction steps per element worth splitting
constexpr int64_t kSplitMaxParallel = 8192;     // parallel iterations (static part) below which
constexpr int64_t kSplitTargetThreads = 16384;  // partial sums wanted in all

struct SplitReduction {
  SmallVector<scf::ForOp> fors;  // outermost first
  memref::LoadOp load;           // B[idx]
  memref::StoreOp store;         // B[idx] = combine
  Operation* combine;            // op(load, value) or op(value, load)
  int64_t parts = 0;
};

std::optional<SplitReduction> splitReductionOf(scf::ParallelOp loop) {
  SplitReduction r;
  Operation* op = soleNonPureOp(*loop.getBody());
  int64_t steps = 1;
  while (auto f = dyn_cast_or_null<scf::ForOp>(op)) {
    if (!f.getInitArgs().empty()) return std::nullopt;
    for (Value v : {f.getLowerBound(), f.getUpperBound(), f.getStep()})
      if (!loop.isDefinedOutsideOfLoop(v) || !getConstantIntValue(v)) return std::nullopt;
    const int64_t step = *getConstantIntValue(f.getStep());
    if (step <= 0) return std::nullopt;
    const int64_t trips = constantTrips(f);
    // Only whether there are enough steps matters: saturate rather than overflow.
    steps = trips != 0 && steps > std::numeric_limits<int64_t>::max() / trips
                ? std::numeric_limits<int64_t>::max()
                : steps * trips;
    r.fors.push_back(f);
    Block* body = f.getBody();
    op = soleNonPureOp(*body);
    if (!isa_and_nonnull<scf::ForOp>(op)) break;
  }
  if (r.fors.empty() || steps < kSplitMinSteps) return std::nullopt;
  std::optional<Accumulation> acc = matchAccumulation(*r.fors.back().getBody());
  if (!acc) return std::nullopt;
  r.load = acc->load;
  r.store = acc->store;
  r.combine = acc->combine;
  // B[idx] is the same element all through the reduction, and nothing else reads B.
  Operation* outer_for = r.fors.front();
  for (Value i : r.store.getIndices())
    if (definedInside(i, outer_for)) return std::nullopt;
  Value b = r.store.getMemref();
  if (definedInside(b, outer_for)) return std::nullopt;
  for (Operation& o : r.fors.back().getBody()->without_terminator())
    if (auto load = dyn_cast<memref::LoadOp>(&o))
      if (load != r.load && mayAlias(load.getMemref(), b)) return std::nullopt;
  // Few parallel iterations: the split gives the grid K times more.
  int64_t parallel = 1;
  for (unsigned d = 0; d < loop.getNumLoops(); ++d) {
    if (getConstantIntValue(loop.getLowerBound()[d]) != 0 ||
        getConstantIntValue(loop.getStep()[d]) != 1)
      return std::nullopt;
    if (std::optional<int64_t> n = getConstantIntValue(loop.getUpperBound()[d])) {
      if (*n <= 0 || *n > kSplitMaxParallel) return std::nullopt;  // empty, or enough threads
      parallel *= *n;
      if (parallel > kSplitMaxParallel) return std::nullopt;
    }
  }
  r.parts = std::min<int64_t>(constantTrips(r.fors.front()),
                              llvm::divideCeil(kSplitTargetThreads, parallel));
  if (r.parts < 2) return std::nullopt;
  return r;
}

// Clones the for chain from `level` on with an accumulator: returns the chain's folded value.
Value cloneFolding(OpBuilder& b, SplitReduction r, size_t level, Value acc, IRMapping& mapping,
                   Value lb, Value ub) {
  scf::ForOp f = r.fors[level];
  auto copy = b.create<scf::ForOp>(f.getLoc(), lb, ub, mapping.lookupOrDefault(f.getStep()),
                                   ValueRange{acc});
  mapping.map(f.getInductionVar(), copy.getInductionVar());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(copy.getBody());
  Value inner = copy.getRegionIterArgs()[0];
  Value result;
  if (level + 1 < r.fors.size()) {
    scf::ForOp next = r.fors[level + 1];
    for (Operation& o : f.getBody()->without_terminator())
      if (&o != next.getOperation()) b.clone(o, mapping);
    result =
        cloneFolding(b, r, level + 1, inner, mapping, mapping.lookupOrDefault(next.getLowerBound()),
                     mapping.lookupOrDefault(next.getUpperBound()));
  } else {
    mapping.map(r.load.getResult(), inner);
    for (Operation& o : f.getBody()->without_terminator())
      if (&o != r.load.getOperation() && &o != r.store.getOperation()) b.clone(o, mapping);
    result = mapping.lookup(r.combine->getResult(0));
  }
  b.create<scf::YieldOp>(f.getLoc(), result);
  return copy.getResult(0);
}

// The two loops that replace `loop` (see above), with the partials' buffer made before them and
// released after them.
SmallVector<scf::ParallelOp> splitReduction(scf::ParallelOp loop, Value ctx, SplitReduction r) {
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  const unsigned dims = loop.getNumLoops();
  auto elem = r.store.getValueToStore().getType();
  // partials[k, i0, ..., in-1]
  SmallVector<int64_t> shape{r.parts};
  SmallVector<Value> dynamic;
  for (unsigned d = 0; d < dims; ++d) {
    std::optional<int64_t> n = getConstantIntValue(loop.getUpperBound()[d]);
    shape.push_back(n ? *n : ShapedType::kDynamic);
    if (!n) dynamic.push_back(loop.getUpperBound()[d]);
  }
  auto type = MemRefType::get(shape, elem);
  Value partials = b.create<AllocOp>(loc, type, ctx, dynamic, IntegerAttr());

  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value parts = b.create<arith::ConstantIndexOp>(loc, r.parts);
  scf::ForOp first = r.fors.front();

  // Phase 1: part k folds its slice of the first loop into partials[k, i...].
  // The part is the outermost dimension, so neighbouring threads take neighbouring elements
  // (channels, in a channels-last mean) and their loads coalesce.
  SmallVector<Value> lbs{zero}, ubs{parts}, steps{one};
  lbs.append(loop.getLowerBound().begin(), loop.getLowerBound().end());
  ubs.append(loop.getUpperBound().begin(), loop.getUpperBound().end());
  steps.append(loop.getStep().begin(), loop.getStep().end());
  auto phase1 = b.create<scf::ParallelOp>(loc, lbs, ubs, steps);
  {
    IRMapping mapping;
    for (unsigned d = 0; d < dims; ++d)
      mapping.map(loop.getInductionVars()[d], phase1.getInductionVars()[d + 1]);
    OpBuilder pb = OpBuilder::atBlockTerminator(phase1.getBody());
    for (Operation& o : loop.getBody()->without_terminator())
      if (&o != first.getOperation()) pb.clone(o, mapping);
    Value k = phase1.getInductionVars()[0];
    auto [from, to] = partOfRange(pb, loc, first, r.parts, k);
    Value identity = pb.create<arith::ConstantOp>(loc, reductionIdentity(r.combine));
    Value folded = cloneFolding(pb, r, 0, identity, mapping, from, to);
    SmallVector<Value> at(phase1.getInductionVars());
    pb.create<memref::StoreOp>(loc, folded, partials, at);
  }
  // Phase 2: B[idx] folds the parts in order.
  auto phase2 =
      b.create<scf::ParallelOp>(loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
  {
    IRMapping mapping;
    for (unsigned d = 0; d < dims; ++d)
      mapping.map(loop.getInductionVars()[d], phase2.getInductionVars()[d]);
    OpBuilder pb = OpBuilder::atBlockTerminator(phase2.getBody());
    for (Operation& o : loop.getBody()->without_terminator())
      if (&o != first.getOperation()) pb.clone(o, mapping);
    Value target = mapping.lookupOrDefault(r.store.getMemref());
    SmallVector<Value> idx;
    for (Value i : r.store.getIndices()) idx.push_back(mapping.lookupOrDefault(i));
    Value start = pb.create<memref::LoadOp>(loc, target, idx);
    auto fold = pb.create<scf::ForOp>(loc, zero, parts, one, ValueRange{start});
    {
      OpBuilder fb = OpBuilder::atBlockBegin(fold.getBody());
      SmallVector<Value> at{fold.getInductionVar()};
      for (unsigned d = 0; d < dims; ++d) at.push_back(phase2.getInductionVars()[d]);
      Value part = fb.create<memref::LoadOp>(loc, partials, at);
      Value acc = fold.getRegionIterArgs()[0];
      // The same operand order as the original combine: acc takes the place of B[idx].
      const bool acc_first = r.combine->getOperand(0) == r.load.getResult();
      OperationState state(loc, r.combine->getName());
      state.addOperands(acc_first ? ValueRange{acc, part} : ValueRange{part, acc});
      state.addTypes(elem);
      state.addAttributes(r.combine->getAttrs());
      Value combined = fb.create(state)->getResult(0);
      fb.create<scf::YieldOp>(loc, combined);
    }
    pb.create<memref::StoreOp>(loc, fold.getResult(0), target, idx);
  }
  b.setInsertionPointAfter(loop);
  b.create<DeallocOp>(loc, ctx, partials);
  loop.erase();
  return {phase1, phase2};
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
    Value n = tripCount(b, loop, d);
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

SmallVector<scf::ParallelOp> exposeGridParallelism(scf::ParallelOp loop, Value ctx) {
  SmallVector<scf::ParallelOp> result;
  for (scf::ParallelOp part : fission(loop)) {
    if (part.getNumReductions() != 0) {
      result.push_back(part);
      continue;
    }
    while (scf::ParallelOp inner = hoistableInner(part)) part = absorb(part, inner);
    if (std::optional<SplitReduction> split = splitReductionOf(part)) {
      for (scf::ParallelOp phase : splitReduction(part, ctx, *split))
        result.push_back(collapse(phase));
      continue;
    }
    result.push_back(collapse(part));
  }
  return result;
}

}  // namespace disc_ral
}  // namespace mlir
