// Normalizations and losses built on reductions: Softmax and LogSoftmax, LayerNormalization,
// InstanceNormalization, BatchNormalization's training mode, MeanVarianceNormalization, LRN,
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
#include <limits>

#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/node_context.h"
#include "compiler_passes/onnx/reductions.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace disc_ral {
namespace onnx {
namespace {

// MeanVarianceNormalization: (x - E[x]) / (sqrt(E[x²] - E[x]²) + 1e-9) over `axes` (default
// 0, 2, 3), as ONNX's function body computes it.
LogicalResult convertMeanVarianceNormalization(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.error("MeanVarianceNormalization takes floats");
  SmallVector<int64_t> axes = n.has("axes") ? n.ints("axes") : SmallVector<int64_t>{0, 2, 3};
  FailureOr<SmallVector<int64_t>> dims = normalizeAxes(n, axes, n.rank(0));
  if (failed(dims)) return failure();
  Value x = n.value(0);
  auto mean = [&](Value v) {
    Value s = reduce(
        b, loc, v, *dims, scalarAttr(b, t, 0),
        [](OpBuilder& nb, Location nl, Value acc, Value e) -> Value {
          return nb.create<arith::AddFOp>(nl, acc, e);
        },
        true);
    return divideBy(b, loc, s, countOf(b, loc, x, *dims, t));
  };
  Value m = mean(x);
  Value m2 = mean(mapTensor(b, loc, x, [](OpBuilder& nb, Location nl, Value v) -> Value {
    return nb.create<arith::MulFOp>(nl, v, v);
  }));
  Value y =
      elementwise(b, loc, {x, m, m2}, t, [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
        Value var = nb.create<arith::SubFOp>(nl, a[2], nb.create<arith::MulFOp>(nl, a[1], a[1]));
        Value sd = nb.create<arith::AddFOp>(nl, nb.create<math::SqrtOp>(nl, var),
                                            scalarConstant(nb, nl, t, 1e-9));
        return nb.create<arith::DivFOp>(nl, nb.create<arith::SubFOp>(nl, a[0], a[1]), sd);
      });
  n.setOutput(0, y);
  return success();
}

// LRN: y = x / (bias + alpha / size · Σ x²)^beta, the sum over the `size` channels around each
// (c - ⌊(size-1)/2⌋ to c + ⌈(size-1)/2⌉, those past the edges left out): the squares padded with
// zeros along C, then one windowed sum (a reduction loop over the window) and one elementwise
// loop.
LogicalResult convertLrn(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.error("LRN takes floats");
  const int64_t rank = n.rank(0);
  if (rank < 3) return n.error("LRN's input must be [N, C, D1, ...] (rank 3 or more)");
  const int64_t size = n.i("size", 0);
  if (!n.has("size") || size < 1 || size > (int64_t{1} << 20))
    return n.error("LRN needs a positive 'size' (at most 2^20)");
  const double alpha = n.f("alpha", 1e-4f), beta = n.f("beta", 0.75f), bias = n.f("bias", 1.0f);
  Value x = n.value(0);
  Value sq = mapTensor(b, loc, x, [](OpBuilder& nb, Location nl, Value v) -> Value {
    return nb.create<arith::MulFOp>(nl, v, v);
  });
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  low[1] = before;
  high[1] = after;
  Value padded = pad(b, loc, sq, low, high, scalarConstant(b, loc, t, 0));
  // The window as a loop dim: a [size] operand gives its extent.
  Value window = emptyTensor(b, loc, {b.getIndexAttr(size)}, t);
  MLIRContext* ctx = b.getContext();
  SmallVector<AffineExpr> in, out;
  for (int64_t d = 0; d < rank; ++d) {
    AffineExpr e = getAffineDimExpr(d, ctx);
    in.push_back(d == 1 ? e + getAffineDimExpr(rank, ctx) : e);
    out.push_back(e);
  }
  SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, in, ctx),
                                 AffineMap::get(rank + 1, 0, {getAffineDimExpr(rank, ctx)}, ctx),
                                 AffineMap::get(rank + 1, 0, out, ctx)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value init = filled(b, loc, dimsOf(b, loc, x), scalarConstant(b, loc, t, 0));
  Value sum = b.create<linalg::GenericOp>(
                   loc, TypeRange{init.getType()}, ValueRange{padded, window}, ValueRange{init},
                   maps, iterators,
                   [](OpBuilder& nb, Location nl, ValueRange a) {
                     nb.create<linalg::YieldOp>(
                         nl, ValueRange{nb.create<arith::AddFOp>(nl, a[2], a[0]).getResult()});
                   })
                  .getResult(0);
  Value y =
      elementwise(b, loc, {x, sum}, t, [=](OpBuilder& nb, Location nl, ValueRange a) -> Value {
        auto c = [&](double v) { return scalarConstant(nb, nl, t, v); };
        Value d = nb.create<arith::AddFOp>(nl, c(bias),
                                           nb.create<arith::MulFOp>(nl, c(alpha / size), a[1]));
        return nb.create<arith::DivFOp>(nl, a[0], nb.create<math::PowFOp>(nl, d, c(beta)));
      });
  n.setOutput(0, y);
  return success();
}

// The parts of a softmax over `axes` that Softmax, LogSoftmax and SoftmaxCrossEntropyLoss
// share: x - max(x) (so exp never overflows), and the sum of its exponentials (dims kept).
struct SoftmaxParts {
  Value shifted, exp, sum;
};

SoftmaxParts softmaxParts(OpBuilder& b, Location loc, Value x, ArrayRef<int64_t> axes) {
  Type t = cast<RankedTensorType>(x.getType()).getElementType();
  Value m = reduce(
      b, loc, x, axes, infinity(b, t, true),
      [](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
        return nb.create<arith::MaximumFOp>(nl, acc, v);
      },
      true);
  SoftmaxParts p;
  p.shifted = elementwise(b, loc, {x, m}, t, [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
    return nb.create<arith::SubFOp>(nl, a[0], a[1]);
  });
  p.exp = mapTensor(b, loc, p.shifted, [](OpBuilder& nb, Location nl, Value v) -> Value {
    return nb.create<math::ExpOp>(nl, v);
  });
  p.sum = reduce(
      b, loc, p.exp, axes, scalarAttr(b, t, 0),
      [](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
        return nb.create<arith::AddFOp>(nl, acc, v);
      },
      true);
  return p;
}

// log_softmax = (x - max) - log(sum(exp(x - max))).
Value logSoftmax(OpBuilder& b, Location loc, const SoftmaxParts& p) {
  Type t = cast<RankedTensorType>(p.shifted.getType()).getElementType();
  return elementwise(b, loc, {p.shifted, p.sum}, t,
                     [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                       return nb.create<arith::SubFOp>(nl, a[0], nb.create<math::LogOp>(nl, a[1]));
                     });
}

LogicalResult convertSoftmax(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const bool log = n.node().op_type() == "LogSoftmax";
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.unsupported("non-float " + n.node().op_type());
  const int64_t rank = n.rank(0);
  if (rank == 0) return n.error("input must have rank >= 1");
  FailureOr<int64_t> axis = n.axis(n.i("axis", n.opset() >= 13 ? -1 : 1), rank);
  if (failed(axis)) return failure();
  // Before opset 13 the input is taken as 2-D [prod(:axis), prod(axis:)].
  SmallVector<int64_t> axes = {*axis};
  if (n.opset() < 13)
    for (int64_t d = *axis + 1; d < rank; ++d) axes.push_back(d);
  SoftmaxParts p = softmaxParts(b, loc, n.value(0), axes);
  Value y = log ? logSoftmax(b, loc, p)
                : elementwise(b, loc, {p.exp, p.sum}, t,
                              [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                                return nb.create<arith::DivFOp>(nl, a[0], a[1]);
                              });
  n.setOutput(0, y);
  return success();
}

// What LayerNormalization and InstanceNormalization share: over `axes` of `x` (already in the
// compute type), the mean, x - mean and 1 / sqrt(variance + epsilon), reduced dims kept.
struct Normalized {
  Value mean, centred, var, inv_std;  // var: the biased variance
};

Normalized normalize(OpBuilder& b, Location loc, Value x, ArrayRef<int64_t> axes, double eps) {
  Type ct = cast<RankedTensorType>(x.getType()).getElementType();
  auto add = [](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
    return nb.create<arith::AddFOp>(nl, acc, v);
  };
  Normalized r;
  Value count = countOf(b, loc, x, axes, ct);
  r.mean = divideBy(b, loc, reduce(b, loc, x, axes, scalarAttr(b, ct, 0), add, true), count);
  r.centred =
      elementwise(b, loc, {x, r.mean}, ct, [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
        return nb.create<arith::SubFOp>(nl, a[0], a[1]);
      });
  Value sq = mapTensor(b, loc, r.centred, [](OpBuilder& nb, Location nl, Value v) -> Value {
    return nb.create<arith::MulFOp>(nl, v, v);
  });
  r.var = divideBy(b, loc, reduce(b, loc, sq, axes, scalarAttr(b, ct, 0), add, true), count);
  r.inv_std = mapTensor(b, loc, r.var, [&](OpBuilder& nb, Location nl, Value v) -> Value {
    Value s = nb.create<math::SqrtOp>(
        nl, nb.create<arith::AddFOp>(nl, v, scalarConstant(nb, nl, ct, eps)));
    return nb.create<arith::DivFOp>(nl, scalarConstant(nb, nl, ct, 1), s);
  });
  return r;
}

LogicalResult convertLayerNorm(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.unsupported("non-float LayerNormalization");
  const int64_t rank = n.rank(0);
  FailureOr<int64_t> axis = n.axis(n.i("axis", -1), rank);
  if (failed(axis)) return failure();
  const double eps = n.f("epsilon", 1e-5f);
  // stash_type 1 (the default) computes mean and variance in f32; f64 inputs stay f64.
  const int64_t stash = n.i("stash_type", 1);
  if (stash != 1) return n.unsupported("stash_type=" + std::to_string(stash));
  Type ct = t.isF64() ? t : b.getF32Type();
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d) axes.push_back(d);
  Normalized norm = normalize(b, loc, convertTensor(b, loc, n.value(0), ct), axes, eps);
  SmallVector<Value> inputs = {norm.centred, norm.inv_std, convertTensor(b, loc, n.value(1), ct)};
  const bool bias = n.hasInput(2);
  if (bias) inputs.push_back(convertTensor(b, loc, n.value(2), ct));
  // Scale and B broadcast to X's shape, one way (ONNX): they never grow the result.
  SmallVector<OpFoldResult> xd = dimsOf(b, loc, n.value(0));
  Value y = elementwise(
      b, loc, inputs, t,
      [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
        Value v = nb.create<arith::MulFOp>(nl, nb.create<arith::MulFOp>(nl, a[0], a[1]), a[2]);
        if (bias) v = nb.create<arith::AddFOp>(nl, v, a[3]);
        return convertScalar(nb, nl, v, t);
      },
      ArrayRef<OpFoldResult>(xd));
  n.setOutput(0, y);
  if (n.wantsOutput(1)) n.setOutput(1, norm.mean);
  if (n.wantsOutput(2)) n.setOutput(2, norm.inv_std);
  return success();
}

}  // namespace

// BatchNormalization with training_mode = 1 (opset 14 on): normalized by the batch's own mean and
// (biased) variance over every dim but the channels; running_mean and running_var are the
// inputs' times momentum plus the batch's times 1 - momentum.
LogicalResult convertBatchNormTraining(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.unsupported("non-float BatchNormalization");
  const int64_t rank = n.rank(0);
  if (rank < 2) return n.error("input must have rank >= 2");
  const double eps = n.f("epsilon", 1e-5f), momentum = n.f("momentum", 0.9f);
  Value x = n.value(0);
  // scale and B (T1), mean and var (T2) may be float types other than X's (opset 15): they
  // compute in X's, and the running statistics go back to theirs. One value per channel each.
  Value params[5];
  for (size_t i = 1; i <= 4; ++i) {
    if (!n.hasInput(i) || n.rank(i) != 1) return n.error("scale, B, mean and var must be 1-D");
    if (!isFloat(n.elementType(i))) return n.unsupported("non-float BatchNormalization parameters");
    params[i] = convertTensor(b, loc, n.value(i), t, false, false);
    if (failed(checkSameDim(n, dimOf(b, loc, params[i], 0), dimOf(b, loc, x, 1),
                            "a parameter's size and X's channels")))
      return failure();
  }
  SmallVector<int64_t> axes = {0};
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  Normalized norm = normalize(b, loc, x, axes, eps);
  SmallVector<OpFoldResult> cd(rank, b.getIndexAttr(1)), channels = {dimOf(b, loc, x, 1)};
  cd[1] = channels[0];
  Value scale = reshape(b, loc, params[1], cd), bias = reshape(b, loc, params[2], cd);
  n.setOutput(0, elementwise(b, loc, {norm.centred, norm.inv_std, scale, bias}, t,
                             [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                               Value z = nb.create<arith::MulFOp>(nl, a[0], a[1]);
                               return nb.create<arith::AddFOp>(
                                   nl, nb.create<arith::MulFOp>(nl, z, a[2]), a[3]);
                             }));
  auto running = [&](size_t input, Value batch) {
    Value r = elementwise(
        b, loc, {params[input], reshape(b, loc, batch, channels)}, t,
        [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
          return nb.create<arith::AddFOp>(
              nl, nb.create<arith::MulFOp>(nl, a[0], scalarConstant(nb, nl, t, momentum)),
              nb.create<arith::MulFOp>(nl, a[1], scalarConstant(nb, nl, t, 1 - momentum)));
        });
    return convertTensor(b, loc, r, n.elementType(input), false, false);
  };
  if (n.wantsOutput(1)) n.setOutput(1, running(3, norm.mean));
  if (n.wantsOutput(2)) n.setOutput(2, running(4, norm.var));
  return success();
}

namespace {

// InstanceNormalization: per sample and channel, over the spatial dims (what torch exports for
// GroupNorm too, around reshapes): y = (x - mean) / sqrt(var + epsilon) * scale[c] + B[c].
LogicalResult convertInstanceNorm(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.unsupported("non-float InstanceNormalization");
  const int64_t rank = n.rank(0);
  if (rank < 3) return n.error("input must have rank >= 3");
  if (n.rank(1) != 1 || n.rank(2) != 1) return n.error("scale and B must be 1-D");
  const double eps = n.f("epsilon", 1e-5f);
  Type ct = t.isF64() ? t : b.getF32Type();
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  Normalized norm = normalize(b, loc, convertTensor(b, loc, n.value(0), ct), axes, eps);
  // Scale and B per channel: [C] as [C, 1, ...] against [N, C, S...].
  OpFoldResult channels = dimOf(b, loc, n.value(0), 1);
  // Scale against B first: with the channels dynamic, two static sizes that differ would
  // otherwise only be compared to the channels at run time, after typing the result by both.
  if (failed(checkSameDim(n, dimOf(b, loc, n.value(1), 0), dimOf(b, loc, n.value(2), 0),
                          "scale's and B's sizes")) ||
      failed(
          checkSameDim(n, dimOf(b, loc, n.value(1), 0), channels, "scale's size and channels")) ||
      failed(checkSameDim(n, dimOf(b, loc, n.value(2), 0), channels, "B's size and channels")))
    return failure();
  SmallVector<OpFoldResult> cd = {dimOf(b, loc, n.value(1), 0)};
  for (int64_t k = 2; k < rank; ++k) cd.push_back(b.getIndexAttr(1));
  Value scale = convertTensor(b, loc, reshape(b, loc, n.value(1), cd), ct);
  Value bias = convertTensor(b, loc, reshape(b, loc, n.value(2), cd), ct);
  if (auto why = broadcastError({norm.centred, scale, bias})) return n.error(*why);
  Value y = elementwise(b, loc, {norm.centred, norm.inv_std, scale, bias}, t,
                        [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                          Value v = nb.create<arith::MulFOp>(
                              nl, nb.create<arith::MulFOp>(nl, a[0], a[1]), a[2]);
                          return convertScalar(nb, nl, nb.create<arith::AddFOp>(nl, v, a[3]), t);
                        });
  n.setOutput(0, y);
  return success();
}

// -input[n, target, d...] * weight[target] per element, 0 where the target is ignore_index,
// then the reduction (none, sum, or mean: the sum over the summed weights), as
// NegativeLogLikelihoodLoss computes it; SoftmaxCrossEntropyLoss applies it to LogSoftmax.
FailureOr<Value> nllLoss(NodeContext& n, Value input, Value target, Value weight) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  auto ti = cast<RankedTensorType>(input.getType()), tt = cast<RankedTensorType>(target.getType());
  Type t = ti.getElementType(), it = tt.getElementType();
  const int64_t rank = tt.getRank();
  if (!isFloat(t)) return n.unsupported("non-float " + n.node().op_type());
  if (!it.isInteger(32) && !it.isInteger(64)) return n.error("the target must be int32 or int64");
  if (ti.getRank() != rank + 1 || rank < 1)
    return n.error("input must be [N, C, d...] and the target [N, d...]");
  const std::string reduction = n.s("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return n.error("reduction must be none, sum or mean");
  const bool has_ignore = n.has("ignore_index");
  const int64_t ignore = n.i("ignore_index", 0);
  SmallVector<OpFoldResult> id = dimsOf(b, loc, input), td = dimsOf(b, loc, target);
  if (failed(checkSameDim(n, id[0], td[0], "input and target batch dims"))) return failure();
  for (int64_t d = 1; d < rank; ++d)
    if (failed(checkSameDim(n, id[d + 1], td[d], "input and target dims"))) return failure();
  OpFoldResult classes = id[1];
  // One weight per class: each target reads its own.
  if (weight && failed(checkSameDim(n, dimOf(b, loc, weight, 0), classes,
                                    "the weights' size and the number of classes")))
    return failure();
  // Every target that is not ignored lies in [0, C): checked before anything reads it.
  {
    Value masked = target;
    if (has_ignore)
      masked =
          elementwise(b, loc, {target}, it, [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
            Value skip = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::eq, a[0],
                                                  intConstant(nb, nl, it, ignore));
            return nb.create<arith::SelectOp>(nl, skip, scalarConstant(nb, nl, it, 0), a[0]);
          });
    SmallVector<int64_t> all;
    for (int64_t d = 0; d < rank; ++d) all.push_back(d);
    const unsigned width = it.getIntOrFloatBitWidth();
    Value mn = reduce(
        b, loc, masked, all, b.getIntegerAttr(it, APInt::getSignedMaxValue(width)),
        [](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
          return nb.create<arith::MinSIOp>(nl, acc, v);
        },
        false);
    Value mx = reduce(
        b, loc, masked, all, b.getIntegerAttr(it, APInt::getSignedMinValue(width)),
        [](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
          return nb.create<arith::MaxSIOp>(nl, acc, v);
        },
        false);
    // As index values: the number of classes need not fit the target's type.
    Value lo = b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                            b.create<tensor::ExtractOp>(loc, mn, ValueRange{}));
    Value hi = b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                            b.create<tensor::ExtractOp>(loc, mx, ValueRange{}));
    Value cls = indexValue(b, loc, classes);
    Value ok =
        b.create<arith::AndIOp>(loc,
                                b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, lo,
                                                        b.create<arith::ConstantIndexOp>(loc, 0)),
                                b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, hi, cls));
    Value none = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                         indexValue(b, loc, product(b, loc, td)),
                                         b.create<arith::ConstantIndexOp>(loc, 0));
    runtimeCheck(b, loc, b.create<arith::OrIOp>(loc, ok, none),
                 n.node().op_type() + ": a target is outside [0, classes)");
  }
  Value loss_init = emptyTensor(b, loc, td, t), weight_init = emptyTensor(b, loc, td, t);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{loss_init.getType(), weight_init.getType()}, ValueRange{target},
      ValueRange{loss_init, weight_init}, SmallVector<AffineMap>(3, b.getMultiDimIdentityMap(rank)),
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder& nb, Location nl, ValueRange a) {
        Value tv = a[0];
        Value skip = has_ignore ? nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::eq, tv,
                                                           intConstant(nb, nl, it, ignore))
                                      .getResult()
                                : nb.create<arith::ConstantIntOp>(nl, 0, 1).getResult();
        Value cls = nb.create<arith::IndexCastOp>(
            nl, nb.getIndexType(),
            nb.create<arith::SelectOp>(nl, skip, scalarConstant(nb, nl, it, 0), tv));
        SmallVector<Value> at = {nb.create<linalg::IndexOp>(nl, 0), cls};
        for (int64_t d = 1; d < rank; ++d) at.push_back(nb.create<linalg::IndexOp>(nl, d));
        Value v = nb.create<tensor::ExtractOp>(nl, input, at);
        Value w = weight ? nb.create<tensor::ExtractOp>(nl, weight, ValueRange{cls}).getResult()
                         : scalarConstant(nb, nl, t, 1);
        w = nb.create<arith::SelectOp>(nl, skip, scalarConstant(nb, nl, t, 0), w);
        Value l = nb.create<arith::NegFOp>(nl, nb.create<arith::MulFOp>(nl, v, w));
        nb.create<linalg::YieldOp>(nl, ValueRange{l, w});
      });
  Value loss = generic.getResult(0), weights = generic.getResult(1);
  if (reduction == "none") return loss;
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < rank; ++d) all.push_back(d);
  auto add = [](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
    return nb.create<arith::AddFOp>(nl, acc, v);
  };
  Value total = reduce(b, loc, loss, all, scalarAttr(b, t, 0), add, false);
  if (reduction == "sum") return total;
  Value wsum = reduce(b, loc, weights, all, scalarAttr(b, t, 0), add, false);
  return elementwise(b, loc, {total, wsum}, t,
                     [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                       return nb.create<arith::DivFOp>(nl, a[0], a[1]);
                     });
}

LogicalResult convertNllLoss(NodeContext& n) {
  Value weight = n.hasInput(2) ? n.value(2) : Value();
  if (weight && n.rank(2) != 1) return n.error("weight must be 1-D");
  FailureOr<Value> y = nllLoss(n, n.value(0), n.value(1), weight);
  if (failed(y)) return failure();
  n.setOutput(0, *y);
  return success();
}

LogicalResult convertSoftmaxCrossEntropy(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.unsupported("non-float SoftmaxCrossEntropyLoss");
  if (n.rank(0) < 2) return n.error("scores must be [N, C, d...]");
  // log_softmax over the classes (dim 1), as LogSoftmax computes it.
  SmallVector<int64_t> axes = {1};
  Value logp = logSoftmax(b, loc, softmaxParts(b, loc, n.value(0), axes));
  Value weight = n.hasInput(2) ? n.value(2) : Value();
  if (weight && n.rank(2) != 1) return n.error("weights must be 1-D");
  FailureOr<Value> y = nllLoss(n, logp, n.value(1), weight);
  if (failed(y)) return failure();
  n.setOutput(0, *y);
  if (n.wantsOutput(1)) n.setOutput(1, logp);
  return success();
}

}  // namespace

void addNormalizationOps(Registry& r) {
  r["Softmax"] = {convertSoftmax, {"axis"}};
  r["LogSoftmax"] = {convertSoftmax, {"axis"}};
  r["NegativeLogLikelihoodLoss"] = {convertNllLoss, {"ignore_index", "reduction"}};
  r["SoftmaxCrossEntropyLoss"] = {convertSoftmaxCrossEntropy, {"ignore_index", "reduction"}};
  r["InstanceNormalization"] = {convertInstanceNorm, {"epsilon"}};
  r["LayerNormalization"] = {convertLayerNorm, {"axis", "epsilon", "stash_type"}};
  r["LRN"] = {convertLrn, {"alpha", "beta", "bias", "size"}};
  r["MeanVarianceNormalization"] = {convertMeanVarianceNormalization, {"axes"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
