// What the loop passes (disc-ral-fuse-loops, disc-ral-outline-kernels) ask of buffers: which
// memory a loop touches, and which buffers may be the same memory.
//
// Aliasing is decided from where a buffer comes from, looking through views: two fresh
// allocations (memref.alloc/alloca, disc_ral.alloc) are distinct memory, a fresh allocation is
// distinct from anything else, and any two other buffers (inputs, globals, constants) may alias.
#ifndef RAL_COMPILER_PASSES_TRANSFORMS_LOOP_ANALYSIS_H_
#define RAL_COMPILER_PASSES_TRANSFORMS_LOOP_ANALYSIS_H_

#include <optional>

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace mlir {
namespace disc_ral {

struct MemoryAccess {
  Operation* op;  // a memref.load or memref.store
  Value memref;
  bool write;
};

// The buffer a view (or a memref.cast) is a view of (the value itself when it is not a view).
Value viewRoot(Value memref);
// Whether `memref` is itself the result of an allocation (not a view of one).
bool isFreshAllocation(Value memref);
// The fresh allocation `memref` is, or is a reshape or cast of with its first dimension kept as
// it is (row i of the view is row i of the allocation); null for anything else.
Value rowPreservingAllocation(Value memref);
bool mayAlias(Value a, Value b);
// Every load and store inside `op`'s regions; nullopt when some op there touches memory in
// another way (a call, a copy, an op without known effects), which the callers treat as unsafe.
std::optional<SmallVector<MemoryAccess>> collectAccesses(Operation* op);
// Whether no op strictly between `from` and `to` (one block), other than those in `skip`, writes
// or frees a buffer whose view root is in `roots`: a call that reads those buffers may then move
// from `from` to `to`. Unknown effects, and writes to buffers that are not fresh allocations,
// count as writing them.
bool nothingWritesBetween(Operation* from, Operation* to, const llvm::SmallPtrSetImpl<Value>& roots,
                          const llvm::SmallPtrSetImpl<Operation*>& skip);
// Whether the access's first index is `iv` itself.
bool indexedByRow(const MemoryAccess& access, Value iv);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_TRANSFORMS_LOOP_ANALYSIS_H_
