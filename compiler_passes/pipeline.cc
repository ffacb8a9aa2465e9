#include "compiler_passes/dialect.h"
#include "compiler_passes/passes.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/SCFToStandard/SCFToStandard.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arithmetic/IR/Arithmetic.h"
#include "mlir/Dialect/Arithmetic/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/SCF.h"
#include "mlir/Dialect/StandardOps/IR/Ops.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir {
namespace disc_ral {

void buildCompilePipeline(OpPassManager& pm, const PipelineOptions& options) {
  pm.addPass(createInjectExecutionContextPass(options.entry));
  pm.addPass(createLowerToLibraryCallsPass(options.device));
  pm.addNestedPass<FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createLowerToCFGPass());
  // maxf/minf and friends have no direct LLVM lowering in MLIR 14.
  pm.addNestedPass<FuncOp>(arith::createArithmeticExpandOpsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createDiscRalToLLVMPass(options.by_name, options.entry_symbol, options.device));
}

namespace {

struct PipelineCLOptions : public PassPipelineOptions<PipelineCLOptions> {
  Option<std::string> entry{*this, "entry", llvm::cl::desc("Entry function"),
                            llvm::cl::init("main")};
  Option<std::string> entry_symbol{*this, "entry-symbol", llvm::cl::desc("Exported entry symbol"),
                                   llvm::cl::init("ral_entry")};
  Option<std::string> device{*this, "device", llvm::cl::desc("Device of library calls"),
                             llvm::cl::init("cpu")};
  Option<bool> by_name{*this, "by-name", llvm::cl::desc("Call RAL functions by name"),
                       llvm::cl::init(false)};
};

}  // namespace

void registerPasses() {
  registerInjectExecutionContextPass();
  registerLowerToLibraryCallsPass();
  registerDiscRalToLLVMPass();
  PassPipelineRegistration<PipelineCLOptions>(
      "ral-compile-pipeline",
      "The ral-compile pipeline: RAL passes, linalg -> loops, scf -> cf, everything -> LLVM",
      [](OpPassManager& pm, const PipelineCLOptions& cl) {
        PipelineOptions options;
        options.entry = cl.entry;
        options.entry_symbol = cl.entry_symbol;
        options.device = cl.device;
        options.by_name = cl.by_name;
        buildCompilePipeline(pm, options);
      });
}

void registerDialects(DialectRegistry& registry) {
  registry.insert<DiscRalDialect, StandardOpsDialect, arith::ArithmeticDialect, AffineDialect,
                  linalg::LinalgDialect, memref::MemRefDialect, math::MathDialect, scf::SCFDialect,
                  LLVM::LLVMDialect, tensor::TensorDialect, bufferization::BufferizationDialect>();
}

}  // namespace disc_ral
}  // namespace mlir
