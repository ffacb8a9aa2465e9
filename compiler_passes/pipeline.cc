// The ral-compile pipeline and the registration of everything ral-opt and ral-compile accept.
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/passes.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferViewFlowOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/AllInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/BufferViewFlowOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/IR/TensorInferTypeOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

namespace mlir {
namespace disc_ral {

namespace {
#define GEN_PASS_REGISTRATION
#include "compiler_passes/Passes.h.inc"
}  // namespace

void buildCompilePipeline(OpPassManager& pm, const PipelineOptions& options) {
  pm.addPass(createCheckLimitsPass());
  pm.addPass(createBufferizePass());
  InjectExecutionContextPassOptions inject;
  inject.entryName = options.entry;
  pm.addPass(createInjectExecutionContextPass(inject));
  LowerToLibraryCallsPassOptions library;
  library.device = options.device;
  library.fuseConvBlocks = options.conv_blocks;
  library.fuseConvScales = options.conv_scales;
  pm.addPass(createLowerToLibraryCallsPass(library));
  ModuleConstantsPassOptions constants;
  // Device kernels read constants from device memory only: every constant goes to the module.
  constants.minBytes = options.device == "cpu" ? options.constant_min_bytes : 0;
  pm.addPass(createModuleConstantsPass(constants));
  LowerMathPassOptions math;
  math.inlineF32 = options.inline_f32_math;
  // GPU kernels approximate what has no intrinsic (disc-ral-lower-gpu-kernels): a libm call
  // would keep the loop on the host.
  math.libmCalls = options.device != "cuda" && options.device != "hsa";
  pm.addPass(createLowerMathPass(math));
  if (options.kernels) {
    const bool gpu = options.device == "cuda" || options.device == "hsa";
    FuseLoopsPassOptions fuse;
    fuse.device = options.device == "vulkan" || gpu ? options.device : "cpu";
    pm.addPass(createFuseLoopsPass(fuse));
    OutlineKernelsPassOptions outline;
    outline.device = options.device == "vulkan" || gpu ? options.device : "cpu";
    outline.gpuArchs = options.gpu_archs;
    pm.addPass(createOutlineKernelsPass(outline));
    if (options.device == "vulkan") pm.addPass(createSerializeKernelsPass());
    if (gpu) {
      pm.addPass(createLowerGpuKernelsPass());
      pm.addPass(createSerializeGpuKernelsPass());
    }
  }
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createPlaceInputsOutputsPass());
  // Views (subview, expand/collapse_shape, ...) become explicit offset and stride arithmetic.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(createExpandArithPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  DiscRalToLLVMPassOptions to_llvm;
  to_llvm.byName = options.by_name;
  to_llvm.entrySymbol = options.entry_symbol;
  to_llvm.device = options.device;
  pm.addPass(createDiscRalToLLVMPass(to_llvm));
}

namespace {

struct PipelineCLOptions : public PassPipelineOptions<PipelineCLOptions> {
  Option<std::string> entry{*this, "entry", llvm::cl::desc("Entry function"),
                            llvm::cl::init("main")};
  Option<std::string> entry_symbol{*this, "entry-symbol", llvm::cl::desc("Exported entry symbol"),
                                   llvm::cl::init("ral_entry")};
  Option<std::string> device{
      *this, "device",
      llvm::cl::desc("Device of library calls and kernels (cpu, vulkan, cuda, hsa)"),
      llvm::cl::init("cpu")};
  Option<std::string> gpu_archs{
      *this, "gpu-arch",
      llvm::cl::desc("cuda, hsa: comma-separated GPU architectures (empty: the default list)"),
      llvm::cl::init("")};
  Option<bool> by_name{*this, "by-name", llvm::cl::desc("Call RAL functions by name"),
                       llvm::cl::init(false)};
  Option<bool> kernels{*this, "kernels",
                       llvm::cl::desc("Outline parallel loops into kernels launched through RAL"),
                       llvm::cl::init(true)};
  Option<bool> conv_blocks{
      *this, "conv-blocks",
      llvm::cl::desc("cpu: depthwise-separable conv chains as one ral_conv_block call"),
      llvm::cl::init(true)};
  Option<bool> conv_scales{
      *this, "conv-scales",
      llvm::cl::desc("cpu: a conv of a per-image, per-channel scaled input as one "
                     "ral_conv_scaled call"),
      llvm::cl::init(true)};
  Option<int64_t> constant_min_bytes{
      *this, "constant-min-bytes",
      llvm::cl::desc("Smallest constant moved to the module's constants section"),
      llvm::cl::init(256)};
  Option<std::string> inline_f32_math{
      *this, "inline-f32-math",
      llvm::cl::desc("f32 ops computed inline (any of exp,expm1,log,log1p,tanh,erf)"),
      llvm::cl::init("exp,expm1,log,log1p,tanh,erf")};
};

}  // namespace

void registerPasses() {
  registerDiscRalPasses();
  PassPipelineRegistration<PipelineCLOptions>(
      "ral-compile-pipeline",
      "The ral-compile pipeline: tensors to buffers, RAL passes, loops -> kernels, scf -> cf, "
      "everything -> LLVM",
      [](OpPassManager& pm, const PipelineCLOptions& cl) {
        PipelineOptions options;
        options.entry = cl.entry;
        options.entry_symbol = cl.entry_symbol;
        options.device = cl.device;
        options.gpu_archs = cl.gpu_archs;
        options.by_name = cl.by_name;
        options.inline_f32_math = cl.inline_f32_math;
        options.kernels = cl.kernels;
        options.conv_blocks = cl.conv_blocks;
        options.conv_scales = cl.conv_scales;
        options.constant_min_bytes = cl.constant_min_bytes;
        buildCompilePipeline(pm, options);
      });
}

void registerDialects(DialectRegistry& registry) {
  registry.insert<DiscRalDialect, func::FuncDialect, cf::ControlFlowDialect, arith::ArithDialect,
                  affine::AffineDialect, index::IndexDialect, linalg::LinalgDialect,
                  memref::MemRefDialect, math::MathDialect, scf::SCFDialect, LLVM::LLVMDialect,
                  tensor::TensorDialect, bufferization::BufferizationDialect, tosa::TosaDialect,
                  ub::UBDialect, gpu::GPUDialect, spirv::SPIRVDialect, NVVM::NVVMDialect,
                  ROCDL::ROCDLDialect>();
  // GPU kernels: the targets' serializers (#nvvm.target, #rocdl.target) and the translations
  // gpu-module-to-binary and the HSACO compiler run on kernel modules.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  ROCDL::registerROCDLTargetInterfaceExternalModels(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerROCDLDialectTranslation(registry);
  // What one-shot bufferization, buffer deallocation and TOSA's lowering ask of each dialect's
  // ops; mlir-opt gets these from registerAllDialects, ral-compile only from here.
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerBufferViewFlowOpInterfaceExternalModels(registry);
  arith::registerValueBoundsOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  cf::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerAllDialectInterfaceImplementations(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  memref::registerBufferViewFlowOpInterfaceExternalModels(registry);
  memref::registerValueBoundsOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerValueBoundsOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerInferTypeOpInterfaceExternalModels(registry);
  tensor::registerValueBoundsOpInterfaceExternalModels(registry);
}

}  // namespace disc_ral
}  // namespace mlir
