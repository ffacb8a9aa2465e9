// Transposes around matrix products become strided views, on the CPU: ral_gemm and
// ral_batch_gemm read and write any strides (a column-major matrix is BLAS's transposed operand),
// so attention's head split (Q, K and V reshaped to [tokens, heads, 64] and transposed to
// [heads, tokens, 64], K further to [heads, 64, tokens]) and its merge back need not copy.
//
//   linalg.transpose ins(X) outs(B)  where B is a fresh allocation read only by matmuls, batch
//                                    matmuls and linalg.generic ops (as inputs) after it, with
//                                    nothing in between writing or freeing X
//     -> the readers read a view of X with its sizes and strides permuted; B and the copy go;
//   linalg.transpose ins(C) outs(B)  where C is a fresh allocation that one matmul or batch
//                                    matmul writes (after an optional fill) and only the
//                                    transpose reads, and B is used only after the transpose
//     -> the fill and the product write a view of B with the inverse permutation; C and the
//        copy go (B's allocation moves up to the fill when its sizes allow).
//
// The views are memref.extract_strided_metadata + memref.reinterpret_cast, so every pass that
// looks through views (viewRoot) still sees X or B behind them.
#ifndef RAL_COMPILER_PASSES_TRANSFORMS_TRANSPOSE_VIEWS_H_
#define RAL_COMPILER_PASSES_TRANSFORMS_TRANSPOSE_VIEWS_H_

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace disc_ral {

// Rewrites the transposes of `module` described above; returns how many went.
int foldTransposesIntoViews(ModuleOp module);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_TRANSFORMS_TRANSPOSE_VIEWS_H_
