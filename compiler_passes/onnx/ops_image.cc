// Sampling images at computed coordinates: GridSample (opset 16: 4-D input, 2-D grid).
#include <string>

#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/node_context.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
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
          b.create<arith::MulFOp>(loc, c(2),
                                  b.create<math::FloorOp>(loc, b.create<arith::MulFOp>(
                                                                   loc, flips, c(0.5))))),
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
      loc, b.create<arith::AndIOp>(
               loc, b.create<arith::XOrIOp>(loc, isZero(xd[2]), b.create<arith::ConstantIntOp>(loc, 1, 1)),
               b.create<arith::XOrIOp>(loc, isZero(xd[3]), b.create<arith::ConstantIntOp>(loc, 1, 1))),
      b.create<arith::OrIOp>(loc, isZero(gd[1]),
                             b.create<arith::OrIOp>(loc, isZero(gd[2]),
                                                    b.create<arith::OrIOp>(loc, isZero(xd[0]),
                                                                           isZero(xd[1])))));
  runtimeCheck(b, loc, ok, "GridSample: an empty image cannot be sampled");

  Type f64 = b.getF64Type();
  auto axisOf = [&](OpFoldResult size) {
    Value s = indexValue(b, loc, size);
    Axis a;
    a.size_f = b.create<arith::SIToFPOp>(loc, f64, b.create<arith::IndexCastOp>(loc, b.getI64Type(), s));
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
            return nb.create<arith::MulFOp>(
                nl, nb.create<arith::MulFOp>(nl, g1, c(0.5)),
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
          Value fx = nb.create<arith::SubFOp>(nl, px, x0), fy = nb.create<arith::SubFOp>(nl, py, y0);
          Value x1 = nb.create<arith::AddFOp>(nl, x0, c(1)), y1 = nb.create<arith::AddFOp>(nl, y0, c(1));
          Value wx0 = nb.create<arith::SubFOp>(nl, c(1), fx), wy0 = nb.create<arith::SubFOp>(nl, c(1), fy);
          auto term = [&](Value px_, Value py_, Value wx, Value wy) -> Value {
            return nb.create<arith::MulFOp>(nl, at(px_, py_), nb.create<arith::MulFOp>(nl, wx, wy));
          };
          result = nb.create<arith::AddFOp>(
              nl, nb.create<arith::AddFOp>(nl, term(x0, y0, wx0, wy0), term(x1, y0, fx, wy0)),
              nb.create<arith::AddFOp>(nl, term(x0, y1, wx0, fy), term(x1, y1, fx, fy)));
        } else {
          // Bicubic: 4x4 taps around the unpadded coordinate, each tap padded on its own.
          Value x0 = nb.create<math::FloorOp>(nl, gx), y0 = nb.create<math::FloorOp>(nl, gy);
          SmallVector<Value, 4> wx = cubicWeights(nb, nl, nb.create<arith::SubFOp>(nl, gx, x0), -0.75);
          SmallVector<Value, 4> wy = cubicWeights(nb, nl, nb.create<arith::SubFOp>(nl, gy, y0), -0.75);
          result = c(0);
          for (int64_t j = 0; j < 4; ++j) {
            Value py = pad(nb, nl, nb.create<arith::AddFOp>(nl, y0, c(static_cast<double>(j - 1))), ay);
            Value row = c(0);
            for (int64_t i = 0; i < 4; ++i) {
              Value px =
                  pad(nb, nl, nb.create<arith::AddFOp>(nl, x0, c(static_cast<double>(i - 1))), ax);
              row = nb.create<arith::AddFOp>(nl, row, nb.create<arith::MulFOp>(nl, at(px, py), wx[i]));
            }
            result = nb.create<arith::AddFOp>(nl, result, nb.create<arith::MulFOp>(nl, row, wy[j]));
          }
        }
        return convertScalar(nb, nl, result, t);
      });
  n.setOutput(0, y);
  return success();
}

}  // namespace

void addImageOps(Registry& r) {
  r["GridSample"] = {convertGridSample, {"align_corners", "mode", "padding_mode"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
