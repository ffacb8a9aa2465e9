// Windowed and per-channel ops: MaxPool (with Indices), AveragePool, the global pools, and
// BatchNormalization at inference.
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <vector>
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/checked_int.h"
#include "compiler_passes/onnx/conv_fusion.h"
#include "compiler_passes/onnx/linear_common.h"
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

// MaxPool and AveragePool: one linalg.generic over (n, c, o..., k...) with a kernel-shaped
// operand that gives the k loops their bounds.
// MaxPool's Indices: per output, the flat index (row-major over the whole [N, C, D...] input, or
// with column_major its spatial dims first-fastest) of its window's first largest element;
// padding never wins. A loop over each window that carries
// the best value and its index (NaN wins as MaximumF lets it).
Value maxPoolIndices(OpBuilder& b, Location loc, Value x, const Window& w, ArrayRef<int64_t> kernel,
                     bool is_unsigned, bool column_major) {
  const int64_t spatial = static_cast<int64_t>(kernel.size()), rank = spatial + 2;
  Type t = cast<RankedTensorType>(x.getType()).getElementType();
  SmallVector<OpFoldResult> xd = dimsOf(b, loc, x), yd = {xd[0], xd[1]};
  yd.append(w.out.begin(), w.out.end());
  SmallVector<Value> sizes;
  for (OpFoldResult d : xd) sizes.push_back(indexValue(b, loc, d));
  return generate(
      b, loc, emptyTensor(b, loc, yd, b.getI64Type()), {}, {},
      [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
        SmallVector<Value> o;
        for (int64_t d = 0; d < rank; ++d) o.push_back(nb.create<linalg::IndexOp>(nl, d));
        Value zero = nb.create<arith::ConstantIndexOp>(nl, 0),
              one = nb.create<arith::ConstantIndexOp>(nl, 1);
        // Iterate the window's positions as one flat count.
        int64_t window = 1;
        for (int64_t k : kernel) window *= k;
        Value none = nb.create<arith::ConstantIntOp>(nl, 0, 1);
        auto loop = nb.create<scf::ForOp>(
            nl, zero, nb.create<arith::ConstantIndexOp>(nl, window), one,
            ValueRange{scalarConstant(nb, nl, t, 0), nb.create<arith::ConstantIntOp>(nl, 0, 64),
                       none},
            [&](OpBuilder& lb, Location ll, Value kf, ValueRange c) {
              Value rest = kf, inside = lb.create<arith::ConstantIntOp>(ll, 1, 1);
              SmallVector<Value> at = {o[0], o[1]};
              SmallVector<Value> pos(spatial);
              for (int64_t i = spatial - 1; i >= 0; --i) {
                Value k = lb.create<arith::RemUIOp>(
                    ll, rest, lb.create<arith::ConstantIndexOp>(ll, kernel[i]));
                rest = lb.create<arith::DivUIOp>(ll, rest,
                                                 lb.create<arith::ConstantIndexOp>(ll, kernel[i]));
                Value p = lb.create<arith::SubIOp>(
                    ll,
                    lb.create<arith::AddIOp>(
                        ll,
                        lb.create<arith::MulIOp>(
                            ll, o[2 + i], lb.create<arith::ConstantIndexOp>(ll, w.strides[i])),
                        lb.create<arith::MulIOp>(
                            ll, k, lb.create<arith::ConstantIndexOp>(ll, w.dilations[i]))),
                    lb.create<arith::ConstantIndexOp>(ll, w.pad_begin[i]));
                inside = lb.create<arith::AndIOp>(
                    ll, inside,
                    lb.create<arith::AndIOp>(
                        ll, lb.create<arith::CmpIOp>(ll, arith::CmpIPredicate::sge, p, zero),
                        lb.create<arith::CmpIOp>(ll, arith::CmpIPredicate::slt, p, sizes[2 + i])));
                pos[i] = p;
              }
              for (int64_t i = 0; i < spatial; ++i)
                at.push_back(lb.create<arith::SelectOp>(ll, inside, pos[i], zero));
              auto body = lb.create<scf::IfOp>(
                  ll, inside,
                  [&](OpBuilder& ib, Location il) {
                    Value v = ib.create<tensor::ExtractOp>(il, x, at);
                    Value better =
                        isFloat(t)
                            ? ib.create<arith::CmpFOp>(il, arith::CmpFPredicate::UGT, v, c[0])
                                  .getResult()
                            : ib.create<arith::CmpIOp>(il,
                                                       is_unsigned ? arith::CmpIPredicate::ugt
                                                                   : arith::CmpIPredicate::sgt,
                                                       v, c[0])
                                  .getResult();
                    // NaN never wins over NaN already taken.
                    if (isFloat(t))
                      better = ib.create<arith::AndIOp>(
                          il, better,
                          ib.create<arith::CmpFOp>(il, arith::CmpFPredicate::ORD, c[0], c[0]));
                    better = ib.create<arith::OrIOp>(
                        il, better,
                        ib.create<arith::XOrIOp>(il, c[2],
                                                 ib.create<arith::ConstantIntOp>(il, 1, 1)));
                    // (n, c) first, then the spatial dims, last-dim-fastest or (column-major)
                    // first-dim-fastest.
                    Value flat = ib.create<arith::AddIOp>(
                        il, ib.create<arith::MulIOp>(il, at[0], sizes[1]), at[1]);
                    for (int64_t j = 0; j < spatial; ++j) {
                      const int64_t d = column_major ? rank - 1 - j : 2 + j;
                      flat = ib.create<arith::AddIOp>(
                          il, ib.create<arith::MulIOp>(il, flat, sizes[d]), at[d]);
                    }
                    Value fi = ib.create<arith::IndexCastOp>(il, ib.getI64Type(), flat);
                    ib.create<scf::YieldOp>(
                        il, ValueRange{ib.create<arith::SelectOp>(il, better, v, c[0]),
                                       ib.create<arith::SelectOp>(il, better, fi, c[1]),
                                       ib.create<arith::ConstantIntOp>(il, 1, 1)});
                  },
                  [&](OpBuilder& ib, Location il) { ib.create<scf::YieldOp>(il, c); });
              lb.create<scf::YieldOp>(ll, body.getResults());
            });
        return loop.getResult(1);
      });
}

LogicalResult convertPool(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const bool max = n.node().op_type() == "MaxPool";
  Value x = n.value(0);
  auto tx = cast<RankedTensorType>(x.getType());
  const int64_t rank = tx.getRank();
  if (rank < 3) return n.error("input must have rank >= 3");
  Type t = tx.getElementType();
  if (!isFloat(t) && !(max && isa<IntegerType>(t) && !t.isInteger(1)))
    return n.unsupported("element type of the pooled tensor");
  // Unsigned integers pool from 0 with an unsigned max (importer.cc lets MaxPool take them).
  const bool u = n.isUnsigned(0);
  // storage_order orders the Indices output's spatial dims (1: column-major); Y is the same.
  const bool column_major = n.i("storage_order", 0) != 0;
  const int64_t spatial = rank - 2;
  SmallVector<int64_t> kernel = n.ints("kernel_shape");
  if (static_cast<int64_t>(kernel.size()) != spatial)
    return n.error("kernel_shape must have one entry per spatial dim");
  if (!checkedProduct(kernel).isSize())
    return n.error("kernel_shape holds more than 2^48 elements");
  if (!max && n.has("dilations") &&
      llvm::any_of(n.ints("dilations"), [](int64_t d) { return d != 1; }))
    return n.unsupported("AveragePool dilations other than 1");
  FailureOr<Window> w = windowOf(n, x, kernel, n.i("ceil_mode", 0) != 0);
  if (failed(w)) return failure();

  SmallVector<int64_t> low(2, 0), high(2, 0);
  low.append(w->pad_begin);
  high.append(w->pad_end);
  Value pad_value;
  if (max) {
    pad_value =
        isFloat(t)
            ? b.create<arith::ConstantOp>(
                   loc, b.getFloatAttr(t, APFloat::getInf(cast<FloatType>(t).getFloatSemantics(),
                                                          /*Negative=*/true)))
                  .getResult()
            : b.create<arith::ConstantOp>(
                   loc,
                   b.getIntegerAttr(t, u ? APInt(t.getIntOrFloatBitWidth(), 0)
                                         : APInt::getSignedMinValue(t.getIntOrFloatBitWidth())))
                  .getResult();
  } else {
    pad_value = scalarConstant(b, loc, t, 0);
  }
  Value xp = pad(b, loc, x, low, high, pad_value);
  SmallVector<OpFoldResult> xd = dimsOf(b, loc, x);
  SmallVector<OpFoldResult> yd = {xd[0], xd[1]};
  yd.append(w->out.begin(), w->out.end());
  SmallVector<OpFoldResult> kd;
  for (int64_t k : kernel) kd.push_back(b.getIndexAttr(k));
  Value window = emptyTensor(b, loc, kd, t);

  auto pool = [&](Value input, Value init_value, bool take_max) {
    const unsigned nd = 2 + 2 * spatial;
    SmallVector<AffineExpr> xe = {b.getAffineDimExpr(0), b.getAffineDimExpr(1)}, ke,
                            ye = {b.getAffineDimExpr(0), b.getAffineDimExpr(1)};
    for (int64_t i = 0; i < spatial; ++i) {
      xe.push_back(windowExpr(b, *w, i, 2 + i, 2 + spatial + i));
      ke.push_back(b.getAffineDimExpr(2 + spatial + i));
      ye.push_back(b.getAffineDimExpr(2 + i));
    }
    SmallVector<AffineMap> maps = {AffineMap::get(nd, 0, xe, b.getContext()),
                                   AffineMap::get(nd, 0, ke, b.getContext()),
                                   AffineMap::get(nd, 0, ye, b.getContext())};
    SmallVector<utils::IteratorType> iters(2 + spatial, utils::IteratorType::parallel);
    iters.append(spatial, utils::IteratorType::reduction);
    Value init = filled(b, loc, yd, init_value);
    const bool f = isFloat(t);
    return b
        .create<linalg::GenericOp>(loc, TypeRange{init.getType()}, ValueRange{input, window},
                                   ValueRange{init}, maps, iters,
                                   [&](OpBuilder& nb, Location nl, ValueRange a) {
                                     Value r;
                                     if (!take_max)
                                       r = nb.create<arith::AddFOp>(nl, a[2], a[0]);
                                     else if (f)
                                       r = nb.create<arith::MaximumFOp>(nl, a[2], a[0]);
                                     else if (u)
                                       r = nb.create<arith::MaxUIOp>(nl, a[2], a[0]);
                                     else
                                       r = nb.create<arith::MaxSIOp>(nl, a[2], a[0]);
                                     nb.create<linalg::YieldOp>(nl, r);
                                   })
        .getResult(0);
  };

  if (max) {
    n.setOutput(0, pool(xp, pad_value, true));
    if (n.wantsOutput(1)) n.setOutput(1, maxPoolIndices(b, loc, x, *w, kernel, u, column_major));
    return success();
  }
  Value sum = pool(xp, scalarConstant(b, loc, t, 0), false);
  // The divisor: how many elements of each window are input (or explicit padding, with
  // count_include_pad), from the same pooling over a [1, 1, S...] tensor of ones.
  const bool include_pad = n.i("count_include_pad", 0) != 0;
  bool uniform = include_pad;
  for (int64_t i = 0; i < spatial; ++i) {
    if (!include_pad && (w->pad_begin[i] != 0 || w->pad_end[i] != 0)) uniform = false;
  }
  // ceil_mode's extra end padding is never counted.
  const bool ceil_extra = n.i("ceil_mode", 0) != 0;
  Value out;
  if (uniform && !ceil_extra) {
    const CheckedInt checked_size = checkedProduct(kernel);
    if (!checked_size.isSize()) return n.error("kernel_shape holds more than 2^48 elements");
    const int64_t size = checked_size.value();
    out = elementwise(b, loc, {sum}, t, [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
      return nb.create<arith::DivFOp>(nl, a[0], scalarConstant(nb, nl, t, double(size)));
    });
  } else {
    SmallVector<OpFoldResult> od = {b.getIndexAttr(1), b.getIndexAttr(1)};
    for (int64_t i = 0; i < spatial; ++i) od.push_back(xd[2 + i]);
    Value ones = filled(b, loc, od, scalarConstant(b, loc, t, 1));
    // Explicit pads count with count_include_pad; the ceil_mode extra never does.
    SmallVector<int64_t> lo2(2, 0), hi2(2, 0), hi_extra(2, 0);
    SmallVector<int64_t> pads = n.ints("pads");
    for (int64_t i = 0; i < spatial; ++i) {
      lo2.push_back(include_pad ? w->pad_begin[i] : 0);
      const int64_t explicit_end = pads.empty() ? w->pad_end[i] : pads[spatial + i];
      hi2.push_back(include_pad ? std::min(explicit_end, w->pad_end[i]) : 0);
    }
    Value counted = pad(b, loc, ones, lo2, hi2, scalarConstant(b, loc, t, 1));
    SmallVector<int64_t> lo3(2, 0), hi3(2, 0);
    for (int64_t i = 0; i < spatial; ++i) {
      lo3.push_back(w->pad_begin[i] - lo2[2 + i]);
      hi3.push_back(w->pad_end[i] - hi2[2 + i]);
    }
    counted = pad(b, loc, counted, lo3, hi3, scalarConstant(b, loc, t, 0));
    SmallVector<OpFoldResult> save = yd;
    yd[0] = b.getIndexAttr(1);
    yd[1] = b.getIndexAttr(1);
    Value count = pool(counted, scalarConstant(b, loc, t, 0), false);
    yd = save;
    out =
        elementwise(b, loc, {sum, count}, t, [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
          return nb.create<arith::DivFOp>(nl, a[0], a[1]);
        });
  }
  n.setOutput(0, out);
  return success();
}

LogicalResult convertGlobalPool(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Value x = n.value(0);
  const int64_t rank = n.rank(0);
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.unsupported("element type of the pooled tensor");
  if (rank < 3) return n.error("input must have rank >= 3");
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  const bool max = n.node().op_type() == "GlobalMaxPool";
  TypedAttr init = max ? TypedAttr(b.getFloatAttr(
                             t, APFloat::getInf(cast<FloatType>(t).getFloatSemantics(), true)))
                       : scalarAttr(b, t, 0);
  Value r = reduce(
      b, loc, x, axes, init,
      [max](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
        if (max) return nb.create<arith::MaximumFOp>(nl, acc, v);
        return nb.create<arith::AddFOp>(nl, acc, v);
      },
      true);
  if (!max) {
    SmallVector<OpFoldResult> xd = dimsOf(b, loc, x);
    OpFoldResult count = product(b, loc, ArrayRef<OpFoldResult>(xd).drop_front(2));
    Value c = b.create<arith::IndexCastOp>(loc, b.getI64Type(), indexValue(b, loc, count));
    Value cf = b.create<arith::SIToFPOp>(loc, t, c);
    r = elementwise(b, loc, {r}, t, [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
      return nb.create<arith::DivFOp>(nl, a[0], cf);
    });
  }
  n.setOutput(0, r);
  return success();
}

// y = x * a + c per channel (dim 1), a = scale / sqrt(var + eps), c = bias - mean * a; folded
// to two constants when the parameters are constants.
LogicalResult convertBatchNorm(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (n.i("training_mode", 0) != 0) return convertBatchNormTraining(n);
  // Before opset 7, is_test=0 (the default) meant training; before 9, spatial=0 per-element
  // statistics.
  if (n.opset() < 7 && n.i("is_test", 0) == 0) return n.unsupported("is_test=0 (training)");
  if (n.i("spatial", 1) == 0) return n.unsupported("spatial=0");
  for (size_t o = 1; o < n.numOutputs(); ++o)
    if (n.wantsOutput(o)) return n.unsupported("BatchNormalization's training outputs");
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.unsupported("non-float BatchNormalization");
  const int64_t rank = n.rank(0);
  if (rank < 2) return n.error("input must have rank >= 2");
  for (size_t i = 1; i <= 4; ++i)
    if (!n.hasInput(i) || n.rank(i) != 1) return n.error("scale, B, mean and var must be 1-D");
  const double eps = n.f("epsilon", 1e-5f);
  Value x = n.value(0);
  OpFoldResult channels = dimOf(b, loc, n.value(1), 0);
  // One value per channel of X (dim 1), each of the four: the same size as each other too.
  for (size_t i = 1; i <= 4; ++i)
    if (failed(checkSameDim(n, dimOf(b, loc, n.value(i), 0), dimOf(b, loc, x, 1),
                            "a parameter's size and X's channels")) ||
        failed(checkSameDim(n, dimOf(b, loc, n.value(i), 0), channels, "the parameters' sizes")))
      return failure();
  SmallVector<OpFoldResult> cd = {channels};
  for (int64_t d = 2; d < rank; ++d) cd.push_back(b.getIndexAttr(1));
  Value a, c;
  DenseElementsAttr s = n.input(1).data, bias = n.input(2).data, mean = n.input(3).data,
                    var = n.input(4).data;
  if (s && bias && mean && var) {
    SmallVector<double> sv = floatValues(s), bv = floatValues(bias), mv = floatValues(mean),
                        vv = floatValues(var);
    const size_t count = sv.size();
    if (bv.size() != count || mv.size() != count || vv.size() != count)
      return n.error("scale, B, mean and var differ in size");
    SmallVector<double> av(count), cv(count);
    for (size_t i = 0; i < count; ++i) {
      av[i] = sv[i] / std::sqrt(vv[i] + eps);
      cv[i] = bv[i] - mv[i] * av[i];
    }
    SmallVector<int64_t> shape = staticSizes(cd);
    auto type = RankedTensorType::get(shape, t);
    a = b.create<arith::ConstantOp>(loc, floatConstant(type, av));
    c = b.create<arith::ConstantOp>(loc, floatConstant(type, cv));
  } else {
    // scale and B (T1), mean and var (T2) may be float types other than X's (opset 15).
    auto param = [&](size_t i) {
      return reshape(b, loc, convertTensor(b, loc, n.value(i), t), cd);
    };
    for (size_t i = 1; i <= 4; ++i)
      if (!isFloat(n.elementType(i)))
        return n.unsupported("non-float BatchNormalization parameters");
    Value sv = param(1), bv = param(2), mv = param(3), vv = param(4);
    a = elementwise(b, loc, {sv, vv}, t, [&](OpBuilder& nb, Location nl, ValueRange v) -> Value {
      Value d = nb.create<math::SqrtOp>(
          nl, nb.create<arith::AddFOp>(nl, v[1], scalarConstant(nb, nl, t, eps)));
      return nb.create<arith::DivFOp>(nl, v[0], d);
    });
    c = elementwise(b, loc, {bv, mv, a}, t, [](OpBuilder& nb, Location nl, ValueRange v) -> Value {
      return nb.create<arith::SubFOp>(nl, v[0], nb.create<arith::MulFOp>(nl, v[1], v[2]));
    });
  }
  Value y =
      elementwise(b, loc, {x, a, c}, t, [](OpBuilder& nb, Location nl, ValueRange v) -> Value {
        return nb.create<arith::AddFOp>(nl, nb.create<arith::MulFOp>(nl, v[0], v[1]), v[2]);
      });
  n.setOutput(0, y);
  return success();
}

}  // namespace

void addPoolOps(Registry& r) {
  r["MaxPool"] = {
      convertPool,
      {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"}};
  r["AveragePool"] = {convertPool,
                      {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape",
                       "pads", "strides"}};
  r["GlobalAveragePool"] = {convertGlobalPool, {}};
  r["GlobalMaxPool"] = {convertGlobalPool, {}};
  r["BatchNormalization"] = {convertBatchNorm,
                             {"epsilon", "momentum", "training_mode", "spatial", "is_test"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
