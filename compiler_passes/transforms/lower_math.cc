// disc-ral-lower-math: every math op on every float type gets a lowering with a known accuracy.
//
// f16/bf16 ops run in f32 and round once, so their error stays within one unit in the last place.
// f32 exp, expm1, log, log1p, tanh and erf are inlined, computed in f32 within about 1 ulp (or in
// f64 as "<op>.f64"; math_approximations.h), so loops over them vectorize. Other ops on f32/f64
// without an LLVM intrinsic, and f64 log1p/expm1 (which MLIR's LLVM lowering computes as
// log(1 + x) and exp(x) - 1, losing every digit for small x), call the C library:
//   %y = math.tanh %x : f32   =>   %y = func.call @tanhf(%x) : (f32) -> f32
// glibc documents at most 1-2 ulp for these. ral-compile's host-symbol check admits libm names.
//
// f64 -> bf16 truncation has no LLVM lowering but a call of compiler-rt's __truncdfbf2, which no
// host library may import: it becomes f64 -> f32 rounded to odd, then f32 -> bf16 (expanded to
// integer ops by arith-expand). Rounding to odd first makes the double rounding exact.
#include "compiler_passes/transforms/math_approximations.h"
#include "compiler_passes/passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DEF_LOWERMATHPASS
#include "compiler_passes/Passes.h.inc"

namespace {

// op on f32 or f64 -> call of the libm function `name` + "f" / `name`.
template <typename Op>
class LibmCall : public OpRewritePattern<Op> {
 public:
  LibmCall(MLIRContext* context, StringRef name) : OpRewritePattern<Op>(context), name_(name) {}

  LogicalResult matchAndRewrite(Op op, PatternRewriter& rewriter) const override {
    Type type = op->getResult(0).getType();
    if (!type.isF32() && !type.isF64()) return failure();
    const std::string symbol = type.isF32() ? name_ + "f" : name_;
    auto module = op->template getParentOfType<ModuleOp>();
    auto fn_type = rewriter.getFunctionType(SmallVector<Type>(op->getNumOperands(), type), type);
    if (auto existing = module.template lookupSymbol<func::FuncOp>(symbol)) {
      if (existing.getFunctionType() != fn_type)
        return rewriter.notifyMatchFailure(op, "@" + symbol + " is declared with another type");
    } else {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(module.getBody());
      auto decl = rewriter.create<func::FuncOp>(op.getLoc(), symbol, fn_type);
      decl.setPrivate();
    }
    rewriter.replaceOpWithNewOp<func::CallOp>(op, symbol, TypeRange{type}, op->getOperands());
    return success();
  }

 private:
  std::string name_;
};

// %y = arith.truncf %x : f64 to bf16
//   => %t = f32 nearest to %x, moved one step towards zero if it rounded away from it; if %t is
//      inexact, its last mantissa bit is set (round to odd); %y = arith.truncf %t : f32 to bf16.
class TruncF64ToBF16 : public OpRewritePattern<arith::TruncFOp> {
 public:
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op, PatternRewriter& rewriter) const override {
    if (!op.getIn().getType().isF64() || !op.getType().isBF16()) return failure();
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Type i32 = rewriter.getI32Type();
    Value x = op.getIn();
    Value nearest = rewriter.create<arith::TruncFOp>(loc, f32, x);
    Value back = rewriter.create<arith::ExtFOp>(loc, rewriter.getF64Type(), nearest);
    Value abs_back = rewriter.create<math::AbsFOp>(loc, back);
    Value abs_x = rewriter.create<math::AbsFOp>(loc, x);
    // Same sign, so one less in the bit pattern is one step towards zero.
    Value away = rewriter.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, abs_back, abs_x);
    Value bits = rewriter.create<arith::BitcastOp>(loc, i32, nearest);
    Value one = rewriter.create<arith::ConstantOp>(loc, rewriter.getI32IntegerAttr(1));
    Value towards_zero = rewriter.create<arith::SubIOp>(loc, bits, one);
    bits = rewriter.create<arith::SelectOp>(loc, away, towards_zero, bits);
    // Inexact (NaN compares unequal too, and stays NaN with its low bit set).
    Value inexact = rewriter.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, back, x);
    Value odd = rewriter.create<arith::OrIOp>(loc, bits, one);
    bits = rewriter.create<arith::SelectOp>(loc, inexact, odd, bits);
    Value rounded = rewriter.create<arith::BitcastOp>(loc, f32, bits);
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), rounded);
    return success();
  }
};

class LowerMathPass : public impl::LowerMathPassBase<LowerMathPass> {
 public:
  using LowerMathPassBase::LowerMathPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpPassManager to_f32(ModuleOp::getOperationName());
    to_f32.addPass(math::createMathLegalizeToF32());
    if (failed(runPipeline(to_f32, module))) return signalPassFailure();

    MLIRContext* ctx = &getContext();
    RewritePatternSet inline_math(ctx);
    if (failed(populateF32MathApproximations(inline_math, inlineF32))) {
      module.emitError() << "disc-ral-lower-math: inline-f32 must name ops among exp, expm1, "
                            "log, log1p, tanh, erf (each optionally with .f64); got '"
                         << inlineF32 << "'";
      return signalPassFailure();
    }
    if (failed(applyPatternsAndFoldGreedily(module, std::move(inline_math))))
      return signalPassFailure();
    RewritePatternSet patterns(ctx);
    patterns.add<TruncF64ToBF16>(ctx);
    if (!libmCalls) {
      if (failed(applyPatternsAndFoldGreedily(module, std::move(patterns))))
        return signalPassFailure();
      return;
    }
    patterns.add<LibmCall<math::TanhOp>>(ctx, "tanh");
    patterns.add<LibmCall<math::ErfOp>>(ctx, "erf");
    patterns.add<LibmCall<math::AtanOp>>(ctx, "atan");
    patterns.add<LibmCall<math::Atan2Op>>(ctx, "atan2");
    patterns.add<LibmCall<math::TanOp>>(ctx, "tan");
    patterns.add<LibmCall<math::SinhOp>>(ctx, "sinh");
    patterns.add<LibmCall<math::CoshOp>>(ctx, "cosh");
    patterns.add<LibmCall<math::AsinOp>>(ctx, "asin");
    patterns.add<LibmCall<math::AcosOp>>(ctx, "acos");
    patterns.add<LibmCall<math::AsinhOp>>(ctx, "asinh");
    patterns.add<LibmCall<math::AcoshOp>>(ctx, "acosh");
    patterns.add<LibmCall<math::AtanhOp>>(ctx, "atanh");
    patterns.add<LibmCall<math::CbrtOp>>(ctx, "cbrt");
    patterns.add<LibmCall<math::Log1pOp>>(ctx, "log1p");
    patterns.add<LibmCall<math::ExpM1Op>>(ctx, "expm1");
    if (failed(applyPatternsAndFoldGreedily(module, std::move(patterns))))
      return signalPassFailure();
  }
};

}  // namespace
}  // namespace disc_ral
}  // namespace mlir
