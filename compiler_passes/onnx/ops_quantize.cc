// Quantized operators: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (uint8 or int8,
// per tensor or per axis), and the integer kernels MatMulInteger, ConvInteger, QLinearMatMul and
// QLinearConv: the operands widened to int32 with their zero points subtracted, an int32
// product (integer GEMM, im2col for convolutions), and for the QLinear ops requantization as
// ONNX's reference does it: the accumulator times the scales in f32, rounded half to even, the
// output zero point added, saturated to the output type.
#include <optional>
#include <string>
#include <vector>

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

// A quantized integer type: its width and sign, and the range it saturates to.
struct QType {
  Type storage;
  bool is_unsigned = true;
  double lo = 0, hi = 255;
};

QType qtypeOf(Type storage, bool is_unsigned) {
  QType q{storage, is_unsigned};
  const int64_t w = storage.getIntOrFloatBitWidth();
  q.lo = is_unsigned ? 0 : -std::ldexp(1.0, static_cast<int>(w) - 1);
  q.hi = is_unsigned ? std::ldexp(1.0, static_cast<int>(w)) - 1
                     : std::ldexp(1.0, static_cast<int>(w) - 1) - 1;
  return q;
}

// Input i's values as int32 (zero- or sign-extended).
Value widened(NodeContext& n, size_t i) {
  return convertTensor(n.b(), n.loc(), n.value(i), n.b().getI32Type(), n.isUnsigned(i), false);
}

// A scale or zero point (a scalar, or 1-D along `axis` of a rank-`rank` operand) shaped to
// broadcast against it: [1, .., C, .., 1] or rank 0.
FailureOr<Value> alongAxis(NodeContext& n, Value v, int64_t axis, int64_t rank, const char* what) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getRank() == 0) return v;
  if (t.getRank() == 1 && t.hasStaticShape() && t.getNumElements() == 1)
    return reshape(b, loc, v, {});
  if (t.getRank() != 1)
    return n.error(std::string(what) + " must be a scalar or a 1-D tensor, got rank " +
                   std::to_string(t.getRank()));
  if (axis < 0 || axis >= rank)
    return n.error(std::string(what) + " has one value per index of dim " + std::to_string(axis) +
                   " of an operand of rank " + std::to_string(rank));
  SmallVector<OpFoldResult> dims(rank, b.getIndexAttr(1));
  dims[axis] = dimOf(b, loc, v, 0);
  return reshape(b, loc, v, dims);
}

// y = saturate(round_half_even(v) + zp) in the quantized type, v and zp f32 (zp exact).
Value requantize(OpBuilder& b, Location loc, Value v, Value zp, const QType& q) {
  Type f32 = b.getF32Type();
  Value r = b.create<arith::AddFOp>(loc, b.create<math::RoundEvenOp>(loc, v), zp);
  r = b.create<arith::MinimumFOp>(
      loc, b.create<arith::MaximumFOp>(loc, r, scalarConstant(b, loc, f32, q.lo)),
      scalarConstant(b, loc, f32, q.hi));
  return convertScalar(b, loc, r, q.storage, false, q.is_unsigned);
}

// Sets output i of quantized type q.
void setQuantized(NodeContext& n, size_t i, Value v, const QType& q) {
  if (q.is_unsigned)
    n.setUnsignedOutput(i, v);
  else
    n.setOutput(i, v);
}

// The zero point input i (absent: 0 of `fallback`'s type) as an f32 tensor ready to broadcast
// along `axis`, and its quantized type.
FailureOr<std::pair<Value, QType>> zeroPoint(NodeContext& n, size_t i, int64_t axis, int64_t rank,
                                             QType fallback) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (!n.hasInput(i))
    return std::make_pair(filled(b, loc, {}, scalarConstant(b, loc, b.getF32Type(), 0)), fallback);
  Type t = n.elementType(i);
  if (!t.isInteger(8) && !t.isInteger(16) && !t.isInteger(32))
    return n.unsupported("zero points of this element type");
  QType q = qtypeOf(t, n.isUnsigned(i));
  Value f = convertTensor(b, loc, n.value(i), b.getF32Type(), q.is_unsigned, false);
  FailureOr<Value> shaped = alongAxis(n, f, axis, rank, "the zero point");
  if (failed(shaped)) return failure();
  return std::make_pair(*shaped, q);
}

// QuantizeLinear's and DequantizeLinear's scale (input 1) and zero point (input 2, uint8 0 when
// absent), shaped to broadcast against input 0: per tensor, or per index of `axis` (opset 13
// on). A scale of one element is per tensor whatever `axis` says (it broadcasts alike).
struct Scaling {
  Value scale, zero_point;  // f32
  QType q;                  // the zero point's type
};

FailureOr<Scaling> scalingOf(NodeContext& n, const char* scale_name) {
  const int64_t rank = n.rank(0);
  int64_t axis = 0;
  if (rank > 0 && !hasOneElement(n.type(1))) {
    FailureOr<int64_t> a = n.axis(n.i("axis", 1), rank);
    if (failed(a)) return failure();
    axis = *a;
  }
  if (!n.elementType(1).isF32()) return n.unsupported("scales other than float");
  FailureOr<Value> scale = alongAxis(n, n.value(1), axis, rank, scale_name);
  if (failed(scale)) return failure();
  auto zp = zeroPoint(n, 2, axis, rank, qtypeOf(n.b().getIntegerType(8), true));
  if (failed(zp)) return failure();
  return Scaling{*scale, zp->first, zp->second};
}

// QuantizeLinear: y = saturate(round_half_even(x / y_scale) + y_zero_point), y of the zero
// point's type (uint8 without one).
LogicalResult convertQuantizeLinear(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  // int32 x divides in f64 in ONNX's reference; f32 x, in f32 as here.
  if (!n.elementType(0).isF32()) return n.unsupported("QuantizeLinear of a non-f32 input");
  FailureOr<Scaling> s = scalingOf(n, "y_scale");
  if (failed(s)) return failure();
  const QType q = s->q;
  if (q.storage.getIntOrFloatBitWidth() != 8)
    return n.unsupported("QuantizeLinear to 16 or 32 bits");
  Value y =
      elementwise(b, loc, {n.value(0), s->scale, s->zero_point}, q.storage,
                  [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                    return requantize(nb, nl, nb.create<arith::DivFOp>(nl, a[0], a[1]), a[2], q);
                  });
  setQuantized(n, 0, y, q);
  return success();
}

// DequantizeLinear of constants (a QDQ model's weights and biases), computed at import within
// the constant budget: the weights stay constants, which the convolution and GEMM kernels
// prepare once. Each element is one f32 rounding of the exact (x - zp) * scale, as the f32
// arithmetic of ONNX's reference gives. Null when an operand is not constant or the result does
// not fit the budget. Called once scalingOf() has checked the operands' shapes.
std::optional<Tensor> foldedDequantize(NodeContext& n) {
  DenseElementsAttr x = n.input(0).data, scale = n.input(1).data;
  DenseElementsAttr zp = n.hasInput(2) ? n.input(2).data : DenseElementsAttr();
  if (!x || !scale || (n.hasInput(2) && !zp)) return std::nullopt;
  auto type = cast<RankedTensorType>(x.getType());
  const int64_t count = type.getNumElements(), bytes = count * 4;
  if (!n.constantFits(bytes)) return std::nullopt;
  // Per axis: element i belongs to index (i / inner) % dim of the axis.
  int64_t inner = 1, dim = 1;
  if (scale.getNumElements() > 1) {
    const int64_t axis = n.i("axis", 1) < 0 ? n.i("axis", 1) + type.getRank() : n.i("axis", 1);
    dim = type.getDimSize(axis);
    for (int64_t d = axis + 1; d < type.getRank(); ++d) inner *= type.getDimSize(d);
  }
  auto integers = [](DenseElementsAttr data, bool is_unsigned) {
    SmallVector<int64_t> v;
    for (const APInt& e : data.getValues<APInt>())
      v.push_back(is_unsigned ? static_cast<int64_t>(e.getZExtValue()) : e.getSExtValue());
    return v;
  };
  SmallVector<int64_t> xs = integers(x, n.isUnsigned(0));
  SmallVector<int64_t> zs = zp ? integers(zp, n.isUnsigned(2)) : SmallVector<int64_t>{0};
  SmallVector<float> scales(scale.getValues<float>().begin(), scale.getValues<float>().end());
  // One scale (zero point) per index of the axis, or one for all: anything else is left to the
  // run-time path, which names the mismatch.
  const int64_t per = static_cast<int64_t>(scales.size());
  if ((per != 1 && per != dim) || (zs.size() != 1 && static_cast<int64_t>(zs.size()) != per))
    return std::nullopt;
  std::vector<float> out(count);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t c = scales.size() > 1 ? (i / inner) % dim : 0;
    const int64_t z = zs.size() > 1 ? zs[c] : zs[0];
    // (x - zp) has at most 33 significant bits and the scale 24: the double product is exact.
    out[i] = static_cast<float>(static_cast<double>(xs[i] - z) * static_cast<double>(scales[c]));
  }
  if (failed(n.chargeConstant(bytes, "a dequantized constant"))) return std::nullopt;
  return tensorOfData(DenseElementsAttr::get(
      RankedTensorType::get(type.getShape(), n.b().getF32Type()), llvm::ArrayRef<float>(out)));
}

// DequantizeLinear: y = (x - x_zero_point) * x_scale in f32.
LogicalResult convertDequantizeLinear(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  FailureOr<Scaling> s = scalingOf(n, "x_scale");
  if (failed(s)) return failure();
  Type f32 = b.getF32Type();
  if (std::optional<Tensor> folded = foldedDequantize(n)) {
    n.setOutput(0, *folded);
    return success();
  }
  Value x = convertTensor(b, loc, n.value(0), f32, n.isUnsigned(0), false);
  Value y = elementwise(b, loc, {x, s->zero_point, s->scale}, f32,
                        [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                          return nb.create<arith::MulFOp>(
                              nl, nb.create<arith::SubFOp>(nl, a[0], a[1]), a[2]);
                        });
  n.setOutput(0, y);
  return success();
}

// DynamicQuantizeLinear: uint8 quantization of x over [min(0, min x), max(0, max x)]: y_scale =
// (max - min) / 255, y_zero_point = saturate(round(-min / y_scale)), y as QuantizeLinear. An
// all-zero x (scale 0) gives zeros.
LogicalResult convertDynamicQuantizeLinear(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Type f32 = b.getF32Type();
  if (!n.elementType(0).isF32()) return n.unsupported("DynamicQuantizeLinear of non-f32 input");
  Value x = n.value(0);
  const int64_t rank = n.rank(0);
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < rank; ++d) all.push_back(d);
  auto extreme = [&](bool max) {
    return reduce(
        b, loc, x, all, b.getF32FloatAttr(0),
        [max](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
          return max ? nb.create<arith::MaximumFOp>(nl, acc, v).getResult()
                     : nb.create<arith::MinimumFOp>(nl, acc, v).getResult();
        },
        false);
  };
  // Reductions from 0 give min(0, min x) and max(0, max x) at once.
  Value lo = extreme(false), hi = extreme(true);
  const QType q = qtypeOf(b.getIntegerType(8), true);
  Value scale =
      elementwise(b, loc, {lo, hi}, f32, [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
        return nb.create<arith::DivFOp>(nl, nb.create<arith::SubFOp>(nl, a[1], a[0]),
                                        scalarConstant(nb, nl, nb.getF32Type(), 255));
      });
  Value zp_f =
      elementwise(b, loc, {lo, scale}, f32, [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
        Value zero = scalarConstant(nb, nl, f32, 0);
        Value none = nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OEQ, a[1], zero);
        Value z = nb.create<arith::SubFOp>(nl, zero, nb.create<arith::DivFOp>(nl, a[0], a[1]));
        z = nb.create<arith::MinimumFOp>(
            nl, nb.create<arith::MaximumFOp>(nl, nb.create<math::RoundEvenOp>(nl, z), zero),
            scalarConstant(nb, nl, f32, 255));
        return nb.create<arith::SelectOp>(nl, none, zero, z);
      });
  Value y = elementwise(
      b, loc, {x, scale, zp_f}, q.storage, [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
        Value zero = scalarConstant(nb, nl, f32, 0);
        Value none = nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OEQ, a[1], zero);
        Value v =
            nb.create<arith::SelectOp>(nl, none, zero, nb.create<arith::DivFOp>(nl, a[0], a[1]));
        return requantize(nb, nl, v, a[2], q);
      });
  setQuantized(n, 0, y, q);
  n.setOutput(1, scale);
  setQuantized(n, 2, convertTensor(b, loc, zp_f, q.storage, false, true), q);
  return success();
}

// An integer operand widened to int32 minus its zero point (absent: 0), which is a scalar or,
// for `per` >= 0, one value per index of dim `per` of the operand.
FailureOr<Value> shifted(NodeContext& n, size_t value, size_t zero_point, int64_t per) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Value v = widened(n, value);
  if (!n.hasInput(zero_point)) return v;
  if (n.isUnsigned(zero_point) != n.isUnsigned(value) ||
      n.elementType(zero_point) != n.elementType(value))
    return n.error("a zero point's type differs from its operand's");
  Value zp = widened(n, zero_point);
  const int64_t rank = n.rank(value);
  if (!hasOneElement(n.type(zero_point))) {
    if (per < 0 || n.rank(zero_point) != 1)
      return n.unsupported("a zero point that is not a scalar here");
    FailureOr<Value> shaped = alongAxis(n, zp, per, rank, "the zero point");
    if (failed(shaped)) return failure();
    zp = *shaped;
  } else {
    zp = reshape(b, loc, zp, {});
  }
  return elementwise(b, loc, {v, zp}, b.getI32Type(),
                     [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                       return nb.create<arith::SubIOp>(nl, a[0], a[1]);
                     });
}

LogicalResult checkInt8(NodeContext& n, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs)
    if (!n.elementType(i).isInteger(8))
      return n.unsupported(n.node().op_type() + " of operands other than int8 and uint8");
  return success();
}

// MatMulInteger: (A - a_zero_point) · (B - b_zero_point) in int32; a_zero_point per row of A
// (its second-to-last dim) or scalar, b_zero_point per column of B or scalar.
LogicalResult convertMatMulInteger(NodeContext& n) {
  if (failed(checkInt8(n, {0, 1}))) return failure();
  if (n.rank(0) < 2 || n.rank(1) < 2) return n.unsupported("MatMulInteger of 1-D operands");
  FailureOr<Value> a = shifted(n, 0, 2, n.rank(0) - 2), c = shifted(n, 1, 3, n.rank(1) - 1);
  if (failed(a) || failed(c)) return failure();
  FailureOr<Value> y = matmulOf(n, *a, *c);
  if (failed(y)) return failure();
  n.setOutput(0, *y);
  return success();
}

// A scalar f32 scale input.
FailureOr<Value> scalarScale(NodeContext& n, size_t i) {
  if (!n.elementType(i).isF32() || !hasOneElement(n.type(i)))
    return n.unsupported("a scale that is not an f32 scalar here");
  return reshape(n.b(), n.loc(), n.value(i), {});
}

// The requantized int32 accumulator of QLinearMatMul and QLinearConv: acc · multiplier, rounded,
// plus y_zero_point, saturated.
LogicalResult requantizeOutput(NodeContext& n, Value acc, Value multiplier, size_t y_zp) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (!n.elementType(y_zp).isInteger(8) || !hasOneElement(n.type(y_zp)))
    return n.unsupported("an output zero point that is not an 8-bit scalar");
  const QType q = qtypeOf(n.elementType(y_zp), n.isUnsigned(y_zp));
  Value zp = reshape(
      b, loc, convertTensor(b, loc, n.value(y_zp), b.getF32Type(), q.is_unsigned, false), {});
  Value y = elementwise(b, loc, {acc, multiplier, zp}, q.storage,
                        [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                          Value v = nb.create<arith::MulFOp>(
                              nl, nb.create<arith::SIToFPOp>(nl, nb.getF32Type(), a[0]), a[1]);
                          return requantize(nb, nl, v, a[2], q);
                        });
  setQuantized(n, 0, y, q);
  return success();
}

// a_scale · b_scale / y_scale, in f32 as ONNX Runtime computes it.
Value multiplierOf(OpBuilder& b, Location loc, Value s1, Value s2, Value sy) {
  return elementwise(
      b, loc, {s1, s2, sy}, b.getF32Type(), [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
        return nb.create<arith::DivFOp>(nl, nb.create<arith::MulFOp>(nl, a[0], a[1]), a[2]);
      });
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): the int32 product of the
// shifted operands, requantized (per-tensor scales and zero points).
LogicalResult convertQLinearMatMul(NodeContext& n) {
  if (failed(checkInt8(n, {0, 3}))) return failure();
  for (size_t i : {2u, 5u})
    if (!hasOneElement(n.type(i))) return n.unsupported("per-row or per-column zero points");
  FailureOr<Value> a = shifted(n, 0, 2, -1), c = shifted(n, 3, 5, -1);
  if (failed(a) || failed(c)) return failure();
  FailureOr<Value> acc = matmulOf(n, *a, *c);
  FailureOr<Value> sa = scalarScale(n, 1), sb = scalarScale(n, 4), sy = scalarScale(n, 6);
  if (failed(acc) || failed(sa) || failed(sb) || failed(sy)) return failure();
  return requantizeOutput(n, *acc, multiplierOf(n.b(), n.loc(), *sa, *sb, *sy), 7);
}

// ConvInteger(x, w, x_zp, w_zp): the int32 convolution of the shifted operands (w_zp per output
// channel or scalar).
LogicalResult convertConvInteger(NodeContext& n) {
  if (failed(checkInt8(n, {0, 1}))) return failure();
  FailureOr<Value> x = shifted(n, 0, 2, -1), w = shifted(n, 1, 3, 0);
  if (failed(x) || failed(w)) return failure();
  FailureOr<Value> y = integerConvolution(n, *x, *w);
  if (failed(y)) return failure();
  n.setOutput(0, *y);
  return success();
}

// The constant elements of input i as doubles (integers with their sign or without), or none.
std::optional<SmallVector<double>> constantInput(NodeContext& n, size_t i) {
  if (!n.hasInput(i) || !n.input(i).data) return std::nullopt;
  DenseElementsAttr d = n.input(i).data;
  SmallVector<double> v;
  if (d.getElementType().isF32()) {
    for (float f : d.getValues<float>()) v.push_back(f);
  } else if (d.getElementType().isInteger(8) || d.getElementType().isInteger(32)) {
    for (const APInt& a : d.getValues<APInt>())
      v.push_back(n.isUnsigned(i) ? static_cast<double>(a.getZExtValue())
                                  : static_cast<double>(a.getSExtValue()));
  } else {
    return std::nullopt;
  }
  return v;
}

// QLinearConv on ral_qconv (the CPU's int8 convolution), when its operands are what that
// kernel takes: constant int8 weights without zero points, constant scales (x's and y's
// scalars), scalar zero points, a constant int32 bias of at most 2^24 in magnitude (exact in
// f32). The kernel gives the f32 value acc · multiplier (x_scale · w_scale / y_scale in f32, as
// the generic path computes it), requantized here as ONNX does: rounded half to even, then the
// zero point added, saturated: ONNX's result bit for bit while |acc + bias| < 2^24 (oneDNN
// converts the sum to f32). (The kernel's own 8-bit store adds the zero point before
// rounding, which can round a value within an f32 ulp of a midpoint the other way.) False: the
// generic path.
FailureOr<bool> qlinearConvOnKernel(NodeContext& n) {
  if (!n.int8Conv() || !n.elementType(0).isInteger(8) || !n.input(3).data ||
      !n.elementType(3).isInteger(8) || n.isUnsigned(3) || !n.hasInput(7) ||
      !n.elementType(7).isInteger(8))
    return false;
  const int64_t filters = n.type(3).getDimSize(0);
  auto sx = constantInput(n, 1), sw = constantInput(n, 4), sy = constantInput(n, 6);
  auto xz = n.hasInput(2) ? constantInput(n, 2) : SmallVector<double>{0};
  auto wz = n.hasInput(5) ? constantInput(n, 5) : SmallVector<double>{0};
  auto yz = constantInput(n, 7);
  if (!sx || !sw || !sy || !xz || !wz || !yz || !n.elementType(1).isF32() ||
      !n.elementType(4).isF32() || !n.elementType(6).isF32() || sx->size() != 1 ||
      sy->size() != 1 || xz->size() != 1 || yz->size() != 1 ||
      (sw->size() != 1 && static_cast<int64_t>(sw->size()) != filters) ||
      llvm::any_of(*wz, [](double z) { return z != 0; }))
    return false;
  if (n.hasInput(2) && n.isUnsigned(2) != n.isUnsigned(0)) return false;
  QuantizedConv q;
  if (n.hasInput(8)) {
    auto bias = constantInput(n, 8);
    if (!bias || !n.elementType(8).isInteger(32) ||
        static_cast<int64_t>(bias->size()) != filters ||
        llvm::any_of(*bias, [](double v) { return std::abs(v) > (1 << 24); }))
      return false;
    for (double v : *bias) q.bias.push_back(static_cast<float>(v));
  }
  const float fx = static_cast<float>((*sx)[0]), fy = static_cast<float>((*sy)[0]);
  for (int64_t f = 0; f < filters; ++f) {
    const float m = fx * static_cast<float>((*sw)[sw->size() > 1 ? f : 0]) / fy;
    if (!std::isfinite(m)) return false;
    q.scales.push_back(m);
  }
  q.x = n.value(0);
  q.x_unsigned = n.isUnsigned(0);
  q.x_zero_point = static_cast<int64_t>((*xz)[0]);
  q.w = n.input(3).data;
  FailureOr<Value> v = quantizedConvolution(n, q);
  if (failed(v)) return failure();
  if (!*v) return false;
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const QType qt = qtypeOf(n.elementType(7), n.isUnsigned(7));
  Value zp = scalarConstant(b, loc, b.getF32Type(), (*yz)[0]);
  Value y = elementwise(b, loc, {*v}, qt.storage,
                        [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                          return requantize(nb, nl, a[0], zp, qt);
                        });
  setQuantized(n, 0, y, qt);
  return true;
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B): the int32 convolution of the
// shifted operands plus the int32 bias, requantized with x_scale · w_scale / y_scale (w_scale
// and w_zp per output channel or scalar).
LogicalResult convertQLinearConv(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (failed(checkInt8(n, {0, 3}))) return failure();
  if (n.rank(3) >= 3 && n.rank(3) <= 5 && n.rank(0) == n.rank(3) &&
      !n.type(3).isDynamicDim(0)) {
    FailureOr<bool> done = qlinearConvOnKernel(n);
    if (failed(done)) return failure();
    if (*done) return success();
  }
  FailureOr<Value> x = shifted(n, 0, 2, -1), w = shifted(n, 3, 5, 0);
  if (failed(x) || failed(w)) return failure();
  FailureOr<Value> acc = integerConvolution(n, *x, *w);
  if (failed(acc)) return failure();
  const int64_t rank = n.rank(0);
  if (n.hasInput(8)) {
    if (!n.elementType(8).isInteger(32) || n.rank(8) != 1) return n.error("B must be 1-D int32");
    SmallVector<OpFoldResult> dims(rank, b.getIndexAttr(1));
    dims[1] = dimOf(b, loc, n.value(8), 0);
    Value bias = reshape(b, loc, n.value(8), dims);
    acc = elementwise(b, loc, {*acc, bias}, b.getI32Type(),
                      [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                        return nb.create<arith::AddIOp>(nl, a[0], a[1]);
                      });
  }
  FailureOr<Value> sx = scalarScale(n, 1), sy = scalarScale(n, 6);
  if (failed(sx) || failed(sy)) return failure();
  if (!n.elementType(4).isF32()) return n.unsupported("scales other than float");
  FailureOr<Value> sw = alongAxis(n, n.value(4), 1, rank, "w_scale");
  if (failed(sw)) return failure();
  return requantizeOutput(n, *acc, multiplierOf(b, loc, *sx, *sw, *sy), 7);
}

}  // namespace

void addQuantizeOps(Registry& r) {
  r["QuantizeLinear"] = {convertQuantizeLinear, {"axis"}};
  r["DequantizeLinear"] = {convertDequantizeLinear, {"axis"}};
  r["DynamicQuantizeLinear"] = {convertDynamicQuantizeLinear, {}};
  r["MatMulInteger"] = {convertMatMulInteger, {}};
  r["QLinearMatMul"] = {convertQLinearMatMul, {}};
  const std::vector<std::string> conv = {"auto_pad",     "dilations", "group",
                                         "kernel_shape", "pads",      "strides"};
  r["ConvInteger"] = {convertConvInteger, conv};
  r["QLinearConv"] = {convertQLinearConv, conv};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
