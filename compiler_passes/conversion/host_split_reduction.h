// Host kernels split a loop's rows (its outermost dimension) over workgroups. A global mean per
// image and channel (EfficientNet's squeeze-and-excitation, a global average pool) is one row
// per image, so at batch 1 it ran on one thread, reading the half of its input that the other
// core had just written from that core's cache:
//
//   scf.parallel (n) {
//     scf.parallel (c) { B[n, c] = 0 }                       (stores into B only)
//     scf.for h { scf.for w { scf.parallel (c) { B[idx] = B[idx] (+) f(...) } } }
//     ...                                                    (anything: reads B, say)
//   }
//
// becomes two loops, the first of K parts of the outermost scf.for's range per row:
//
//   scf.parallel (k) { scf.parallel (n) {
//     scf.parallel (c) { P[k, n, c] = identity }
//     scf.for h in part k { scf.for w { scf.parallel (c) { P[k, n, c] (+)= f(...) } } } } }
//   scf.parallel (n) {
//     scf.parallel (c) { B[n, c] = 0 }
//     scf.parallel (c) { B[idx] = ((B[idx] (+) P[0, n, c]) (+) P[1, n, c]) ... }
//     ...
//   }
//
// with P a disc_ral.alloc released after the second loop. K is a constant, so the result does
// not depend on the thread count; the sum's association changes (as a library reduction's
// does), not what is summed. (+) is addf, maximumf, minimumf, maxnumf or minnumf; idx holds only
// the inner loop's and the row's induction variables and values from outside the row; nothing
// else in the chain touches B, and what comes before the chain in the row writes only B.
#ifndef RAL_COMPILER_PASSES_CONVERSION_HOST_SPLIT_REDUCTION_H_
#define RAL_COMPILER_PASSES_CONVERSION_HOST_SPLIT_REDUCTION_H_

#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir {
namespace disc_ral {

// The loops that replace `loop` (the partials' loop, then `loop` itself), or just `loop` when the
// pattern above does not apply. `ctx` is the function's execution context.
SmallVector<scf::ParallelOp> splitHostReduction(scf::ParallelOp loop, Value ctx);

// The same for a chain with no row around it, `nest` being its outermost scf.for: a mean over
// all positions of one image whose unit batch dimension was folded away. The loop nest would
// otherwise stay on the host and launch its scf.parallel once per step (12544 launches for a
// 112x112 image). The nest gets a one-trip row and is split as above; the loops that replace it,
// or nothing (the IR unchanged) when the pattern does not apply.
SmallVector<scf::ParallelOp> splitHostReductionNest(scf::ForOp nest, Value ctx);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_CONVERSION_HOST_SPLIT_REDUCTION_H_
