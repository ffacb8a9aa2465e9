// ONNX operators that make tensors from sizes: ConstantOfShape, Range, the Hann, Hamming and
// Blackman windows, EyeLike and Trilu.
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

LogicalResult convertConstantOfShape(NodeContext& n) {
  OpBuilder& b = n.b();
  FailureOr<SmallVector<OpFoldResult>> shape = shapeInput(n, 0);
  if (failed(shape)) return failure();
  DenseElementsAttr value =
      DenseElementsAttr::get(RankedTensorType::get({1}, b.getF32Type()), 0.0f);
  if (const auto* a = n.attr("value")) {
    FailureOr<DenseElementsAttr> data = n.constant(a->t());
    if (failed(data)) return failure();
    if (data->getNumElements() != 1) return n.error("value must have one element");
    value = *data;
  }
  Type element = value.getElementType();
  for (size_t d = 0; d < shape->size(); ++d)
    if (failed(checkSize(b, n.loc(), (*shape)[d], "shape element " + std::to_string(d))))
      return failure();
  if (failed(checkDims(b, n.loc(), *shape, "the shape's", true))) return failure();
  SmallVector<int64_t> sizes = staticSizes(*shape);
  auto type = RankedTensorType::get(sizes, element);
  // A small constant shape: a splat (folded into whatever reads it; integer vectors stay known).
  // A large one is filled when the module runs, not stored: LLVM would materialize a splat.
  if (type.hasStaticShape()) {
    CheckedInt bytes = checkedProduct(sizes) * ((element.getIntOrFloatBitWidth() + 7) / 8);
    if (!bytes.isSize()) return n.error("the shape holds more than 2^48 elements");
    if (bytes.value() <= 65536) {
      Attribute scalar = *value.getValues<Attribute>().begin();
      n.setOutput(0, tensorOfData(DenseElementsAttr::get(type, scalar)));
      return success();
    }
  }
  Value scalar =
      b.create<arith::ConstantOp>(n.loc(), cast<TypedAttr>(*value.getValues<Attribute>().begin()));
  n.setOutput(0, filled(b, n.loc(), *shape, scalar));
  return success();
}

// max(ceil((limit - start) / delta), 0) for int64 values read when the module runs, exact for
// every input: limit - start may not fit int64 (INT64_MIN to INT64_MAX), but in the direction
// delta walks it is a non-negative distance below 2^64, which unsigned division takes. A count
// of 2^63 or more reads as negative, which the size check after this refuses. A zero delta fails
// the execution.
Value rangeCount(OpBuilder& b, Location loc, Value start, Value limit, Value delta) {
  auto c = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v).getResult(); };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return b.create<arith::CmpIOp>(loc, p, x, y).getResult();
  };
  Value nonzero = cmp(arith::CmpIPredicate::ne, delta, c(0));
  runtimeCheck(b, loc, nonzero, "Range: delta is 0");
  Value up = cmp(arith::CmpIPredicate::sgt, delta, c(0));
  Value forward = b.create<arith::SelectOp>(loc, up, cmp(arith::CmpIPredicate::sgt, limit, start),
                                            cmp(arith::CmpIPredicate::sgt, start, limit));
  // Wrapping subtractions: exact as unsigned values where they are used.
  Value span = b.create<arith::SelectOp>(loc, up, b.create<arith::SubIOp>(loc, limit, start),
                                         b.create<arith::SubIOp>(loc, start, limit));
  Value step = b.create<arith::SelectOp>(loc, up, delta, b.create<arith::SubIOp>(loc, c(0), delta));
  step = b.create<arith::SelectOp>(loc, nonzero, step, c(1));
  Value q = b.create<arith::DivUIOp>(loc, span, step);
  Value r = b.create<arith::RemUIOp>(loc, span, step);
  Value steps = b.create<arith::SelectOp>(loc, cmp(arith::CmpIPredicate::ne, r, c(0)),
                                          b.create<arith::AddIOp>(loc, q, c(1)), q);
  return b.create<arith::SelectOp>(loc, forward, steps, c(0));
}

// Range: max(ceil((limit - start) / delta), 0) elements start + i * delta. Known inputs give a
// known count (an error beyond kMaxSize, or for a NaN or infinite one); small ranges fold to
// constants, larger ones are computed when the module runs rather than stored.
// HannWindow, HammingWindow, BlackmanWindow: w[k] = a0 - a1 cos(2πk/N) + a2 cos(4πk/N) for k in
// [0, size), N = size (periodic, the default) or size - 1 (symmetric); computed in f64.
LogicalResult convertWindow(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const std::string op = n.node().op_type();
  if (!hasOneElement(n.type(0))) return n.error("size must be a scalar");
  std::optional<SmallVector<OpFoldResult>> size = n.shapeElems(0);
  if (!size || size->size() != 1) return n.unsupported("a window size that is not readable");
  if (failed(checkSize(b, loc, (*size)[0], "the window size"))) return failure();
  bool is_unsigned = false;
  const int64_t dtype = n.i("output_datatype", 1);
  Type t = storageTypeOf(b.getContext(), static_cast<int32_t>(dtype), &is_unsigned);
  if (!t || is_unsigned)
    return n.unsupported("output_datatype " + dtypeName(static_cast<int32_t>(dtype)));
  const bool periodic = n.i("periodic", 1) != 0;
  const double a0 = op == "HannWindow" ? 0.5 : op == "HammingWindow" ? 25.0 / 46 : 0.42;
  const double a1 = op == "HannWindow" ? 0.5 : op == "HammingWindow" ? 21.0 / 46 : 0.5;
  const double a2 = op == "BlackmanWindow" ? 0.08 : 0.0;
  Type f64 = b.getF64Type();
  Value count = b.create<arith::SIToFPOp>(
      loc, f64, b.create<arith::IndexCastOp>(loc, b.getI64Type(), indexValue(b, loc, (*size)[0])));
  Value denom =
      periodic ? count
               : b.create<arith::SubFOp>(loc, count, scalarConstant(b, loc, f64, 1)).getResult();
  Value y = generate(
      b, loc, emptyTensor(b, loc, {(*size)[0]}, t), {}, {},
      [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
        auto c = [&](double v) { return scalarConstant(nb, nl, f64, v); };
        Value k = nb.create<arith::SIToFPOp>(
            nl, f64,
            nb.create<arith::IndexCastOp>(nl, nb.getI64Type(), nb.create<linalg::IndexOp>(nl, 0)));
        Value angle =
            nb.create<arith::DivFOp>(nl, nb.create<arith::MulFOp>(nl, k, c(2 * M_PI)), denom);
        Value w = nb.create<arith::SubFOp>(
            nl, c(a0), nb.create<arith::MulFOp>(nl, c(a1), nb.create<math::CosOp>(nl, angle)));
        if (a2 != 0)
          w = nb.create<arith::AddFOp>(
              nl, w,
              nb.create<arith::MulFOp>(
                  nl, c(a2),
                  nb.create<math::CosOp>(nl, nb.create<arith::MulFOp>(nl, angle, c(2)))));
        return convertScalar(nb, nl, w, t);
      });
  n.setOutput(0, y);
  return success();
}

LogicalResult convertRange(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  for (size_t i = 0; i < 3; ++i)
    if (n.rank(i) != 0) return n.error("start, limit and delta must be scalars");
  Type t = n.elementType(0);
  if (n.elementType(1) != t || n.elementType(2) != t) return n.error("inputs differ in type");
  if (!isFloat(t) && !isa<IntegerType>(t)) return n.unsupported("Range of this element type");
  if (t.isInteger(1)) return n.unsupported("Range of bool");
  const bool f = isFloat(t);
  constexpr int64_t kFoldedElements = 1024;
  // The count, when start, limit and delta are known.
  std::optional<int64_t> known_count;
  std::optional<double> fs, fl, fd;
  std::optional<SmallVector<int64_t>> is, il, id;
  if (f) {
    fs = n.constScalar(0), fl = n.constScalar(1), fd = n.constScalar(2);
    if (fs && fl && fd) {
      if (*fd == 0) return n.error("delta is 0");
      // numpy refuses a NaN or infinite length even where the count would be 0.
      const double raw = std::ceil((*fl - *fs) / *fd);
      const double steps = std::max(raw, 0.0);
      if (!std::isfinite(raw) || steps > static_cast<double>(kMaxSize))
        return n.error("start " + std::to_string(*fs) + ", limit " + std::to_string(*fl) +
                       " and delta " + std::to_string(*fd) +
                       (std::isfinite(raw) ? " give more than 2^48 elements"
                                           : " give a NaN or infinite element count"));
      known_count = static_cast<int64_t>(steps);
    }
  } else {
    is = n.constInts(0), il = n.constInts(1), id = n.constInts(2);
    if (is && il && id) {
      const int64_t s0 = (*is)[0], l0 = (*il)[0], d0 = (*id)[0];
      if (d0 == 0) return n.error("delta is 0");
      // Exact in 128 bits: limit - start of two int64s does not fit in one.
      const __int128 span = static_cast<__int128>(l0) - s0;
      __int128 steps = span / d0;
      if (span % d0 != 0 && ((span < 0) == (d0 < 0))) ++steps;
      if (steps < 0) steps = 0;
      if (steps > kMaxSize)
        return n.error("start " + std::to_string(s0) + ", limit " + std::to_string(l0) +
                       " and delta " + std::to_string(d0) + " give more than 2^48 elements");
      known_count = static_cast<int64_t>(steps);
    }
  }
  if (known_count && *known_count <= kFoldedElements) {
    const int64_t count = *known_count;
    auto type = RankedTensorType::get({count}, t);
    if (failed(n.chargeConstant(count * ((t.getIntOrFloatBitWidth() + 7) / 8), "the range")))
      return failure();
    if (f) {
      SmallVector<double> v;
      for (int64_t i = 0; i < count; ++i) v.push_back(*fs + static_cast<double>(i) * *fd);
      n.setOutput(0, tensorOfData(floatConstant(type, v)));
    } else {
      // Every element lies between start and limit: no step overflows.
      SmallVector<APInt> v;
      for (int64_t i = 0; i < count; ++i)
        v.push_back(APInt(64, static_cast<uint64_t>((*is)[0] + i * (*id)[0]), true)
                        .trunc(t.getIntOrFloatBitWidth()));
      n.setOutput(0, tensorOfData(DenseElementsAttr::get(type, v)));
    }
    return success();
  }
  // Computed when the module runs: the count too when an input is known only then (arange of a
  // dynamic seq_len), checked there.
  Value start, delta;
  OpFoldResult count;
  Type f64 = b.getF64Type();
  if (f) {
    Value s0 = b.create<tensor::ExtractOp>(loc, n.value(0), ValueRange{});
    Value l0 = b.create<tensor::ExtractOp>(loc, n.value(1), ValueRange{});
    Value d0 = b.create<tensor::ExtractOp>(loc, n.value(2), ValueRange{});
    start = s0;
    delta = d0;
    if (known_count) {
      count = b.getIndexAttr(*known_count);
    } else {
      Value zero = scalarConstant(b, loc, t, 0);
      runtimeCheck(b, loc, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ONE, d0, zero),
                   "Range: delta is 0");
      // In f64, as ONNX's reference computes the count.
      Value s = convertScalar(b, loc, s0, f64), l = convertScalar(b, loc, l0, f64),
            d = convertScalar(b, loc, d0, f64);
      Value steps = b.create<math::CeilOp>(
          loc, b.create<arith::DivFOp>(loc, b.create<arith::SubFOp>(loc, l, s), d));
      // Ordered comparisons: false for NaN. An infinite length is refused even where the count
      // would be 0 (numpy refuses it too), a finite one beyond the limit too.
      Value fits = b.create<arith::AndIOp>(
          loc,
          b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, steps,
                                  scalarConstant(b, loc, f64, static_cast<double>(kMaxSize))),
          b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, steps,
                                  scalarConstant(b, loc, f64, -HUGE_VAL)));
      steps = b.create<arith::MaximumFOp>(loc, steps, scalarConstant(b, loc, f64, 0));
      runtimeCheck(b, loc, fits,
                   "Range: start, limit and delta give a NaN, infinite or larger than 2^48 "
                   "element count");
      steps = b.create<arith::SelectOp>(loc, fits, steps, scalarConstant(b, loc, f64, 0));
      Value i64 = b.create<arith::FPToSIOp>(loc, b.getI64Type(), steps);
      count = fold(b.create<arith::IndexCastOp>(loc, b.getIndexType(), i64));
    }
  } else {
    auto es = n.shapeElems(0), el = n.shapeElems(1), ed = n.shapeElems(2);
    if (!es || !el || !ed) return n.unsupported("Range of this element type");
    Value s0 = idx(b, loc, (*es)[0]), d0 = idx(b, loc, (*ed)[0]);
    start = s0;
    delta = d0;
    if (known_count) {
      count = b.getIndexAttr(*known_count);
    } else {
      count = fold(rangeCount(b, loc, s0, idx(b, loc, (*el)[0]), d0));
    }
  }
  if (failed(checkSize(b, loc, count, "Range's element count"))) return failure();
  Value empty = emptyTensor(b, loc, {count}, t);
  Value out = generate(
      b, loc, empty, ValueRange{}, {}, [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
        Value i = nb.create<linalg::IndexOp>(nl, 0);
        if (f) {
          Value fi = nb.create<arith::SIToFPOp>(
              nl, t, nb.create<arith::IndexCastOp>(nl, nb.getI64Type(), i));
          return nb.create<arith::AddFOp>(nl, start, nb.create<arith::MulFOp>(nl, fi, delta));
        }
        // Between start and limit: in range of the element type, no overflow.
        return nb.create<arith::IndexCastOp>(
            nl, t, nb.create<arith::AddIOp>(nl, start, nb.create<arith::MulIOp>(nl, i, delta)));
      });
  n.setOutput(0, out);
  return success();
}

// EyeLike: a matrix of the input's shape with ones on diagonal k (j - i = k), zeros elsewhere,
// of type `dtype` (the input's by default).
LogicalResult convertEyeLike(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (n.rank(0) != 2) return n.error("EyeLike takes a 2-D input");
  Type t = n.elementType(0);
  if (n.has("dtype")) {
    const int64_t dtype = n.i("dtype", 0);
    t = elementTypeOf(b.getContext(), static_cast<int32_t>(dtype));
    if (!t) return n.unsupported("dtype " + dtypeName(static_cast<int32_t>(dtype)));
  }
  const int64_t k = n.i("k", 0);
  Value y = generate(b, loc, emptyTensor(b, loc, dimsOf(b, loc, n.value(0)), t), {}, {},
                     [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
                       Value i = nb.create<linalg::IndexOp>(nl, 0);
                       Value j = nb.create<linalg::IndexOp>(nl, 1);
                       Value on = nb.create<arith::CmpIOp>(
                           nl, arith::CmpIPredicate::eq, nb.create<arith::SubIOp>(nl, j, i),
                           nb.create<arith::ConstantIndexOp>(nl, k));
                       return nb.create<arith::SelectOp>(nl, on, scalarConstant(nb, nl, t, 1),
                                                         scalarConstant(nb, nl, t, 0));
                     });
  n.setOutput(0, y);
  return success();
}

LogicalResult convertTrilu(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  if (rank < 2) return n.error("input must have rank >= 2");
  Value k = b.create<arith::ConstantIndexOp>(loc, 0);
  if (n.hasInput(1)) {
    auto e = n.shapeElems(1);
    if (!e || e->size() != 1) return n.unsupported("k that is not an integer scalar");
    k = idx(b, loc, (*e)[0]);
  }
  const bool upper = n.i("upper", 1) != 0;
  Type t = n.elementType(0);
  Value x = n.value(0);
  Value zero = scalarConstant(b, loc, t, 0);
  Value empty = emptyTensor(b, loc, dimsOf(b, loc, x), t);
  Value y =
      generate(b, loc, empty, ValueRange{x}, {b.getMultiDimIdentityMap(rank)},
               [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                 Value i = nb.create<linalg::IndexOp>(nl, rank - 2);
                 Value j = nb.create<linalg::IndexOp>(nl, rank - 1);
                 Value diff = nb.create<arith::SubIOp>(nl, j, i);
                 Value keep = nb.create<arith::CmpIOp>(
                     nl, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle, diff, k);
                 return nb.create<arith::SelectOp>(nl, keep, a[0], zero);
               });
  n.setOutput(0, y);
  return success();
}

}  // namespace

void addGenerateOps(Registry& r) {
  r["ConstantOfShape"] = {convertConstantOfShape, {"value"}};
  r["Range"] = {convertRange, {}};
  r["EyeLike"] = {convertEyeLike, {"dtype", "k"}};
  r["Trilu"] = {convertTrilu, {"upper"}};
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    r[op] = {convertWindow, {"output_datatype", "periodic"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
