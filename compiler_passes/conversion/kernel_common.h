// Helpers every kernel outliner shares (spirv_kernels.cc for vulkan, gpu_kernels.cc for cuda and
// hsa): how host values are classified and passed, and how loops nested inside a kernel become
// sequential.
#ifndef RAL_COMPILER_PASSES_CONVERSION_KERNEL_COMMON_H_
#define RAL_COMPILER_PASSES_CONVERSION_KERNEL_COMMON_H_

#include <functional>
#include <string>
#include <utility>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
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

// Checks that the body of `loop` reaches memory only through captured buffers (load, store, and
// dim of a constant index) and calls nothing: views or allocations made inside would need
// descriptors a kernel does not have. Errors name `kernel_kind` ("SPIR-V", "GPU") on the
// offending op.
LogicalResult checkKernelBody(scf::ParallelOp loop, llvm::StringRef kernel_kind);

// What a kernel outlined from a loop receives from the host: the buffers it captures, each with
// its static layout and, where its offset, a stride or a size the body reads is dynamic, the
// host's memref.extract_strided_metadata of it; and scalar parameters, host values without
// repeats in the order they were added.
struct KernelInterface {
  struct Layout {
    int64_t offset;
    llvm::SmallVector<int64_t> strides;
    memref::ExtractStridedMetadataOp metadata;  // null when everything the kernel needs is static
  };
  llvm::SmallVector<Value> buffers;
  llvm::SmallVector<Layout> layouts;
  llvm::SmallVector<Value> params;
  llvm::DenseMap<Value, unsigned> param_index;

  // The parameter index of `v`, added at the end if new.
  unsigned param(Value v);
};

// Sorts the host values `used` by the kernel (kernelUses) into `iface.buffers` (strided memrefs
// of an element type `storable` accepts) and scalars, and checks the body (checkKernelBody).
// Errors go through `fail`, which returns failure.
LogicalResult captureBuffers(scf::ParallelOp loop, const llvm::SetVector<Value>& used,
                             llvm::StringRef kernel_kind, llvm::function_ref<bool(Type)> storable,
                             llvm::function_ref<LogicalResult(const llvm::Twine&)> fail,
                             KernelInterface& iface);

// Adds the scalar parameters after those already there: the non-constant scalars of `used`,
// then each buffer's dynamic offset, strides and the sizes its memref.dim ops read (their
// metadata op created at `b`, on the host).
void addScalarParams(OpBuilder& b, scf::ParallelOp loop, const llvm::SetVector<Value>& used,
                     KernelInterface& iface);

// A parameter `raw`, as it travels (hostScalarType), back in the host's type `want`; an index
// comes from its i64 by an index_cast, or with `index_by_cast` false by an unrealized cast that
// the target's type conversion resolves.
Value narrowParameter(OpBuilder& b, Location loc, Value raw, Type want, bool index_by_cast);

// The kernel's values of host values, each made once at the kernel's entry builder: constants
// cloned, parameters read by `load(parameter index)` and narrowed back to the host type
// (narrowParameter), layout values constant where static.
class KernelValues {
 public:
  KernelValues(OpBuilder& kb, Location loc, const KernelInterface& iface,
               std::function<Value(unsigned)> load, bool index_by_cast)
      : kb_(kb), loc_(loc), iface_(iface), load_(std::move(load)), index_by_cast_(index_by_cast) {}
  Value get(Value host);
  // `fixed` when static, else the kernel's value of `host` (rewriteBufferAccesses' layoutValue).
  Value layout(int64_t fixed, Value host);

 private:
  OpBuilder& kb_;
  Location loc_;
  const KernelInterface& iface_;
  std::function<Value(unsigned)> load_;
  bool index_by_cast_;
  llvm::DenseMap<Value, Value> made_;
};

// The launch's operands: each buffer's aligned pointer, then each parameter widened to
// hostScalarType (index stays index: 64-bit in the host's LLVM lowering).
llvm::SmallVector<Value> launchOperands(OpBuilder& b, Location loc, const KernelInterface& iface);

// `loop`'s body cloned (through `mapping`) into an scf.for from `first` to `trips` by `stride`,
// built at `kb`, where the loop's induction variable is lower bound + i * step.
scf::ForOp cloneAsGridStrideLoop(OpBuilder& kb, scf::ParallelOp loop, IRMapping& mapping,
                                 Value first, Value trips, Value stride);

// Rewrites the loads, stores and memref.dim ops of `placeholder`, which stands in the kernel
// for a buffer of type `type` and layout `layout`, to address one element by its linear index
// offset + sum(index_d * stride_d). `layoutValue(fixed, host)` is a layout value in the kernel
// (`fixed` when static, else the kernel's value of the host's `host`); `load` and `store` build
// the target's access at a linear index. Erases the placeholder's defining op.
void rewriteBufferAccesses(Value placeholder, MemRefType type,
                           const KernelInterface::Layout& layout,
                           llvm::function_ref<Value(int64_t, Value)> layoutValue,
                           llvm::function_ref<Value(OpBuilder&, Value)> load,
                           llvm::function_ref<void(OpBuilder&, Value, Value)> store);

// max(ceil((upper - lower) / step), 0) of dimension `d` of `loop`, built at `b` (folded where
// the bounds are constants, so a kernel that divides by it divides by a constant); `map`, when
// given, maps the bounds first (a loop being cloned).
Value tripCount(OpBuilder& b, scf::ParallelOp loop, unsigned d = 0, IRMapping* map = nullptr);

// Rewrites the scf.parallel loops nested in `root` as scf.for nests (one invocation runs them).
// A nested parallel reduction is an error naming `kernel_kind` ("SPIR-V", "GPU").
LogicalResult sequentializeInnerLoops(Operation* root, llvm::StringRef kernel_kind);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_CONVERSION_KERNEL_COMMON_H_
