// Elementwise ONNX operators: arithmetic and comparisons with numpy broadcasting, activations,
// Cast, Clip, Where, Identity and Dropout (inference). Integer shape arithmetic on known elements
// (Shape -> Mul -> Reshape) folds to index values instead of tensors.
#include <cmath>

#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/node_context.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

namespace {

using Body = std::function<Value(OpBuilder&, Location, ValueRange)>;

bool isInt(Type t) { return isa<IntegerType>(t) && !t.isInteger(1); }

// The inputs must share one element type (ONNX's type constraint T); a mismatch is a bad model.
FailureOr<Type> commonElementType(NodeContext& n, size_t first, size_t count) {
  Type t = n.elementType(first);
  for (size_t i = first + 1; i < first + count; ++i)
    if (n.elementType(i) != t) {
      (void)n.error("inputs have different element types");
      return failure();
    }
  return t;
}

LogicalResult unsupportedType(NodeContext& n, Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return n.unsupported("element type " + os.str() + " for " + n.node().op_type());
}

// Integer x / y and x % y as numpy computes them where the hardware would trap: 0 for a zero
// divisor, and the wrapped quotient of MIN / -1, so no input can kill the process.
Value safeIntDivide(OpBuilder& b, Location loc, Value x, Value y, bool remainder) {
  Type t = x.getType();
  Value zero =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, y, scalarConstant(b, loc, t, 0));
  Value minus1 =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, y, scalarConstant(b, loc, t, -1));
  Value unsafe = b.create<arith::OrIOp>(loc, zero, minus1);
  Value divisor = b.create<arith::SelectOp>(loc, unsafe, scalarConstant(b, loc, t, 1), y);
  if (remainder) {
    Value r = b.create<arith::RemSIOp>(loc, x, divisor);
    return b.create<arith::SelectOp>(loc, unsafe, scalarConstant(b, loc, t, 0), r);
  }
  Value q = b.create<arith::DivSIOp>(loc, x, divisor);
  Value negated = b.create<arith::SubIOp>(loc, scalarConstant(b, loc, t, 0), x);
  q = b.create<arith::SelectOp>(loc, minus1, negated, q);
  return b.create<arith::SelectOp>(loc, zero, scalarConstant(b, loc, t, 0), q);
}

// The unsigned form of a signed integer comparison (eq and ne are both).
arith::CmpIPredicate unsignedPredicate(arith::CmpIPredicate p) {
  switch (p) {
    case arith::CmpIPredicate::slt:
      return arith::CmpIPredicate::ult;
    case arith::CmpIPredicate::sle:
      return arith::CmpIPredicate::ule;
    case arith::CmpIPredicate::sgt:
      return arith::CmpIPredicate::ugt;
    case arith::CmpIPredicate::sge:
      return arith::CmpIPredicate::uge;
    default:
      return p;
  }
}

// Unsigned x / y and x % y, 0 for a zero divisor (numpy's result) instead of a trap.
Value safeUnsignedDivide(OpBuilder& b, Location loc, Value x, Value y, bool remainder) {
  Type t = x.getType();
  Value zero =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, y, scalarConstant(b, loc, t, 0));
  Value divisor = b.create<arith::SelectOp>(loc, zero, scalarConstant(b, loc, t, 1), y);
  Value r = remainder ? b.create<arith::RemUIOp>(loc, x, divisor).getResult()
                      : b.create<arith::DivUIOp>(loc, x, divisor).getResult();
  return b.create<arith::SelectOp>(loc, zero, scalarConstant(b, loc, t, 0), r);
}

// Integer arithmetic on known elements (rank 0 or 1, broadcast 1 against n), so shape arithmetic
// (Shape -> Mul -> Reshape) stays known. It is data arithmetic: computed in the element type,
// wrapping as numpy's does (int8 100 + 100 is -56), never as index arithmetic would.
bool foldIndexBinary(NodeContext& n, llvm::StringRef op) {
  if (n.numInputs() != 2 || !isInt(n.elementType(0)) || n.elementType(1) != n.elementType(0))
    return false;
  auto a = n.elems(0), c = n.elems(1);
  if (!a || !c) return false;
  if (a->size() != c->size() && a->size() != 1 && c->size() != 1) return false;
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Type t = n.elementType(0);
  const unsigned width = t.getIntOrFloatBitWidth();
  // numpy broadcasting of one element against n (0 too: an empty Shape slice times a scalar).
  const size_t count = a->size() == 1 ? c->size() : a->size();
  SmallVector<OpFoldResult> out;
  for (size_t i = 0; i < count; ++i) {
    OpFoldResult x = (*a)[a->size() == 1 ? 0 : i], y = (*c)[c->size() == 1 ? 0 : i];
    auto cx = constantIndex(x), cy = constantIndex(y);
    if (cx && cy) {
      const APInt p = APInt(64, static_cast<uint64_t>(*cx), true).trunc(width);
      const APInt q = APInt(64, static_cast<uint64_t>(*cy), true).trunc(width);
      APInt r = op == "Add"   ? p + q
                : op == "Sub" ? p - q
                : op == "Mul" ? p * q
                // Div as safeIntDivide: 0 for a zero divisor, the wrapped -x for -1.
                : q.isZero()    ? APInt(width, 0)
                : q.isAllOnes() ? -p
                                : p.sdiv(q);
      out.push_back(b.getIndexAttr(r.getSExtValue()));
      continue;
    }
    // Identities keep a dim a dim (sameDim then sees it); elements are in range already.
    if ((cy == 0 && (op == "Add" || op == "Sub")) || (cy == 1 && (op == "Mul" || op == "Div"))) {
      out.push_back(x);
      continue;
    }
    if ((cx == 0 && op == "Add") || (cx == 1 && op == "Mul")) {
      out.push_back(y);
      continue;
    }
    Value xv = b.create<arith::IndexCastOp>(loc, t, indexValue(b, loc, x));
    Value yv = b.create<arith::IndexCastOp>(loc, t, indexValue(b, loc, y));
    Value r = op == "Add"   ? b.create<arith::AddIOp>(loc, xv, yv).getResult()
              : op == "Sub" ? b.create<arith::SubIOp>(loc, xv, yv).getResult()
              : op == "Mul" ? b.create<arith::MulIOp>(loc, xv, yv).getResult()
                            : safeIntDivide(b, loc, xv, yv, false);
    out.push_back(b.create<arith::IndexCastOp>(loc, b.getIndexType(), r).getResult());
  }
  const bool scalar = std::max(n.rank(0), n.rank(1)) == 0;
  n.setOutput(0, elemsTensor(std::move(out), t, scalar));
  return true;
}

// Binary arithmetic (Add, Sub, Mul, Div, Mod, Pow, PRelu).
LogicalResult convertArithmetic(NodeContext& n) {
  const std::string op = n.node().op_type();
  if (n.numInputs() != 2) return n.error("expects 2 inputs");
  if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && foldIndexBinary(n, op))
    return success();
  Type t = n.elementType(0);
  if (op != "Pow" && n.elementType(1) != t) return n.error("inputs have different element types");
  if (t.isInteger(1)) return unsupportedType(n, t);
  const bool f = isFloat(t);
  const int64_t fmod = n.i("fmod", 0);
  if (op == "Mod" && f && !fmod) return n.error("Mod of floats needs fmod=1");
  Type exponent = n.elementType(1);
  const bool u = n.isUnsigned(0);
  Body body = [&, f, t, fmod, exponent, u](OpBuilder& b, Location loc, ValueRange a) -> Value {
    Value x = a[0], y = a[1];
    if (u && (op == "Div" || op == "Mod")) return safeUnsignedDivide(b, loc, x, y, op == "Mod");
    if (op == "Add")
      return f ? b.create<arith::AddFOp>(loc, x, y).getResult()
               : b.create<arith::AddIOp>(loc, x, y).getResult();
    if (op == "Sub")
      return f ? b.create<arith::SubFOp>(loc, x, y).getResult()
               : b.create<arith::SubIOp>(loc, x, y).getResult();
    if (op == "Mul")
      return f ? b.create<arith::MulFOp>(loc, x, y).getResult()
               : b.create<arith::MulIOp>(loc, x, y).getResult();
    if (op == "Div")
      return f ? b.create<arith::DivFOp>(loc, x, y).getResult()
               : safeIntDivide(b, loc, x, y, false);
    if (op == "PRelu") {
      Value zero = scalarConstant(b, loc, t, 0);
      Value neg = f ? b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, zero).getResult()
                    : b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, zero).getResult();
      Value scaled = f ? b.create<arith::MulFOp>(loc, x, y).getResult()
                       : b.create<arith::MulIOp>(loc, x, y).getResult();
      return b.create<arith::SelectOp>(loc, neg, scaled, x);
    }
    if (op == "Mod") {
      if (f) return b.create<arith::RemFOp>(loc, x, y);
      Value r = safeIntDivide(b, loc, x, y, true);
      if (fmod) return r;
      // Python's modulo: the result takes the divisor's sign.
      Value zero = scalarConstant(b, loc, t, 0);
      Value r_neg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, r, zero);
      Value y_neg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, y, zero);
      Value r_nonzero = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, r, zero);
      Value differ = b.create<arith::XOrIOp>(loc, r_neg, y_neg);
      Value fix = b.create<arith::AndIOp>(loc, differ, r_nonzero);
      return b.create<arith::SelectOp>(loc, fix, b.create<arith::AddIOp>(loc, r, y), r);
    }
    // Pow: the exponent may have another type; integer powers go through f64.
    Type compute = f ? t : b.getF64Type();
    Value base = convertScalar(b, loc, x, compute);
    Value e = convertScalar(b, loc, y, compute);
    (void)exponent;
    Value p = b.create<math::PowFOp>(loc, base, e);
    return f ? p : convertScalar(b, loc, p, t);
  };
  if (op == "Pow" && exponent.isInteger(1)) return unsupportedType(n, exponent);
  Value x = n.value(0), y = n.value(1);
  // Before opset 7, B broadcasts only with broadcast = 1: to A's trailing dims, or to A's dims
  // from `axis` on (B then gets trailing 1s for numpy broadcasting).
  if (n.has("broadcast") || n.has("axis")) {
    if (n.opset() >= 7) return n.unsupported("attribute 'broadcast' or 'axis' (opset 6 and older)");
    if (n.i("broadcast", 0) == 0) {
      if (n.rank(0) != n.rank(1)) return n.error("A and B must have one shape (broadcast = 0)");
    } else if (n.has("axis")) {
      FailureOr<int64_t> axis = n.axis(n.i("axis", 0), n.rank(0));
      if (failed(axis)) return failure();
      const int64_t trailing = n.rank(0) - *axis - n.rank(1);
      if (trailing < 0) return n.error("B does not fit in A from axis on");
      SmallVector<OpFoldResult> dims = dimsOf(n.b(), n.loc(), y);
      dims.append(trailing, n.b().getIndexAttr(1));
      y = reshape(n.b(), n.loc(), y, dims);
    } else if (n.rank(1) > n.rank(0)) {
      return n.error("B has more dims than A");
    }
  }
  // Before opset 7, PRelu's 1-D slope was per channel (dim 1).
  if (op == "PRelu" && n.opset() < 7 && n.rank(1) == 1 && n.rank(0) >= 2) {
    SmallVector<OpFoldResult> dims = {dimOf(n.b(), n.loc(), y, 0)};
    for (int64_t d = 2; d < n.rank(0); ++d) dims.push_back(n.b().getIndexAttr(1));
    y = reshape(n.b(), n.loc(), y, dims);
  }
  if (auto why = broadcastError({x, y})) return n.error(*why);
  n.setOutput(0, elementwise(n.b(), n.loc(), {x, y}, t, body));
  return success();
}

// Variadic Min, Max, Sum, Mean.
LogicalResult convertVariadic(NodeContext& n) {
  const std::string op = n.node().op_type();
  if (n.numInputs() < 1) return n.error("expects at least one input");
  FailureOr<Type> t = commonElementType(n, 0, n.numInputs());
  if (failed(t)) return failure();
  if (t->isInteger(1) || ((op == "Mean") && !isFloat(*t))) return unsupportedType(n, *t);
  const bool f = isFloat(*t);
  SmallVector<Value> inputs;
  for (size_t i = 0; i < n.numInputs(); ++i) inputs.push_back(n.value(i));
  if (auto why = broadcastError(inputs)) return n.error(*why);
  const Type type = *t;
  const double count = static_cast<double>(inputs.size());
  const bool u = n.isUnsigned(0);
  Body body = [op, f, type, count, u](OpBuilder& b, Location loc, ValueRange a) -> Value {
    Value acc = a[0];
    for (Value x : a.drop_front()) {
      if (op == "Min")
        acc = f   ? b.create<arith::MinimumFOp>(loc, acc, x).getResult()
              : u ? b.create<arith::MinUIOp>(loc, acc, x).getResult()
                  : b.create<arith::MinSIOp>(loc, acc, x).getResult();
      else if (op == "Max")
        acc = f   ? b.create<arith::MaximumFOp>(loc, acc, x).getResult()
              : u ? b.create<arith::MaxUIOp>(loc, acc, x).getResult()
                  : b.create<arith::MaxSIOp>(loc, acc, x).getResult();
      else
        acc = f ? b.create<arith::AddFOp>(loc, acc, x).getResult()
                : b.create<arith::AddIOp>(loc, acc, x).getResult();
    }
    if (op == "Mean") acc = b.create<arith::DivFOp>(loc, acc, scalarConstant(b, loc, type, count));
    return acc;
  };
  n.setOutput(0, elementwise(n.b(), n.loc(), inputs, type, body));
  return success();
}

// Comparisons and logical ops: a bool result.
LogicalResult convertCompare(NodeContext& n) {
  const std::string op = n.node().op_type();
  if (n.numInputs() != 2) return n.error("expects 2 inputs");
  FailureOr<Type> t = commonElementType(n, 0, 2);
  if (failed(t)) return failure();
  const bool logical = op == "And" || op == "Or" || op == "Xor";
  if (logical != t->isInteger(1) && !(op == "Equal" && t->isInteger(1)))
    return unsupportedType(n, *t);
  const bool f = isFloat(*t);
  const bool u = n.isUnsigned(0);
  Body body = [op, f, u](OpBuilder& b, Location loc, ValueRange a) -> Value {
    Value x = a[0], y = a[1];
    if (op == "And") return b.create<arith::AndIOp>(loc, x, y);
    if (op == "Or") return b.create<arith::OrIOp>(loc, x, y);
    if (op == "Xor") return b.create<arith::XOrIOp>(loc, x, y);
    arith::CmpFPredicate fp = arith::CmpFPredicate::OEQ;
    arith::CmpIPredicate ip = arith::CmpIPredicate::eq;
    if (op == "Less") fp = arith::CmpFPredicate::OLT, ip = arith::CmpIPredicate::slt;
    if (op == "Greater") fp = arith::CmpFPredicate::OGT, ip = arith::CmpIPredicate::sgt;
    if (op == "LessOrEqual") fp = arith::CmpFPredicate::OLE, ip = arith::CmpIPredicate::sle;
    if (op == "GreaterOrEqual") fp = arith::CmpFPredicate::OGE, ip = arith::CmpIPredicate::sge;
    if (u) ip = unsignedPredicate(ip);
    if (f) return b.create<arith::CmpFOp>(loc, fp, x, y);
    return b.create<arith::CmpIOp>(loc, ip, x, y);
  };
  if (auto why = broadcastError({n.value(0), n.value(1)})) return n.error(*why);
  n.setOutput(0, elementwise(n.b(), n.loc(), {n.value(0), n.value(1)}, n.b().getI1Type(), body));
  return success();
}

// Unary ops. Float-only ones refuse integer inputs by name.
LogicalResult convertUnary(NodeContext& n) {
  const std::string op = n.node().op_type();
  if (n.numInputs() != 1) return n.error("expects 1 input");
  Type t = n.elementType(0);
  const bool f = isFloat(t);
  // Shape arithmetic (the number of reduced axes as -axis) stays known.
  if ((op == "Neg" || op == "Abs") && isInt(t)) {
    if (auto e = n.elems(0)) {
      SmallVector<OpFoldResult> out;
      for (OpFoldResult x : *e) {
        auto cx = constantIndex(x);
        if (!cx) {
          out.clear();
          break;
        }
        // In the element type: Neg and Abs of its minimum are the minimum (numpy).
        const APInt v =
            APInt(64, static_cast<uint64_t>(*cx), true).trunc(t.getIntOrFloatBitWidth());
        out.push_back(n.b().getIndexAttr((op == "Neg" ? -v : v.abs()).getSExtValue()));
      }
      if (out.size() == e->size()) {
        n.setOutput(0, elemsTensor(std::move(out), t, n.rank(0) == 0));
        return success();
      }
    }
  }
  const bool int_ok = op == "Abs" || op == "Neg" || op == "Relu" || op == "Sign";
  if (op == "Not") {
    if (!t.isInteger(1)) return unsupportedType(n, t);
  } else if (!f && !(int_ok && isInt(t))) {
    return unsupportedType(n, t);
  }
  const double alpha = n.f("alpha", op == "LeakyRelu"     ? 0.01f
                                    : op == "HardSigmoid" ? 0.2f
                                    : op == "Selu"        ? 1.67326319217681884765625f
                                                          : 1.0f);
  const double beta = n.f("beta", 0.5f);
  const double gamma = n.f("gamma", 1.05070102214813232421875f);
  Body body = [=](OpBuilder& b, Location loc, ValueRange a) -> Value {
    Value x = a[0];
    auto c = [&](double v) { return scalarConstant(b, loc, t, v); };
    if (op == "Not") return b.create<arith::XOrIOp>(loc, x, c(1));
    if (op == "Abs")
      return f ? b.create<math::AbsFOp>(loc, x).getResult()
               : b.create<math::AbsIOp>(loc, x).getResult();
    if (op == "Neg")
      return f ? b.create<arith::NegFOp>(loc, x).getResult()
               : b.create<arith::SubIOp>(loc, c(0), x).getResult();
    if (op == "Relu")
      return f ? b.create<arith::MaximumFOp>(loc, x, c(0)).getResult()
               : b.create<arith::MaxSIOp>(loc, x, c(0)).getResult();
    if (op == "Sign") {
      if (!f) {
        Value pos = b.create<arith::ExtUIOp>(
            loc, t, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, x, c(0)));
        Value neg = b.create<arith::ExtUIOp>(
            loc, t, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, c(0)));
        return b.create<arith::SubIOp>(loc, pos, neg);
      }
      Value pos = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, c(0));
      Value neg = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, c(0));
      Value s = b.create<arith::SelectOp>(loc, neg, c(-1),
                                          b.create<arith::SelectOp>(loc, pos, c(1), c(0)));
      // NaN stays NaN.
      Value nan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x);
      return b.create<arith::SelectOp>(loc, nan, x, s);
    }
    if (Value v = floatActivation(b, loc, op, x, alpha, beta)) return v;
    if (op == "Erf") return b.create<math::ErfOp>(loc, x);
    if (op == "Sqrt") return b.create<math::SqrtOp>(loc, x);
    if (op == "Exp") return b.create<math::ExpOp>(loc, x);
    if (op == "Log") return b.create<math::LogOp>(loc, x);
    if (op == "Reciprocal") return b.create<arith::DivFOp>(loc, c(1), x);
    if (op == "Floor") return b.create<math::FloorOp>(loc, x);
    if (op == "Ceil") return b.create<math::CeilOp>(loc, x);
    if (op == "Round") return b.create<math::RoundEvenOp>(loc, x);
    if (op == "Sin") return b.create<math::SinOp>(loc, x);
    if (op == "Cos") return b.create<math::CosOp>(loc, x);
    if (op == "Tan") return b.create<math::TanOp>(loc, x);
    if (op == "Atan") return b.create<math::AtanOp>(loc, x);
    if (op == "Sinh") return b.create<math::SinhOp>(loc, x);
    if (op == "Cosh") return b.create<math::CoshOp>(loc, x);
    if (op == "Asin") return b.create<math::AsinOp>(loc, x);
    if (op == "Acos") return b.create<math::AcosOp>(loc, x);
    if (op == "Asinh") return b.create<math::AsinhOp>(loc, x);
    if (op == "Acosh") return b.create<math::AcoshOp>(loc, x);
    if (op == "Atanh") return b.create<math::AtanhOp>(loc, x);
    if (op == "Selu") {
      Value v = floatActivation(b, loc, "Elu", x, alpha, beta);
      return b.create<arith::MulFOp>(loc, v, c(gamma));
    }
    if (op == "HardSwish")
      return b.create<arith::MulFOp>(loc, x,
                                     floatActivation(b, loc, "HardSigmoid", x, 1.0 / 6.0, 0.5));
    llvm_unreachable("registered unary op without a body");
  };
  n.setOutput(0, elementwise(n.b(), n.loc(), {n.value(0)}, t, body));
  return success();
}

// Celu: max(0, x) + min(0, alpha (exp(x / alpha) - 1)).
LogicalResult convertCelu(NodeContext& n) {
  Type t = n.elementType(0);
  if (!isFloat(t)) return unsupportedType(n, t);
  const double alpha = n.f("alpha", 1.0f);
  if (alpha == 0) return n.error("alpha must not be 0");
  Body body = [=](OpBuilder& b, Location loc, ValueRange a) -> Value {
    auto c = [&](double v) { return scalarConstant(b, loc, t, v); };
    Value e = b.create<math::ExpM1Op>(loc, b.create<arith::DivFOp>(loc, a[0], c(alpha)));
    Value neg = b.create<arith::MinimumFOp>(loc, c(0), b.create<arith::MulFOp>(loc, e, c(alpha)));
    return b.create<arith::AddFOp>(loc, b.create<arith::MaximumFOp>(loc, a[0], c(0)), neg);
  };
  n.setOutput(0, elementwise(n.b(), n.loc(), {n.value(0)}, t, body));
  return success();
}

// Shrink: x - bias above lambd, x + bias below -lambd, 0 between (and for NaN, as ONNX's
// reference gives). Floats only: on integers the reference computes in float and casts back.
LogicalResult convertShrink(NodeContext& n) {
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.unsupported("Shrink of integers");
  const double lambd = n.f("lambd", 0.5f), bias = n.f("bias", 0.0f);
  Body body = [=](OpBuilder& b, Location loc, ValueRange a) -> Value {
    auto c = [&](double v) { return scalarConstant(b, loc, t, v); };
    Value x = a[0];
    Value below = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, c(-lambd));
    Value above = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, c(lambd));
    Value y = b.create<arith::SelectOp>(loc, above, b.create<arith::SubFOp>(loc, x, c(bias)), c(0));
    return b.create<arith::SelectOp>(loc, below, b.create<arith::AddFOp>(loc, x, c(bias)), y);
  };
  n.setOutput(0, elementwise(n.b(), n.loc(), {n.value(0)}, t, body));
  return success();
}

// BitShift (unsigned integers only): x << s or x >> s (logical), 0 for a shift of the width or
// more, as numpy's uint arithmetic gives (LLVM's shifts would be undefined there).
LogicalResult convertBitShift(NodeContext& n) {
  const std::string direction = n.s("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return n.error("direction must be LEFT or RIGHT, got '" + direction + "'");
  if (!n.isUnsigned(0) || !n.isUnsigned(1)) return n.error("BitShift takes unsigned integers");
  Type t = n.elementType(0);
  const bool left = direction == "LEFT";
  const int64_t width = t.getIntOrFloatBitWidth();
  Body body = [=](OpBuilder& b, Location loc, ValueRange a) -> Value {
    Value big = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, a[1],
                                        scalarConstant(b, loc, t, static_cast<double>(width)));
    Value s = b.create<arith::SelectOp>(loc, big, scalarConstant(b, loc, t, 0), a[1]);
    Value r = left ? b.create<arith::ShLIOp>(loc, a[0], s).getResult()
                   : b.create<arith::ShRUIOp>(loc, a[0], s).getResult();
    return b.create<arith::SelectOp>(loc, big, scalarConstant(b, loc, t, 0), r);
  };
  if (auto why = broadcastError({n.value(0), n.value(1)})) return n.error(*why);
  n.setOutput(0, elementwise(n.b(), n.loc(), {n.value(0), n.value(1)}, t, body));
  return success();
}

LogicalResult convertCast(NodeContext& n) {
  const int64_t to = n.i("to", 0);
  bool to_unsigned = false;
  Type t = storageTypeOf(n.b().getContext(), static_cast<int32_t>(to), &to_unsigned);
  if (!t) return n.unsupported("cast to " + dtypeName(static_cast<int32_t>(to)));
  if (!n.elementType(0)) return n.unsupported("cast from this element type");
  if (to_unsigned || n.isUnsigned(0)) {
    Value y = convertTensor(n.b(), n.loc(), n.value(0), t, n.isUnsigned(0), to_unsigned);
    if (to_unsigned)
      n.setUnsignedOutput(0, y);
    else
      n.setOutput(0, y);
    return success();
  }
  // Shape values stay known through an integer cast, wrapped to the new type (int64 300 is
  // int8 44).
  std::optional<SmallVector<OpFoldResult>> elems = n.elems(0);
  if (isInt(t) && isInt(n.elementType(0)) && elems) {
    SmallVector<OpFoldResult> out;
    for (OpFoldResult e : *elems) out.push_back(wrapToType(n.b(), n.loc(), e, t));
    n.setOutput(0, elemsTensor(std::move(out), t, n.rank(0) == 0));
    return success();
  }
  n.setOutput(0, convertTensor(n.b(), n.loc(), n.value(0), t));
  return success();
}

LogicalResult convertCastLike(NodeContext& n) {
  Type t = n.elementType(1);
  Value y = convertTensor(n.b(), n.loc(), n.value(0), t, n.isUnsigned(0), n.isUnsigned(1));
  if (n.isUnsigned(1))
    n.setUnsignedOutput(0, y);
  else
    n.setOutput(0, y);
  return success();
}

// IsNaN, IsInf (detect_negative, detect_positive): a bool tensor.
LogicalResult convertFloatClass(NodeContext& n) {
  Type t = n.elementType(0);
  if (!isFloat(t)) return unsupportedType(n, t);
  const bool nan = n.node().op_type() == "IsNaN";
  const bool neg = n.i("detect_negative", 1) != 0, pos = n.i("detect_positive", 1) != 0;
  Body body = [=](OpBuilder& b, Location loc, ValueRange a) -> Value {
    Value x = a[0];
    if (nan) return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x);
    auto inf = [&](bool negative) {
      return b.create<arith::ConstantOp>(
          loc,
          b.getFloatAttr(t, APFloat::getInf(cast<FloatType>(t).getFloatSemantics(), negative)));
    };
    Value r = b.create<arith::ConstantIntOp>(loc, 0, 1);
    if (pos)
      r = b.create<arith::OrIOp>(
          loc, r, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, x, inf(false)));
    if (neg)
      r = b.create<arith::OrIOp>(
          loc, r, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, x, inf(true)));
    return r;
  };
  n.setOutput(0, elementwise(n.b(), n.loc(), {n.value(0)}, n.b().getI1Type(), body));
  return success();
}

LogicalResult convertClip(NodeContext& n) {
  Type t = n.elementType(0);
  if (t.isInteger(1)) return unsupportedType(n, t);
  const bool f = isFloat(t);
  std::optional<double> lo, hi;
  Value lo_v, hi_v;
  if (n.opset() < 11) {
    if (n.has("min")) lo = n.f("min", 0);
    if (n.has("max")) hi = n.f("max", 0);
  } else {
    if (n.hasInput(1)) {
      if (n.rank(1) != 0 && !hasOneElement(n.type(1))) return n.error("min must be a scalar");
      lo_v = n.value(1);
    }
    if (n.hasInput(2)) {
      if (n.rank(2) != 0 && !hasOneElement(n.type(2))) return n.error("max must be a scalar");
      hi_v = n.value(2);
    }
  }
  SmallVector<Value> inputs = {n.value(0)};
  // Scalars broadcast as rank-0 tensors.
  auto scalarOf = [&](Value v) { return reshape(n.b(), n.loc(), v, {}); };
  if (lo_v) inputs.push_back(scalarOf(lo_v));
  if (hi_v) inputs.push_back(scalarOf(hi_v));
  const bool has_lo_v = static_cast<bool>(lo_v), has_hi_v = static_cast<bool>(hi_v);
  Body body = [=](OpBuilder& b, Location loc, ValueRange a) -> Value {
    Value x = a[0];
    size_t next = 1;
    Value l = has_lo_v ? a[next++] : lo ? scalarConstant(b, loc, t, *lo) : Value();
    Value h = has_hi_v ? a[next++] : hi ? scalarConstant(b, loc, t, *hi) : Value();
    // max(min) order as numpy.clip; NaN inputs stay NaN.
    if (l)
      x = f ? b.create<arith::MaximumFOp>(loc, x, l).getResult()
            : b.create<arith::MaxSIOp>(loc, x, l).getResult();
    if (h)
      x = f ? b.create<arith::MinimumFOp>(loc, x, h).getResult()
            : b.create<arith::MinSIOp>(loc, x, h).getResult();
    return x;
  };
  n.setOutput(0, elementwise(n.b(), n.loc(), inputs, t, body));
  return success();
}

LogicalResult convertWhere(NodeContext& n) {
  if (n.numInputs() != 3) return n.error("expects 3 inputs");
  if (!n.elementType(0).isInteger(1)) return n.error("condition must be bool");
  if (n.elementType(1) != n.elementType(2)) return n.error("X and Y have different element types");
  Body body = [](OpBuilder& b, Location loc, ValueRange a) -> Value {
    return b.create<arith::SelectOp>(loc, a[0], a[1], a[2]);
  };
  if (auto why = broadcastError({n.value(0), n.value(1), n.value(2)})) return n.error(*why);
  n.setOutput(
      0, elementwise(n.b(), n.loc(), {n.value(0), n.value(1), n.value(2)}, n.elementType(1), body));
  return success();
}

LogicalResult convertIdentity(NodeContext& n) {
  n.setOutput(0, n.input(0));
  return success();
}

// Dropout at inference: the identity, and a mask of all true.
LogicalResult convertDropout(NodeContext& n) {
  if (n.hasInput(2)) {
    // A ratio of 0 drops nothing, in training too: the identity whatever training_mode is.
    std::optional<double> ratio = n.hasInput(1) ? n.constScalar(1) : std::optional<double>(0.5);
    const bool keeps_all = ratio && *ratio == 0;
    std::optional<double> training = n.constScalar(2);
    if (training && *training != 0 && ratio && !keeps_all)
      return n.unsupported("training_mode=true with a ratio other than 0 (random dropping)");
    if ((!training || *training != 0) && !keeps_all) {
      // Known only when the module runs: the identity is right unless it trains with a ratio
      // other than 0, which fails the execution rather than drop nothing.
      OpBuilder& b = n.b();
      Location loc = n.loc();
      auto scalarOf = [&](size_t i) -> Value {
        SmallVector<Value> at(n.rank(i), b.create<arith::ConstantIndexOp>(loc, 0));
        return b.create<tensor::ExtractOp>(loc, n.value(i), at);
      };
      if (!hasOneElement(n.type(1)) || !hasOneElement(n.type(2)))
        return n.error("ratio and training_mode must be scalars");
      Value train = training ? b.create<arith::ConstantIntOp>(loc, 1, 1).getResult()
                             : convertScalar(b, loc, scalarOf(2), b.getI1Type());
      Value r = scalarOf(1);
      Value zero = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, r,
                                           scalarConstant(b, loc, r.getType(), 0));
      runtimeCheck(
          b, loc,
          b.create<arith::OrIOp>(
              loc, zero,
              b.create<arith::XOrIOp>(loc, train, b.create<arith::ConstantIntOp>(loc, 1, 1))),
          "Dropout: training_mode with a ratio other than 0 (random dropping) is not "
          "supported");
    }
  }
  if (n.opset() < 7 && n.i("is_test", 0) == 0) return n.unsupported("is_test=0");
  n.setOutput(0, n.input(0));
  if (n.wantsOutput(1)) {
    Value x = n.value(0);
    n.setOutput(1, filled(n.b(), n.loc(), dimsOf(n.b(), n.loc(), x),
                          scalarConstant(n.b(), n.loc(), n.b().getI1Type(), 1)));
  }
  return success();
}

}  // namespace

void addElementwiseOps(Registry& r) {
  for (const char* op : {"Add", "Sub", "Mul", "Div"})
    r[op] = {convertArithmetic, {"broadcast", "axis"}};
  for (const char* op : {"Pow", "PRelu"}) r[op] = {convertArithmetic, {}};
  r["Mod"] = {convertArithmetic, {"fmod"}};
  for (const char* op : {"Min", "Max", "Sum", "Mean"}) r[op] = {convertVariadic, {}};
  for (const char* op :
       {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"})
    r[op] = {convertCompare, {}};
  for (const char* op :
       {"Relu", "Sigmoid",    "Tanh",     "Erf",      "Sqrt",     "Exp",   "Log",   "Neg",
        "Abs",  "Reciprocal", "Floor",    "Ceil",     "Round",    "Sin",   "Cos",   "Tan",
        "Atan", "Sinh",       "Cosh",     "Asin",     "Acos",     "Asinh", "Acosh", "Atanh",
        "Not",  "Sign",       "Softsign", "Softplus", "HardSwish"})
    r[op] = {convertUnary, {}};
  r["LeakyRelu"] = {convertUnary, {"alpha"}};
  r["Elu"] = {convertUnary, {"alpha"}};
  r["Selu"] = {convertUnary, {"alpha", "gamma"}};
  r["HardSigmoid"] = {convertUnary, {"alpha", "beta"}};
  r["Cast"] = {convertCast, {"to"}};
  r["CastLike"] = {convertCastLike, {}};
  r["IsNaN"] = {convertFloatClass, {}};
  r["IsInf"] = {convertFloatClass, {"detect_negative", "detect_positive"}};
  r["ThresholdedRelu"] = {convertUnary, {"alpha"}};
  r["Clip"] = {convertClip, {"min", "max"}};
  r["Where"] = {convertWhere, {}};
  r["Identity"] = {convertIdentity, {}};
  r["Dropout"] = {convertDropout, {"ratio", "seed", "is_test"}};
  r["Shrink"] = {convertShrink, {"bias", "lambd"}};
  r["BitShift"] = {convertBitShift, {"direction"}};
  r["Celu"] = {convertCelu, {"alpha"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
