// Resize (opset 10+) and Upsample: nearest, (n-)linear and cubic interpolation, every coordinate
// transformation mode.
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

// floor(size * scale) (f64 operands) as an index, checked when the module runs to be a size: a
// NaN, infinite or too large product would make the conversion undefined.
OpFoldResult scaledSize(OpBuilder& b, Location loc, Value size, Value scale) {
  Type f64 = b.getF64Type();
  Value f = b.create<math::FloorOp>(loc, b.create<arith::MulFOp>(loc, size, scale));
  Value fits = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, f,
                                       scalarConstant(b, loc, f64, static_cast<double>(kMaxSize)));
  runtimeCheck(b, loc, fits, "Resize: a scale makes a dim NaN, infinite or larger than 2^48");
  f = b.create<arith::SelectOp>(loc, fits, f, scalarConstant(b, loc, f64, 0));
  return fold(b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                           b.create<arith::FPToSIOp>(loc, b.getI64Type(), f)));
}

// Resize (opset 10+) and Upsample: nearest, (n-)linear and cubic interpolation, every coordinate
// transformation but tf_crop_and_resize. One linalg.generic over the output: per resized dim the
// source coordinate (in f64), then one read (nearest), 2^dims reads blended (linear) or 4^dims
// (cubic: Keys' kernel with cubic_coeff_a, taps beyond the edges reading the edge, or with
// exclude_outside weighted 0 and the rest renormalized, as ONNX's reference does).
LogicalResult convertResize(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const bool upsample = n.node().op_type() == "Upsample";
  const int64_t rank = n.rank(0);
  Type t = n.elementType(0);
  const std::string mode = n.s("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return n.unsupported("mode '" + mode + "'");
  if (mode != "nearest" && !isFloat(t)) return n.unsupported(mode + " resize of integers");
  const std::string coord = n.s("coordinate_transformation_mode",
                                upsample || n.opset() < 11 ? "asymmetric" : "half_pixel");
  if (coord != "half_pixel" && coord != "pytorch_half_pixel" && coord != "align_corners" &&
      coord != "asymmetric" && coord != "tf_half_pixel_for_nn")
    return n.unsupported("coordinate_transformation_mode '" + coord + "'");
  const std::string nearest = n.s("nearest_mode", n.opset() < 11 ? "floor" : "round_prefer_floor");
  if (nearest != "round_prefer_floor" && nearest != "round_prefer_ceil" && nearest != "floor" &&
      nearest != "ceil")
    return n.unsupported("nearest_mode '" + nearest + "'");
  const bool cubic = mode == "cubic", exclude_outside = n.i("exclude_outside", 0) != 0;
  if (exclude_outside && !cubic) return n.unsupported("exclude_outside=1 with mode '" + mode + "'");
  const double coeff_a = n.f("cubic_coeff_a", -0.75f);
  // Scales (floats, constants) or sizes (integers, may be known only at run time).
  SmallVector<double> scales;
  Value runtime_scales;  // scales known only when the module runs
  std::optional<SmallVector<OpFoldResult>> sizes;
  if (upsample && n.has("scales")) {
    const auto* a = n.attr("scales");
    for (float s : a->floats()) scales.push_back(s);
  } else {
    const size_t scales_input = upsample || n.opset() < 11 ? 1 : 2;
    // An empty scales input means "use sizes"; one of unknown size is not empty.
    if (n.hasInput(scales_input) &&
        (!n.type(scales_input).hasStaticShape() || n.type(scales_input).getNumElements() != 0)) {
      DenseElementsAttr data = n.input(scales_input).data;
      if (data) {
        scales = floatValues(data);
      } else {
        if (!isFloat(n.elementType(scales_input)) || n.rank(scales_input) != 1 ||
            n.type(scales_input).isDynamicDim(0))
          return n.unsupported("scales that are not a static float vector");
        if (n.type(scales_input).getDimSize(0) != rank)
          return n.error("scales or sizes must have one entry per dim");
        runtime_scales = n.value(scales_input);
        scales.assign(n.type(scales_input).getDimSize(0), 0.0);
      }
    } else if (!upsample && n.opset() >= 11 && n.hasInput(3)) {
      sizes = n.shapeElems(3);
      if (!sizes) return n.unsupported("sizes that are not a small integer vector");
    } else {
      return n.error("needs scales or sizes");
    }
  }
  if (sizes ? static_cast<int64_t>(sizes->size()) != rank
            : static_cast<int64_t>(scales.size()) != rank)
    return n.error("scales or sizes must have one entry per dim");
  Value x = n.value(0);
  SmallVector<OpFoldResult> in = dimsOf(b, loc, x), out;
  SmallVector<Value> in_f, out_f, scale_f;
  SmallVector<bool> resized;
  Type f64 = b.getF64Type();
  auto toF64 = [&](OpFoldResult v) -> Value {
    Value i = b.create<arith::IndexCastOp>(loc, b.getI64Type(), idx(b, loc, v));
    return b.create<arith::SIToFPOp>(loc, f64, i);
  };
  for (int64_t d = 0; d < rank; ++d) {
    OpFoldResult o;
    Value s;
    if (sizes) {
      o = (*sizes)[d];
      if (auto c = constantIndex(o); c && *c < 0) return n.error("negative size");
      s = b.create<arith::DivFOp>(loc, toF64(o), toF64(in[d]));
    } else if (runtime_scales) {
      Value at = b.create<arith::ConstantIndexOp>(loc, d);
      s = convertScalar(b, loc, b.create<tensor::ExtractOp>(loc, runtime_scales, ValueRange{at}),
                        f64);
      Value positive = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, s,
                                               scalarConstant(b, loc, f64, 0));
      runtimeCheck(b, loc, positive, "Resize: scales must be positive");
      o = scaledSize(b, loc, toF64(in[d]), s);
    } else {
      // NaN fails the first test.
      if (!(scales[d] > 0) || std::isinf(scales[d]))
        return n.error("scale " + std::to_string(scales[d]) + " of dim " + std::to_string(d) +
                       " must be positive and finite");
      if (auto c = constantIndex(in[d])) {
        const CheckedInt size =
            CheckedInt::fromDouble(std::floor(static_cast<double>(*c) * scales[d]));
        if (!size.isSize())
          return n.error("scale " + std::to_string(scales[d]) + " makes dim " + std::to_string(d) +
                         " larger than 2^48");
        o = b.getIndexAttr(size.value());
      } else {
        o = scaledSize(b, loc, toF64(in[d]), scalarConstant(b, loc, f64, scales[d]));
      }
      s = scalarConstant(b, loc, f64, scales[d]);
    }
    const bool same = sizes ? sameDim(o, in[d]) : !runtime_scales && scales[d] == 1.0;
    resized.push_back(!same);
    out.push_back(same ? in[d] : o);
    in_f.push_back(toF64(in[d]));
    // ONNX's length_resized: the requested size, or with scales length * scale (not floored).
    out_f.push_back(sizes ? toF64(out.back())
                          : b.create<arith::MulFOp>(loc, in_f.back(), s).getResult());
    scale_f.push_back(s);
  }
  SmallVector<Value> in_last;
  for (int64_t d = 0; d < rank; ++d)
    in_last.push_back(
        b.create<arith::SubIOp>(loc, idx(b, loc, in[d]), b.create<arith::ConstantIndexOp>(loc, 1)));
  // Reading an empty input for a non-empty output would be out of bounds.
  Value count_in = idx(b, loc, product(b, loc, in)), count_out = idx(b, loc, product(b, loc, out));
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value ok = b.create<arith::OrIOp>(
      loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, count_in, zero),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, count_out, zero));
  runtimeCheck(b, loc, ok, "Resize: an empty input cannot be resized to a non-empty output");
  Value empty = emptyTensor(b, loc, out, t);
  const bool linear = mode == "linear";
  if (cubic) {
    int64_t count = 0;
    for (int64_t d = 0; d < rank; ++d) count += resized[d] ? 1 : 0;
    if (count > 4) return n.unsupported("cubic resize of more than 4 dims (4^dims reads each)");
  }
  Value y = generate(
      b, loc, empty, ValueRange{}, {}, [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
        auto c = [&](double v) { return scalarConstant(nb, nl, f64, v); };
        Value zero_i = nb.create<arith::ConstantIndexOp>(nl, 0);
        // Per dim: the low index, the high index and the high one's weight.
        SmallVector<Value> lo(rank), hi(rank), frac(rank);
        // Cubic: per dim the four taps and their weights.
        SmallVector<SmallVector<Value, 4>> taps(rank), weights(rank);
        for (int64_t d = 0; d < rank; ++d) {
          Value o = nb.create<linalg::IndexOp>(nl, d);
          if (!resized[d]) {
            lo[d] = hi[d] = o;
            continue;
          }
          Value of = nb.create<arith::SIToFPOp>(
              nl, f64, nb.create<arith::IndexCastOp>(nl, nb.getI64Type(), o));
          Value half = c(0.5);
          Value xo;
          if (coord == "asymmetric") {
            xo = nb.create<arith::DivFOp>(nl, of, scale_f[d]);
          } else if (coord == "tf_half_pixel_for_nn") {
            xo = nb.create<arith::DivFOp>(nl, nb.create<arith::AddFOp>(nl, of, half), scale_f[d]);
          } else if (coord == "align_corners") {
            Value den = nb.create<arith::SubFOp>(nl, out_f[d], c(1));
            Value num =
                nb.create<arith::MulFOp>(nl, of, nb.create<arith::SubFOp>(nl, in_f[d], c(1)));
            Value one_out = nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OLE, out_f[d], c(1));
            xo = nb.create<arith::SelectOp>(nl, one_out, c(0),
                                            nb.create<arith::DivFOp>(nl, num, den));
          } else {
            xo = nb.create<arith::SubFOp>(
                nl,
                nb.create<arith::DivFOp>(nl, nb.create<arith::AddFOp>(nl, of, half), scale_f[d]),
                half);
            if (coord == "pytorch_half_pixel") {
              Value one_out =
                  nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OLE, out_f[d], c(1));
              xo = nb.create<arith::SelectOp>(nl, one_out, c(0), xo);
            }
          }
          auto clampIndex = [&](Value fv) {
            // Clamped as a float first (maxnumf takes 0 for a NaN): the conversion is then
            // defined, and the index is inside the input whatever the coordinate was.
            fv = nb.create<arith::MinNumFOp>(nl, nb.create<arith::MaxNumFOp>(nl, fv, c(0)),
                                             nb.create<arith::SubFOp>(nl, in_f[d], c(1)));
            Value i = nb.create<arith::IndexCastOp>(
                nl, nb.getIndexType(), nb.create<arith::FPToSIOp>(nl, nb.getI64Type(), fv));
            return nb.create<arith::MaxSIOp>(nl, nb.create<arith::MinSIOp>(nl, i, in_last[d]),
                                             zero_i);
          };
          if (cubic) {
            // x = f + r with r in (0, 1] (an integral x takes r = 1): taps f-1 .. f+2.
            Value f = nb.create<math::FloorOp>(nl, xo);
            Value r = nb.create<arith::SubFOp>(nl, xo, f);
            Value integral = nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OEQ, r, c(0));
            f = nb.create<arith::SelectOp>(nl, integral, nb.create<arith::SubFOp>(nl, f, c(1)), f);
            r = nb.create<arith::SelectOp>(nl, integral, c(1), r);
            SmallVector<Value, 4> w = cubicWeights(nb, nl, r, coeff_a);
            Value sum = c(0);
            for (int64_t k = 0; k < 4; ++k) {
              Value at = nb.create<arith::AddFOp>(nl, f, c(static_cast<double>(k - 1)));
              if (exclude_outside) {
                Value inside = nb.create<arith::AndIOp>(
                    nl, nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OGE, at, c(0)),
                    nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OLE, at,
                                             nb.create<arith::SubFOp>(nl, in_f[d], c(1))));
                w[k] = nb.create<arith::SelectOp>(nl, inside, w[k], c(0));
                sum = nb.create<arith::AddFOp>(nl, sum, w[k]);
              }
              taps[d].push_back(clampIndex(at));
            }
            if (exclude_outside)
              for (Value& wk : w) wk = nb.create<arith::DivFOp>(nl, wk, sum);
            weights[d] = w;
            continue;
          }
          if (!linear) {
            Value r;
            if (nearest == "floor") {
              r = nb.create<math::FloorOp>(nl, xo);
            } else if (nearest == "ceil") {
              r = nb.create<math::CeilOp>(nl, xo);
            } else {
              // Halfway cases go down (round_prefer_floor) or up (_ceil).
              Value fl = nb.create<math::FloorOp>(nl, xo);
              Value diff = nb.create<arith::SubFOp>(nl, xo, fl);
              Value up = nb.create<arith::CmpFOp>(nl,
                                                  nearest == "round_prefer_floor"
                                                      ? arith::CmpFPredicate::OGT
                                                      : arith::CmpFPredicate::OGE,
                                                  diff, half);
              r = nb.create<arith::SelectOp>(nl, up, nb.create<arith::AddFOp>(nl, fl, c(1)), fl);
            }
            lo[d] = hi[d] = clampIndex(r);
            continue;
          }
          // Linear: the coordinate clamped into the input (edge values outside).
          Value xc = nb.create<arith::MinimumFOp>(nl, nb.create<arith::MaximumFOp>(nl, xo, c(0)),
                                                  nb.create<arith::SubFOp>(nl, in_f[d], c(1)));
          Value fl = nb.create<math::FloorOp>(nl, xc);
          lo[d] = clampIndex(fl);
          hi[d] = nb.create<arith::MinSIOp>(
              nl, nb.create<arith::AddIOp>(nl, lo[d], nb.create<arith::ConstantIndexOp>(nl, 1)),
              in_last[d]);
          frac[d] = nb.create<arith::SubFOp>(nl, xc, fl);
        }
        Value result;
        if (cubic) {
          // Sum over the 4^R taps of the resized dims, weights in f64.
          SmallVector<int64_t> dims;
          for (int64_t d = 0; d < rank; ++d)
            if (resized[d]) dims.push_back(d);
          Value acc = c(0);
          for (int64_t tap = 0; tap < (int64_t(1) << (2 * dims.size())); ++tap) {
            SmallVector<Value> at(lo);
            Value weight = c(1);
            for (size_t k = 0; k < dims.size(); ++k) {
              const int64_t d = dims[k], j = (tap >> (2 * k)) & 3;
              at[d] = taps[d][j];
              weight = nb.create<arith::MulFOp>(nl, weight, weights[d][j]);
            }
            Value v = convertScalar(nb, nl, nb.create<tensor::ExtractOp>(nl, x, at), f64);
            acc = nb.create<arith::AddFOp>(nl, acc, nb.create<arith::MulFOp>(nl, v, weight));
          }
          result = convertScalar(nb, nl, acc, t);
        } else if (!linear) {
          result = nb.create<tensor::ExtractOp>(nl, x, lo);
        } else {
          // Sum over the 2^R corners of the resized dims, weights in f64.
          SmallVector<int64_t> dims;
          for (int64_t d = 0; d < rank; ++d)
            if (resized[d]) dims.push_back(d);
          Value acc = c(0);
          for (int64_t corner = 0; corner < (int64_t(1) << dims.size()); ++corner) {
            SmallVector<Value> at(lo);
            Value weight = c(1);
            for (size_t k = 0; k < dims.size(); ++k) {
              const int64_t d = dims[k];
              const bool high = (corner >> k) & 1;
              at[d] = high ? hi[d] : lo[d];
              Value wgt = high ? frac[d] : nb.create<arith::SubFOp>(nl, c(1), frac[d]).getResult();
              weight = nb.create<arith::MulFOp>(nl, weight, wgt);
            }
            Value v = convertScalar(nb, nl, nb.create<tensor::ExtractOp>(nl, x, at), f64);
            acc = nb.create<arith::AddFOp>(nl, acc, nb.create<arith::MulFOp>(nl, v, weight));
          }
          result = convertScalar(nb, nl, acc, t);
        }
        return result;
      });
  n.setOutput(0, y);
  return success();
}

}  // namespace

void addResizeOps(Registry& r) {
  r["Resize"] = {convertResize,
                 {"mode", "coordinate_transformation_mode", "nearest_mode", "exclude_outside",
                  "cubic_coeff_a", "extrapolation_value"}};
  r["Upsample"] = {convertResize, {"mode", "scales"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
