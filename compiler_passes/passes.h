// The RAL passes (DESIGN.md §7) and the pipeline ral-compile runs.
//
//   disc-ral-inject-execution-context   func @main(args) -> results  =>  func @main(%ctx)
//   disc-ral-lower-to-library-calls     matmul / custom calls -> dispatch; alloc -> RAL memory
//   disc-ral-to-llvm                    RAL ops -> import-table (or ral_api_call) calls; the
//                                       whole module to the LLVM dialect
#ifndef RAL_COMPILER_PASSES_PASSES_H_
#define RAL_COMPILER_PASSES_PASSES_H_

#include <memory>
#include <string>

#include "mlir/IR/Dialect.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace disc_ral {

// Module attribute set by disc-ral-to-llvm: the names of the `ral_imports` table, in order.
inline constexpr const char kImportsAttr[] = "disc_ral.imports";
// Function attribute set by disc-ral-inject-execution-context on the entry function.
inline constexpr const char kEntryAttr[] = "disc_ral.entry";

std::unique_ptr<Pass> createInjectExecutionContextPass(const std::string& entry = "main");
std::unique_ptr<Pass> createLowerToLibraryCallsPass(const std::string& device = "cpu");
std::unique_ptr<Pass> createDiscRalToLLVMPass(bool by_name = false,
                                              const std::string& entry_symbol = "ral_entry",
                                              const std::string& device = "cpu");

struct PipelineOptions {
  std::string entry = "main";              // the MLIR function that becomes the module entry
  std::string entry_symbol = "ral_entry";  // its exported C symbol
  std::string device = "cpu";              // device of library calls and host functions
  bool by_name = false;                    // call ral_api_call(ctx, name, args) instead
};
// RAL passes, then linalg -> loops, scf -> cf, and everything -> LLVM.
void buildCompilePipeline(OpPassManager& pm, const PipelineOptions& options);

// Registration of each pass with the global registry (one per pass file).
void registerInjectExecutionContextPass();
void registerLowerToLibraryCallsPass();
void registerDiscRalToLLVMPass();

// Registers the three passes and the `ral-compile-pipeline` pipeline with the global registry.
void registerPasses();
// The dialects ral-opt and ral-compile accept as input.
void registerDialects(DialectRegistry& registry);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_PASSES_H_
