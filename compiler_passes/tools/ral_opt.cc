// ral-opt: mlir-opt with the disc_ral dialect and the RAL passes, for tests and debugging.
#include "compiler_passes/passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char** argv) {
  mlir::registerAllPasses();
  mlir::disc_ral::registerPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::disc_ral::registerDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "RAL optimizer driver\n", registry));
}
