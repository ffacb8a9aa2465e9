// Limits on what ral-compile and ral-opt accept, so that hostile or unusual input gets an error
// naming what is too large instead of a crash, a wrapped size or a compile that never ends.
//
//   nesting     at most kMaxNestingDepth levels of brackets in the text ({ ( [ <; the operators
//               of an affine expression count too), and of regions in parsed IR: the MLIR parser,
//               verifier, printer and many passes recurse once per level (5000 nested scf.for
//               overflowed the parser's 8 MiB stack)
//   sizes       a static shape (tensor, memref, vector; in any op, argument or global) holds at
//               most kMaxElements elements and kMaxBytes bytes, a memref.alloca at most
//               kMaxStackBytes, all constant values together at most kMaxConstantBytes
//               (disc-ral-check-limits); dynamic sizes of an allocation are checked against the
//               same limits when it runs (disc-ral-to-llvm), and memref.alloca takes none
//               (disc-ral-lower-to-library-calls)
//   recursion   functions reachable from the entry may not call themselves, directly or not,
//               nor call indirectly (disc-ral-inject-execution-context): a call depth set by
//               the input would overflow the host thread's stack
//   code size   tools/codegen.cc: functions too large or too deeply nested for LLVM's
//               optimizers to stay near-linear get cheaper code generation (see there)
#ifndef RAL_COMPILER_PASSES_TRANSFORMS_LIMITS_H_
#define RAL_COMPILER_PASSES_TRANSFORMS_LIMITS_H_

#include <cstdint>
#include <optional>

#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LogicalResult.h"

namespace mlir {
namespace disc_ral {

// Real models nest a few dozen levels. At 256, the whole pipeline on 254 nested scf.for, and the
// parser on 252 nested types, arrays, dictionaries or affine operators, need under 1 MiB of
// stack, an eighth of the main thread's (tests/hostile/compiler checks 2 MiB is enough).
inline constexpr int kMaxNestingDepth = 256;
// The runtime's limit on a tensor's elements (ral/io_checks.h, ral/layout.cc).
inline constexpr int64_t kMaxElements = int64_t{1} << 48;
// Bytes of one buffer: far enough from INT64_MAX that alignment padding and byte offsets computed
// from it cannot overflow either.
inline constexpr int64_t kMaxBytes = int64_t{1} << 56;
// Bytes of all constant values in a module (dense attributes of globals and constants, splats
// counted at their full size): they end up in the module file, which holds at most 2 GiB, and
// LLVM materializes a splat in the host library at its full size (several times, while compiling).
inline constexpr int64_t kMaxConstantBytes = (int64_t{1} << 31) - (int64_t{1} << 26);
// Bytes of one memref.alloca: code runs on host threads whose stacks may be 1 MiB or less, and a
// stack overflow kills the process where a heap allocation would fail cleanly (use memref.alloc).
// An alloca in a loop takes this again on every iteration that LLVM cannot reuse the slot.
inline constexpr int64_t kMaxStackBytes = int64_t{1} << 16;

// Bytes one element of `type` occupies in memory (i1: one byte, index: 8, vectors and complex
// numbers: their parts); nullopt for a type without a fixed size or beyond kMaxBytes.
std::optional<int64_t> elementBytes(Type type);

// Fails, with the error emitted at the first bracket beyond `limit`
// ("nesting depth N exceeds the limit L"), when MLIR text nests deeper than `limit`. A linear,
// non-recursive scan for text the parser has not seen yet: comments and strings are skipped, and
// a closing bracket closes only the kind of bracket it matches (`->` closes nothing), so text
// cannot hide depth from the scan. MLIR bytecode (which starts with "ML\xefR") is not scanned.
LogicalResult checkTextNesting(const llvm::SourceMgr& source_mgr, unsigned buffer_id,
                               MLIRContext* context, int limit = kMaxNestingDepth);

// The same for parsed IR (bytecode included): fails, with an error at the first op whose regions
// are nested deeper than `limit`. Iterative.
LogicalResult checkRegionNesting(Operation* root, int limit = kMaxNestingDepth);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_TRANSFORMS_LIMITS_H_
