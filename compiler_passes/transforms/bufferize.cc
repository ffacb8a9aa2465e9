// disc-ral-bufferize: tensor-level programs to buffers, ahead of the RAL passes.
//
// Convolutions go channels-last, with the transposes that implies cancelled across the graph
// (conv_layout.h). TOSA goes to linalg first, and chains of elementwise linalg ops are fused; one-shot
// bufferization then rewrites whole functions, boundaries included, with identity-layout memrefs
// (what a buffer-level program written by hand uses); ownership-based deallocation frees every
// temporary. An entry result is the buffer its producer allocated, so
// disc-ral-lower-to-library-calls turns that allocation into ral_alloc and the host receives it
// without a copy.
#include "compiler_passes/transforms/conv_layout.h"
#include "compiler_passes/transforms/fuse_elementwise.h"
#include "compiler_passes/passes.h"
#include "compiler_passes/transforms/reshape_views.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/TosaToSCF/TosaToSCF.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Transforms/Passes.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DEF_BUFFERIZEPASS
#include "compiler_passes/Passes.h.inc"

namespace {

bool isTensor(Type t) { return isa<TensorType>(t); }

// True when anything in the module is a tensor value or a TOSA op.
bool hasTensors(ModuleOp module) {
  WalkResult found = module.walk([](Operation* op) {
    if (auto f = dyn_cast<FunctionOpInterface>(op)) {
      if (llvm::any_of(f.getArgumentTypes(), isTensor) ||
          llvm::any_of(f.getResultTypes(), isTensor))
        return WalkResult::interrupt();
    }
    if (isa<tosa::TosaDialect>(op->getDialect()) || llvm::any_of(op->getResultTypes(), isTensor))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}

// True when the module has a TOSA op: TOSA's lowering (and its validation, which refuses f64
// and other types TOSA's profiles lack) runs only then.
bool hasTosa(ModuleOp module) {
  return module
      .walk([](Operation* op) {
        return isa<tosa::TosaDialect>(op->getDialect()) ? WalkResult::interrupt()
                                                        : WalkResult::advance();
      })
      .wasInterrupted();
}

void buildTensorPipeline(OpPassManager& pm, bool tosa) {
  if (tosa) {
    // TOSA's own lowering, in upstream's order: control flow, then linalg (named ops first),
    // then the ops that become tensor (reshape, slice, pad, ...) and arith (constants) ops.
    pm.addNestedPass<func::FuncOp>(tosa::createTosaToSCF());
    tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions{});
    pm.addNestedPass<func::FuncOp>(tosa::createTosaToTensor());
    pm.addNestedPass<func::FuncOp>(tosa::createTosaToArith());
  }
  // Imported programs (ONNX) carry index arithmetic and dims that fold once shapes are known.
  pm.addPass(createCanonicalizerPass());
  // Chains of elementwise ops (bias add then activation, ...) become one loop nest, with no
  // temporary between them.
  pm.addPass(createFuseElementwisePass());
  bufferization::OneShotBufferizationOptions options;
  options.bufferizeFunctionBoundaries = true;
  // Inputs and results keep the layouts a buffer-level program would declare, so a
  // tensor-level module and its buffer-level twin have the same signature.
  options.setFunctionBoundaryTypeConversion(bufferization::LayoutMapOption::IdentityLayoutMap);
  // A loop may yield a new buffer each iteration (an ONNX Loop's value that grows, a scan
  // output's buffer when it is enlarged); deallocation then frees the one it replaced.
  options.allowReturnAllocsFromLoops = true;
  // Copies become linalg.copy, compiled to loops, never a call of MLIR's runtime library.
  options.memCpyFn = [](OpBuilder& b, Location loc, Value from, Value to) {
    b.create<linalg::CopyOp>(loc, from, to);
    return success();
  };
  pm.addPass(bufferization::createOneShotBufferizePass(options));
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  // A returned buffer the function does not own (an input, a constant) is cloned so the host
  // may keep it: clone becomes alloc + copy, and what deallocation left becomes memref ops.
  pm.addPass(createBufferizationToMemRefPass());
}

class BufferizePass : public impl::BufferizePassBase<BufferizePass> {
 public:
  using BufferizePassBase::BufferizePassBase;

  void getDependentDialects(DialectRegistry& registry) const override {
    BufferizePassBase::getDependentDialects(registry);
    OpPassManager pm(ModuleOp::getOperationName());
    buildTensorPipeline(pm, /*tosa=*/true);
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!hasTensors(module)) return;
    // Convolutions decide the layout of the activations around them first.
    if (failed(convsToChannelsLast(module))) return signalPassFailure();
    // Inputs belong to the host: an op that would update one in place (a convolution whose
    // residual is an input) writes a copy instead.
    module.walk([](func::FuncOp f) {
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        if (isTensor(f.getArgumentTypes()[i]))
          f.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                       BoolAttr::get(f.getContext(), false));
    });
    OpPassManager pm(ModuleOp::getOperationName());
    buildTensorPipeline(pm, hasTosa(module));
    if (failed(runPipeline(pm, module))) return signalPassFailure();
    reshapesToViews(module);
    // Whatever one-shot bufferization left on tensors has no lowering: name it.
    WalkResult left = module.walk([](Operation* op) {
      if (llvm::any_of(op->getOperandTypes(), isTensor) ||
          llvm::any_of(op->getResultTypes(), isTensor)) {
        op->emitError() << "'" << op->getName()
                        << "' is still on tensors after bufferization: RAL has no lowering "
                           "for it";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (left.wasInterrupted()) signalPassFailure();
  }
};

}  // namespace
}  // namespace disc_ral
}  // namespace mlir
