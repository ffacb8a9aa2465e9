// Device kernels (SPIR-V, CUDA, HSA) run one loop iteration per GPU thread, over the outermost
// loop only; what is nested inside runs sequentially in the thread. The loops the fusion pass
// makes keep the batch as their own outermost loop (host kernels split over it), so at batch 1 a
// device kernel ran a whole 112x112x64 pool on one thread. This step gives the grid every
// parallel dimension it can take before a loop is outlined:
//
//   - fission: a loop whose body is parallel loops (and pure arithmetic) becomes one loop per
//     inner loop, each launched as its own kernel (legal for scf.parallel: its iterations may
//     already run in any order, so no iteration depends on another's inner loops);
//   - merging: scf.parallel (i) { pure; scf.parallel (j) { S } } becomes scf.parallel (i, j)
//     when j's bounds do not depend on i;
//   - interchange: scf.parallel (i) { scf.for k { scf.parallel (c) { S } } } becomes
//     scf.parallel (i, c) { scf.for k { S } } (a reduction window walked per output element)
//     when S's writes are element-wise in c: every buffer S writes is accessed in S only at one
//     index list, which holds each of c's induction variables, and no buffer S reads may alias
//     it. Otherwise the loops stay as they are;
//   - split reduction: scf.parallel (i) { scf.for r1 { ... { B[idx] = B[idx] (+) f } } } with
//     few parallel iterations (at most 8192 known at compile time) and at least 512 steps per
//     element, where (+) is addf, maximumf, minimumf, maxnumf or minnumf, idx does not change
//     inside the scf.for loops and nothing else there may read B: K parts of r1's range fold
//     their slice from the identity into a partials buffer (disc_ral.alloc, released after the
//     second kernel), then each element folds its K partials into B[idx] in order. A mean over
//     112x112 positions per channel ran 12544 dependent additions on each of 32 threads. The
//     sum's association changes (as a library's reduction's does), not what is summed;
//   - collapse: the multi-dimensional loop becomes a one-dimensional loop over the product of
//     the trip counts, each dimension's index recovered by division and remainder (unsigned,
//     by constants where the bounds are).
//
// The host CPU path does not use this: host kernels split rows over workgroups themselves.
#ifndef RAL_COMPILER_PASSES_CONVERSION_GRID_PARALLELISM_H_
#define RAL_COMPILER_PASSES_CONVERSION_GRID_PARALLELISM_H_

#include <optional>
#include <utility>

#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir {
namespace disc_ral {

// Rewrites the outermost parallel loop `loop` as above and returns the loops that replace it, in
// program order (just `loop` when nothing applied; every returned loop has one dimension unless
// it carries reductions, which are left as they are).
// `ctx` is the function's execution context (a split reduction allocates its partials).
SmallVector<scf::ParallelOp> exposeGridParallelism(scf::ParallelOp loop, Value ctx);

// Shared with the host's split reductions (host_split_reduction.h):
// Ops that may be cloned freely: no memory effects and no regions.
bool isPureLeaf(Operation& op);
// The one op of `block` (before its terminator) that is not a pure leaf, or null when there are
// none or several.
Operation* soleNonPureOp(Block& block);
// The identity of a reduction's combining op (addf: 0, maximumf/maxnumf: -inf,
// minimumf/minnumf: +inf), or null for any other op.
TypedAttr reductionIdentity(Operation* combine);
// A body of loads, pure leaves and one store B[idx] = combine(B[idx], value), with combine an op
// reductionIdentity knows and B[idx] loaded once for it alone.
struct Accumulation {
  memref::LoadOp load;    // B[idx]
  memref::StoreOp store;  // B[idx] = combine
  Operation* combine;
};
std::optional<Accumulation> matchAccumulation(Block& body);
// Iterations of `f`, whose bounds and step (> 0) are constants (0 when empty).
int64_t constantTrips(scf::ForOp f);
// Part k of `parts` of `f`'s range (constant bounds): [from, to), built with `b`.
std::pair<Value, Value> partOfRange(OpBuilder& b, Location loc, scf::ForOp f, int64_t parts,
                                    Value k);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_CONVERSION_GRID_PARALLELISM_H_
