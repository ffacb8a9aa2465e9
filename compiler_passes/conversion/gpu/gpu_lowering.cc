// disc-ral-lower-gpu-kernels (Passes.td): kernel gpu.modules to the LLVM dialect with NVVM or
// ROCDL ops, every transcendental math op inlined as a polynomial approximation.
//
// The same approximations on every GPU: RAL's f32 exp, expm1, log, log1p, tanh and erf (those
// the cpu and vulkan kernels use), then MLIR's for sin, cos, log2, atan, asin, acos, cbrt, with
// pow, exp2, log10, tan and the hyperbolic functions expanded into those first. No kernel calls
// libdevice or ROCm's device libraries, so none is needed to compile or load one, and results do
// not depend on a vendor library's version.
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/transforms/math_approximations.h"
#include "compiler_passes/passes.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DEF_LOWERGPUKERNELSPASS
#include "compiler_passes/Passes.h.inc"

namespace {

// Math ops the NVPTX and AMDGPU back ends select from LLVM intrinsics, on every float type.
bool hasIntrinsic(Operation* op) {
  return isa<math::AbsFOp, math::AbsIOp, math::SqrtOp, math::RsqrtOp, math::FmaOp, math::FloorOp,
             math::CeilOp, math::TruncOp, math::RoundOp, math::RoundEvenOp, math::CopySignOp,
             math::CountLeadingZerosOp, math::CountTrailingZerosOp, math::CtPopOp>(op);
}

// arith.remf -> llvm.frem, which both back ends expand inline (the GPU patterns would call the
// device library's fmod).
class RemFToFRem : public OpRewritePattern<arith::RemFOp> {
 public:
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::RemFOp op, PatternRewriter& rewriter) const override {
    if (!isa<FloatType>(op.getType())) return failure();
    rewriter.replaceOpWithNewOp<LLVM::FRemOp>(op, op.getType(), op.getLhs(), op.getRhs());
    return success();
  }
};

// math.log10 x -> math.log x * (1 / ln 10) (then approximated like log).
class Log10ByLog : public OpRewritePattern<math::Log10Op> {
 public:
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::Log10Op op, PatternRewriter& rewriter) const override {
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type || !type.isF32()) return failure();
    Value log = rewriter.create<math::LogOp>(op.getLoc(), op.getOperand());
    Value scale = rewriter.create<arith::ConstantOp>(
        op.getLoc(), rewriter.getF32FloatAttr(0.434294481903251827651f));
    rewriter.replaceOpWithNewOp<arith::MulFOp>(op, log, scale);
    return success();
  }
};

// Every transcendental math op into arithmetic and the ops above; an error for one that has no
// approximation (f64 exp, log10, ...).
LogicalResult approximateMath(gpu::GPUModuleOp module) {
  MLIRContext* ctx = module.getContext();
  for (int round = 0; round < 2; ++round) {
    RewritePatternSet expand(ctx);
    populateExpandTanPattern(expand);
    populateExpandSinhPattern(expand);
    populateExpandCoshPattern(expand);
    populateExpandAsinhPattern(expand);
    populateExpandAcoshPattern(expand);
    populateExpandAtanhPattern(expand);
    populateExpandExp2FPattern(expand);
    populateExpandPowFPattern(expand);
    populateExpandFPowIPattern(expand);
    expand.add<Log10ByLog>(ctx);
    if (failed(populateF32MathApproximations(expand, "exp,expm1,log,log1p,tanh,erf")) ||
        failed(applyPatternsAndFoldGreedily(module, std::move(expand))))
      return failure();
    RewritePatternSet polynomial(ctx);
    populateMathPolynomialApproximationPatterns(polynomial, MathPolynomialApproximationOptions{});
    if (failed(applyPatternsAndFoldGreedily(module, std::move(polynomial)))) return failure();
  }
  WalkResult left = module.walk([](Operation* op) {
    if (op->getDialect() == nullptr || op->getDialect()->getNamespace() != "math" ||
        hasIntrinsic(op))
      return WalkResult::advance();
    op->emitError() << "'" << op->getName() << "' on " << op->getResult(0).getType()
                    << " has no approximation for GPU kernels (transcendental math is inlined "
                       "for f16, bf16 and f32 only; kernels use no device library)";
    return WalkResult::interrupt();
  });
  return failure(left.wasInterrupted());
}

class LowerGpuKernelsPass : public impl::LowerGpuKernelsPassBase<LowerGpuKernelsPass> {
 public:
  void runOnOperation() override {
    for (auto m : llvm::to_vector(getOperation().getOps<gpu::GPUModuleOp>())) {
      if (!m->hasAttr(kKernelAttr)) continue;
      if (failed(lower(m))) return signalPassFailure();
    }
  }

 private:
  LogicalResult lower(gpu::GPUModuleOp m) {
    MLIRContext* ctx = &getContext();
    const bool nvvm = m.getTargetsAttr() && !m.getTargetsAttr().empty() &&
                      isa<NVVM::NVVMTargetAttr>(m.getTargetsAttr()[0]);
    if (failed(approximateMath(m))) return failure();

    OpPassManager scf_to_cf(gpu::GPUModuleOp::getOperationName());
    // Index arithmetic the kernel body kept as affine.apply (an im2col window's offsets).
    scf_to_cf.addPass(createLowerAffinePass());
    scf_to_cf.addPass(createConvertSCFToCFPass());
    if (failed(runPipeline(scf_to_cf, m))) return failure();

    LowerToLLVMOptions options(ctx);
    LLVMTypeConverter converter(ctx, options);
    // Workgroup memory (gpu.func workgroup attributions, as the library GEMM tiles use) lives in
    // LLVM address space 3 on both back ends; global memory in 1.
    populateGpuMemorySpaceAttributeConversions(converter, [nvvm](gpu::AddressSpace space) {
      switch (space) {
        case gpu::AddressSpace::Global:
          return 1u;
        case gpu::AddressSpace::Workgroup:
          return 3u;
        case gpu::AddressSpace::Private:
          return nvvm ? 0u : 5u;
      }
      return 0u;
    });
    // What is left of math (and remf) first, so that the GPU patterns' device-library calls
    // never match.
    {
      RewritePatternSet patterns(ctx);
      populateMathToLLVMConversionPatterns(converter, patterns);
      patterns.add<RemFToFRem>(ctx);
      ConversionTarget target(*ctx);
      target.markUnknownOpDynamicallyLegal([](Operation*) { return true; });
      target.addIllegalDialect<math::MathDialect>();
      target.addIllegalOp<arith::RemFOp>();
      if (failed(applyPartialConversion(m, target, std::move(patterns)))) return failure();
    }
    RewritePatternSet patterns(ctx);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns);
    // Not configureGpuTo{NVVM,ROCDL}ConversionLegality: they make the LLVM math intrinsics
    // illegal, to force device-library calls.
    LLVMConversionTarget target(*ctx);
    target.addLegalDialect<NVVM::NVVMDialect, ROCDL::ROCDLDialect>();
    target.addIllegalDialect<gpu::GPUDialect, arith::ArithDialect, cf::ControlFlowDialect,
                             memref::MemRefDialect>();
    target.addLegalOp<gpu::GPUModuleOp, gpu::ModuleEndOp>();
    if (nvvm)
      populateGpuToNVVMConversionPatterns(converter, patterns);
    else
      populateGpuToROCDLConversionPatterns(converter, patterns, gpu::amd::Runtime::HIP);
    if (failed(applyPartialConversion(m, target, std::move(patterns)))) return failure();
    OpPassManager casts(gpu::GPUModuleOp::getOperationName());
    casts.addPass(createReconcileUnrealizedCastsPass());
    if (failed(runPipeline(casts, m))) return failure();

    // The promise of this pass: no device-library call, nothing left unlowered.
    WalkResult walk = m.walk([&](Operation* op) {
      if (auto call = dyn_cast<LLVM::CallOp>(op)) {
        op->emitError() << "a GPU kernel calls " << call.getCallee().value_or("a pointer")
                        << ", which needs a device library";
        return WalkResult::interrupt();
      }
      Dialect* d = op->getDialect();
      if (op == m.getOperation() || isa<gpu::ModuleEndOp>(op) ||
          (d && llvm::is_contained({"llvm", "nvvm", "rocdl"}, d->getNamespace())))
        return WalkResult::advance();
      InFlightDiagnostic error = op->emitError()
                                 << "'" << op->getName()
                                 << "' is left in a GPU kernel after its lowering to LLVM";
      // A cast left over names the types that met: what was not converted, and where.
      if (isa<UnrealizedConversionCastOp>(op)) {
        error << " (from " << op->getOperandTypes() << " to " << op->getResultTypes();
        for (Operation* user : op->getUsers()) error << ", used by '" << user->getName() << "'";
        error << ")";
      }
      return WalkResult::interrupt();
    });
    return failure(walk.wasInterrupted());
  }
};

}  // namespace
}  // namespace disc_ral
}  // namespace mlir
