// Elementwise fusion on tensors for disc-ral-bufferize: upstream's linalg elementwise fusion
// patterns, with one change to when a producer may be fused.
//
// Upstream fuses a producer only into its single user. Exported models are full of cheap
// elementwise producers with several users (a bias add read by LayerNorm's mean and by its
// centring, x - mean read by the variance and by the normalization): each one left unfused is a
// buffer written and read again. A producer whose body is a few arith ops is fused into every
// linalg.generic that reads it, recomputing it there instead of storing it; expensive bodies
// (math ops: exp, erf, ...) keep upstream's single-user rule.
#include "compiler_passes/transforms/fuse_elementwise.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace disc_ral {
namespace {

// At most this many arith ops: recomputing them in each user costs less than a memory pass.
constexpr int kMaxRecomputedOps = 8;

bool cheapToRecompute(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0) return false;
  int count = 0;
  for (Operation& inner : op.getBody()->without_terminator()) {
    if (!isa<arith::ArithDialect>(inner.getDialect()) && !isa<linalg::IndexOp>(inner)) return false;
    if (++count > kMaxRecomputedOps) return false;
  }
  return true;
}

bool shouldFuse(OpOperand* fused) {
  Operation* producer = fused->get().getDefiningOp();
  if (!producer) return false;
  if (producer->hasOneUse()) return true;
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic || !cheapToRecompute(generic)) return false;
  return llvm::all_of(producer->getUsers(),
                      [](Operation* user) { return isa<linalg::GenericOp>(user); });
}

class FuseElementwisePass : public PassWrapper<FuseElementwisePass, OperationPass<ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseElementwisePass)
  StringRef getArgument() const override { return "disc-ral-fuse-elementwise"; }
  StringRef getDescription() const override {
    return "Fuses elementwise linalg ops on tensors, recomputing cheap producers in each user";
  }
  void getDependentDialects(DialectRegistry& registry) const override {
    registry.insert<affine::AffineDialect, arith::ArithDialect, linalg::LinalgDialect,
                    tensor::TensorDialect>();
  }

  void runOnOperation() override {
    MLIRContext* context = &getContext();
    RewritePatternSet patterns(context);
    linalg::ControlFusionFn control = shouldFuse;
    // As upstream's linalg-fuse-elementwise-ops, with `control` for the fusion patterns.
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, [](OpOperand* fused) {
      Operation* producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse();
    });
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(patterns);
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

}  // namespace

std::unique_ptr<Pass> createFuseElementwisePass() {
  return std::make_unique<FuseElementwisePass>();
}

}  // namespace disc_ral
}  // namespace mlir
