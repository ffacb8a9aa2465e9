#include "compiler_passes/transforms/conv_layout.h"

#include "compiler_passes/dialect/dialect.h"
#include "llvm/ADT/SmallBitVector.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace disc_ral {
namespace {

// Marks the transposes this file creates and the generics it rewrites: only those move, so the
// rest of a model (a Transformer's own transposes around a patch-embedding convolution) keeps
// the loops it was given. Removed at the end.
constexpr const char kLayoutMark[] = "disc_ral.conv_layout";
bool marked(Operation* op) { return op && op->hasAttr(kLayoutMark); }
void mark(Operation* op) { op->setAttr(kLayoutMark, UnitAttr::get(op->getContext())); }

// linalg.transpose: result dim i is input dim perm[i], i.e. out[i] = in[j] with j[perm[k]] = i[k].
SmallVector<int64_t> toLast(int64_t rank) {  // [N, C, D...] -> [N, D..., C]
  SmallVector<int64_t> p = {0};
  for (int64_t d = 2; d < rank; ++d) p.push_back(d);
  p.push_back(1);
  return p;
}
SmallVector<int64_t> inverse(ArrayRef<int64_t> p) {
  SmallVector<int64_t> q(p.size());
  for (size_t k = 0; k < p.size(); ++k) q[p[k]] = static_cast<int64_t>(k);
  return q;
}

Value transposed(OpBuilder& b, Location loc, Value v, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> dims;
  for (int64_t k : perm) dims.push_back(tensor::getMixedSize(b, loc, v, k));
  Value init = b.create<tensor::EmptyOp>(loc, dims, type.getElementType());
  auto t = b.create<linalg::TransposeOp>(loc, v, init, perm);
  mark(t);
  return t.getResult()[0];
}

// An empty tensor of `v`'s shape permuted by `perm`, or `v` transposed when its contents matter.
Value permutedInit(OpBuilder& b, Location loc, Value v, ArrayRef<int64_t> perm) {
  if (!v.getDefiningOp<tensor::EmptyOp>()) return transposed(b, loc, v, perm);
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> dims;
  for (int64_t k : perm) dims.push_back(tensor::getMixedSize(b, loc, v, k));
  return b.create<tensor::EmptyOp>(loc, dims, type.getElementType());
}

// A channels-first convolution becomes transpose -> channels-last convolution -> transpose.
void convertConv(ConvOp conv) {
  if (conv.getChannelsLast() || conv.getNumResults() != 1) return;
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  const int64_t rank = cast<RankedTensorType>(conv.getInput().getType()).getRank();
  SmallVector<int64_t> last = toLast(rank);
  Value x = transposed(b, loc, conv.getInput(), last);
  Value init = conv.getResidual() ? transposed(b, loc, conv.getInit(), last)
                                  : permutedInit(b, loc, conv.getInit(), last);
  auto cl = b.create<ConvOp>(loc, TypeRange{init.getType()},
                             ValueRange{x, conv.getFilter(), conv.getBias(), init},
                             conv->getAttrs());
  cl.setChannelsLast(true);
  Value y = transposed(b, loc, cl.getResult()[0], inverse(last));
  conv.getResult()[0].replaceAllUsesWith(y);
  conv.erase();
}

// transpose(transpose(x, p), q) = x when the two permutations undo each other.
struct CancelTransposes : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op, PatternRewriter& rewriter) const override {
    auto inner = op.getInput().getDefiningOp<linalg::TransposeOp>();
    if (!inner || (!marked(op) && !marked(inner))) return failure();
    ArrayRef<int64_t> p = inner.getPermutation(), q = op.getPermutation();
    for (size_t k = 0; k < q.size(); ++k)
      if (p[q[k]] != static_cast<int64_t>(k)) return failure();
    rewriter.replaceOp(op, inner.getInput());
    return success();
  }
};

// A generic reading a transpose's result reads the transpose's input instead: at index e of
// the result it reads input index j with j[perm[k]] = e[k].
struct FoldInputTranspose : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter& rewriter) const override {
    for (OpOperand* operand : op.getDpsInputOperands()) {
      auto t = operand->get().getDefiningOp<linalg::TransposeOp>();
      if (!t || !marked(t)) continue;
      AffineMap map = op.getMatchingIndexingMap(operand);
      ArrayRef<int64_t> perm = t.getPermutation();
      SmallVector<AffineExpr> exprs(perm.size());
      for (size_t k = 0; k < perm.size(); ++k) exprs[perm[k]] = map.getResult(k);
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      maps[operand->getOperandNumber()] =
          AffineMap::get(map.getNumDims(), map.getNumSymbols(), exprs, op.getContext());
      rewriter.modifyOpInPlace(op, [&] {
        operand->set(t.getInput());
        op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
        mark(op);
      });
      return success();
    }
    return failure();
  }
};

// A single-result generic whose users are all the same transpose writes the transposed result:
// where it wrote index e, it writes i with i[k] = e[perm[k]].
struct SinkOutputTranspose : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter& rewriter) const override {
    if (op.getNumResults() != 1 || op.getResult(0).use_empty()) return failure();
    SmallVector<linalg::TransposeOp> users;
    SmallVector<tensor::DimOp> dims;  // sizes of the result read elsewhere (by the transposes)
    for (Operation* user : op.getResult(0).getUsers()) {
      if (auto dim = dyn_cast<tensor::DimOp>(user)) {
        dims.push_back(dim);
        continue;
      }
      auto t = dyn_cast<linalg::TransposeOp>(user);
      if (!t || !marked(t) || t.getInput() != op.getResult(0)) return failure();
      if (!users.empty() && t.getPermutation() != users.front().getPermutation())
        return failure();
      users.push_back(t);
    }
    if (users.empty() || llvm::any_of(dims, [](tensor::DimOp d) { return !d.getConstantIndex(); }))
      return failure();
    ArrayRef<int64_t> perm = users.front().getPermutation();
    OpOperand* out = op.getDpsInitOperand(0);
    AffineMap map = op.getMatchingIndexingMap(out);
    SmallVector<AffineExpr> exprs;
    for (int64_t k : perm) exprs.push_back(map.getResult(k));
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    maps[out->getOperandNumber()] =
        AffineMap::get(map.getNumDims(), map.getNumSymbols(), exprs, op.getContext());
    rewriter.setInsertionPoint(op);
    Value init = permutedInit(rewriter, op.getLoc(), out->get(), perm);
    auto moved = rewriter.create<linalg::GenericOp>(
        op.getLoc(), TypeRange{init.getType()}, op.getDpsInputs(), ValueRange{init}, maps,
        op.getIteratorTypesArray());
    rewriter.inlineRegionBefore(op.getRegion(), moved.getRegion(), moved.getRegion().begin());
    mark(moved);
    for (linalg::TransposeOp t : users) rewriter.replaceOp(t, moved.getResult(0));
    SmallVector<int64_t> position = inverse(perm);
    for (tensor::DimOp dim : dims) {
      std::optional<int64_t> d = dim.getConstantIndex();
      if (!d) return failure();  // checked below before anything changed
      rewriter.setInsertionPoint(dim);
      rewriter.replaceOpWithNewOp<tensor::DimOp>(dim, moved.getResult(0), position[*d]);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

// pad(transpose(x)) = transpose(pad'(x)) with the pads permuted alike: a pool's padding does not
// stop the transposes on its way.
struct SwapPadTranspose : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::PadOp op, PatternRewriter& rewriter) const override {
    auto t = op.getSource().getDefiningOp<linalg::TransposeOp>();
    Value value = op.getConstantPaddingValue();
    if (!t || !marked(t) || !value) return failure();
    ArrayRef<int64_t> perm = t.getPermutation();
    SmallVector<OpFoldResult> low = op.getMixedLowPad(), high = op.getMixedHighPad();
    SmallVector<OpFoldResult> new_low(low.size()), new_high(high.size());
    for (size_t k = 0; k < perm.size(); ++k) {
      new_low[perm[k]] = low[k];
      new_high[perm[k]] = high[k];
    }
    auto padded = rewriter.create<tensor::PadOp>(op.getLoc(), Type(), t.getInput(), new_low,
                                                 new_high, value, op.getNofold());
    rewriter.replaceOp(op, transposed(rewriter, op.getLoc(), padded.getResult(), perm));
    return success();
  }
};

// A reduction into a channels-last output whose input is channels-last too (a pool's window,
// a mean over the spatial dims): the output's dims in memory order, then the reduced dims,
// then the channel dim, so the innermost loop is a contiguous run of channels in both (one
// vector per window element) instead of a stride of C per window element.
bool windowOrder(linalg::GenericOp op, SmallVectorImpl<unsigned>& interchange) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0) return false;
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (out.getNumResults() == 0 || !out.isProjectedPermutation(/*allowZeroInResults=*/false))
    return false;
  const unsigned channel = cast<AffineDimExpr>(out.getResults().back()).getPosition();
  const bool channel_innermost_in = llvm::any_of(op.getDpsInputOperands(), [&](OpOperand* in) {
    AffineMap map = op.getMatchingIndexingMap(in);
    auto last = map.getNumResults() ? dyn_cast<AffineDimExpr>(map.getResults().back()) : nullptr;
    return last && last.getPosition() == channel;
  });
  if (!channel_innermost_in) return false;
  llvm::SmallBitVector used(op.getNumLoops());
  for (AffineExpr e : out.getResults().drop_back()) {
    interchange.push_back(cast<AffineDimExpr>(e).getPosition());
    used.set(interchange.back());
  }
  used.set(channel);
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    if (!used.test(d)) interchange.push_back(d);
  interchange.push_back(channel);
  for (unsigned k = 0; k < interchange.size(); ++k)
    if (interchange[k] != k) return true;
  return false;
}

// Loops in the memory order of the operand that moves the most data: after the transposes are
// folded into indexing maps, a generic's loops would otherwise walk channels-last buffers with
// the channel loop outermost (a stride of C between neighbouring iterations).
void loopsInMemoryOrder(linalg::GenericOp op, RewriterBase& rewriter) {
  const unsigned loops = op.getNumLoops();
  AffineMap order;
  for (OpOperand& operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (map.getNumResults() == loops && map.isPermutation()) {
      // The output when it is a full permutation; else the first input that is.
      order = map;
      if (op.isDpsInit(&operand)) break;
    }
  }
  SmallVector<unsigned> interchange;
  if (order) {
    if (order.isIdentity()) return;
    for (AffineExpr e : order.getResults())
      interchange.push_back(cast<AffineDimExpr>(e).getPosition());
  } else if (!windowOrder(op, interchange)) {
    return;
  }
  rewriter.setInsertionPoint(op);
  (void)linalg::interchangeGenericOp(rewriter, op, interchange);
}

}  // namespace

LogicalResult convsToChannelsLast(ModuleOp module) {
  SmallVector<ConvOp> convs;
  module.walk([&](ConvOp conv) { convs.push_back(conv); });
  if (convs.empty()) return success();
  for (ConvOp conv : convs) convertConv(conv);
  RewritePatternSet patterns(module.getContext());
  patterns.add<CancelTransposes, FoldInputTranspose, SinkOutputTranspose, SwapPadTranspose>(module.getContext());
  if (failed(applyPatternsAndFoldGreedily(module, std::move(patterns)))) return failure();
  IRRewriter rewriter(module.getContext());
  SmallVector<linalg::GenericOp> generics;
  module.walk([&](linalg::GenericOp op) {
    if (marked(op)) generics.push_back(op);
  });
  for (linalg::GenericOp op : generics) loopsInMemoryOrder(op, rewriter);
  module.walk([](Operation* op) { op->removeAttr(kLayoutMark); });
  return success();
}

}  // namespace disc_ral
}  // namespace mlir
