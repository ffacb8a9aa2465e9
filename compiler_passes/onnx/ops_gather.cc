// Indexed reads and writes: Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND
// and OneHot. Every index is checked against its dimension when the module runs.
#include <cmath>
#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/checked_int.h"
#include "compiler_passes/onnx/node_context.h"
#include "compiler_passes/onnx/shape_helpers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

namespace {

// Fails the execution when an index of `indices` lies outside [-size, size) (ONNX's negative
// indices count from the end): two reductions over the indices, then one comparison.
void checkIndexRange(OpBuilder& b, Location loc, Value indices, OpFoldResult size,
                     llvm::StringRef message) {
  auto itype = cast<RankedTensorType>(indices.getType());
  Type it = itype.getElementType();
  const int64_t irank = itype.getRank();
  SmallVector<OpFoldResult> id = dimsOf(b, loc, indices);
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < irank; ++d) all.push_back(d);
  auto lo = b.getIntegerAttr(it, APInt::getSignedMaxValue(it.getIntOrFloatBitWidth()));
  auto hi = b.getIntegerAttr(it, APInt::getSignedMinValue(it.getIntOrFloatBitWidth()));
  Value mn = reduce(
      b, loc, indices, all, lo,
      [](OpBuilder& nb, Location nl, Value a, Value v) -> Value {
        return nb.create<arith::MinSIOp>(nl, a, v);
      },
      false);
  Value mx = reduce(
      b, loc, indices, all, hi,
      [](OpBuilder& nb, Location nl, Value a, Value v) -> Value {
        return nb.create<arith::MaxSIOp>(nl, a, v);
      },
      false);
  // Compared as index values: a dim need not fit the indices' type (int32 indices of a dim
  // beyond 2^31), and a size is at most kMaxSize, so its negation cannot overflow.
  Value lo_v = b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                            b.create<tensor::ExtractOp>(loc, mn, ValueRange{}));
  Value hi_v = b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                            b.create<tensor::ExtractOp>(loc, mx, ValueRange{}));
  Value s = idx(b, loc, size);
  Value neg_s = b.create<arith::SubIOp>(loc, b.create<arith::ConstantIndexOp>(loc, 0), s);
  Value ok = b.create<arith::AndIOp>(
      loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, lo_v, neg_s),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, hi_v, s));
  // Empty indices reduce to (max, min): the check holds vacuously only when there are some.
  OpFoldResult count = product(b, loc, id);
  Value none = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, idx(b, loc, count),
                                       b.create<arith::ConstantIndexOp>(loc, 0));
  runtimeCheck(b, loc, b.create<arith::OrIOp>(loc, ok, none), message);
}

LogicalResult convertGather(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  if (rank == 0) return n.error("data must have rank >= 1");
  FailureOr<int64_t> axis = n.axis(n.i("axis", 0), rank);
  if (failed(axis)) return failure();
  Type it = n.elementType(1);
  if (!it.isInteger(32) && !it.isInteger(64)) return n.error("indices must be int32 or int64");
  const int64_t irank = n.rank(1);
  // Known elements gathered by constant indices stay known.
  std::optional<SmallVector<int64_t>> constant_indices = n.constInts(1);
  if (rank == 1 && irank <= 1 && n.elems(0) && constant_indices) {
    SmallVector<OpFoldResult> src = *n.elems(0), out;
    const int64_t size = static_cast<int64_t>(src.size());
    for (int64_t i : *constant_indices) {
      if (i < -size || i >= size) return n.error("index " + std::to_string(i) + " out of range");
      out.push_back(src[i < 0 ? i + size : i]);
    }
    n.setOutput(0, elemsTensor(out, n.elementType(0), irank == 0));
    return success();
  }
  Value data = n.value(0), indices = n.value(1);
  SmallVector<OpFoldResult> dd = dimsOf(b, loc, data), id = dimsOf(b, loc, indices);
  OpFoldResult size = dd[*axis];
  // Out-of-range indices fail: at import when constant, at run time otherwise.
  if (constant_indices && constantIndex(size)) {
    const int64_t s = *constantIndex(size);
    for (int64_t i : *constant_indices)
      if (i < -s || i >= s) return n.error("index " + std::to_string(i) + " out of range");
  } else if (DenseElementsAttr constant = n.input(1).data; constant && constantIndex(size)) {
    const int64_t s = *constantIndex(size);
    for (const APInt& v : constant.getValues<APInt>())
      if (v.getSExtValue() < -s || v.getSExtValue() >= s)
        return n.error("index " + std::to_string(v.getSExtValue()) + " out of range");
  } else {
    checkIndexRange(b, loc, indices, size, "Gather: an index is out of range");
  }
  SmallVector<OpFoldResult> out(dd.begin(), dd.begin() + *axis);
  out.append(id.begin(), id.end());
  out.append(dd.begin() + *axis + 1, dd.end());
  const int64_t orank = static_cast<int64_t>(out.size());
  SmallVector<AffineExpr> ie;
  for (int64_t d = 0; d < irank; ++d) ie.push_back(b.getAffineDimExpr(*axis + d));
  Value empty = emptyTensor(b, loc, out, n.elementType(0));
  Value axis_size = idx(b, loc, size);
  const int64_t ax = *axis;
  Value y = generate(
      b, loc, empty, ValueRange{indices}, {AffineMap::get(orank, 0, ie, b.getContext())},
      [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
        Value i = nb.create<arith::IndexCastOp>(nl, nb.getIndexType(), a[0]);
        Value neg = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, i,
                                             nb.create<arith::ConstantIndexOp>(nl, 0));
        i = nb.create<arith::SelectOp>(nl, neg, nb.create<arith::AddIOp>(nl, i, axis_size), i);
        SmallVector<Value> at;
        for (int64_t d = 0; d < ax; ++d) at.push_back(nb.create<linalg::IndexOp>(nl, d));
        at.push_back(i);
        for (int64_t d = ax + 1; d < rank; ++d)
          at.push_back(nb.create<linalg::IndexOp>(nl, d - 1 + irank));
        return nb.create<tensor::ExtractOp>(nl, data, at);
      });
  n.setOutput(0, y);
  return success();
}

// x[i] with ONNX's negative index counting from the end of a dim of `size` (an index Value).
Value normalizedIndex(OpBuilder& b, Location loc, Value i, Value size) {
  Value idx_i = b.create<arith::IndexCastOp>(loc, b.getIndexType(), i);
  Value neg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, idx_i,
                                      b.create<arith::ConstantIndexOp>(loc, 0));
  return b.create<arith::SelectOp>(loc, neg, b.create<arith::AddIOp>(loc, idx_i, size), idx_i);
}

LogicalResult convertGatherElements(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  if (n.rank(1) != rank || rank == 0) return n.error("data and indices must have one rank >= 1");
  FailureOr<int64_t> axis = n.axis(n.i("axis", 0), rank);
  if (failed(axis)) return failure();
  Type it = n.elementType(1);
  if (!it.isInteger(32) && !it.isInteger(64)) return n.error("indices must be int32 or int64");
  Value data = n.value(0), indices = n.value(1);
  OpFoldResult size = dimOf(b, loc, data, *axis);
  checkIndexRange(b, loc, indices, size, "GatherElements: an index is out of range");
  // Every other dim of indices must fit data's.
  SmallVector<OpFoldResult> dd = dimsOf(b, loc, data), id = dimsOf(b, loc, indices);
  for (int64_t d = 0; d < rank; ++d) {
    if (d == *axis) continue;
    Value ok = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, idx(b, loc, id[d]),
                                       idx(b, loc, dd[d]));
    runtimeCheck(b, loc, ok, "GatherElements: indices is larger than data");
  }
  Value empty = emptyTensor(b, loc, id, n.elementType(0));
  Value axis_size = idx(b, loc, size);
  const int64_t ax = *axis;
  Value y = generate(b, loc, empty, ValueRange{indices}, {b.getMultiDimIdentityMap(rank)},
                     [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                       SmallVector<Value> at;
                       for (int64_t d = 0; d < rank; ++d)
                         at.push_back(d == ax ? normalizedIndex(nb, nl, a[0], axis_size)
                                              : nb.create<linalg::IndexOp>(nl, d).getResult());
                       return nb.create<tensor::ExtractOp>(nl, data, at);
                     });
  n.setOutput(0, y);
  return success();
}

// GatherND: y[i..., j...] = data[i[:b]..., indices[i...], j...] for indices [..., m] (m static):
// the first `batch_dims` dims of indices and data are shared, each index vector's m components
// address data's next m dims (negative from the end), the rest of data's dims are copied.
LogicalResult convertGatherND(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0), irank = n.rank(1);
  Type it = n.elementType(1);
  if (it != b.getI64Type()) return n.error("indices must be int64");
  const int64_t batch = n.i("batch_dims", 0);
  if (rank < 1 || irank < 1) return n.error("data and indices must have rank >= 1");
  if (batch < 0 || batch >= std::min(rank, irank))
    return n.error("batch_dims must be in [0, min(rank of data, rank of indices))");
  const int64_t m = n.type(1).getDimSize(irank - 1);
  if (ShapedType::isDynamic(m)) return n.unsupported("indices with a dynamic last dim");
  if (batch + m > rank)
    return n.error("indices' last dim (" + std::to_string(m) +
                   ") plus batch_dims exceeds data's rank");
  Value data = n.value(0), indices = n.value(1);
  SmallVector<OpFoldResult> dd = dimsOf(b, loc, data), id = dimsOf(b, loc, indices);
  for (int64_t d = 0; d < batch; ++d)
    if (failed(checkSameDim(n, dd[d], id[d], "batch dims of data and indices")))
      return failure();
  // Every index in range for the dim it addresses (checked over all of indices at
  // once); with m = 0 there is none.
  SmallVector<Value> sizes;
  for (int64_t k = 0; k < m; ++k) sizes.push_back(idx(b, loc, dd[batch + k]));
  if (m > 0) {
    Value in_range = generate(
        b, loc, emptyTensor(b, loc, id, b.getI1Type()), ValueRange{indices},
        {b.getMultiDimIdentityMap(irank)},
        [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
          Value k = nb.create<linalg::IndexOp>(nl, irank - 1);
          Value size = sizes[0];
          for (int64_t c = 1; c < m; ++c)
            size = nb.create<arith::SelectOp>(
                nl,
                nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::eq, k,
                                         nb.create<arith::ConstantIndexOp>(nl, c)),
                sizes[c], size);
          Value i = nb.create<arith::IndexCastOp>(nl, nb.getIndexType(), a[0]);
          Value neg =
              nb.create<arith::SubIOp>(nl, nb.create<arith::ConstantIndexOp>(nl, 0), size);
          return nb.create<arith::AndIOp>(
              nl, nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::sge, i, neg),
              nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, i, size));
        });
    SmallVector<int64_t> all;
    for (int64_t d = 0; d < irank; ++d) all.push_back(d);
    Value all_in_range = reduce(
        b, loc, in_range, all, b.getBoolAttr(true),
        [](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
          return nb.create<arith::AndIOp>(nl, acc, v);
        },
        false);
    runtimeCheck(b, loc, b.create<tensor::ExtractOp>(loc, all_in_range, ValueRange{}),
                 "GatherND: an index is out of range");
  }

  SmallVector<OpFoldResult> out(id.begin(), id.end() - 1);
  out.append(dd.begin() + batch + m, dd.end());
  const int64_t lead = irank - 1;  // y's dims from indices
  Value y = generate(
      b, loc, emptyTensor(b, loc, out, n.elementType(0)), ValueRange{}, {},
      [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
        SmallVector<Value> at, where;
        for (int64_t d = 0; d < lead; ++d) where.push_back(nb.create<linalg::IndexOp>(nl, d));
        for (int64_t d = 0; d < batch; ++d) at.push_back(where[d]);
        for (int64_t k = 0; k < m; ++k) {
          SmallVector<Value> ik(where);
          ik.push_back(nb.create<arith::ConstantIndexOp>(nl, k));
          Value i = nb.create<tensor::ExtractOp>(nl, indices, ik);
          at.push_back(normalizedIndex(nb, nl, i, sizes[k]));
        }
        for (int64_t d = batch + m; d < rank; ++d)
          at.push_back(nb.create<linalg::IndexOp>(nl, lead + d - batch - m));
        return nb.create<tensor::ExtractOp>(nl, data, at);
      });
  n.setOutput(0, y);
  return success();
}

// Runs `body` at every position of `dims` (an scf.for nest, in row-major order), threading the
// tensor `carried` through it: body(ivs, carried) returns the tensor after that position.
Value forEachPosition(OpBuilder& b, Location loc, ArrayRef<OpFoldResult> dims, Value carried,
                      function_ref<Value(OpBuilder&, Location, ValueRange, Value)> body) {
  SmallVector<Value> lbs, ubs, steps;
  for (OpFoldResult d : dims) {
    lbs.push_back(b.create<arith::ConstantIndexOp>(loc, 0));
    ubs.push_back(idx(b, loc, d));
    steps.push_back(b.create<arith::ConstantIndexOp>(loc, 1));
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{carried},
      [&](OpBuilder& nb, Location nl, ValueRange ivs, ValueRange iters) -> scf::ValueVector {
        return {body(nb, nl, ivs, iters[0])};
      });
  return nest.results[0];
}

// The scatter reductions: none (the update replaces), add, mul, min, max.
FailureOr<std::function<Value(OpBuilder&, Location, Value, Value)>> scatterCombine(NodeContext& n,
                                                                                   Type t) {
  const std::string r = n.s("reduction", "none");
  const bool f = isFloat(t);
  if (t.isInteger(1) && r != "none") return n.unsupported("reduction '" + r + "' of bool");
  if (r == "none") return {[](OpBuilder&, Location, Value, Value u) { return u; }};
  if (r == "add")
    return {[f](OpBuilder& b, Location l, Value o, Value u) -> Value {
      return f ? b.create<arith::AddFOp>(l, o, u).getResult()
               : b.create<arith::AddIOp>(l, o, u).getResult();
    }};
  if (r == "mul")
    return {[f](OpBuilder& b, Location l, Value o, Value u) -> Value {
      return f ? b.create<arith::MulFOp>(l, o, u).getResult()
               : b.create<arith::MulIOp>(l, o, u).getResult();
    }};
  if (r == "min")
    return {[f](OpBuilder& b, Location l, Value o, Value u) -> Value {
      return f ? b.create<arith::MinimumFOp>(l, o, u).getResult()
               : b.create<arith::MinSIOp>(l, o, u).getResult();
    }};
  if (r == "max")
    return {[f](OpBuilder& b, Location l, Value o, Value u) -> Value {
      return f ? b.create<arith::MaximumFOp>(l, o, u).getResult()
               : b.create<arith::MaxSIOp>(l, o, u).getResult();
    }};
  return n.error("unknown reduction '" + r + "'");
}

// `i` (an integer of indices' type) as an index into a dim of `size`, negative from its end; fails
// the execution when outside [-size, size).
Value checkedIndex(OpBuilder& b, Location loc, Value i, Value size, llvm::StringRef message) {
  Value v = b.create<arith::IndexCastOp>(loc, b.getIndexType(), i);
  Value neg = b.create<arith::SubIOp>(loc, b.create<arith::ConstantIndexOp>(loc, 0), size);
  runtimeCheck(b, loc,
               b.create<arith::AndIOp>(
                   loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, v, neg),
                   b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, v, size)),
               message);
  return normalizedIndex(b, loc, i, size);
}

// y = data, then at every position p of updates, in row-major order:
// y[target(p)] = combine(y[target(p)], updates[p]).
Value scatterUpdates(OpBuilder& b, Location loc, Value data, Value updates,
                     const std::function<Value(OpBuilder&, Location, Value, Value)>& combine,
                     function_ref<SmallVector<Value>(OpBuilder&, Location, ValueRange)> target) {
  return forEachPosition(
      b, loc, dimsOf(b, loc, updates), data,
      [&](OpBuilder& nb, Location nl, ValueRange p, Value acc) -> Value {
        SmallVector<Value> at = target(nb, nl, p);
        Value u = nb.create<tensor::ExtractOp>(nl, updates, p);
        Value old = nb.create<tensor::ExtractOp>(nl, acc, at);
        return nb.create<tensor::InsertOp>(nl, combine(nb, nl, old, u), acc, at);
      });
}

// ScatterElements (and opset 9-10's Scatter): y = data, then y[p with p[axis] = indices[p]] =
// combine(y[...], updates[p]) for every position p of updates, in row-major order (so with
// duplicate indices the last update wins, as ONNX's reference does).
LogicalResult convertScatterElements(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  if (rank == 0 || n.rank(1) != rank || n.rank(2) != rank)
    return n.error("data, indices and updates must have one rank >= 1");
  if (n.elementType(2) != n.elementType(0)) return n.error("updates' type differs from data's");
  Type it = n.elementType(1);
  if (!it.isInteger(32) && !it.isInteger(64)) return n.error("indices must be int32 or int64");
  FailureOr<int64_t> axis = n.axis(n.i("axis", 0), rank);
  if (failed(axis)) return failure();
  auto combine = scatterCombine(n, n.elementType(0));
  if (failed(combine)) return failure();
  Value data = n.value(0), indices = n.value(1), updates = n.value(2);
  SmallVector<OpFoldResult> dd = dimsOf(b, loc, data), id = dimsOf(b, loc, indices),
                            ud = dimsOf(b, loc, updates);
  for (int64_t d = 0; d < rank; ++d) {
    if (failed(checkSameDim(n, id[d], ud[d], "indices' and updates' dims"))) return failure();
    if (d == *axis) continue;
    runtimeCheck(b, loc,
                 b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, idx(b, loc, ud[d]),
                                         idx(b, loc, dd[d])),
                 n.node().op_type() + ": updates is larger than data");
  }
  Value size = idx(b, loc, dd[*axis]);
  const int64_t ax = *axis;
  const std::string message = n.node().op_type() + ": an index is out of range";
  Value y = scatterUpdates(b, loc, data, updates, *combine,
                           [&](OpBuilder& nb, Location nl, ValueRange p) {
                             SmallVector<Value> at(p.begin(), p.end());
                             Value i = nb.create<tensor::ExtractOp>(nl, indices, p);
                             at[ax] = checkedIndex(nb, nl, i, size, message);
                             return at;
                           });
  n.setOutput(0, y);
  return success();
}

// ScatterND: y = data, then y[indices[q]..., j...] = combine(y[...], updates[q..., j...]) for
// every index vector q of indices [..., m] (m static) and every j over data's dims after the
// first m, in row-major order.
LogicalResult convertScatterND(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0), irank = n.rank(1);
  if (rank < 1 || irank < 1) return n.error("data and indices must have rank >= 1");
  if (n.elementType(1) != b.getI64Type()) return n.error("indices must be int64");
  if (n.elementType(2) != n.elementType(0)) return n.error("updates' type differs from data's");
  const int64_t m = n.type(1).getDimSize(irank - 1);
  if (ShapedType::isDynamic(m)) return n.unsupported("indices with a dynamic last dim");
  if (m > rank) return n.error("indices' last dim exceeds data's rank");
  const int64_t urank = irank - 1 + rank - m;
  if (n.rank(2) != urank)
    return n.error("updates must have rank " + std::to_string(urank) +
                   " (indices' rank - 1 + data's rank - indices' last dim)");
  auto combine = scatterCombine(n, n.elementType(0));
  if (failed(combine)) return failure();
  Value data = n.value(0), indices = n.value(1), updates = n.value(2);
  SmallVector<OpFoldResult> dd = dimsOf(b, loc, data), id = dimsOf(b, loc, indices),
                            ud = dimsOf(b, loc, updates);
  for (int64_t d = 0; d < urank; ++d) {
    OpFoldResult want = d < irank - 1 ? id[d] : dd[m + d - (irank - 1)];
    if (failed(checkSameDim(n, ud[d], want, "updates' dims (indices' and data's)")))
      return failure();
  }
  SmallVector<Value> sizes;
  for (int64_t k = 0; k < m; ++k) sizes.push_back(idx(b, loc, dd[k]));
  Value y = scatterUpdates(
      b, loc, data, updates, *combine, [&](OpBuilder& nb, Location nl, ValueRange p) {
        SmallVector<Value> at;
        for (int64_t k = 0; k < m; ++k) {
          SmallVector<Value> ik(p.begin(), p.begin() + (irank - 1));
          ik.push_back(nb.create<arith::ConstantIndexOp>(nl, k));
          Value i = nb.create<tensor::ExtractOp>(nl, indices, ik);
          at.push_back(checkedIndex(nb, nl, i, sizes[k], "ScatterND: an index is out of range"));
        }
        at.append(p.begin() + (irank - 1), p.end());
        return at;
      });
  n.setOutput(0, y);
  return success();
}

// OneHot: out[..., j, ...] = values[1] where the index (negative ones count from depth) is j,
// values[0] elsewhere; j runs over the new dim at `axis`.
LogicalResult convertOneHot(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0) + 1;
  FailureOr<int64_t> axis = n.axis(n.i("axis", -1), rank);
  if (failed(axis)) return failure();
  if (!hasOneElement(n.type(1))) return n.error("depth must have one element");
  if (n.rank(2) != 1 || n.type(2).isDynamicDim(0) || n.type(2).getDimSize(0) != 2)
    return n.error("values must be [off_value, on_value]");
  OpFoldResult depth;
  if (auto e = n.shapeElems(1)) {
    depth = (*e)[0];
  } else if (auto s = n.constScalar(1)) {
    const CheckedInt d = CheckedInt::fromDouble(std::trunc(*s));
    if (!d.within(1, kMaxSize))
      return n.error("depth " + std::to_string(*s) + " must be in [1, 2^48]");
    depth = b.getIndexAttr(d.value());
  } else {
    // A float depth read at run time (truncated, as the reference's int()), in range before it
    // is converted.
    Value v = n.value(1);
    SmallVector<Value> at(n.rank(1), b.create<arith::ConstantIndexOp>(loc, 0));
    Value f = convertScalar(b, loc, b.create<tensor::ExtractOp>(loc, v, at), b.getF64Type());
    Value fits = b.create<arith::AndIOp>(
        loc,
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGE, f,
                                scalarConstant(b, loc, b.getF64Type(), 1)),
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, f,
                                scalarConstant(b, loc, b.getF64Type(), kMaxSize + 1.0)));
    runtimeCheck(b, loc, fits, "OneHot: depth must be in [1, 2^48]");
    f = b.create<arith::SelectOp>(loc, fits, f, scalarConstant(b, loc, b.getF64Type(), 1));
    depth = fold(b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                              b.create<arith::FPToSIOp>(loc, b.getI64Type(), f)));
  }
  if (auto c = constantIndex(depth); c && (*c < 1 || *c > kMaxSize))
    return n.error("depth " + std::to_string(*c) + " must be in [1, 2^48]");
  if (!constantIndex(depth)) {
    Value ok = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, idx(b, loc, depth),
                                       b.create<arith::ConstantIndexOp>(loc, 1));
    runtimeCheck(b, loc, ok, "OneHot: depth must be positive");
  }
  Type it = n.elementType(0), t = n.elementType(2);
  Value indices = n.value(0), values = n.value(2);
  SmallVector<OpFoldResult> in = dimsOf(b, loc, indices), out(in);
  out.insert(out.begin() + *axis, depth);
  SmallVector<AffineExpr> ie;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis) ie.push_back(b.getAffineDimExpr(d));
  Value c0 = b.create<arith::ConstantIndexOp>(loc, 0),
        c1 = b.create<arith::ConstantIndexOp>(loc, 1);
  Value off = b.create<tensor::ExtractOp>(loc, values, ValueRange{c0});
  Value on = b.create<tensor::ExtractOp>(loc, values, ValueRange{c1});
  Value depth_v = idx(b, loc, depth);
  Value empty = emptyTensor(b, loc, out, t);
  const int64_t ax = *axis;
  Value y = generate(
      b, loc, empty, ValueRange{indices}, {AffineMap::get(rank, 0, ie, b.getContext())},
      [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
        Value i = a[0];
        // Float indices are truncated, as the reference's astype(int64) (NaN and values beyond
        // int64 become INT64_MIN, as there).
        if (isFloat(it)) i = convertScalar(nb, nl, i, nb.getI64Type());
        i = nb.create<arith::IndexCastOp>(nl, nb.getIndexType(), i);
        Value neg = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, i,
                                             nb.create<arith::ConstantIndexOp>(nl, 0));
        i = nb.create<arith::SelectOp>(nl, neg, nb.create<arith::AddIOp>(nl, i, depth_v), i);
        Value j = nb.create<linalg::IndexOp>(nl, ax);
        Value hit = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::eq, i, j);
        return nb.create<arith::SelectOp>(nl, hit, on, off);
      });
  n.setOutput(0, y);
  return success();
}

}  // namespace

void addGatherOps(Registry& r) {
  r["Gather"] = {convertGather, {"axis"}};
  r["GatherElements"] = {convertGatherElements, {"axis"}};
  r["GatherND"] = {convertGatherND, {"batch_dims"}};
  r["Scatter"] = {convertScatterElements, {"axis"}};
  r["ScatterElements"] = {convertScatterElements, {"axis", "reduction"}};
  r["ScatterND"] = {convertScatterND, {"reduction"}};
  r["OneHot"] = {convertOneHot, {"axis"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
