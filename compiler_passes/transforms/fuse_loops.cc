// disc-ral-fuse-loops: linalg ops to parallel loops, row-wise fusion of consecutive loops, and
// reduction accumulators kept in registers (Passes.td has the contract).
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/transforms/loop_analysis.h"
#include "compiler_passes/passes.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "mlir/Transforms/Passes.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DEF_FUSELOOPSPASS
#include "compiler_passes/Passes.h.inc"

namespace {

// Every linalg op on buffers -> scf.parallel (reductions as scf.for inside).
LogicalResult linalgToParallelLoops(func::FuncOp f) {
  SmallVector<linalg::LinalgOp> ops;
  f.walk([&](linalg::LinalgOp op) {
    if (op.hasPureBufferSemantics()) ops.push_back(op);
  });
  IRRewriter rewriter(f.getContext());
  for (linalg::LinalgOp op : ops) {
    rewriter.setInsertionPoint(op);
    if (failed(linalg::linalgOpToParallelLoops(rewriter, op)))
      return op->emitError("cannot be lowered to loops");
    rewriter.eraseOp(op);
  }
  return success();
}

// The size of dimension `d` of `memref` as an SSA value from where the buffer was made: an
// allocation's size operand or a reshape's output shape, through reshapes that keep the
// dimension; null when it is not known that way.
Value knownDimSize(OpBuilder& b, Location loc, Value memref, int64_t d) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type || d < 0 || d >= type.getRank()) return nullptr;
  if (!type.isDynamicDim(d)) return b.create<arith::ConstantIndexOp>(loc, type.getDimSize(d));
  Operation* def = memref.getDefiningOp();
  if (auto alloc = dyn_cast_or_null<AllocOp>(def))
    return alloc.getDynamicSizes()[type.getDynamicDimIndex(d)];
  if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(def)) {
    // A dimension the reshape keeps alone has its source's size (an allocation's size operand
    // is then preferred to whatever value the reshape was given); output_shape holds one value
    // per dynamic result dimension, in order.
    for (auto [source_dim, group] : llvm::enumerate(expand.getReassociationIndices())) {
      if (group.size() == 1 && group.front() == d) {
        if (Value v = knownDimSize(b, loc, expand.getSrc(), source_dim)) return v;
      }
    }
    return expand.getOutputShape()[type.getDynamicDimIndex(d)];
  }
  if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(def)) {
    ReassociationIndices group = collapse.getReassociationIndices()[d];
    if (group.size() != 1) return nullptr;
    return knownDimSize(b, loc, collapse.getSrc(), group.front());
  }
  if (auto cast = dyn_cast_or_null<memref::CastOp>(def))
    return knownDimSize(b, loc, cast.getSource(), d);
  return nullptr;
}

// memref.dim of a disc_ral.alloc is its size operand (upstream folds this only for
// memref.alloc), and of a reshape of one the size it was reshaped to: loops over buffers made
// with the same sizes, directly or through views, then get the same bounds.
void foldDimsOfAllocations(func::FuncOp f) {
  f.walk([](memref::DimOp dim) {
    std::optional<int64_t> d = getConstantIntValue(dim.getIndex());
    if (!d || isa_and_nonnull<memref::AllocOp>(dim.getSource().getDefiningOp())) return;
    OpBuilder b(dim);
    Value size = knownDimSize(b, dim.getLoc(), dim.getSource(), *d);
    if (!size) return;
    dim.replaceAllUsesWith(size);
    dim.erase();
  });
}

// scf.parallel (i, j, ...) -> scf.parallel (i) { scf.parallel (j, ...) }: fusion and workgroups
// then only deal with the first dimension.
void splitParallelLoops(func::FuncOp f) {
  SmallVector<scf::ParallelOp> loops;
  f.walk([&](scf::ParallelOp p) {
    if (p.getNumLoops() > 1 && p.getNumReductions() == 0) loops.push_back(p);
  });
  OpBuilder b(f.getContext());
  for (scf::ParallelOp p : loops) {
    b.setInsertionPoint(p);
    Location loc = p.getLoc();
    auto outer =
        b.create<scf::ParallelOp>(loc, p.getLowerBound().take_front(1),
                                  p.getUpperBound().take_front(1), p.getStep().take_front(1));
    b.setInsertionPointToStart(outer.getBody());
    auto inner =
        b.create<scf::ParallelOp>(loc, p.getLowerBound().drop_front(1),
                                  p.getUpperBound().drop_front(1), p.getStep().drop_front(1));
    // Move the old body into the inner loop; the old first IV is the outer one.
    Block* old_body = p.getBody();
    Block* inner_body = inner.getBody();
    inner_body->getTerminator()->erase();
    SmallVector<Value> replacements{outer.getInductionVars()[0]};
    for (Value iv : inner.getInductionVars()) replacements.push_back(iv);
    inner_body->getOperations().splice(inner_body->end(), old_body->getOperations());
    for (auto [arg, v] : llvm::zip(old_body->getArguments(), replacements))
      arg.replaceAllUsesWith(v);
    p.erase();
  }
}

bool sameBounds(scf::ParallelOp a, scf::ParallelOp b) {
  if (a.getNumLoops() != 1 || b.getNumLoops() != 1) return false;
  auto same = [](Value x, Value y) {
    if (x == y) return true;
    std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
    return cx && cy && *cx == *cy;
  };
  return same(a.getLowerBound()[0], b.getLowerBound()[0]) &&
         same(a.getUpperBound()[0], b.getUpperBound()[0]) && same(a.getStep()[0], b.getStep()[0]);
}

// Whether iteration i of `b` may run right after iteration i of `a` (see Passes.td).
bool canFuse(scf::ParallelOp a, scf::ParallelOp b) {
  if (!sameBounds(a, b) || a.getNumReductions() != 0 || b.getNumReductions() != 0) return false;
  auto accesses_a = collectAccesses(a);
  auto accesses_b = collectAccesses(b);
  if (!accesses_a || !accesses_b) return false;
  Value iv_a = a.getInductionVars()[0], iv_b = b.getInductionVars()[0];
  for (const MemoryAccess& x : *accesses_a)
    for (const MemoryAccess& y : *accesses_b) {
      if (!(x.write || y.write) || !mayAlias(x.memref, y.memref)) continue;
      Value root = rowPreservingAllocation(x.memref);
      if (!root || root != rowPreservingAllocation(y.memref)) return false;
      if (!indexedByRow(x, iv_a) || !indexedByRow(y, iv_b)) return false;
    }
  return true;
}

// Appends b's body to a's (b's IV becomes a's) and erases b.
void fuseInto(scf::ParallelOp a, scf::ParallelOp b) {
  Block* body_a = a.getBody();
  Block* body_b = b.getBody();
  body_b->getArgument(0).replaceAllUsesWith(body_a->getArgument(0));
  body_b->getTerminator()->erase();
  body_a->getOperations().splice(Block::iterator(body_a->getTerminator()), body_b->getOperations());
  b.erase();
}

// `if (cond) { signal_error }` with nothing else inside: a shape check the importer placed
// between two loops.
bool isErrorCheck(Operation* op) {
  auto check = dyn_cast<scf::IfOp>(op);
  if (!check || check.getNumResults() != 0 || !check.getElseRegion().empty()) return false;
  for (Operation& inner : check.getThenRegion().front()) {
    if (!isa<SignalErrorOp, scf::YieldOp>(inner) && !isMemoryEffectFree(&inner)) return false;
  }
  return true;
}

bool signalsErrors(Operation* op) {
  return op->walk([](SignalErrorOp) { return WalkResult::interrupt(); }).wasInterrupted();
}

void fuseSiblings(Block& block) {
  for (auto it = block.begin(); it != block.end(); ++it) {
    auto first = dyn_cast<scf::ParallelOp>(&*it);
    if (!first) continue;
    while (true) {
      // Pure ops between the loops (dims, index arithmetic) can run before the first one.
      Operation* next = first->getNextNode();
      SmallVector<Operation*> between;
      // Allocations (of the buffers the next loop fills) move up too: only their lifetime grows.
      // So do shape checks when the first loop cannot fail itself: a failing check ends the
      // execution, which then only skips a loop whose results fail with it, and the error
      // reported stays the first one.
      const bool first_may_fail = signalsErrors(first);
      while (next && !isa<scf::ParallelOp>(next) &&
             ((next->getNumRegions() == 0 &&
               (isMemoryEffectFree(next) || isa<AllocOp, memref::AllocOp>(next))) ||
              (!first_may_fail && isErrorCheck(next)))) {
        between.push_back(next);
        next = next->getNextNode();
      }
      auto second = dyn_cast_or_null<scf::ParallelOp>(next);
      if (!second) break;
      // Hoisting `between` keeps the loop bounds (often defined there) dominating both loops.
      for (Operation* op : between) op->moveBefore(first);
      if (!canFuse(first, second)) break;
      fuseInto(first, second);
    }
  }
}

// Keeps a reduction's accumulator in a register: inside `loop`, the one load and the one store
// of element m[idx] (idx invariant) of a fresh buffer, or of a view of one when `views`, become
// an iter_arg. Returns the loop that replaces `loop`, or null when there was nothing to promote.
scf::ForOp promoteAccumulator(scf::ForOp loop, bool views) {
  auto accesses = collectAccesses(loop);
  if (!accesses) return nullptr;
  Block* body = loop.getBody();
  for (Operation& op : *body) {
    auto load = dyn_cast<memref::LoadOp>(&op);
    if (!load || !isFreshAllocation(views ? viewRoot(load.getMemRef()) : load.getMemRef()))
      continue;
    if (llvm::any_of(load.getIndices(), [&](Value v) { return !loop.isDefinedOutsideOfLoop(v); }))
      continue;
    Value m = load.getMemRef();
    // Besides the load, exactly one access may touch m: a store of the same element, later in
    // the same block.
    memref::StoreOp store;
    bool other_access = false;
    for (const MemoryAccess& a : *accesses) {
      if (a.op == load || !mayAlias(a.memref, m)) continue;
      auto s = dyn_cast<memref::StoreOp>(a.op);
      if (s && !store && s->getBlock() == body && s.getMemRef() == m &&
          s.getIndices() == load.getIndices())
        store = s;
      else
        other_access = true;
    }
    if (other_access || !store || !load->isBeforeInBlock(store)) continue;

    IRRewriter rewriter(loop.getContext());
    rewriter.setInsertionPoint(loop);
    const SmallVector<Value> indices(load.getIndices());
    Value init = rewriter.create<memref::LoadOp>(load.getLoc(), m, indices);
    Value stored = store.getValueToStore();
    auto result = loop.replaceWithAdditionalYields(
        rewriter, ValueRange{init}, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder&, Location, ArrayRef<BlockArgument>) { return SmallVector<Value>{stored}; });
    if (failed(result)) return nullptr;
    auto promoted = cast<scf::ForOp>(result->getOperation());
    rewriter.replaceAllUsesWith(load.getResult(), promoted.getRegionIterArgs().back());
    rewriter.eraseOp(load);
    rewriter.eraseOp(store);
    rewriter.setInsertionPointAfter(promoted);
    rewriter.create<memref::StoreOp>(promoted.getLoc(), promoted.getResults().back(), m, indices);
    // A float reduction may be reassociated: LLVM then keeps one partial result per vector lane.
    if (auto fm = stored.getDefiningOp<arith::ArithFastMathInterface>();
        fm && isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
                  arith::MaxNumFOp, arith::MinNumFOp>(stored.getDefiningOp())) {
      // An op built without the attribute (generic builders) has none: no flags yet.
      arith::FastMathFlagsAttr flags = fm.getFastMathFlagsAttr();
      const arith::FastMathFlags old_flags = flags ? flags.getValue() : arith::FastMathFlags::none;
      stored.getDefiningOp()->setAttr(
          fm.getFastMathAttrName(),
          arith::FastMathFlagsAttr::get(rewriter.getContext(),
                                        old_flags | arith::FastMathFlags::reassoc));
    }
    return promoted;
  }
  return nullptr;
}

void promoteAccumulators(func::FuncOp f, bool views) {
  // Innermost loops first: an outer loop's accumulator appears once the inner one is promoted.
  // A promotion only adds a load and a store around the loop, in its parent: the loops before it
  // in post order (inside it, or earlier siblings) see no change, so one pass over the loops
  // suffices; restarting after each promotion was cubic in the depth of a loop nest.
  SmallVector<scf::ForOp> loops;
  f.walk<WalkOrder::PostOrder>([&](scf::ForOp loop) { loops.push_back(loop); });
  for (scf::ForOp loop : loops)
    while (scf::ForOp promoted = promoteAccumulator(loop, views)) loop = promoted;
}

// Loads of a fresh buffer at indices fixed in a loop, which nothing in the loop may write, move
// out of it; then what depends only on them (a row's mean, 1/sqrt(variance)) follows. LLVM could
// not do this itself: it cannot tell that the buffer is not the one the loop stores to.
void hoistInvariantLoads(func::FuncOp f) {
  SmallVector<LoopLikeOpInterface> loops;
  f.walk<WalkOrder::PostOrder>([&](LoopLikeOpInterface loop) {
    if (isa<scf::ForOp, scf::ParallelOp>(loop)) loops.push_back(loop);
  });
  for (LoopLikeOpInterface loop : loops) {
    auto accesses = collectAccesses(loop);
    if (!accesses) continue;
    Block& body = loop->getRegion(0).front();
    for (Operation& op : llvm::make_early_inc_range(body)) {
      auto load = dyn_cast<memref::LoadOp>(&op);
      if (!load || !isFreshAllocation(viewRoot(load.getMemRef()))) continue;
      if (!llvm::all_of(load->getOperands(),
                        [&](Value v) { return loop.isDefinedOutsideOfLoop(v); }))
        continue;
      if (llvm::any_of(*accesses, [&](const MemoryAccess& a) {
            return a.write && mayAlias(a.memref, load.getMemRef());
          }))
        continue;
      loop.moveOutOfLoop(load);
    }
    moveLoopInvariantCode(loop);
  }
}

class FuseLoopsPass : public impl::FuseLoopsPassBase<FuseLoopsPass> {
 public:
  using FuseLoopsPassBase::FuseLoopsPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (func::FuncOp f : module.getOps<func::FuncOp>()) {
      if (f.isExternal()) continue;
      if (failed(linalgToParallelLoops(f))) return signalPassFailure();
      foldDimsOfAllocations(f);
    }
    // Loop bounds from memref.dim of buffers of the same size become the same SSA value.
    OpPassManager cleanup(ModuleOp::getOperationName());
    cleanup.addPass(createCanonicalizerPass());
    cleanup.addPass(createCSEPass());
    if (failed(runPipeline(cleanup, module))) return signalPassFailure();
    for (func::FuncOp f : module.getOps<func::FuncOp>()) {
      if (f.isExternal()) continue;
      splitParallelLoops(f);
      // Blocks holding outermost parallel loops; fusion never erases them.
      llvm::SetVector<Block*> blocks;
      f.walk([&](scf::ParallelOp p) {
        if (!p->getParentOfType<scf::ParallelOp>()) blocks.insert(p->getBlock());
      });
      for (Block* block : blocks) fuseSiblings(*block);
      // A device splits long reductions whose accumulator is in memory (grid_parallelism.h);
      // those through views keep that form there.
      promoteAccumulators(f, device == "cpu");
      hoistInvariantLoads(f);
    }
  }
};

}  // namespace
}  // namespace disc_ral
}  // namespace mlir
