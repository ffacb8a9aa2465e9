// Operators whose output size or placement depends on the data: NonZero and Compress (sized by
// a count taken first, then filled by a loop in row-major order) and MaxUnpool (a scatter into
// zeros at MaxPool's indices), and ReverseSequence (each sequence reversed within its length).
#include <string>

#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/node_context.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace disc_ral {
namespace onnx {
namespace {

// Whether element v is not zero (NaN is not zero, as numpy counts it).
Value nonZero(OpBuilder& b, Location loc, Value v) {
  Type t = v.getType();
  if (isFloat(t))
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, v, scalarConstant(b, loc, t, 0));
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, v, intConstant(b, loc, t, 0));
}

// How many elements of the 1-D `v` in [0, len) are not zero (an index).
Value countNonZero(OpBuilder& b, Location loc, Value v, Value len) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0),
        one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<scf::ForOp>(
      loc, zero, len, one, ValueRange{zero},
      [&](OpBuilder& lb, Location ll, Value i, ValueRange c) {
        Value hit = nonZero(lb, ll, lb.create<tensor::ExtractOp>(ll, v, ValueRange{i}));
        lb.create<scf::YieldOp>(ll, ValueRange{lb.create<arith::AddIOp>(
                                        ll, c[0], lb.create<arith::SelectOp>(ll, hit, one, zero))});
      });
  return loop.getResult(0);
}

// NonZero: the indices of x's non-zero elements, [rank, count] int64, in row-major order.
LogicalResult convertNonZero(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  if (rank == 0) return n.unsupported("NonZero of a scalar");
  Value x = n.value(0);
  SmallVector<OpFoldResult> dims = dimsOf(b, loc, x);
  OpFoldResult total = product(b, loc, dims);
  Value flat = reshape(b, loc, x, {total});
  Value count = countNonZero(b, loc, flat, indexValue(b, loc, total));
  Value out0 = emptyTensor(b, loc, {b.getIndexAttr(rank), OpFoldResult(count)}, b.getI64Type());
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0),
        one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<scf::ForOp>(
      loc, zero, indexValue(b, loc, total), one, ValueRange{out0, zero},
      [&](OpBuilder& lb, Location ll, Value i, ValueRange c) {
        Value hit = nonZero(lb, ll, lb.create<tensor::ExtractOp>(ll, flat, ValueRange{i}));
        auto add = lb.create<scf::IfOp>(
            ll, hit,
            [&](OpBuilder& ib, Location il) {
              // Unravel i, last dim first.
              Value rest = i, out = c[0];
              for (int64_t d = rank - 1; d >= 0; --d) {
                Value size = indexValue(ib, il, dims[d]);
                Value coord = d == 0 ? rest : ib.create<arith::RemUIOp>(il, rest, size).getResult();
                if (d > 0) rest = ib.create<arith::DivUIOp>(il, rest, size);
                out = ib.create<tensor::InsertOp>(
                    il, ib.create<arith::IndexCastOp>(il, ib.getI64Type(), coord), out,
                    ValueRange{ib.create<arith::ConstantIndexOp>(il, d), c[1]});
              }
              ib.create<scf::YieldOp>(il, ValueRange{out, ib.create<arith::AddIOp>(il, c[1], one)});
            },
            [&](OpBuilder& ib, Location il) { ib.create<scf::YieldOp>(il, c); });
        lb.create<scf::YieldOp>(ll, add.getResults());
      });
  n.setOutput(0, loop.getResult(0));
  return success();
}

// Compress: the slices of x along `axis` (of x flattened without one) whose condition is true;
// the condition may be shorter than the axis (the slices past it are dropped), not longer.
LogicalResult convertCompress(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (n.rank(1) != 1 || !n.elementType(1).isInteger(1))
    return n.error("condition must be a 1-D bool tensor");
  Value x = n.value(0), cond = n.value(1);
  int64_t axis = 0;
  if (n.has("axis")) {
    FailureOr<int64_t> a = n.axis(n.i("axis", 0), n.rank(0));
    if (failed(a)) return failure();
    axis = *a;
  } else {
    x = reshape(b, loc, x, {product(b, loc, dimsOf(b, loc, x))});
  }
  SmallVector<OpFoldResult> dims = dimsOf(b, loc, x);
  Value len = indexValue(b, loc, dimOf(b, loc, cond, 0)), size = indexValue(b, loc, dims[axis]);
  runtimeCheck(b, loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, len, size),
               "Compress: the condition is longer than the axis");
  Value count = countNonZero(b, loc, cond, len);
  // The selected positions along the axis.
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0),
        one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value pos0 = emptyTensor(b, loc, {OpFoldResult(count)}, b.getIndexType());
  auto fill = b.create<scf::ForOp>(
      loc, zero, len, one, ValueRange{pos0, zero},
      [&](OpBuilder& lb, Location ll, Value i, ValueRange c) {
        Value hit = lb.create<tensor::ExtractOp>(ll, cond, ValueRange{i});
        auto add = lb.create<scf::IfOp>(
            ll, hit,
            [&](OpBuilder& ib, Location il) {
              Value out = ib.create<tensor::InsertOp>(il, i, c[0], ValueRange{c[1]});
              ib.create<scf::YieldOp>(il, ValueRange{out, ib.create<arith::AddIOp>(il, c[1], one)});
            },
            [&](OpBuilder& ib, Location il) { ib.create<scf::YieldOp>(il, c); });
        lb.create<scf::YieldOp>(ll, add.getResults());
      });
  Value positions = fill.getResult(0);
  SmallVector<OpFoldResult> out = dims;
  out[axis] = count;
  const int64_t rank = static_cast<int64_t>(dims.size());
  Value y = generate(b, loc, emptyTensor(b, loc, out, n.elementType(0)), {}, {},
                     [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
                       SmallVector<Value> at;
                       for (int64_t d = 0; d < rank; ++d)
                         at.push_back(nb.create<linalg::IndexOp>(nl, d));
                       at[axis] = nb.create<tensor::ExtractOp>(nl, positions, ValueRange{at[axis]});
                       return nb.create<tensor::ExtractOp>(nl, x, at);
                     });
  n.setOutput(0, y);
  return success();
}

// MaxUnpool(X, I, output_shape): zeros of the unpooled shape ((in - 1) · stride + kernel - pads
// per spatial dim, or output_shape), with X[p] written at flat index I[p] (MaxPool's Indices),
// in row-major order; an index outside the output fails the execution.
LogicalResult convertMaxUnpool(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0), spatial = rank - 2;
  if (rank < 3) return n.error("X must be [N, C, D1, ...]");
  if (n.rank(1) != rank || !n.elementType(1).isInteger(64))
    return n.error("I must be int64 like X");
  SmallVector<int64_t> kernel = n.ints("kernel_shape"), pads = n.ints("pads"),
                       strides = n.ints("strides");
  if (static_cast<int64_t>(kernel.size()) != spatial)
    return n.error("kernel_shape must have one value per spatial dim");
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (strides.empty()) strides.assign(spatial, 1);
  if (static_cast<int64_t>(pads.size()) != 2 * spatial ||
      static_cast<int64_t>(strides.size()) != spatial)
    return n.error("pads or strides do not match the kernel");
  if (failed(checkWindowAttribute(n, "kernel_shape", kernel, 1)) ||
      failed(checkWindowAttribute(n, "strides", strides, 1)) ||
      failed(checkWindowAttribute(n, "pads", pads, 0)))
    return failure();
  Value x = n.value(0), indices = n.value(1);
  if (auto why = broadcastError({x, indices})) return n.error(*why);
  SmallVector<OpFoldResult> xd = dimsOf(b, loc, x), unpooled = {xd[0], xd[1]};
  for (int64_t i = 0; i < spatial; ++i) {
    OpFoldResult o = addIndex(b, loc,
                              mulIndex(b, loc, subIndex(b, loc, xd[2 + i], b.getIndexAttr(1)),
                                       b.getIndexAttr(strides[i])),
                              b.getIndexAttr(kernel[i] - pads[i] - pads[spatial + i]));
    if (failed(checkSize(b, loc, o, "an output dim"))) return failure();
    unpooled.push_back(o);
  }
  // The indices count in the unpooled shape; a given output_shape places each element at the
  // same coordinates in a larger output (ONNX's reference).
  SmallVector<OpFoldResult> out = unpooled;
  if (n.hasInput(2)) {
    std::optional<SmallVector<OpFoldResult>> shape = n.shapeElems(2);
    if (!shape || static_cast<int64_t>(shape->size()) != rank)
      return n.error("output_shape must have one value per dim of X");
    out = *shape;
    if (failed(checkDims(b, loc, out, "output_shape", true))) return failure();
  }
  Type t = n.elementType(0);
  OpFoldResult total = product(b, loc, out);
  Value flat = filled(b, loc, {total}, scalarConstant(b, loc, t, 0));
  OpFoldResult count = product(b, loc, xd);
  Value xs = reshape(b, loc, x, {count}), is = reshape(b, loc, indices, {count});
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0),
        one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value limit = indexValue(b, loc, product(b, loc, unpooled));
  auto loop = b.create<scf::ForOp>(
      loc, zero, indexValue(b, loc, count), one, ValueRange{flat},
      [&](OpBuilder& lb, Location ll, Value p, ValueRange c) {
        Value i = lb.create<arith::IndexCastOp>(
            ll, lb.getIndexType(), lb.create<tensor::ExtractOp>(ll, is, ValueRange{p}));
        Value ok = lb.create<arith::AndIOp>(
            ll, lb.create<arith::CmpIOp>(ll, arith::CmpIPredicate::sge, i, zero),
            lb.create<arith::CmpIOp>(ll, arith::CmpIPredicate::slt, i, limit));
        // Unravelled in the unpooled shape, ravelled into the output's.
        Value rest = lb.create<arith::SelectOp>(ll, ok, i, zero), at = zero, stride = one;
        for (int64_t d = rank - 1; d >= 0; --d) {
          // (A 0 dim means no index is valid: ok is false already, and never divide by 0.)
          Value from = lb.create<arith::MaxUIOp>(ll, indexValue(lb, ll, unpooled[d]), one);
          Value to = indexValue(lb, ll, out[d]);
          Value coord = lb.create<arith::RemUIOp>(ll, rest, from);
          rest = lb.create<arith::DivUIOp>(ll, rest, from);
          ok = lb.create<arith::AndIOp>(
              ll, ok, lb.create<arith::CmpIOp>(ll, arith::CmpIPredicate::ult, coord, to));
          at = lb.create<arith::AddIOp>(ll, at, lb.create<arith::MulIOp>(ll, coord, stride));
          stride = lb.create<arith::MulIOp>(ll, stride, to);
        }
        runtimeCheck(lb, ll, ok, "MaxUnpool: an index is outside the output");
        Value safe = lb.create<arith::SelectOp>(ll, ok, at, zero);
        Value v = lb.create<tensor::ExtractOp>(ll, xs, ValueRange{p});
        lb.create<scf::YieldOp>(
            ll, ValueRange{lb.create<tensor::InsertOp>(ll, v, c[0], ValueRange{safe})});
      });
  n.setOutput(0, reshape(b, loc, loop.getResult(0), out));
  return success();
}

// ReverseSequence: per batch entry b, the first sequence_lens[b] elements along time_axis in
// reverse order, the rest as they are; each length checked to be in [0, the time dim].
LogicalResult convertReverseSequence(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  if (rank < 2) return n.error("input must have rank >= 2");
  const int64_t time_axis = n.i("time_axis", 0), batch_axis = n.i("batch_axis", 1);
  if ((time_axis != 0 && time_axis != 1) || (batch_axis != 0 && batch_axis != 1) ||
      time_axis == batch_axis)
    return n.error("time_axis and batch_axis must be 0 and 1, one each");
  if (n.rank(1) != 1 || !n.elementType(1).isInteger(64))
    return n.error("sequence_lens must be a 1-D int64 tensor");
  Value x = n.value(0), lens = n.value(1);
  SmallVector<OpFoldResult> dims = dimsOf(b, loc, x);
  if (failed(checkSameDim(n, dimOf(b, loc, lens, 0), dims[batch_axis], "sequence_lens and batch")))
    return failure();
  Value time = indexValue(b, loc, dims[time_axis]);
  Value y = generate(
      b, loc, emptyTensor(b, loc, dims, n.elementType(0)), {}, {},
      [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d) at.push_back(nb.create<linalg::IndexOp>(nl, d));
        Value len = nb.create<arith::IndexCastOp>(
            nl, nb.getIndexType(),
            nb.create<tensor::ExtractOp>(nl, lens, ValueRange{at[batch_axis]}));
        Value zero = nb.create<arith::ConstantIndexOp>(nl, 0);
        Value ok = nb.create<arith::AndIOp>(
            nl, nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::sge, len, zero),
            nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::sle, len, time));
        runtimeCheck(nb, nl, ok, "ReverseSequence: a length is outside [0, the time dim]");
        Value t = at[time_axis];
        Value inside = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, t, len);
        Value reversed = nb.create<arith::SubIOp>(
            nl, nb.create<arith::SubIOp>(nl, len, nb.create<arith::ConstantIndexOp>(nl, 1)), t);
        at[time_axis] =
            nb.create<arith::SelectOp>(nl, nb.create<arith::AndIOp>(nl, ok, inside), reversed, t);
        return nb.create<tensor::ExtractOp>(nl, x, at);
      });
  n.setOutput(0, y);
  return success();
}

}  // namespace

void addSelectOps(Registry& r) {
  r["NonZero"] = {convertNonZero, {}};
  r["Compress"] = {convertCompress, {"axis"}};
  r["MaxUnpool"] = {convertMaxUnpool, {"kernel_shape", "pads", "strides"}};
  r["ReverseSequence"] = {convertReverseSequence, {"batch_axis", "time_axis"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
