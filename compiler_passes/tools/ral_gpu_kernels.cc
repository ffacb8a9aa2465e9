// ral-gpu-kernels: a library of GPU kernels written in MLIR -> one device binary per
// architecture, through the same lowering and serialization ral-compile uses for outlined loops
// (disc-ral-lower-gpu-kernels, disc-ral-serialize-gpu-kernels). The build uses it for the GPU
// library kernels of CUDA and HSA (kernels/gpu), so no device binary is written by hand.
//
//   ral-gpu-kernels kernels.mlir --device=hsa|cuda [--gpu-arch=gfx90a,...] -o OUT_PREFIX
//
// Every gpu.module of the input becomes OUT_PREFIX.<module>.<arch>.hsaco (or .ptx). The input's
// gpu.funcs take their arguments as written (no memref descriptors: pointers and scalars), so
// the kernarg layout is the one the source declares.
#include <string>
#include <vector>

#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/conversion/gpu/gpu_kernels.h"
#include "compiler_passes/passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

namespace cl = llvm::cl;

namespace {

cl::opt<std::string> input_path(cl::Positional, cl::desc("<kernels.mlir>"), cl::Required);
cl::opt<std::string> output_prefix("o", cl::desc("Prefix of the output files"), cl::Required,
                                   cl::value_desc("prefix"));
cl::opt<std::string> device("device", cl::desc("hsa (HSACO) or cuda (PTX)"), cl::init("hsa"));
cl::opt<std::string> gpu_arch("gpu-arch",
                              cl::desc("comma-separated architectures (default: the device's "
                                       "ral-compile default)"),
                              cl::init(""));

int run() {
  using namespace mlir;
  if (device != "hsa" && device != "cuda") {
    llvm::errs() << "ral-gpu-kernels: --device must be hsa or cuda, not '" << device << "'\n";
    return 2;
  }
  DialectRegistry registry;
  disc_ral::registerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sources;
  std::string error;
  auto file = openInputFile(input_path, &error);
  if (!file) {
    llvm::errs() << "ral-gpu-kernels: " << error << "\n";
    return 1;
  }
  sources.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sources, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &context);
  if (!module) return 1;

  ArrayAttr targets = disc_ral::gpuTargets((*module)->getLoc(), device, gpu_arch);
  if (!targets) return 2;
  std::vector<std::string> names;
  for (auto m : module->getOps<gpu::GPUModuleOp>()) {
    m.setTargetsAttr(targets);
    m->setAttr(disc_ral::kKernelAttr, UnitAttr::get(&context));
    names.push_back(m.getName().str());
  }
  if (names.empty()) {
    (*module)->emitError("no gpu.module to compile");
    return 1;
  }
  PassManager pm(&context);
  pm.addPass(disc_ral::createLowerGpuKernelsPass());
  pm.addPass(disc_ral::createSerializeGpuKernelsPass());
  if (failed(pm.run(*module))) return 1;

  auto entries = (*module)->getAttrOfType<ArrayAttr>(disc_ral::kDeviceKernelsAttr);
  const char* extension = device == "hsa" ? ".hsaco" : ".ptx";
  for (auto entry : entries.getAsRange<DictionaryAttr>()) {
    const std::string name = entry.getAs<StringAttr>("name").str();
    for (auto variant : entry.getAs<ArrayAttr>("variants").getAsRange<DictionaryAttr>()) {
      const std::string path =
          output_prefix + "." + name + "." + variant.getAs<StringAttr>("target").str() + extension;
      auto out = openOutputFile(path, &error);
      if (!out) {
        llvm::errs() << "ral-gpu-kernels: " << error << "\n";
        return 1;
      }
      out->os() << variant.getAs<StringAttr>("data").getValue();
      out->keep();
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::disc_ral::registerPasses();
  cl::ParseCommandLineOptions(argc, argv, "RAL GPU kernel library compiler\n");
  return run();
}
