// Operators whose output size or placement depends on the data: NonZero and Compress (sized by
// a count taken first, then filled by a loop in row-major order) and MaxUnpool (a scatter into
// zeros at MaxPool's indices), ReverseSequence (each sequence reversed within its length), and
// Unique (rows sorted by ral_topk, then grouped by a loop).
#include <string>

#include "compiler_passes/dialect/dialect.h"
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

// The order of `keys` ([1, n] of a ral_topk type) from smallest to largest, ties by lower
// index (so a stable sort), NaN last: ral_topk with k = n.
Value ascendingOrder(OpBuilder& b, Location loc, Value keys, Value n) {
  auto type = cast<RankedTensorType>(keys.getType());
  SmallVector<OpFoldResult> dims = {b.getIndexAttr(1), OpFoldResult(n)};
  Value values = emptyTensor(b, loc, dims, type.getElementType());
  Value indices = emptyTensor(b, loc, dims, b.getI64Type());
  Value k = b.create<arith::IndexCastOp>(loc, b.getI64Type(), n);
  auto topk = b.create<TopKOp>(loc, TypeRange{values.getType(), indices.getType()}, keys, k,
                               values, indices, /*smallest=*/true);
  return topk.getResult(1);
}

Value extractAt(OpBuilder& b, Location loc, Value t, ValueRange at) {
  return b.create<tensor::ExtractOp>(loc, t, at);
}

Value toIndex(OpBuilder& b, Location loc, Value v) {
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), v);
}

// Unique: the distinct elements (or slices along `axis`) of X, in ascending order (`sorted`, the
// default; lexicographic for slices) or in order of first occurrence, with each one's first
// index, the index of each element's (slice's) group, and each group's size. X as rows
// [count, width] (one element per row without an axis) is sorted stably one column at a time,
// last column first (ral_topk per column), so equal rows end up adjacent with their first index
// first; one loop then marks where groups start and another fills the outputs, sized by the
// number of groups. NaNs are one group (numpy's `equal_nan`), after every number.
LogicalResult convertUnique(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (!n.hostReadsTensors())
    return n.unsupported("Unique on this device (its grouping walks the sorted rows on the host, "
                         "which cannot work in device memory)");
  Type t = n.elementType(0), i64 = b.getI64Type(), key_type = t;
  if (t.isF16() || t.isBF16()) {
    key_type = b.getF32Type();
  } else if (t.isInteger(1) || t.isInteger(8) || t.isInteger(16)) {
    key_type = b.getI32Type();
  } else if (!t.isF32() && !t.isF64() && !t.isInteger(32) && !t.isInteger(64)) {
    return n.unsupported("Unique of this element type");
  }
  const int64_t rank = n.rank(0);
  std::optional<int64_t> axis;
  if (n.has("axis")) {
    FailureOr<int64_t> a = n.axis(n.i("axis", 0), rank);
    if (failed(a)) return failure();
    axis = *a;
  }
  const bool sorted = n.i("sorted", 1) != 0;
  Value x = n.value(0);
  SmallVector<OpFoldResult> dims = dimsOf(b, loc, x), slice_dims;
  SmallVector<int64_t> perm;
  Value rows;
  if (!axis) {
    rows = reshape(b, loc, x, {product(b, loc, dims), b.getIndexAttr(1)});
  } else {
    perm.push_back(*axis);
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis) perm.push_back(d);
    Value moved = transpose(b, loc, x, perm);
    SmallVector<OpFoldResult> md = dimsOf(b, loc, moved);
    slice_dims.assign(md.begin() + 1, md.end());
    rows = reshape(b, loc, moved, {md[0], product(b, loc, slice_dims)});
  }
  SmallVector<OpFoldResult> rd = dimsOf(b, loc, rows);
  Value count = indexValue(b, loc, rd[0]), width = indexValue(b, loc, rd[1]);
  Value keys_src = convertTensor(b, loc, rows, key_type);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0),
        one = b.create<arith::ConstantIndexOp>(loc, 1);

  // order: the rows by ascending value, stably, one column at a time from the last.
  Value order = generate(b, loc, emptyTensor(b, loc, {OpFoldResult(count)}, i64), {}, {},
                         [&](OpBuilder& gb, Location gl, ValueRange) -> Value {
                           return gb.create<arith::IndexCastOp>(
                               gl, i64, gb.create<linalg::IndexOp>(gl, 0));
                         });
  auto by_column = b.create<scf::ForOp>(
      loc, zero, width, one, ValueRange{order},
      [&](OpBuilder& lb, Location ll, Value j, ValueRange c) {
        Value col = lb.create<arith::SubIOp>(ll, lb.create<arith::SubIOp>(ll, width, one), j);
        Value keys = generate(
            lb, ll, emptyTensor(lb, ll, {lb.getIndexAttr(1), OpFoldResult(count)}, key_type), {},
            {}, [&](OpBuilder& gb, Location gl, ValueRange) -> Value {
              Value p = gb.create<linalg::IndexOp>(gl, 1);
              Value r = toIndex(gb, gl, extractAt(gb, gl, c[0], p));
              return extractAt(gb, gl, keys_src, {r, col});
            });
        Value step = ascendingOrder(lb, ll, keys, count);
        Value next = generate(lb, ll, emptyTensor(lb, ll, {OpFoldResult(count)}, i64), {}, {},
                              [&](OpBuilder& gb, Location gl, ValueRange) -> Value {
                                Value p = gb.create<linalg::IndexOp>(gl, 0);
                                Value q = toIndex(gb, gl, extractAt(gb, gl, step, {zero, p}));
                                return extractAt(gb, gl, c[0], q);
                              });
        lb.create<scf::YieldOp>(ll, next);
      });
  order = by_column.getResult(0);

  // Whether rows r and s of `rows` are equal (NaN equal to NaN).
  const bool float_rows = isFloat(t);
  auto sameRows = [&](OpBuilder& ob, Location ol, Value r, Value s) -> Value {
    Value all = ob.create<arith::ConstantIntOp>(ol, 1, 1);
    auto cols = ob.create<scf::ForOp>(
        ol, zero, width, one, ValueRange{all},
        [&](OpBuilder& cb, Location cl, Value col, ValueRange acc) {
          Value u = extractAt(cb, cl, rows, {r, col}), v = extractAt(cb, cl, rows, {s, col});
          Value eq;
          if (float_rows) {
            Value both_nan = cb.create<arith::AndIOp>(
                cl, cb.create<arith::CmpFOp>(cl, arith::CmpFPredicate::UNO, u, u),
                cb.create<arith::CmpFOp>(cl, arith::CmpFPredicate::UNO, v, v));
            eq = cb.create<arith::OrIOp>(
                cl, cb.create<arith::CmpFOp>(cl, arith::CmpFPredicate::OEQ, u, v), both_nan);
          } else {
            eq = cb.create<arith::CmpIOp>(cl, arith::CmpIPredicate::eq, u, v);
          }
          cb.create<scf::YieldOp>(cl, ValueRange{cb.create<arith::AndIOp>(cl, acc[0], eq)});
        });
    return cols.getResult(0);
  };
  // starts[p]: sorted row p begins a group (row 0 always does); groups: how many do.
  Value starts0 = emptyTensor(b, loc, {OpFoldResult(count)}, b.getI1Type());
  auto marking = b.create<scf::ForOp>(
      loc, zero, count, one, ValueRange{starts0, zero},
      [&](OpBuilder& lb, Location ll, Value p, ValueRange c) {
        Value prev = lb.create<arith::SubIOp>(ll, lb.create<arith::MaxUIOp>(ll, p, one), one);
        Value same = sameRows(lb, ll, toIndex(lb, ll, extractAt(lb, ll, order, prev)),
                              toIndex(lb, ll, extractAt(lb, ll, order, p)));
        Value first = lb.create<arith::CmpIOp>(ll, arith::CmpIPredicate::eq, p, zero);
        Value start = lb.create<arith::OrIOp>(
            ll, first,
            lb.create<arith::XOrIOp>(ll, same, lb.create<arith::ConstantIntOp>(ll, 1, 1)));
        Value starts = lb.create<tensor::InsertOp>(ll, start, c[0], p);
        Value groups =
            lb.create<arith::AddIOp>(ll, c[1], lb.create<arith::SelectOp>(ll, start, one, zero));
        lb.create<scf::YieldOp>(ll, ValueRange{starts, groups});
      });
  Value starts = marking.getResult(0), groups = marking.getResult(1);

  // The outputs in sorted order: each group's row, first index and size; each row's group.
  Value y0 = emptyTensor(b, loc, {OpFoldResult(groups), OpFoldResult(width)}, t);
  Value first0 = emptyTensor(b, loc, {OpFoldResult(groups)}, i64);
  Value sizes0 = filled(b, loc, {OpFoldResult(groups)}, intConstant(b, loc, i64, 0));
  Value inverse0 = emptyTensor(b, loc, {OpFoldResult(count)}, i64);
  auto filling = b.create<scf::ForOp>(
      loc, zero, count, one, ValueRange{y0, first0, sizes0, inverse0, zero},
      [&](OpBuilder& lb, Location ll, Value p, ValueRange c) {
        Value start = extractAt(lb, ll, starts, p);
        Value seen = lb.create<arith::AddIOp>(ll, c[4], lb.create<arith::SelectOp>(ll, start, one, zero));
        Value g = lb.create<arith::SubIOp>(ll, seen, one);
        Value r64 = extractAt(lb, ll, order, p);
        Value r = toIndex(lb, ll, r64);
        auto placed = lb.create<scf::IfOp>(
            ll, start,
            [&](OpBuilder& ib, Location il) {
              SmallVector<OpFoldResult> size = {ib.getIndexAttr(1), OpFoldResult(width)},
                                        stride = {ib.getIndexAttr(1), ib.getIndexAttr(1)};
              Value row = ib.create<tensor::ExtractSliceOp>(
                  il, rows, SmallVector<OpFoldResult>{r, ib.getIndexAttr(0)}, size, stride);
              Value y = ib.create<tensor::InsertSliceOp>(
                  il, row, c[0], SmallVector<OpFoldResult>{g, ib.getIndexAttr(0)}, size, stride);
              Value first = ib.create<tensor::InsertOp>(il, r64, c[1], g);
              ib.create<scf::YieldOp>(il, ValueRange{y, first});
            },
            [&](OpBuilder& eb, Location el) { eb.create<scf::YieldOp>(el, ValueRange{c[0], c[1]}); });
        Value size = lb.create<arith::AddIOp>(ll, extractAt(lb, ll, c[2], g),
                                              intConstant(lb, ll, i64, 1));
        Value sizes = lb.create<tensor::InsertOp>(ll, size, c[2], g);
        Value inverse = lb.create<tensor::InsertOp>(
            ll, lb.create<arith::IndexCastOp>(ll, i64, g), c[3], r);
        lb.create<scf::YieldOp>(
            ll, ValueRange{placed.getResult(0), placed.getResult(1), sizes, inverse, seen});
      });
  Value y = filling.getResult(0), first = filling.getResult(1), sizes = filling.getResult(2),
        inverse = filling.getResult(3);

  if (!sorted) {
    // Groups by first occurrence: ascending first indices, and each group's new place.
    Value keys = reshape(b, loc, first, {b.getIndexAttr(1), OpFoldResult(groups)});
    Value by_first = ascendingOrder(b, loc, keys, groups);
    Value place0 = emptyTensor(b, loc, {OpFoldResult(groups)}, i64);
    auto placing = b.create<scf::ForOp>(
        loc, zero, groups, one, ValueRange{place0},
        [&](OpBuilder& lb, Location ll, Value j, ValueRange c) {
          Value g = toIndex(lb, ll, extractAt(lb, ll, by_first, {zero, j}));
          lb.create<scf::YieldOp>(
              ll, ValueRange{lb.create<tensor::InsertOp>(
                      ll, lb.create<arith::IndexCastOp>(ll, i64, j), c[0], g)});
        });
    Value place = placing.getResult(0);
    // v[j] = old[by_first[j]] over dim 0 of a [groups] or [groups, width] tensor.
    auto regroup = [&](Value old) {
      auto type = cast<RankedTensorType>(old.getType());
      return generate(b, loc, emptyTensor(b, loc, dimsOf(b, loc, old), type.getElementType()), {},
                      {}, [&](OpBuilder& gb, Location gl, ValueRange) -> Value {
                        SmallVector<Value> at;
                        for (int64_t d = 0; d < type.getRank(); ++d)
                          at.push_back(gb.create<linalg::IndexOp>(gl, d));
                        at[0] = toIndex(gb, gl, extractAt(gb, gl, by_first, {zero, at[0]}));
                        return extractAt(gb, gl, old, at);
                      });
    };
    y = regroup(y);
    first = regroup(first);
    sizes = regroup(sizes);
    Value old_inverse = inverse;
    inverse = generate(b, loc, emptyTensor(b, loc, {OpFoldResult(count)}, i64), {}, {},
                       [&](OpBuilder& gb, Location gl, ValueRange) -> Value {
                         Value i = gb.create<linalg::IndexOp>(gl, 0);
                         Value g = toIndex(gb, gl, extractAt(gb, gl, old_inverse, i));
                         return extractAt(gb, gl, place, g);
                       });
  }
  if (!axis) {
    y = reshape(b, loc, y, {OpFoldResult(groups)});
  } else {
    SmallVector<OpFoldResult> yd = {OpFoldResult(groups)};
    yd.append(slice_dims.begin(), slice_dims.end());
    SmallVector<int64_t> back(rank);
    for (int64_t d = 0; d < rank; ++d) back[perm[d]] = d;
    y = transpose(b, loc, reshape(b, loc, y, yd), back);
  }
  n.setOutput(0, y);
  n.setOutput(1, first);
  n.setOutput(2, inverse);
  n.setOutput(3, sizes);
  return success();
}

void addSelectOps(Registry& r) {
  r["Unique"] = {convertUnique, {"axis", "sorted"}};
  r["NonZero"] = {convertNonZero, {}};
  r["Compress"] = {convertCompress, {"axis"}};
  r["MaxUnpool"] = {convertMaxUnpool, {"kernel_shape", "pads", "strides"}};
  r["ReverseSequence"] = {convertReverseSequence, {"batch_axis", "time_axis"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
