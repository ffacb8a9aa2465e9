// disc-ral-serialize-gpu-kernels (Passes.td): lowered kernel gpu.modules -> PTX (NVVM targets,
// through gpu-module-to-binary) or HSACO (ROCDL targets, amdgpu_codegen.h), one variant per
// target architecture, listed in the module attribute disc_ral.device_kernels.
#include <memory>
#include <string>
#include <vector>

#include "compiler_passes/conversion/gpu/amdgpu_codegen.h"
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/conversion/gpu/gpu_kernels.h"
#include "compiler_passes/passes.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DEF_SERIALIZEGPUKERNELSPASS
#include "compiler_passes/Passes.h.inc"

namespace {

DictionaryAttr variant(MLIRContext* ctx, StringRef target, StringRef data) {
  NamedAttrList v;
  v.append("target", StringAttr::get(ctx, target));
  v.append("data", StringAttr::get(ctx, data));
  return v.getDictionary(ctx);
}

// An LLVMContext's error diagnostics (a kernel over its processor's local memory, ...) kept for
// the pass to report: without a handler LLVM prints them and calls exit(1), ending the host.
void keepLlvmErrors(const llvm::DiagnosticInfo* info, void* errors) {
  if (info->getSeverity() != llvm::DS_Error) return;
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::DiagnosticPrinterRawOStream printer(os);
  info->print(printer);
  auto* all = static_cast<std::string*>(errors);
  *all += (all->empty() ? "" : "; ") + os.str();
}

DictionaryAttr kernelEntry(MLIRContext* ctx, StringRef name, StringRef format,
                           ArrayRef<Attribute> variants) {
  NamedAttrList entry;
  entry.append("name", StringAttr::get(ctx, name));
  entry.append("format", StringAttr::get(ctx, format));
  entry.append("variants", ArrayAttr::get(ctx, variants));
  entry.append("workgroup", DenseI64ArrayAttr::get(ctx, {kGpuBlockSize, 1, 1}));
  return entry.getDictionary(ctx);
}

class SerializeGpuKernelsPass : public impl::SerializeGpuKernelsPassBase<SerializeGpuKernelsPass> {
 public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext* ctx = &getContext();
    SmallVector<gpu::GPUModuleOp> kernels;
    for (auto m : module.getOps<gpu::GPUModuleOp>())
      if (m->hasAttr(kKernelAttr)) kernels.push_back(m);
    if (kernels.empty()) return;
    SmallVector<Attribute> entries;
    if (auto existing = module->getAttrOfType<ArrayAttr>(kDeviceKernelsAttr))
      entries.assign(existing.begin(), existing.end());
    const bool nvvm = kernels.front().getTargetsAttr() &&
                      !kernels.front().getTargetsAttr().empty() &&
                      isa<NVVM::NVVMTargetAttr>(kernels.front().getTargetsAttr()[0]);
    if (nvvm ? failed(serializePtx(module, kernels, entries))
             : failed(serializeHsaco(kernels, entries)))
      return signalPassFailure();
    module->setAttr(kDeviceKernelsAttr, ArrayAttr::get(ctx, entries));
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }

 private:
  // gpu-module-to-binary (format isa) turns a gpu.module into a gpu.binary holding the PTX text
  // of every target, in target order. It runs on a copy of each kernel module in a module of
  // its own: the launches here name kernel modules, not binaries.
  LogicalResult serializePtx(ModuleOp module, ArrayRef<gpu::GPUModuleOp> kernels,
                             SmallVector<Attribute>& entries) {
    MLIRContext* ctx = &getContext();
    for (gpu::GPUModuleOp m : kernels) {
      OwningOpRef<ModuleOp> holder = ModuleOp::create(m.getLoc());
      (*holder)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(ctx));
      holder->getBody()->push_back(m->clone());
      PassManager pm(ctx);
      GpuModuleToBinaryPassOptions options;
      options.compilationTarget = "isa";
      pm.addPass(createGpuModuleToBinaryPass(options));
      // MLIR 19's NVVM serializer links libdevice from the CUDA toolkit ($CUDA_ROOT, else its
      // build-time default) when there is one, and otherwise reports an error yet goes on. These
      // kernels never call libdevice (disc-ral-lower-gpu-kernels checks it), so that report is
      // dropped: the PTX is the same with and without a toolkit. Other diagnostics pass through.
      ScopedDiagnosticHandler no_toolkit(ctx, [](Diagnostic& d) {
        const std::string message = d.str();
        return success(StringRef(message).starts_with("CUDA path: ") ||
                       StringRef(message).starts_with("LibDevice path: "));
      });
      if (failed(pm.run(*holder))) return module.emitError() << "no PTX for kernel " << m.getName();
      auto binary = holder->lookupSymbol<gpu::BinaryOp>(m.getName());
      if (!binary) return module.emitError() << "no PTX for kernel " << m.getName();
      SmallVector<Attribute> variants;
      for (Attribute a : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(a);
        auto target = cast<NVVM::NVVMTargetAttr>(object.getTarget());
        // The text without its terminating NUL (the CUDA driver adds one when loading).
        StringRef ptx = object.getObject().getValue().rtrim('\0');
        variants.push_back(variant(ctx, target.getChip(), ptx));
      }
      entries.push_back(kernelEntry(ctx, m.getName(), "ptx", variants));
      m.erase();
    }
    return success();
  }

  // Per target: translate to LLVM IR, compile for its processor, link (amdgpu_codegen.h).
  LogicalResult serializeHsaco(ArrayRef<gpu::GPUModuleOp> kernels,
                               SmallVector<Attribute>& entries) {
    MLIRContext* ctx = &getContext();
    for (gpu::GPUModuleOp m : kernels) {
      SmallVector<Attribute> variants;
      for (Attribute a : m.getTargetsAttr()) {
        auto target = dyn_cast<ROCDL::ROCDLTargetAttr>(a);
        if (!target) return m.emitError("a kernel module mixes NVVM and ROCDL targets");
        llvm::LLVMContext llvm_context;
        std::string llvm_errors;
        llvm_context.setDiagnosticHandlerCallBack(&keepLlvmErrors, &llvm_errors);
        std::unique_ptr<llvm::Module> ir = translateModuleToLLVMIR(m, llvm_context, m.getName());
        if (!ir) return m.emitError("translation of the kernel to LLVM IR failed");
        std::vector<char> hsaco;
        std::string error;
        const bool compiled = compileHsaco(*ir, target.getChip(), &hsaco, &error);
        if (!llvm_errors.empty())
          return m.emitError() << "compiling for " << target.getChip() << ": " << llvm_errors;
        if (!compiled)
          return m.emitError() << "compiling for " << target.getChip() << ": " << error;
        variants.push_back(variant(ctx, target.getChip(), StringRef(hsaco.data(), hsaco.size())));
      }
      entries.push_back(kernelEntry(ctx, m.getName(), "hsaco", variants));
      m.erase();
    }
    return success();
  }
};

}  // namespace
}  // namespace disc_ral
}  // namespace mlir
