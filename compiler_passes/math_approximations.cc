// Inline f32 exp, expm1, log, log1p, tanh and erf, computed in f64 and rounded once to f32.
//
// Why f64: a polynomial in double precision has errors around 1e-10 relative here, far below
// f32's half unit (3e-8), so the single rounding at the end gives results within 0.5 ulp plus a
// hair, subnormal results and overflow to infinity included (f64's exponent range covers every
// f32 result, so no special scaling is needed). The code is straight-line arithmetic, integer
// bit operations and selects: no call, so LLVM vectorizes the loops around it (two or four f64
// lanes per instruction), where a libm call would be made once per element.
//
// The reductions:
//   exp(x)   = 2^k * e^r,  k = round(x / ln 2), |r| <= ln(2)/2, e^r by its Taylor series
//   expm1(x) = 2^k * expm1(r) + (2^k - 1)   (expm1(r) directly when k = 0: no cancellation)
//   log(x)   = e * ln 2 + 2 atanh(s),  x = 2^e * m, m in [sqrt(1/2), sqrt(2)), s = (m-1)/(m+1)
//   log1p(x) = log(1 + x) * x / ((1 + x) - 1)   (corrects the rounding of 1 + x)
//   tanh(x)  = sign(x) * t / (t + 2),  t = expm1(2|x|), |x| capped at 20 (tanh rounds to 1)
//   erf(x)   = x * P(x^2) (Taylor) for |x| <= 1; else sign(x) (1 - e^(-x^2) erfcx(|x|)), erfcx
//              (= e^(x^2) erfc(x), smooth) by a Chebyshev series on [1, 4] fitted when the pass
//              runs; |x| capped at 4 (erf rounds to +-1 from 3.92 on)
// Special values (NaN, infinities, zeros and their signs, arguments outside the domain) are
// selected explicitly at the end.
#include "compiler_passes/math_approximations.h"

#include <array>
#include <cmath>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace disc_ral {
namespace {

// Emits f64 scalar arithmetic at one location.
class F64 {
 public:
  F64(OpBuilder& b, Location loc) : b_(b), loc_(loc) {}

  Value c(double v) { return b_.create<arith::ConstantOp>(loc_, b_.getF64FloatAttr(v)); }
  Value ci(int64_t v) { return b_.create<arith::ConstantOp>(loc_, b_.getI64IntegerAttr(v)); }
  Value add(Value a, Value b) { return b_.create<arith::AddFOp>(loc_, a, b); }
  Value sub(Value a, Value b) { return b_.create<arith::SubFOp>(loc_, a, b); }
  Value mul(Value a, Value b) { return b_.create<arith::MulFOp>(loc_, a, b); }
  Value div(Value a, Value b) { return b_.create<arith::DivFOp>(loc_, a, b); }
  // a * b + c, fused where the target has FMA (either way far inside the error budget).
  Value muladd(Value a, Value b, Value c) {
    auto contract = arith::FastMathFlagsAttr::get(b_.getContext(), arith::FastMathFlags::contract);
    Value p = b_.create<arith::MulFOp>(loc_, a, b, contract);
    return b_.create<arith::AddFOp>(loc_, p, c, contract);
  }
  Value cmp(arith::CmpFPredicate pred, Value a, Value b) {
    return b_.create<arith::CmpFOp>(loc_, pred, a, b);
  }
  Value select(Value cond, Value a, Value b) {
    return b_.create<arith::SelectOp>(loc_, cond, a, b);
  }
  Value isNaN(Value a) { return cmp(arith::CmpFPredicate::UNO, a, a); }
  // v limited to [lo, hi]; NaN stays NaN.
  Value clamp(Value v, double lo, double hi) {
    v = select(cmp(arith::CmpFPredicate::OLT, v, c(lo)), c(lo), v);
    return select(cmp(arith::CmpFPredicate::OGT, v, c(hi)), c(hi), v);
  }
  // Horner: coeffs[0] + x * (coeffs[1] + x * (...)).
  Value poly(Value x, ArrayRef<double> coeffs) {
    Value r = c(coeffs.back());
    for (int i = static_cast<int>(coeffs.size()) - 2; i >= 0; --i) r = muladd(r, x, c(coeffs[i]));
    return r;
  }
  // Conversions between f64 and i64 use the bits of 1.5 * 2^52 + n, whose low mantissa bits
  // hold the integer n (|n| < 2^51): SSE2 and AVX2 have no vector instruction for fptosi/sitofp
  // of 64-bit lanes, so those would be done one lane at a time.
  static constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52
  Value magicBits() { return ci(0x4338000000000000); }  // the bits of kMagic

  // v + kMagic: its bits are those of kMagic plus round(v) (ties to even), for |v| < 2^51.
  Value toMagic(Value v) { return add(v, c(kMagic)); }
  Value magicToDouble(Value m) { return sub(m, c(kMagic)); }
  Value magicToInt(Value m) {
    Value bits = b_.create<arith::BitcastOp>(loc_, b_.getI64Type(), m);
    return b_.create<arith::SubIOp>(loc_, bits, magicBits());
  }
  Value intToDouble(Value i) {
    Value bits = b_.create<arith::AddIOp>(loc_, i, magicBits());
    return magicToDouble(b_.create<arith::BitcastOp>(loc_, b_.getF64Type(), bits));
  }
  // 2^k for an integer k in [-1022, 1023].
  Value pow2(Value k) {
    Value biased = b_.create<arith::AddIOp>(loc_, k, ci(1023));
    Value bits = b_.create<arith::ShLIOp>(loc_, biased, ci(52));
    return b_.create<arith::BitcastOp>(loc_, b_.getF64Type(), bits);
  }

  // e^x for x in [-104, 89] (every f32 argument whose result is neither 0 nor inf, with margin).
  Value exp(Value x) {
    auto [k, k_int, r] = reduceByLn2(x);
    // e^r, |r| <= 0.347: Taylor to r^8 (relative error below 3e-10).
    Value er = poly(
        r, {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320});
    return mul(er, pow2(k_int));
  }

  // e^x - 1 for x in [-104, 89].
  Value expm1(Value x) {
    auto [k, k_int, r] = reduceByLn2(x);
    // expm1(r) = r + r^2 * (1/2 + r/6 + ...), Taylor to r^9 (relative error below 1e-10).
    Value tail = poly(r, {1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320,
                          1.0 / 362880});
    Value em = muladd(mul(r, r), tail, r);
    Value two_k = pow2(k_int);
    Value scaled = muladd(two_k, em, sub(two_k, c(1.0)));
    return select(cmp(arith::CmpFPredicate::OEQ, k, c(0.0)), em, scaled);
  }

  // erf x for any f64 x (NaN aside).
  Value erf(Value x) {
    // |x| <= 1: 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1)), to n = 12 (error below 2e-11).
    std::array<double, 13> taylor;
    double factorial = 1.0;
    for (int n = 0; n < 13; ++n) {
      if (n > 0) factorial *= n;
      taylor[n] = (n % 2 ? -2.0 : 2.0) / std::sqrt(M_PI) / (factorial * (2 * n + 1));
    }
    Value small = mul(x, poly(mul(x, x), taylor));
    // 1 < |x| <= 4: 1 - e^(-a^2) erfcx(a).
    Value neg = cmp(arith::CmpFPredicate::OLT, x, c(0.0));
    Value a = clamp(select(neg, sub(c(0.0), x), x), 1.0, 4.0);
    Value g = chebyshev(a, 1.0, 4.0, erfcxCoefficients());
    Value big = sub(c(1.0), mul(exp(sub(c(0.0), mul(a, a))), g));
    big = select(neg, sub(c(0.0), big), big);
    Value in_small = cmp(arith::CmpFPredicate::OLE, select(neg, sub(c(0.0), x), x), c(1.0));
    return select(in_small, small, big);
  }

  // ln x for a positive, finite, normal f64 x (every f32 is normal as an f64).
  Value log(Value x) {
    Type i64 = b_.getI64Type();
    Value bits = b_.create<arith::BitcastOp>(loc_, i64, x);
    Value biased = b_.create<arith::ShRUIOp>(loc_, bits, ci(52));
    Value e = intToDouble(b_.create<arith::SubIOp>(loc_, biased, ci(1023)));
    Value mantissa = b_.create<arith::AndIOp>(loc_, bits, ci((int64_t{1} << 52) - 1));
    Value m = b_.create<arith::BitcastOp>(
        loc_, b_.getF64Type(),
        b_.create<arith::OrIOp>(loc_, mantissa, ci(int64_t{1023} << 52)));  // m in [1, 2)
    Value big = cmp(arith::CmpFPredicate::OGT, m, c(M_SQRT2));
    m = select(big, mul(m, c(0.5)), m);
    e = select(big, add(e, c(1.0)), e);
    // ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), |s| <= 0.172, to s^11 (relative error
    // below 1e-10).
    Value f = sub(m, c(1.0));
    Value s = div(f, add(f, c(2.0)));
    Value z = mul(s, s);
    Value series = poly(z, {2.0, 2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11});
    return muladd(e, c(M_LN2), mul(s, series));
  }

 private:
  static constexpr int kErfcxTerms = 16;
  // Chebyshev coefficients of erfcx on [1, 4] (relative error of the series below 4e-11),
  // computed once from the C library's erfc.
  static const std::array<double, kErfcxTerms>& erfcxCoefficients() {
    static const std::array<double, kErfcxTerms> coefficients = [] {
      std::array<double, kErfcxTerms> f, c;
      const int n = kErfcxTerms;
      for (int k = 0; k < n; ++k) {
        const double a = 2.5 + 1.5 * std::cos(M_PI * (k + 0.5) / n);
        f[k] = std::erfc(a) * std::exp(a * a);
      }
      for (int j = 0; j < n; ++j) {
        double sum = 0;
        for (int k = 0; k < n; ++k) sum += f[k] * std::cos(M_PI * j * (k + 0.5) / n);
        c[j] = 2.0 * sum / n;
      }
      return c;
    }();
    return coefficients;
  }
  // sum' c_j T_j(t) at t = (2a - lo - hi) / (hi - lo), by Clenshaw's recurrence.
  template <size_t N>
  Value chebyshev(Value a, double lo, double hi, const std::array<double, N>& coeffs) {
    Value t = mul(sub(a, c((lo + hi) / 2)), c(2.0 / (hi - lo)));
    Value t2 = add(t, t);
    Value b1 = c(coeffs[N - 1]), b2 = c(0.0);
    for (size_t j = N - 2; j >= 1; --j) {
      Value b0 = muladd(t2, b1, sub(c(coeffs[j]), b2));
      b2 = b1;
      b1 = b0;
    }
    return muladd(t, b1, sub(c(coeffs[0] / 2), b2));
  }

  // x = k ln 2 + r with k integral and |r| <= ln(2)/2 (ln 2 split so k * ln2_hi is exact).
  // Returns k as f64, k as i64, and r.
  struct Reduced {
    Value k, k_int, r;
  };
  Reduced reduceByLn2(Value x) {
    const double ln2_hi = 0x1.62e42fefa3800p-1, ln2_lo = 0x1.ef35793c76730p-45;
    Value m = toMagic(mul(x, c(M_LOG2E)));
    Value k = magicToDouble(m);
    Value r = sub(sub(x, mul(k, c(ln2_hi))), mul(k, c(ln2_lo)));
    return {k, magicToInt(m), r};
  }

  OpBuilder& b_;
  Location loc_;
};

constexpr double kInf = HUGE_VAL;

// Rewrites a scalar f32 op: its operand widened to f64, `compute` on it, rounded back.
template <typename Op>
class F32ViaF64 : public OpRewritePattern<Op> {
 public:
  using Compute = Value (*)(F64&, Value x);
  F32ViaF64(MLIRContext* context, Compute compute)
      : OpRewritePattern<Op>(context), compute_(compute) {}

  LogicalResult matchAndRewrite(Op op, PatternRewriter& rewriter) const override {
    if (!op.getType().isF32()) return failure();
    F64 f(rewriter, op.getLoc());
    Value x = rewriter.create<arith::ExtFOp>(op.getLoc(), rewriter.getF64Type(), op.getOperand());
    Value y = compute_(f, x);
    y = f.select(f.isNaN(x), x, y);
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), y);
    return success();
  }

 private:
  Compute compute_;
};

Value expF32(F64& f, Value x) { return f.exp(f.clamp(x, -104.0, 89.0)); }

Value expm1F32(F64& f, Value x) {
  Value y = f.expm1(f.clamp(x, -104.0, 89.0));
  return f.select(f.cmp(arith::CmpFPredicate::OEQ, x, f.c(0.0)), x, y);  // keeps -0
}

Value logF32(F64& f, Value x) {
  Value y = f.log(x);
  y = f.select(f.cmp(arith::CmpFPredicate::OEQ, x, f.c(kInf)), x, y);
  y = f.select(f.cmp(arith::CmpFPredicate::OEQ, x, f.c(0.0)), f.c(-kInf), y);
  return f.select(f.cmp(arith::CmpFPredicate::OLT, x, f.c(0.0)), f.c(NAN), y);
}

Value log1pF32(F64& f, Value x) {
  Value u = f.add(f.c(1.0), x);  // exact unless |x| < 2^-29, where the factor below corrects it
  Value corrected = f.mul(f.log(u), f.div(x, f.sub(u, f.c(1.0))));
  Value y = f.select(f.cmp(arith::CmpFPredicate::OEQ, u, f.c(1.0)), x, corrected);
  y = f.select(f.cmp(arith::CmpFPredicate::OEQ, x, f.c(kInf)), x, y);
  y = f.select(f.cmp(arith::CmpFPredicate::OEQ, x, f.c(-1.0)), f.c(-kInf), y);
  return f.select(f.cmp(arith::CmpFPredicate::OLT, x, f.c(-1.0)), f.c(NAN), y);
}

Value erfF32(F64& f, Value x) { return f.erf(x); }

Value tanhF32(F64& f, Value x) {
  Value a = f.clamp(f.select(f.cmp(arith::CmpFPredicate::OLT, x, f.c(0.0)), f.sub(f.c(0.0), x), x),
                    0.0, 20.0);
  Value t = f.expm1(f.add(a, a));
  Value magnitude = f.div(t, f.add(t, f.c(2.0)));
  // The sign of x, -0 included.
  return f.select(f.cmp(arith::CmpFPredicate::OEQ, x, f.c(0.0)), x,
                  f.select(f.cmp(arith::CmpFPredicate::OLT, x, f.c(0.0)),
                           f.sub(f.c(0.0), magnitude), magnitude));
}

}  // namespace

LogicalResult populateF32MathApproximations(RewritePatternSet& patterns, llvm::StringRef ops) {
  MLIRContext* ctx = patterns.getContext();
  llvm::SmallVector<llvm::StringRef> names;
  ops.split(names, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef name : names) {
    name = name.trim();
    if (name == "exp")
      patterns.add<F32ViaF64<math::ExpOp>>(ctx, &expF32);
    else if (name == "expm1")
      patterns.add<F32ViaF64<math::ExpM1Op>>(ctx, &expm1F32);
    else if (name == "log")
      patterns.add<F32ViaF64<math::LogOp>>(ctx, &logF32);
    else if (name == "log1p")
      patterns.add<F32ViaF64<math::Log1pOp>>(ctx, &log1pF32);
    else if (name == "tanh")
      patterns.add<F32ViaF64<math::TanhOp>>(ctx, &tanhF32);
    else if (name == "erf")
      patterns.add<F32ViaF64<math::ErfOp>>(ctx, &erfF32);
    else
      return failure();
  }
  return success();
}

}  // namespace disc_ral
}  // namespace mlir
