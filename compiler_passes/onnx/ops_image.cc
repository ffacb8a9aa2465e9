// Image operators: GridSample (opset 16: 4-D input, 2-D grid), sampling an image at computed
// coordinates, and NonMaxSuppression, the box selection of detection models.
#include <string>

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

enum class Padding { kZeros, kBorder, kReflection };

// One spatial axis of the input as the sampling sees it: its size (f64 and index) and how a
// coordinate outside it is treated.
struct Axis {
  Value size_f, last;  // size as f64, size - 1 as index
  Padding padding;
  bool align_corners;
};

// c clamped to [lo, hi] (a NaN becomes lo).
Value clampF(OpBuilder& b, Location loc, Value v, Value lo, Value hi) {
  return b.create<arith::MinNumFOp>(loc, b.create<arith::MaxNumFOp>(loc, v, lo), hi);
}

// A coordinate folded back into the axis by reflection at its borders (the pixel centers with
// align_corners, the outer edges otherwise), then clamped, as PyTorch's grid_sample does.
Value reflect(OpBuilder& b, Location loc, Value x, const Axis& a) {
  Type f64 = b.getF64Type();
  auto c = [&](double v) { return scalarConstant(b, loc, f64, v); };
  Value last_f = b.create<arith::SubFOp>(loc, a.size_f, c(1));
  // The reflected range [lo, lo + span].
  Value lo = a.align_corners ? c(0) : c(-0.5);
  Value span = a.align_corners ? last_f : a.size_f;
  Value d = b.create<math::AbsFOp>(loc, b.create<arith::SubFOp>(loc, x, lo));
  Value flips = b.create<math::FloorOp>(loc, b.create<arith::DivFOp>(loc, d, span));
  Value extra = b.create<arith::SubFOp>(loc, d, b.create<arith::MulFOp>(loc, flips, span));
  Value odd = b.create<arith::CmpFOp>(
      loc, arith::CmpFPredicate::ONE,
      b.create<arith::SubFOp>(
          loc, flips,
          b.create<arith::MulFOp>(
              loc, c(2),
              b.create<math::FloorOp>(loc, b.create<arith::MulFOp>(loc, flips, c(0.5))))),
      c(0));
  Value r = b.create<arith::SelectOp>(loc, odd, b.create<arith::SubFOp>(loc, span, extra), extra);
  r = b.create<arith::AddFOp>(loc, r, lo);
  // A one-pixel axis with align_corners has nothing to reflect over: everything is pixel 0.
  Value empty_span = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, span, c(0));
  r = b.create<arith::SelectOp>(loc, empty_span, c(0), r);
  return clampF(b, loc, r, c(0), last_f);
}

// The padding mode applied to a coordinate: border clamps, reflection reflects, zeros keeps it.
Value pad(OpBuilder& b, Location loc, Value x, const Axis& a) {
  Type f64 = b.getF64Type();
  if (a.padding == Padding::kBorder)
    return clampF(b, loc, x, scalarConstant(b, loc, f64, 0),
                  b.create<arith::SubFOp>(loc, a.size_f, scalarConstant(b, loc, f64, 1)));
  if (a.padding == Padding::kReflection) return reflect(b, loc, x, a);
  return x;
}

// An integral coordinate (f64) as an index inside the axis, and whether it was inside.
std::pair<Value, Value> tapIndex(OpBuilder& b, Location loc, Value x, const Axis& a) {
  Type f64 = b.getF64Type();
  Value last_f = b.create<arith::SubFOp>(loc, a.size_f, scalarConstant(b, loc, f64, 1));
  Value inside = b.create<arith::AndIOp>(
      loc,
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGE, x, scalarConstant(b, loc, f64, 0)),
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, x, last_f));
  // Clamped as a float first, so the conversion is defined whatever x was (NaN included).
  Value i = b.create<arith::IndexCastOp>(
      loc, b.getIndexType(),
      b.create<arith::FPToSIOp>(loc, b.getI64Type(),
                                clampF(b, loc, x, scalarConstant(b, loc, f64, 0), last_f)));
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  i = b.create<arith::MaxSIOp>(loc, b.create<arith::MinSIOp>(loc, i, a.last), zero);
  return {i, inside};
}

// GridSample: y[n, c, h, w] = x[n, c] sampled at grid[n, h, w] = (gx, gy) in [-1, 1] (the corner
// pixels' centers with align_corners, their outer edges otherwise), by nearest (ties to even),
// bilinear or bicubic (Keys, a = -0.75) interpolation, with zeros, border or reflection padding
// outside; PyTorch's grid_sample semantics, which ONNX's are. Computed in f64, one linalg.generic
// over the output reading the grid and the taps.
LogicalResult convertGridSample(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.unsupported("GridSample of a non-float input");
  if (n.rank(0) != 4 || n.rank(1) != 4)
    return n.error("X must be [N, C, H, W] and grid [N, H_out, W_out, 2]");
  if (!isFloat(n.elementType(1))) return n.error("grid must be float");
  const std::string mode = n.s("mode", "bilinear"), padding = n.s("padding_mode", "zeros");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return n.unsupported("mode '" + mode + "'");
  Padding pad_mode;
  if (padding == "zeros") {
    pad_mode = Padding::kZeros;
  } else if (padding == "border") {
    pad_mode = Padding::kBorder;
  } else if (padding == "reflection") {
    pad_mode = Padding::kReflection;
  } else {
    return n.unsupported("padding_mode '" + padding + "'");
  }
  const bool align = n.i("align_corners", 0) != 0;
  Value x = n.value(0), grid = n.value(1);
  SmallVector<OpFoldResult> xd = dimsOf(b, loc, x), gd = dimsOf(b, loc, grid);
  if (auto c = constantIndex(gd[3]); c && *c != 2)
    return n.error("grid's last dim must be 2 (x, y), got " + std::to_string(*c));
  if (!constantIndex(gd[3])) {
    Value two = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, indexValue(b, loc, gd[3]),
                                        b.create<arith::ConstantIndexOp>(loc, 2));
    runtimeCheck(b, loc, two, "GridSample: grid's last dim must be 2 (x, y)");
  }
  if (failed(checkSameDim(n, xd[0], gd[0], "X's and grid's batch"))) return failure();
  // An empty input has nothing to sample (zeros padding would make it all zeros, the others
  // have no border to clamp to): refused when the output is not empty too.
  Value zero_i = b.create<arith::ConstantIndexOp>(loc, 0);
  auto isZero = [&](OpFoldResult v) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, indexValue(b, loc, v), zero_i);
  };
  Value ok = b.create<arith::OrIOp>(
      loc,
      b.create<arith::AndIOp>(
          loc,
          b.create<arith::XOrIOp>(loc, isZero(xd[2]), b.create<arith::ConstantIntOp>(loc, 1, 1)),
          b.create<arith::XOrIOp>(loc, isZero(xd[3]), b.create<arith::ConstantIntOp>(loc, 1, 1))),
      b.create<arith::OrIOp>(
          loc, isZero(gd[1]),
          b.create<arith::OrIOp>(loc, isZero(gd[2]),
                                 b.create<arith::OrIOp>(loc, isZero(xd[0]), isZero(xd[1])))));
  runtimeCheck(b, loc, ok, "GridSample: an empty image cannot be sampled");

  Type f64 = b.getF64Type();
  auto axisOf = [&](OpFoldResult size) {
    Value s = indexValue(b, loc, size);
    Axis a;
    a.size_f =
        b.create<arith::SIToFPOp>(loc, f64, b.create<arith::IndexCastOp>(loc, b.getI64Type(), s));
    a.last = b.create<arith::SubIOp>(loc, s, b.create<arith::ConstantIndexOp>(loc, 1));
    a.padding = pad_mode;
    a.align_corners = align;
    return a;
  };
  const Axis ax = axisOf(xd[3]), ay = axisOf(xd[2]);
  MLIRContext* ctx = b.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto gridMap = [&](int64_t k) {
    return AffineMap::get(4, 0, {d(0), d(2), d(3), getAffineConstantExpr(k, ctx)}, ctx);
  };
  Value y = generate(
      b, loc, emptyTensor(b, loc, {xd[0], xd[1], gd[1], gd[2]}, t), {grid, grid},
      {gridMap(0), gridMap(1)}, [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
        auto c = [&](double v) { return scalarConstant(nb, nl, f64, v); };
        Value ni = nb.create<linalg::IndexOp>(nl, 0), ci = nb.create<linalg::IndexOp>(nl, 1);
        // Unnormalized coordinates.
        auto unnormalize = [&](Value g, const Axis& axis) -> Value {
          g = convertScalar(nb, nl, g, f64);
          Value g1 = nb.create<arith::AddFOp>(nl, g, c(1));
          if (align)
            return nb.create<arith::MulFOp>(nl, nb.create<arith::MulFOp>(nl, g1, c(0.5)),
                                            nb.create<arith::SubFOp>(nl, axis.size_f, c(1)));
          return nb.create<arith::MulFOp>(
              nl, nb.create<arith::SubFOp>(nl, nb.create<arith::MulFOp>(nl, g1, axis.size_f), c(1)),
              c(0.5));
        };
        Value gx = unnormalize(a[0], ax), gy = unnormalize(a[1], ay);
        // The value at integral coordinates (px, py), zero outside with zeros padding.
        auto at = [&](Value px, Value py) -> Value {
          auto [ix, in_x] = tapIndex(nb, nl, px, ax);
          auto [iy, in_y] = tapIndex(nb, nl, py, ay);
          Value v = convertScalar(
              nb, nl, nb.create<tensor::ExtractOp>(nl, x, ValueRange{ni, ci, iy, ix}), f64);
          if (pad_mode != Padding::kZeros) return v;
          return nb.create<arith::SelectOp>(nl, nb.create<arith::AndIOp>(nl, in_x, in_y), v, c(0));
        };
        Value result;
        if (mode == "nearest") {
          result = at(nb.create<math::RoundEvenOp>(nl, pad(nb, nl, gx, ax)),
                      nb.create<math::RoundEvenOp>(nl, pad(nb, nl, gy, ay)));
        } else if (mode == "bilinear") {
          Value px = pad(nb, nl, gx, ax), py = pad(nb, nl, gy, ay);
          Value x0 = nb.create<math::FloorOp>(nl, px), y0 = nb.create<math::FloorOp>(nl, py);
          Value fx = nb.create<arith::SubFOp>(nl, px, x0),
                fy = nb.create<arith::SubFOp>(nl, py, y0);
          Value x1 = nb.create<arith::AddFOp>(nl, x0, c(1)),
                y1 = nb.create<arith::AddFOp>(nl, y0, c(1));
          Value wx0 = nb.create<arith::SubFOp>(nl, c(1), fx),
                wy0 = nb.create<arith::SubFOp>(nl, c(1), fy);
          auto term = [&](Value px_, Value py_, Value wx, Value wy) -> Value {
            return nb.create<arith::MulFOp>(nl, at(px_, py_), nb.create<arith::MulFOp>(nl, wx, wy));
          };
          result = nb.create<arith::AddFOp>(
              nl, nb.create<arith::AddFOp>(nl, term(x0, y0, wx0, wy0), term(x1, y0, fx, wy0)),
              nb.create<arith::AddFOp>(nl, term(x0, y1, wx0, fy), term(x1, y1, fx, fy)));
        } else {
          // Bicubic: 4x4 taps around the unpadded coordinate, each tap padded on its own.
          Value x0 = nb.create<math::FloorOp>(nl, gx), y0 = nb.create<math::FloorOp>(nl, gy);
          SmallVector<Value, 4> wx =
              cubicWeights(nb, nl, nb.create<arith::SubFOp>(nl, gx, x0), -0.75);
          SmallVector<Value, 4> wy =
              cubicWeights(nb, nl, nb.create<arith::SubFOp>(nl, gy, y0), -0.75);
          result = c(0);
          for (int64_t j = 0; j < 4; ++j) {
            Value py =
                pad(nb, nl, nb.create<arith::AddFOp>(nl, y0, c(static_cast<double>(j - 1))), ay);
            Value row = c(0);
            for (int64_t i = 0; i < 4; ++i) {
              Value px =
                  pad(nb, nl, nb.create<arith::AddFOp>(nl, x0, c(static_cast<double>(i - 1))), ax);
              row = nb.create<arith::AddFOp>(nl, row,
                                             nb.create<arith::MulFOp>(nl, at(px, py), wx[i]));
            }
            result = nb.create<arith::AddFOp>(nl, result, nb.create<arith::MulFOp>(nl, row, wy[j]));
          }
        }
        return convertScalar(nb, nl, result, t);
      });
  n.setOutput(0, y);
  return success();
}

// A scalar input (rank 0 or one element) read where the module runs, converted to `to`; the
// value `fallback` when the input is absent.
Value scalarInput(NodeContext& n, size_t i, Type to, Value fallback) {
  if (!n.hasInput(i)) return fallback;
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Value v = n.value(i);
  SmallVector<Value> at(n.rank(i), b.create<arith::ConstantIndexOp>(loc, 0));
  return convertScalar(b, loc, b.create<tensor::ExtractOp>(loc, v, at), to);
}

// Whether box `a` suppresses box `c` (their IoU exceeds the threshold), in the boxes' element
// type as ONNX Runtime computes it: corners in any order (or center, size with
// center_point_box), an empty box or intersection never suppresses.
Value suppresses(OpBuilder& b, Location loc, ArrayRef<Value> a, ArrayRef<Value> c, bool center,
                 Value threshold) {
  Type t = a[0].getType();
  auto k = [&](double v) { return scalarConstant(b, loc, t, v); };
  // [lo_y, lo_x, hi_y, hi_x] of a box (for center format [x, y, w, h], as ONNX defines it).
  auto corners = [&](ArrayRef<Value> box) -> SmallVector<Value, 4> {
    if (center) {
      Value hw = b.create<arith::MulFOp>(loc, box[2], k(0.5));
      Value hh = b.create<arith::MulFOp>(loc, box[3], k(0.5));
      return {b.create<arith::SubFOp>(loc, box[1], hh), b.create<arith::SubFOp>(loc, box[0], hw),
              b.create<arith::AddFOp>(loc, box[1], hh), b.create<arith::AddFOp>(loc, box[0], hw)};
    }
    return {b.create<arith::MinimumFOp>(loc, box[0], box[2]),
            b.create<arith::MinimumFOp>(loc, box[1], box[3]),
            b.create<arith::MaximumFOp>(loc, box[0], box[2]),
            b.create<arith::MaximumFOp>(loc, box[1], box[3])};
  };
  SmallVector<Value, 4> p = corners(a), q = corners(c);
  auto area = [&](ArrayRef<Value> r) -> Value {
    return b.create<arith::MulFOp>(loc, b.create<arith::SubFOp>(loc, r[2], r[0]),
                                   b.create<arith::SubFOp>(loc, r[3], r[1]));
  };
  Value iy = b.create<arith::MaximumFOp>(
      loc,
      b.create<arith::SubFOp>(loc, b.create<arith::MinimumFOp>(loc, p[2], q[2]),
                              b.create<arith::MaximumFOp>(loc, p[0], q[0])),
      k(0));
  Value ix = b.create<arith::MaximumFOp>(
      loc,
      b.create<arith::SubFOp>(loc, b.create<arith::MinimumFOp>(loc, p[3], q[3]),
                              b.create<arith::MaximumFOp>(loc, p[1], q[1])),
      k(0));
  Value inter = b.create<arith::MulFOp>(loc, iy, ix);
  Value area_p = area(p), area_q = area(q);
  Value uni = b.create<arith::SubFOp>(loc, b.create<arith::AddFOp>(loc, area_p, area_q), inter);
  auto positive = [&](Value v) {
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, v, k(0));
  };
  Value valid =
      b.create<arith::AndIOp>(loc, b.create<arith::AndIOp>(loc, positive(inter), positive(uni)),
                              b.create<arith::AndIOp>(loc, positive(area_p), positive(area_q)));
  Value iou = b.create<arith::DivFOp>(loc, inter, b.create<arith::SelectOp>(loc, valid, uni, k(1)));
  return b.create<arith::AndIOp>(loc, valid,
                                 b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, iou,
                                                         convertScalar(b, loc, threshold, t)));
}

// NonMaxSuppression: per batch and class, the boxes by descending score (equal scores by lower
// index) above score_threshold, each kept unless a kept box of the same class overlaps it by
// more than iou_threshold, at most max_output_boxes_per_class of them; selected_indices
// [num_selected, 3] lists (batch, class, box) by batch, class, then selection order. The order
// comes from ral_topk over each class's scores; the greedy selection is a loop nest into an
// output sized for the most boxes that can be kept, returned as its first num_selected rows.
LogicalResult convertNonMaxSuppression(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (!n.hostReadsTensors())
    return n.unsupported("NonMaxSuppression on this device (its greedy selection runs on the "
                         "host, which cannot work in device memory)");
  Type t = n.elementType(0);
  if (!t.isF32() && !t.isF64()) return n.unsupported("NonMaxSuppression of non-f32/f64 boxes");
  if (n.elementType(1) != t) return n.error("boxes and scores must have one element type");
  if (n.rank(0) != 3 || n.rank(1) != 3)
    return n.error("boxes must be [batches, boxes, 4] and scores [batches, classes, boxes]");
  for (size_t i = 2; i < 5; ++i)
    if (n.hasInput(i) && !hasOneElement(n.type(i)))
      return n.error("max_output_boxes_per_class, iou_threshold and score_threshold are scalars");
  const bool center = n.i("center_point_box", 0) != 0;
  Value boxes = n.value(0), scores = n.value(1);
  SmallVector<OpFoldResult> bd = dimsOf(b, loc, boxes), sd = dimsOf(b, loc, scores);
  if (auto c = constantIndex(bd[2]); c && *c != 4)
    return n.error("boxes' last dim must be 4, got " + std::to_string(*c));
  if (!constantIndex(bd[2]))
    runtimeCheck(b, loc,
                 b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, indexValue(b, loc, bd[2]),
                                         b.create<arith::ConstantIndexOp>(loc, 4)),
                 "NonMaxSuppression: boxes' last dim must be 4");
  if (failed(checkSameDim(n, bd[0], sd[0], "boxes' and scores' batches")) ||
      failed(checkSameDim(n, bd[1], sd[2], "boxes' and scores' box counts")))
    return failure();
  Type i64 = b.getI64Type(), index = b.getIndexType();
  Value max_out = scalarInput(n, 2, i64, intConstant(b, loc, i64, 0));
  Value iou_threshold = scalarInput(n, 3, t, scalarConstant(b, loc, t, 0));
  Value score_threshold = n.hasInput(4) ? scalarInput(n, 4, t, nullptr) : Value();
  Value in_range =
      b.create<arith::AndIOp>(loc,
                              b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGE, iou_threshold,
                                                      scalarConstant(b, loc, t, 0)),
                              b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, iou_threshold,
                                                      scalarConstant(b, loc, t, 1)));
  runtimeCheck(b, loc, in_range, "NonMaxSuppression: iou_threshold must be in [0, 1]");
  // Negative counts keep nothing, as zero does.
  max_out = b.create<arith::MaxSIOp>(loc, max_out, intConstant(b, loc, i64, 0));

  Value batches = indexValue(b, loc, sd[0]), classes = indexValue(b, loc, sd[1]),
        count = indexValue(b, loc, sd[2]);
  // Each class's boxes by descending score.
  Value k64 = b.create<arith::IndexCastOp>(loc, i64, count);
  Value order_values = emptyTensor(b, loc, sd, t);
  Value order_indices = emptyTensor(b, loc, sd, i64);
  auto topk = b.create<TopKOp>(loc, TypeRange{order_values.getType(), order_indices.getType()},
                               scores, k64, order_values, order_indices, false);
  Value sorted = topk.getResult(0), order = topk.getResult(1);

  // Room for min(boxes, max_out) per batch and class.
  Value per_class =
      b.create<arith::MinSIOp>(loc, count, b.create<arith::IndexCastOp>(loc, index, max_out));
  Value rows = indexValue(b, loc, product(b, loc, {sd[0], sd[1], OpFoldResult(per_class)}));
  Value out0 = emptyTensor(b, loc, {rows, b.getIndexAttr(3)}, i64);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0),
        one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto extract = [&](OpBuilder& lb, Location ll, Value v, ValueRange at) -> Value {
    return lb.create<tensor::ExtractOp>(ll, v, at);
  };
  auto boxOf = [&](OpBuilder& lb, Location ll, Value bi, Value box) {
    SmallVector<Value, 4> r;
    for (int64_t k = 0; k < 4; ++k)
      r.push_back(extract(lb, ll, boxes, {bi, box, lb.create<arith::ConstantIndexOp>(ll, k)}));
    return r;
  };
  auto batch_loop = b.create<scf::ForOp>(
      loc, zero, batches, one, ValueRange{out0, zero},
      [&](OpBuilder& b1, Location l1, Value bi, ValueRange c1) {
        auto class_loop = b1.create<scf::ForOp>(
            l1, zero, classes, one, c1, [&](OpBuilder& b2, Location l2, Value ci, ValueRange c2) {
              Value first = c2[1];  // this class's first output row
              auto box_loop = b2.create<scf::ForOp>(
                  l2, zero, count, one, c2,
                  [&](OpBuilder& b3, Location l3, Value i, ValueRange c3) {
                    Value out = c3[0], used = c3[1];
                    Value kept = b3.create<arith::SubIOp>(l3, used, first);
                    Value room =
                        b3.create<arith::CmpIOp>(l3, arith::CmpIPredicate::slt, kept, per_class);
                    Value score = extract(b3, l3, sorted, {bi, ci, i});
                    Value active = room;
                    if (score_threshold)
                      active = b3.create<arith::AndIOp>(
                          l3, active,
                          b3.create<arith::CmpFOp>(l3, arith::CmpFPredicate::OGT, score,
                                                   score_threshold));
                    Value box = b3.create<arith::IndexCastOp>(l3, index,
                                                              extract(b3, l3, order, {bi, ci, i}));
                    auto consider = b3.create<scf::IfOp>(
                        l3, active,
                        [&](OpBuilder& b4, Location l4) {
                          SmallVector<Value, 4> cand = boxOf(b4, l4, bi, box);
                          // Any kept box of this class that suppresses it.
                          auto scan = b4.create<scf::ForOp>(
                              l4, first, used, one,
                              ValueRange{b4.create<arith::ConstantIntOp>(l4, 0, 1)},
                              [&](OpBuilder& b5, Location l5, Value j, ValueRange c5) {
                                Value other = b5.create<arith::IndexCastOp>(
                                    l5, index,
                                    extract(b5, l5, out,
                                            {j, b5.create<arith::ConstantIndexOp>(l5, 2)}));
                                Value hit = suppresses(b5, l5, boxOf(b5, l5, bi, other), cand,
                                                       center, iou_threshold);
                                b5.create<scf::YieldOp>(
                                    l5, ValueRange{b5.create<arith::OrIOp>(l5, c5[0], hit)});
                              });
                          Value keep = b4.create<arith::XOrIOp>(
                              l4, scan.getResult(0), b4.create<arith::ConstantIntOp>(l4, 1, 1));
                          auto add = b4.create<scf::IfOp>(
                              l4, keep,
                              [&](OpBuilder& b6, Location l6) {
                                Value row = out;
                                Value fields[3] = {bi, ci, box};
                                for (int64_t f = 0; f < 3; ++f)
                                  row = b6.create<tensor::InsertOp>(
                                      l6, b6.create<arith::IndexCastOp>(l6, i64, fields[f]), row,
                                      ValueRange{used, b6.create<arith::ConstantIndexOp>(l6, f)});
                                b6.create<scf::YieldOp>(
                                    l6, ValueRange{row, b6.create<arith::AddIOp>(l6, used, one)});
                              },
                              [&](OpBuilder& b6, Location l6) {
                                b6.create<scf::YieldOp>(l6, ValueRange{out, used});
                              });
                          b4.create<scf::YieldOp>(l4, add.getResults());
                        },
                        [&](OpBuilder& b4, Location l4) {
                          b4.create<scf::YieldOp>(l4, ValueRange{out, used});
                        });
                    b3.create<scf::YieldOp>(l3, consider.getResults());
                  });
              b2.create<scf::YieldOp>(l2, box_loop.getResults());
            });
        b1.create<scf::YieldOp>(l1, class_loop.getResults());
      });
  Value out = batch_loop.getResult(0), selected = batch_loop.getResult(1);
  auto result_type = RankedTensorType::get({ShapedType::kDynamic, 3}, i64);
  OpFoldResult z = b.getIndexAttr(0), s1 = b.getIndexAttr(1);
  Value y = b.create<tensor::ExtractSliceOp>(loc, result_type, out, ArrayRef<OpFoldResult>{z, z},
                                             ArrayRef<OpFoldResult>{selected, b.getIndexAttr(3)},
                                             ArrayRef<OpFoldResult>{s1, s1});
  n.setOutput(0, y);
  return success();
}

}  // namespace

void addImageOps(Registry& r) {
  r["GridSample"] = {convertGridSample, {"align_corners", "mode", "padding_mode"}};
  r["NonMaxSuppression"] = {convertNonMaxSuppression, {"center_point_box"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
