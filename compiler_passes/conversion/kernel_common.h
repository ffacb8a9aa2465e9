// Helpers every kernel outliner shares (spirv_kernels.cc for vulkan, gpu_kernels.cc for cuda and
// hsa): how host values are classified and passed, and how loops nested inside a kernel become
// sequential.
#ifndef RAL_COMPILER_PASSES_CONVERSION_KERNEL_COMMON_H_
#define RAL_COMPILER_PASSES_CONVERSION_KERNEL_COMMON_H_

#include <string>

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"

namespace mlir {
namespace disc_ral {

// True when `v` is produced by a constant-like op (kernels clone it instead of passing it).
bool isConstantValue(Value v);

// `t` as MLIR prints it, for error messages.
std::string typeString(Type t);

// The type a host scalar travels as in a kernel's parameters: index as i64, integers narrower
// than 32 bits as i32, f16/bf16 as f32, everything else as itself.
Type hostScalarType(Type t);

// What a kernel outlined from `loop` uses from the host: its lower bound and step, then every value
// defined above the loop that its body reads. (The upper bound only sizes the host's trip count.)
llvm::SetVector<Value> kernelUses(scf::ParallelOp loop);

// Checks that the body of `loop` reaches memory only through captured buffers (load, store, dim)
// and calls nothing: views or allocations made inside would need descriptors a kernel does not
// have. Errors name `kernel_kind` ("SPIR-V", "GPU") on the offending op; `constant_dims` also
// requires memref.dim indices to be constants.
LogicalResult checkKernelBody(scf::ParallelOp loop, llvm::StringRef kernel_kind,
                              bool constant_dims);

// max(ceil((upper - lower) / step), 0) of the one-dimensional `loop`, built at `b`.
Value tripCount(OpBuilder& b, scf::ParallelOp loop);

// Rewrites the scf.parallel loops nested in `root` as scf.for nests (one invocation runs them).
// A nested parallel reduction is an error naming `kernel_kind` ("SPIR-V", "GPU").
LogicalResult sequentializeInnerLoops(Operation* root, llvm::StringRef kernel_kind);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_CONVERSION_KERNEL_COMMON_H_
