// Reductions: Reduce{Sum,Mean,Max,Min,Prod,SumSquare,L1,L2,LogSum,LogSumExp}, ArgMax/ArgMin and
// Hardmax; CumSum, a scan; and TopK, by the ral_topk library kernel. The normalizations built on
// reductions are in ops_normalize.cc.
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

namespace {

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
  r["CumSum"] = {convertCumSum, {"exclusive", "reverse"}};
  r["Hardmax"] = {convertHardmax, {"axis"}};
  r["TopK"] = {convertTopK, {"axis", "largest", "sorted", "k"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
