// Reductions and the normalizations built on them: Reduce{Sum,Mean,Max,Min,Prod,SumSquare,L1,L2,
// LogSum,LogSumExp}, ArgMax/ArgMin and Hardmax, Softmax, LogSoftmax and LayerNormalization;
// CumSum, a scan; and TopK, by the ral_topk library kernel.
#include <limits>

#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/node_context.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace disc_ral {
namespace onnx {
namespace {

// Normalized, sorted, distinct axes; every dim when `axes` is empty.
FailureOr<SmallVector<int64_t>> normalizeAxes(NodeContext& n, ArrayRef<int64_t> axes,
                                              int64_t rank) {
  SmallVector<int64_t> out;
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) out.push_back(d);
    return out;
  }
  for (int64_t a : axes) {
    FailureOr<int64_t> d = n.axis(a, rank);
    if (failed(d)) return failure();
    if (llvm::is_contained(out, *d)) return n.error("repeated axis");
    out.push_back(*d);
  }
  llvm::sort(out);
  return out;
}

// The number of elements over `axes`, as a scalar of float type `t`.
Value countOf(OpBuilder& b, Location loc, Value x, ArrayRef<int64_t> axes, Type t) {
  SmallVector<OpFoldResult> dims = dimsOf(b, loc, x), reduced;
  for (int64_t a : axes) reduced.push_back(dims[a]);
  OpFoldResult count = product(b, loc, reduced);
  if (auto c = constantIndex(count)) return scalarConstant(b, loc, t, static_cast<double>(*c));
  Value i = b.create<arith::IndexCastOp>(loc, b.getI64Type(), indexValue(b, loc, count));
  return b.create<arith::SIToFPOp>(loc, t, i);
}

Value divideBy(OpBuilder& b, Location loc, Value x, Value scalar) {
  Type t = cast<RankedTensorType>(x.getType()).getElementType();
  return elementwise(b, loc, {x}, t, [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
    return nb.create<arith::DivFOp>(nl, a[0], scalar);
  });
}

Value mapTensor(OpBuilder& b, Location loc, Value x,
                const std::function<Value(OpBuilder&, Location, Value)>& f) {
  Type t = cast<RankedTensorType>(x.getType()).getElementType();
  return elementwise(b, loc, {x}, t,
                     [&](OpBuilder& nb, Location nl, ValueRange a) { return f(nb, nl, a[0]); });
}

TypedAttr infinity(OpBuilder& b, Type t, bool negative) {
  if (auto f = dyn_cast<FloatType>(t))
    return b.getFloatAttr(f, APFloat::getInf(f.getFloatSemantics(), negative));
  const unsigned w = t.getIntOrFloatBitWidth();
  return b.getIntegerAttr(t, negative ? APInt::getSignedMinValue(w) : APInt::getSignedMaxValue(w));
}

// ReduceSum over axes known only when the module runs: one scf.index_switch case per set of
// that many dims, chosen by the axes' bit mask, each a reduction over its static axes; the
// result's dims are all dynamic (which ones become 1, or go, is decided at run time).
LogicalResult reduceSumAtRunTime(NodeContext& n, ArrayRef<Value> axes) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0), k = static_cast<int64_t>(axes.size());
  const bool keep = n.i("keepdims", 1) != 0;
  Type t = n.elementType(0);
  SmallVector<SmallVector<int64_t>> subsets;
  for (int64_t mask = 0; mask < (int64_t{1} << rank); ++mask) {
    if (llvm::popcount(static_cast<uint64_t>(mask)) != k) continue;
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      if ((mask >> d) & 1) dims.push_back(d);
    subsets.push_back(dims);
  }
  if (subsets.empty() || subsets.size() > 64)
    return n.unsupported("run-time axes over " + std::to_string(subsets.size()) +
                         " possible dim sets (at most 64)");
  Value mask = b.create<arith::ConstantIndexOp>(loc, 0);
  for (Value a : axes)
    mask = b.create<arith::OrIOp>(
        loc, mask, b.create<arith::ShLIOp>(loc, b.create<arith::ConstantIndexOp>(loc, 1), a));
  SmallVector<int64_t> result_shape(keep ? rank : rank - k, ShapedType::kDynamic);
  auto result_type = RankedTensorType::get(result_shape, t);
  SmallVector<int64_t> cases;
  for (size_t i = 1; i < subsets.size(); ++i) {
    int64_t m = 0;
    for (int64_t d : subsets[i]) m |= int64_t{1} << d;
    cases.push_back(m);
  }
  Value x = n.value(0);
  const bool f = isFloat(t);
  auto select =
      b.create<scf::IndexSwitchOp>(loc, TypeRange{result_type}, mask, cases, cases.size());
  // The default region takes the first set (the checked axes make every mask one of the sets).
  for (size_t i = 0; i < subsets.size(); ++i) {
    Region& region = i == 0 ? select.getDefaultRegion() : select.getCaseRegions()[i - 1];
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&region.emplaceBlock());
    Value r = reduce(
        b, loc, x, subsets[i], scalarAttr(b, t, 0),
        [f](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
          return f ? nb.create<arith::AddFOp>(nl, acc, v).getResult()
                   : nb.create<arith::AddIOp>(nl, acc, v).getResult();
        },
        keep);
    b.create<scf::YieldOp>(loc, ValueRange{b.create<tensor::CastOp>(loc, result_type, r)});
  }
  n.setOutput(0, select.getResult(0));
  return success();
}

LogicalResult convertReduce(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const std::string op = n.node().op_type();
  Value x = n.value(0);
  Type t = n.elementType(0);
  const bool f = isFloat(t);
  const bool int_ok = op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin" ||
                      op == "ReduceProd" || op == "ReduceSumSquare" || op == "ReduceL1";
  if (t.isInteger(1) || (!f && !int_ok)) return n.unsupported("element type for " + op);
  SmallVector<int64_t> axes;
  // ReduceSum takes its axes as an input from opset 13 (the others from 18).
  if (n.hasInput(1)) {
    auto c = n.constInts(1);
    RankedTensorType at = n.type(1);
    if (c) {
      axes = *c;
    } else if (at.hasStaticShape() && at.getNumElements() == 0) {
      // An empty axes input (its length is in the type): every dim, or a no-op.
    } else {
      auto runtime = runtimeAxes(n, 1, n.rank(0));
      if (failed(runtime)) return failure();
      return reduceSumAtRunTime(n, **runtime);
    }
  } else {
    axes = n.ints("axes");
  }
  if (axes.empty() && n.i("noop_with_empty_axes", 0) != 0) {
    n.setOutput(0, n.input(0));
    return success();
  }
  FailureOr<SmallVector<int64_t>> dims = normalizeAxes(n, axes, n.rank(0));
  if (failed(dims)) return failure();
  const bool keep = n.i("keepdims", 1) != 0;
  auto add = [f](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
    return f ? nb.create<arith::AddFOp>(nl, acc, v).getResult()
             : nb.create<arith::AddIOp>(nl, acc, v).getResult();
  };
  auto mul = [f](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
    return f ? nb.create<arith::MulFOp>(nl, acc, v).getResult()
             : nb.create<arith::MulIOp>(nl, acc, v).getResult();
  };
  Value in = x;
  if (op == "ReduceSumSquare" || op == "ReduceL2")
    in = mapTensor(b, loc, x,
                   [&](OpBuilder& nb, Location nl, Value v) { return mul(nb, nl, v, v); });
  if (op == "ReduceL1")
    in = mapTensor(b, loc, x, [f](OpBuilder& nb, Location nl, Value v) -> Value {
      return f ? nb.create<math::AbsFOp>(nl, v).getResult()
               : nb.create<math::AbsIOp>(nl, v).getResult();
    });
  Value out;
  if (op == "ReduceMax" || op == "ReduceMin") {
    const bool max = op == "ReduceMax";
    out = reduce(
        b, loc, in, *dims, infinity(b, t, max),
        [f, max](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
          if (f)
            return max ? nb.create<arith::MaximumFOp>(nl, acc, v).getResult()
                       : nb.create<arith::MinimumFOp>(nl, acc, v).getResult();
          return max ? nb.create<arith::MaxSIOp>(nl, acc, v).getResult()
                     : nb.create<arith::MinSIOp>(nl, acc, v).getResult();
        },
        keep);
  } else if (op == "ReduceProd") {
    out = reduce(b, loc, in, *dims, scalarAttr(b, t, 1), mul, keep);
  } else if (op == "ReduceLogSumExp") {
    // log(sum(exp(x - m))) + m, m the max: no overflow.
    Value m = reduce(
        b, loc, x, *dims, infinity(b, t, true),
        [](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
          return nb.create<arith::MaximumFOp>(nl, acc, v);
        },
        true);
    // A reduction over -inf only (or an empty one) keeps m finite for the subtraction.
    m = mapTensor(b, loc, m, [&](OpBuilder& nb, Location nl, Value v) -> Value {
      Value finite =
          nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::ONE, nb.create<math::AbsFOp>(nl, v),
                                   nb.create<arith::ConstantOp>(nl, infinity(nb, t, false)));
      return nb.create<arith::SelectOp>(nl, finite, v, scalarConstant(nb, nl, t, 0));
    });
    Value e = elementwise(b, loc, {x, m}, t, [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
      return nb.create<math::ExpOp>(nl, nb.create<arith::SubFOp>(nl, a[0], a[1]));
    });
    Value s = reduce(b, loc, e, *dims, scalarAttr(b, t, 0), add, true);
    out = elementwise(b, loc, {s, m}, t, [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
      return nb.create<arith::AddFOp>(nl, nb.create<math::LogOp>(nl, a[0]), a[1]);
    });
    if (!keep) {
      SmallVector<OpFoldResult> kept, od = dimsOf(b, loc, out);
      for (int64_t d = 0; d < n.rank(0); ++d)
        if (!llvm::is_contained(*dims, d)) kept.push_back(od[d]);
      out = reshape(b, loc, out, kept);
    }
  } else {
    out = reduce(b, loc, in, *dims, scalarAttr(b, t, 0), add, keep);
    if (op == "ReduceMean") out = divideBy(b, loc, out, countOf(b, loc, x, *dims, t));
    if (op == "ReduceL2")
      out = mapTensor(b, loc, out, [](OpBuilder& nb, Location nl, Value v) -> Value {
        return nb.create<math::SqrtOp>(nl, v);
      });
    if (op == "ReduceLogSum")
      out = mapTensor(b, loc, out, [](OpBuilder& nb, Location nl, Value v) -> Value {
        return nb.create<math::LogOp>(nl, v);
      });
  }
  n.setOutput(0, out);
  return success();
}

// ArgMax / ArgMin: one linalg.generic carrying the best value and its index (int64); NaN counts
// as the largest (and smallest) value, as numpy's argmax/argmin.
// The index (i64) of the largest (`max`) or smallest element of x along `axis`: its first
// occurrence, or with `last` its last; a NaN counts as the best (numpy's argmax). The result has
// x's dims without `axis`; over an empty axis it is 0 (callers that report it check first).
Value bestIndex(OpBuilder& b, Location loc, Value x, int64_t ax, bool max, bool last) {
  Type t = cast<RankedTensorType>(x.getType()).getElementType();
  const int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  SmallVector<OpFoldResult> in = dimsOf(b, loc, x), out;
  SmallVector<AffineExpr> out_exprs;
  SmallVector<utils::IteratorType> iters;
  for (int64_t d = 0; d < rank; ++d) {
    const bool reduced = d == ax;
    iters.push_back(reduced ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    if (reduced) continue;
    out.push_back(in[d]);
    out_exprs.push_back(b.getAffineDimExpr(d));
  }
  Value best = filled(b, loc, out, b.create<arith::ConstantOp>(loc, infinity(b, t, max)));
  Value index = filled(b, loc, out, scalarConstant(b, loc, b.getI64Type(), 0));
  AffineMap out_map = AffineMap::get(rank, 0, out_exprs, b.getContext());
  const bool f = isFloat(t);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{best.getType(), index.getType()}, ValueRange{x}, ValueRange{best, index},
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank), out_map, out_map}, iters,
      [&](OpBuilder& nb, Location nl, ValueRange a) {
        Value v = a[0], acc = a[1], acc_i = a[2];
        Value better;
        if (f) {
          auto pred = max ? (last ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT)
                          : (last ? arith::CmpFPredicate::OLE : arith::CmpFPredicate::OLT);
          better = nb.create<arith::CmpFOp>(nl, pred, v, acc);
          Value v_nan = nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::UNO, v, v);
          Value acc_nan = nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::UNO, acc, acc);
          Value not_acc_nan =
              nb.create<arith::XOrIOp>(nl, acc_nan, nb.create<arith::ConstantIntOp>(nl, 1, 1));
          better =
              nb.create<arith::AndIOp>(nl, nb.create<arith::OrIOp>(nl, better, v_nan), not_acc_nan);
          if (last) {
            // A later NaN replaces an earlier one.
            better =
                nb.create<arith::OrIOp>(nl, better, nb.create<arith::AndIOp>(nl, v_nan, acc_nan));
          }
        } else {
          auto pred = max ? (last ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sgt)
                          : (last ? arith::CmpIPredicate::sle : arith::CmpIPredicate::slt);
          better = nb.create<arith::CmpIOp>(nl, pred, v, acc);
        }
        Value i =
            nb.create<arith::IndexCastOp>(nl, nb.getI64Type(), nb.create<linalg::IndexOp>(nl, ax));
        // The first element always wins, so an all -inf (or +inf) row reports its index.
        Value first = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::eq, i,
                                               scalarConstant(nb, nl, nb.getI64Type(), 0));
        better = nb.create<arith::OrIOp>(nl, better, first);
        nb.create<linalg::YieldOp>(nl,
                                   ValueRange{nb.create<arith::SelectOp>(nl, better, v, acc),
                                              nb.create<arith::SelectOp>(nl, better, i, acc_i)});
      });
  return generic.getResult(1);
}

LogicalResult convertArgReduce(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const bool max = n.node().op_type() == "ArgMax";
  Type t = n.elementType(0);
  if (t.isInteger(1)) return n.unsupported("element type for " + n.node().op_type());
  const int64_t rank = n.rank(0);
  if (rank == 0) return n.error("a scalar has no axis to reduce");
  FailureOr<int64_t> axis = n.axis(n.i("axis", 0), rank);
  if (failed(axis)) return failure();
  const bool keep = n.i("keepdims", 1) != 0, last = n.i("select_last_index", 0) != 0;
  Value x = n.value(0);
  SmallVector<OpFoldResult> in = dimsOf(b, loc, x), kept(in);
  kept[*axis] = b.getIndexAttr(1);
  // No element, no index of the best one (ONNX and numpy refuse it too).
  if (auto c = constantIndex(in[*axis])) {
    if (*c == 0) return n.error("the reduced axis " + std::to_string(*axis) + " is empty");
  } else {
    Value nonempty =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, indexValue(b, loc, in[*axis]),
                                b.create<arith::ConstantIndexOp>(loc, 0));
    runtimeCheck(b, loc, nonempty, "the reduced axis is empty");
  }
  Value result = bestIndex(b, loc, x, *axis, max, last);
  n.setOutput(0, keep ? reshape(b, loc, result, kept) : result);
  return success();
}

// Hardmax: 1 where x's first largest element along `axis` is, 0 elsewhere. Opset 13 on, along
// that one axis (default -1); before, over the dims from `axis` on (default 1) taken as one.
LogicalResult convertHardmax(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Value x = n.value(0);
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.unsupported("Hardmax of a non-float element type");
  const int64_t rank = n.rank(0);
  if (rank == 0) return n.error("Hardmax of a scalar (x must have rank 1 or more)");
  const bool coerced = n.opset() < 13;
  FailureOr<int64_t> axis = n.axis(n.i("axis", coerced ? 1 : -1), rank);
  if (failed(axis)) return failure();
  SmallVector<OpFoldResult> dims = dimsOf(b, loc, x);
  Value v = x;
  int64_t ax = *axis;
  if (coerced) {
    SmallVector<OpFoldResult> outer(dims.begin(), dims.begin() + ax),
        inner(dims.begin() + ax, dims.end());
    v = reshape(b, loc, x, {product(b, loc, outer), product(b, loc, inner)});
    ax = 1;
  }
  Value index = bestIndex(b, loc, v, ax, /*max=*/true, /*last=*/false);
  const int64_t r = cast<RankedTensorType>(v.getType()).getRank();
  SmallVector<AffineExpr> drop;
  for (int64_t d = 0; d < r; ++d)
    if (d != ax) drop.push_back(b.getAffineDimExpr(d));
  Value y = generate(b, loc, emptyTensor(b, loc, dimsOf(b, loc, v), t), {index},
                     {AffineMap::get(r, 0, drop, b.getContext())},
                     [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                       Value i = nb.create<arith::IndexCastOp>(
                           nl, nb.getI64Type(), nb.create<linalg::IndexOp>(nl, ax));
                       Value hit = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::eq, i, a[0]);
                       return nb.create<arith::SelectOp>(nl, hit, scalarConstant(nb, nl, t, 1),
                                                         scalarConstant(nb, nl, t, 0));
                     });
  n.setOutput(0, coerced ? reshape(b, loc, y, dims) : y);
  return success();
}

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

// TopK: the k largest (or smallest) elements along `axis`, best first, and their int64 indices;
// equal elements keep the lower index first, as ONNX's reference does. One disc_ral.topk (the
// ral_topk kernel, along the last dim): another axis goes last by a transpose and back, ranks
// above 4 fold their leading dims into one, and element types the kernel does not take are
// widened exactly (f16 and bf16 to f32, int8 and int16 to int32). `sorted` = 0 lets any order
// through: the sorted one is as good.
LogicalResult convertTopK(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Type t = n.elementType(0), kernel_type = t;
  if (t.isF16() || t.isBF16()) {
    kernel_type = b.getF32Type();
  } else if (t.isInteger(8) || t.isInteger(16)) {
    kernel_type = b.getI32Type();
  } else if (!t.isF32() && !t.isF64() && !t.isInteger(32) && !t.isInteger(64)) {
    std::string name;
    llvm::raw_string_ostream os(name);
    os << t;
    return n.unsupported("TopK of element type " + name);
  }
  const int64_t rank = n.rank(0);
  if (rank == 0) return n.error("TopK of a scalar (X must have rank 1 or more)");
  FailureOr<int64_t> axis = n.axis(n.i("axis", -1), rank);
  if (failed(axis)) return failure();

  // K: an attribute before opset 10, then a one-element int64 input.
  OpFoldResult k;
  if (n.opset() < 10) {
    if (!n.has("k")) return n.error("TopK needs the attribute 'k' before opset 10");
    k = b.getIndexAttr(n.i("k", 0));
  } else {
    if (!n.hasInput(1)) return n.error("TopK needs the input K");
    if (!n.elementType(1).isInteger(64) || n.rank(1) > 1)
      return n.error("K must be a one-element int64 tensor");
    std::optional<SmallVector<OpFoldResult>> e = n.shapeElems(1);
    if (!e || e->size() != 1) return n.error("K must be a one-element int64 tensor");
    k = (*e)[0];
  }
  Value x = n.value(0);
  SmallVector<OpFoldResult> dims = dimsOf(b, loc, x);
  const OpFoldResult size = dims[*axis];
  std::optional<int64_t> kc = constantIndex(k), nc = constantIndex(size);
  if (kc && (*kc < 0 || (nc && *kc > *nc)))
    return n.error("K = " + std::to_string(*kc) + " is not in [0, " +
                   (nc ? std::to_string(*nc) : std::string("n")) + "] (axis " +
                   std::to_string(*axis) + ")");
  if (!kc || !nc) {
    Value kv = indexValue(b, loc, k), nv = indexValue(b, loc, size);
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value ok = b.create<arith::AndIOp>(
        loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, kv, zero),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, kv, nv));
    runtimeCheck(b, loc, ok, "TopK: K is not in [0, n] for the axis' size n");
  }

  // The axis goes last.
  SmallVector<int64_t> perm, inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis) perm.push_back(d);
  perm.push_back(*axis);
  for (int64_t d = 0; d < rank; ++d) inverse[perm[d]] = d;
  const bool moved = *axis != rank - 1;
  if (kernel_type != t) x = convertTensor(b, loc, x, kernel_type);
  if (moved) x = transpose(b, loc, x, perm);
  SmallVector<OpFoldResult> moved_dims = dimsOf(b, loc, x);
  // Ranks above 4: the leading dims as one.
  const bool folded = rank > 4;
  if (folded) {
    SmallVector<OpFoldResult> lead(moved_dims.begin(), moved_dims.end() - 1);
    x = reshape(b, loc, x, {product(b, loc, lead), moved_dims.back()});
  }
  SmallVector<OpFoldResult> out_dims = dimsOf(b, loc, x);
  out_dims.back() = k;
  Value values_init = emptyTensor(b, loc, out_dims, kernel_type);
  Value indices_init = emptyTensor(b, loc, out_dims, b.getI64Type());
  Value k64 = b.create<arith::IndexCastOp>(loc, b.getI64Type(), indexValue(b, loc, k));
  auto topk = b.create<TopKOp>(loc, TypeRange{values_init.getType(), indices_init.getType()}, x,
                               k64, values_init, indices_init, n.i("largest", 1) == 0);
  Value values = topk.getResult(0), indices = topk.getResult(1);
  SmallVector<OpFoldResult> result_dims = moved_dims;
  result_dims.back() = k;
  for (Value* v : {&values, &indices}) {
    if (folded) *v = reshape(b, loc, *v, result_dims);
    if (moved) *v = transpose(b, loc, *v, inverse);
  }
  if (kernel_type != t) values = convertTensor(b, loc, values, t);
  if (n.wantsOutput(0)) n.setOutput(0, values);
  if (n.wantsOutput(1)) n.setOutput(1, indices);
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

// Running sums of x along `axis`: an scf.for over the axis carries the sum of the slices so far
// (x without the axis dim) and inserts each step's sum (or, exclusive, the one before it) into
// the result: O(x's size) work, one elementwise add per step, summed in order as ONNX's reference
// does.
Value cumulativeSum(OpBuilder& b, Location loc, Value x, int64_t axis_d, bool exclusive,
                    bool reverse) {
  auto tx = cast<RankedTensorType>(x.getType());
  Type t = tx.getElementType();
  const int64_t rank = tx.getRank();
  const int64_t* axis = &axis_d;
  SmallVector<OpFoldResult> dims = dimsOf(b, loc, x), rest;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis) rest.push_back(dims[d]);
  Value sum0 = filled(b, loc, rest, scalarConstant(b, loc, t, 0));
  Value y0 = emptyTensor(b, loc, dims, t);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value len = indexValue(b, loc, dims[*axis]);
  auto slice_type = RankedTensorType::get(staticSizes(rest), t);
  auto loop = b.create<scf::ForOp>(
      loc, zero, len, one, ValueRange{sum0, y0},
      [&](OpBuilder& lb, Location ll, Value k, ValueRange carried) {
        Value i = reverse ? lb.create<arith::SubIOp>(
                                ll, lb.create<arith::SubIOp>(ll, len, one), k).getResult()
                          : k;
        SmallVector<OpFoldResult> offsets(rank, lb.getIndexAttr(0)), sizes(dims),
            strides(rank, lb.getIndexAttr(1));
        offsets[*axis] = i;
        sizes[*axis] = lb.getIndexAttr(1);
        Value slice = lb.create<tensor::ExtractSliceOp>(ll, slice_type, x, offsets, sizes, strides);
        // The sum is updated in place (a loop's carried tensors must stay its own buffers);
        // exclusive, the result takes the sum before the update.
        Value y = carried[1];
        if (exclusive)
          y = lb.create<tensor::InsertSliceOp>(ll, carried[0], y, offsets, sizes, strides);
        const int64_t r = rank - 1;
        AffineMap id = lb.getMultiDimIdentityMap(r);
        Value sum = lb.create<linalg::GenericOp>(
                          ll, TypeRange{carried[0].getType()}, ValueRange{slice},
                          ValueRange{carried[0]}, ArrayRef<AffineMap>{id, id},
                          SmallVector<utils::IteratorType>(r, utils::IteratorType::parallel),
                          [&](OpBuilder& eb, Location el, ValueRange v) {
                            Value add = isFloat(t) ? eb.create<arith::AddFOp>(el, v[1], v[0])
                                                         .getResult()
                                                   : eb.create<arith::AddIOp>(el, v[1], v[0])
                                                         .getResult();
                            eb.create<linalg::YieldOp>(el, add);
                          })
                        .getResult(0);
        if (!exclusive)
          y = lb.create<tensor::InsertSliceOp>(ll, sum, y, offsets, sizes, strides);
        lb.create<scf::YieldOp>(ll, ValueRange{sum, y});
      });
  return loop.getResult(1);
}

// CumSum: running sums along `axis`, inclusive or `exclusive`, forwards or `reverse`d, in x's
// element type (integers wrap, as numpy's cumsum does). An axis known only at run time (ONNX's
// own tests pass it as an input) selects among the rank's scans with scf.index_switch.
LogicalResult convertCumSum(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Value x = n.value(0);
  auto tx = cast<RankedTensorType>(x.getType());
  if (tx.getElementType().isInteger(1)) return n.error("CumSum of bool (x must be numeric)");
  const int64_t rank = tx.getRank();
  if (rank == 0) return n.error("CumSum of a scalar (x must have rank 1 or more)");
  if (n.rank(1) > 1 || !hasOneElement(n.type(1)))
    return n.error("axis must be a scalar or a 1-D tensor of one element");
  const bool exclusive = n.i("exclusive", 0) != 0, reverse = n.i("reverse", 0) != 0;
  if (std::optional<SmallVector<int64_t>> axes = n.constInts(1)) {
    FailureOr<int64_t> axis = n.axis((*axes)[0], rank);
    if (failed(axis)) return failure();
    n.setOutput(0, cumulativeSum(b, loc, x, *axis, exclusive, reverse));
    return success();
  }
  std::optional<SmallVector<OpFoldResult>> elems = n.shapeElems(1);
  if (!elems || elems->size() != 1) return n.unsupported("CumSum's axis of this type");
  // axis in [-rank, rank), normalized to [0, rank); anything else fails the execution.
  Value a = indexValue(b, loc, (*elems)[0]);
  Value r = b.create<arith::ConstantIndexOp>(loc, rank);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value negative = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, a, zero);
  a = b.create<arith::SelectOp>(loc, negative, b.create<arith::AddIOp>(loc, a, r), a);
  Value in_range = b.create<arith::AndIOp>(
      loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, a, zero),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, a, r));
  runtimeCheck(b, loc, in_range,
               "axis is out of range for x's rank " + std::to_string(rank));
  SmallVector<int64_t> cases;
  for (int64_t d = 1; d < rank; ++d) cases.push_back(d);
  auto select = b.create<scf::IndexSwitchOp>(loc, TypeRange{tx}, a, cases, cases.size());
  for (int64_t d = 0; d < rank; ++d) {
    Region& region = d == 0 ? select.getDefaultRegion() : select.getCaseRegions()[d - 1];
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&region.emplaceBlock());
    b.create<scf::YieldOp>(loc, cumulativeSum(b, loc, x, d, exclusive, reverse));
  }
  n.setOutput(0, select.getResult(0));
  return success();
}

}  // namespace

void addReductionOps(Registry& r) {
  for (const char* op :
       {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare",
        "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"})
    r[op] = {convertReduce, {"axes", "keepdims", "noop_with_empty_axes"}};
  r["ArgMax"] = {convertArgReduce, {"axis", "keepdims", "select_last_index"}};
  r["ArgMin"] = {convertArgReduce, {"axis", "keepdims", "select_last_index"}};
  r["Softmax"] = {convertSoftmax, {"axis"}};
  r["LogSoftmax"] = {convertSoftmax, {"axis"}};
  r["NegativeLogLikelihoodLoss"] = {convertNllLoss, {"ignore_index", "reduction"}};
  r["SoftmaxCrossEntropyLoss"] = {convertSoftmaxCrossEntropy, {"ignore_index", "reduction"}};
  r["InstanceNormalization"] = {convertInstanceNorm, {"epsilon"}};
  r["LayerNormalization"] = {convertLayerNorm, {"axis", "epsilon", "stash_type"}};
  r["CumSum"] = {convertCumSum, {"exclusive", "reverse"}};
  r["Hardmax"] = {convertHardmax, {"axis"}};
  r["TopK"] = {convertTopK, {"axis", "largest", "sorted", "k"}};
  r["LRN"] = {convertLrn, {"alpha", "beta", "bias", "size"}};
  r["MeanVarianceNormalization"] = {convertMeanVarianceNormalization, {"axes"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
