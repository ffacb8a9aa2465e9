// A row's long reduction in parts (host_split_reduction.h).
#include "compiler_passes/conversion/host_split_reduction.h"

#include <limits>

#include "compiler_passes/conversion/grid_parallelism.h"
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/transforms/loop_analysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace disc_ral {
namespace {

constexpr int64_t kMinSteps = 512;  // reduction steps per element worth splitting
constexpr int64_t kMaxParts = 8;    // parts of the outermost scf.for's range
// Elements a part sums on the stack (4 KiB of f32) before it copies them to its partials: LLVM
// knows a stack buffer aliases nothing the chain reads, so the sums stay in vector registers;
// into the partials' heap buffer it stored every sum back before the next load, in scalars.
constexpr int64_t kMaxLocalElements = 1024;

struct Split {
  SmallVector<scf::ForOp> fors;  // outermost first
  scf::ParallelOp inner;         // the elements, inside the innermost scf.for
  memref::LoadOp load;           // B[idx]
  memref::StoreOp store;         // B[idx] = combine
  Operation* combine;
  SmallVector<int64_t> inner_trips;
  int64_t parts = 0;
};

bool isConstant(Value v, int64_t want) {
  std::optional<int64_t> c = getConstantIntValue(v);
  return c && *c == want;
}

std::optional<Split> match(scf::ParallelOp loop) {
  if (loop.getNumLoops() != 1 || loop.getNumReductions() != 0 ||
      !isConstant(loop.getLowerBound()[0], 0) || !isConstant(loop.getStep()[0], 1))
    return std::nullopt;
  Block* row = loop.getBody();
  // The row's one scf.for: the reduction.
  scf::ForOp first;
  for (Operation& op : row->without_terminator()) {
    if (auto f = dyn_cast<scf::ForOp>(&op)) {
      if (first) return std::nullopt;
      first = f;
    }
  }
  if (!first) return std::nullopt;
  Split s;
  int64_t steps = 1;
  Operation* op = first;
  while (auto f = dyn_cast_or_null<scf::ForOp>(op)) {
    if (!f.getInitArgs().empty()) return std::nullopt;
    for (Value v : {f.getLowerBound(), f.getUpperBound(), f.getStep()})
      if (!getConstantIntValue(v)) return std::nullopt;
    if (*getConstantIntValue(f.getStep()) <= 0) return std::nullopt;
    const int64_t trips = constantTrips(f);
    steps = trips != 0 && steps > std::numeric_limits<int64_t>::max() / trips
                ? std::numeric_limits<int64_t>::max()
                : steps * trips;
    s.fors.push_back(f);
    op = soleNonPureOp(*f.getBody());
  }
  s.inner = dyn_cast_or_null<scf::ParallelOp>(op);
  if (!s.inner || s.inner.getNumReductions() != 0 || steps < kMinSteps) return std::nullopt;
  for (unsigned d = 0; d < s.inner.getNumLoops(); ++d) {
    std::optional<int64_t> ub = getConstantIntValue(s.inner.getUpperBound()[d]);
    if (!isConstant(s.inner.getLowerBound()[d], 0) || !isConstant(s.inner.getStep()[d], 1) || !ub ||
        *ub <= 0)
      return std::nullopt;
    s.inner_trips.push_back(*ub);
  }
  // The elements' body: B[idx] = combine(B[idx], value), B from outside the row.
  std::optional<Accumulation> acc = matchAccumulation(*s.inner.getBody());
  if (!acc) return std::nullopt;
  s.load = acc->load;
  s.store = acc->store;
  s.combine = acc->combine;
  Value b = s.store.getMemref();
  if (!loop.isDefinedOutsideOfLoop(b)) return std::nullopt;
  // idx: the elements' and the row's induction variables, or values from outside the row.
  for (Value i : s.store.getIndices()) {
    if (loop.isDefinedOutsideOfLoop(i) || i == loop.getInductionVars()[0]) continue;
    if (!llvm::is_contained(s.inner.getInductionVars(), i)) return std::nullopt;
  }
  // Nothing else in the chain reads B.
  for (Operation& o : s.inner.getBody()->without_terminator())
    if (auto load = dyn_cast<memref::LoadOp>(&o))
      if (load != s.load && mayAlias(load.getMemref(), b)) return std::nullopt;
  // What comes before the chain in the row writes B only (B's initial values), and only pure
  // ops of the row feed the chain: the partials may then be computed before the row runs.
  for (Operation& o : *row) {
    if (&o == first.getOperation()) break;
    if (isPureLeaf(o)) continue;
    std::optional<SmallVector<MemoryAccess>> accesses = collectAccesses(&o);
    if (!accesses) return std::nullopt;
    for (const MemoryAccess& a : *accesses)
      if (!a.write || viewRoot(a.memref) != viewRoot(b)) return std::nullopt;
  }
  WalkResult uses = first->walk([&](Operation* inside) {
    for (Value v : inside->getOperands()) {
      Operation* def = v.getDefiningOp();
      if (def && def->getBlock() == row && !isPureLeaf(*def)) return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (uses.wasInterrupted()) return std::nullopt;
  s.parts = std::min<int64_t>(constantTrips(first), kMaxParts);
  if (s.parts < 2) return std::nullopt;
  return s;
}

// Clones the chain from `level` on into `b`, each element folding into partials[prefix...,
// elements] instead of B[idx]; the outermost loop over [lb, ub).
void cloneIntoPartials(OpBuilder& b, Split& s, size_t level, IRMapping& mapping, Value lb, Value ub,
                       Value partials, ValueRange prefix) {
  scf::ForOp f = s.fors[level];
  Location loc = f.getLoc();
  auto copy = b.create<scf::ForOp>(loc, lb, ub, mapping.lookupOrDefault(f.getStep()));
  mapping.map(f.getInductionVar(), copy.getInductionVar());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(copy.getBody()->getTerminator());
  Operation* next =
      level + 1 < s.fors.size() ? s.fors[level + 1].getOperation() : s.inner.getOperation();
  for (Operation& o : f.getBody()->without_terminator())
    if (&o != next) b.clone(o, mapping);
  if (level + 1 < s.fors.size()) {
    scf::ForOp n = s.fors[level + 1];
    cloneIntoPartials(b, s, level + 1, mapping, mapping.lookupOrDefault(n.getLowerBound()),
                      mapping.lookupOrDefault(n.getUpperBound()), partials, prefix);
    return;
  }
  auto elements = b.create<scf::ParallelOp>(loc, s.inner.getLowerBound(), s.inner.getUpperBound(),
                                            s.inner.getStep());
  b.setInsertionPoint(elements.getBody()->getTerminator());
  SmallVector<Value> at(prefix);
  llvm::append_range(at, elements.getInductionVars());
  for (auto [from, to] : llvm::zip(s.inner.getInductionVars(), elements.getInductionVars()))
    mapping.map(from, to);
  mapping.map(s.load.getResult(), b.create<memref::LoadOp>(loc, partials, at));
  for (Operation& o : s.inner.getBody()->without_terminator())
    if (&o != s.load.getOperation() && &o != s.store.getOperation()) b.clone(o, mapping);
  b.create<memref::StoreOp>(loc, mapping.lookup(s.combine->getResult(0)), partials, at);
}

}  // namespace

SmallVector<scf::ParallelOp> splitHostReduction(scf::ParallelOp loop, Value ctx) {
  std::optional<Split> found = match(loop);
  if (!found) return {loop};
  Split& s = *found;
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  Type elem = s.store.getValueToStore().getType();
  Value rows = loop.getUpperBound()[0];
  // P[k, n, elements...]
  SmallVector<int64_t> shape{s.parts, ShapedType::kDynamic};
  shape.append(s.inner_trips.begin(), s.inner_trips.end());
  Value partials =
      b.create<AllocOp>(loc, MemRefType::get(shape, elem), ctx, ValueRange{rows}, IntegerAttr());
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value parts = b.create<arith::ConstantIndexOp>(loc, s.parts);
  scf::ForOp first = s.fors.front();

  // Phase 1: part k of every row folds its slice into P[k, n, ...].
  auto phase1 =
      b.create<scf::ParallelOp>(loc, ValueRange{zero}, ValueRange{parts}, ValueRange{one});
  {
    OpBuilder pb = OpBuilder::atBlockTerminator(phase1.getBody());
    Value k = phase1.getInductionVars()[0];
    // The stack buffer, one per part (outside the rows, which reuse it one after another).
    int64_t elements = 1;
    for (int64_t t : s.inner_trips) elements *= t;
    Value local;
    if (elements <= kMaxLocalElements && elem.isIntOrFloat())
      local = pb.create<memref::AllocaOp>(loc, MemRefType::get(s.inner_trips, elem));
    auto per_row =
        pb.create<scf::ParallelOp>(loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
    pb.setInsertionPoint(per_row.getBody()->getTerminator());
    IRMapping mapping;
    mapping.map(loop.getInductionVars()[0], per_row.getInductionVars()[0]);
    for (Operation& o : loop.getBody()->without_terminator()) {
      if (&o == first.getOperation()) break;
      if (isPureLeaf(o)) pb.clone(o, mapping);
    }
    Value identity = pb.create<arith::ConstantOp>(loc, reductionIdentity(s.combine));
    SmallVector<Value> prefix{k, per_row.getInductionVars()[0]};
    // Over the elements: body(builder, their indices in P, their indices in the stack buffer).
    auto forElements = [&](auto body) {
      auto each = pb.create<scf::ParallelOp>(loc, s.inner.getLowerBound(), s.inner.getUpperBound(),
                                             s.inner.getStep());
      OpBuilder eb = OpBuilder::atBlockTerminator(each.getBody());
      SmallVector<Value> at(prefix);
      llvm::append_range(at, each.getInductionVars());
      body(eb, at, each.getInductionVars());
    };
    forElements([&](OpBuilder& eb, ValueRange at, ValueRange idx) {
      if (local)
        eb.create<memref::StoreOp>(loc, identity, local, idx);
      else
        eb.create<memref::StoreOp>(loc, identity, partials, at);
    });
    auto [from, to] = partOfRange(pb, loc, first, s.parts, k);
    if (local) {
      cloneIntoPartials(pb, s, 0, mapping, from, to, local, {});
      forElements([&](OpBuilder& eb, ValueRange at, ValueRange idx) {
        eb.create<memref::StoreOp>(loc, eb.create<memref::LoadOp>(loc, local, idx), partials, at);
      });
    } else {
      cloneIntoPartials(pb, s, 0, mapping, from, to, partials, prefix);
    }
  }

  // Phase 2: in the row, the chain becomes B[idx] folding the parts in order.
  {
    OpBuilder rb(first);
    auto fold = rb.create<scf::ParallelOp>(loc, s.inner.getLowerBound(), s.inner.getUpperBound(),
                                           s.inner.getStep());
    OpBuilder eb = OpBuilder::atBlockTerminator(fold.getBody());
    IRMapping mapping;
    for (auto [from, to] : llvm::zip(s.inner.getInductionVars(), fold.getInductionVars()))
      mapping.map(from, to);
    SmallVector<Value> idx;
    for (Value i : s.store.getIndices()) idx.push_back(mapping.lookupOrDefault(i));
    Value target = s.store.getMemref();
    Value start = eb.create<memref::LoadOp>(loc, target, idx);
    auto over_parts = eb.create<scf::ForOp>(loc, zero, parts, one, ValueRange{start});
    {
      OpBuilder fb = OpBuilder::atBlockBegin(over_parts.getBody());
      SmallVector<Value> at{over_parts.getInductionVar(), loop.getInductionVars()[0]};
      llvm::append_range(at, fold.getInductionVars());
      Value part = fb.create<memref::LoadOp>(loc, partials, at);
      Value acc = over_parts.getRegionIterArgs()[0];
      // The combine as it was, acc where B[idx] was and the part where the value was.
      IRMapping operands;
      for (Value operand : s.combine->getOperands())
        operands.map(operand, operand == s.load.getResult() ? acc : part);
      fb.create<scf::YieldOp>(loc, fb.clone(*s.combine, operands)->getResult(0));
    }
    eb.create<memref::StoreOp>(loc, over_parts.getResult(0), target, idx);
    first.erase();
  }
  b.setInsertionPointAfter(loop);
  b.create<DeallocOp>(loc, ctx, partials);
  return {phase1, loop};
}

SmallVector<scf::ParallelOp> splitHostReductionNest(scf::ForOp nest, Value ctx) {
  OpBuilder b(nest);
  Location loc = nest.getLoc();
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto row = b.create<scf::ParallelOp>(loc, ValueRange{zero}, ValueRange{one}, ValueRange{one});
  nest->moveBefore(row.getBody()->getTerminator());
  if (!match(row)) {
    nest->moveBefore(row);
    row.erase();
    one.getDefiningOp()->erase();
    zero.getDefiningOp()->erase();
    return {};
  }
  return splitHostReduction(row, ctx);
}

}  // namespace disc_ral
}  // namespace mlir
