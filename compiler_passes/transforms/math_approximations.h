// Inline f32 math for disc-ral-lower-math: exp, expm1, log, log1p, tanh and erf on scalar f32,
// computed in f32 (within about 1 ulp) or, as "<op>.f64", in f64 and rounded once (within 0.5
// ulp, half the vector width); every special value exact. Used instead of libm calls so that
// loops over them vectorize.
#ifndef RAL_COMPILER_PASSES_TRANSFORMS_MATH_APPROXIMATIONS_H_
#define RAL_COMPILER_PASSES_TRANSFORMS_MATH_APPROXIMATIONS_H_

#include "llvm/ADT/StringRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Support/LogicalResult.h"

namespace mlir {
namespace disc_ral {

// The ops these patterns expand.
inline constexpr const char* kInlineF32Ops[] = {"exp", "expm1", "log", "log1p", "tanh", "erf"};

// Adds the patterns of the ops named in `ops` (comma-separated, from kInlineF32Ops, each
// optionally with the suffix ".f64"); fails on any other name.
LogicalResult populateF32MathApproximations(RewritePatternSet& patterns, llvm::StringRef ops);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_TRANSFORMS_MATH_APPROXIMATIONS_H_
