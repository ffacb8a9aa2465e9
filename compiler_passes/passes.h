// The RAL passes (declared in Passes.td) and the pipeline ral-compile runs.
//
//   disc-ral-check-limits               nesting depth and static sizes within limits.h's limits
//   disc-ral-bufferize                  tensor-level programs (linalg, tensor, TOSA) -> buffers
//   disc-ral-inject-execution-context   func @main(args) -> results  =>  func @main(%ctx)
//   disc-ral-lower-to-library-calls     matmul / custom calls -> dispatch; alloc -> RAL memory
//   disc-ral-module-constants           large constant globals -> the module's constants section
//   disc-ral-lower-math                 f16/bf16 math in f32; libm for what LLVM cannot lower
//   disc-ral-fuse-loops                 linalg -> parallel loops, fused row-wise; reductions in
//                                       registers
//   disc-ral-outline-kernels            outermost parallel loops -> kernels + disc_ral.launch
//                                       (host functions, SPIR-V modules for vulkan,
//                                       gpu.modules for cuda and hsa)
//   disc-ral-serialize-kernels          SPIR-V kernel modules -> binaries on the module
//   disc-ral-lower-gpu-kernels          kernel gpu.modules -> LLVM dialect + NVVM/ROCDL, math
//                                       inlined (cuda, hsa)
//   disc-ral-serialize-gpu-kernels      kernel gpu.modules -> PTX / HSACO per architecture
//   disc-ral-expand-arith               bf16 conversions, ceil/floor divisions -> basic arithmetic
//   disc-ral-to-llvm                    RAL ops -> import-table (or ral_api_call) calls; the
//                                       whole module to the LLVM dialect
//
// Thread-safety: registration functions touch MLIR's global registries; call them once, before
// any pass manager runs. Pipelines and passes are then as thread-safe as MLIR's own.
#ifndef RAL_COMPILER_PASSES_PASSES_H_
#define RAL_COMPILER_PASSES_PASSES_H_

#include <memory>
#include <string>

#include "compiler_passes/dialect/dialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dialect.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DECL
#include "compiler_passes/Passes.h.inc"

// Module attribute set by disc-ral-to-llvm: the names of the `ral_imports` table, in order.
inline constexpr const char kImportsAttr[] = "disc_ral.imports";
// Function attribute set by disc-ral-inject-execution-context on the entry function.
inline constexpr const char kEntryAttr[] = "disc_ral.entry";

struct PipelineOptions {
  std::string entry = "main";              // the MLIR function that becomes the module entry
  std::string entry_symbol = "ral_entry";  // its exported C symbol
  std::string device =
      "cpu";  // device of library calls and kernels (cpu, vulkan, cuda, hsa); host glue is cpu
  // cuda, hsa: the architectures kernels are compiled for (comma-separated; empty: the default
  // list of gpu_targets.h).
  std::string gpu_archs;
  bool by_name = false;  // call ral_api_call(ctx, name, args) instead
  // f32 ops computed inline (disc-ral-lower-math's inline-f32), not by libm calls.
  std::string inline_f32_math = "exp,expm1,log,log1p,tanh,erf";
  bool kernels = true;               // outline parallel loops into kernels
  bool conv_blocks = true;           // cpu: conv chains as ral_conv_block (lower-to-library-calls)
  bool conv_scales = true;           // cpu: conv(x * s) as ral_conv_scaled (lower-to-library-calls)
  int64_t constant_min_bytes = 256;  // smaller constants stay in the host library
};
// Tensor programs to buffers, RAL passes, linalg -> loops, scf -> cf, and everything -> LLVM.
void buildCompilePipeline(OpPassManager& pm, const PipelineOptions& options);

// Registers the RAL passes and the `ral-compile-pipeline` pipeline with the global registry.
void registerPasses();
// The dialects ral-opt and ral-compile accept as input.
void registerDialects(DialectRegistry& registry);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_PASSES_H_
