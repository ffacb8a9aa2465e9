// ral-opt: mlir-opt with the disc_ral dialect and the RAL passes, for tests and debugging.
#include "compiler_passes/transforms/limits.h"
#include "compiler_passes/passes.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char** argv) {
  mlir::registerAllPasses();
  mlir::disc_ral::registerPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::disc_ral::registerDialects(registry);
  auto [input, output] =
      mlir::registerAndParseCLIOptions(argc, argv, "RAL optimizer driver\n", registry);
  // The parser recurses once per level of nesting: a file nested too deeply is refused before
  // it is parsed (stdin is read once, by MlirOptMain, and not checked; ral-compile checks it).
  if (input != "-") {
    std::string error;
    if (auto file = mlir::openInputFile(input, &error)) {
      llvm::SourceMgr source_mgr;
      const unsigned id = source_mgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
      mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
      mlir::SourceMgrDiagnosticHandler diagnostics(source_mgr, &context);
      if (mlir::failed(mlir::disc_ral::checkTextNesting(source_mgr, id, &context))) return 1;
    }
  }
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, input, output, registry));
}
