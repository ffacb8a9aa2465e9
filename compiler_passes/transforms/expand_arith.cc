// disc-ral-expand-arith (Passes.td): upstream's arith expansions minus the float min/max ones.
#include "compiler_passes/passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DEF_EXPANDARITHPASS
#include "compiler_passes/Passes.h.inc"

namespace {

class ExpandArithPass : public impl::ExpandArithPassBase<ExpandArithPass> {
 public:
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

}  // namespace
}  // namespace disc_ral
}  // namespace mlir
