// Inline f32 exp, expm1, log, log1p, tanh and erf: straight-line arithmetic, integer bit
// operations and selects, no call, so LLVM vectorizes the loops around them (16 lanes with
// AVX-512) where a libm call would be made once per element.
//
// By default they are computed in f32 (within about 1 ulp, checked by
// test/e2e/math_accuracy.py); each also has a variant computed in f64 and rounded once ("exp.f64"
// etc. in the op list: within 0.5 ulp, at half the vector width and with conversions).
//
// f32 reductions (polynomials are Chebyshev interpolants fitted when the pass runs, from the C
// library's double functions; F32Polynomials lists their errors):
//   exp(x)   = 2^k e^r,  k = round(x / ln 2), |r| <= ln(2)/2 (Cody-Waite, ln 2 split in two),
//              2^k built from integer bits as 2^k1 2^k2 so subnormal results round once
//   expm1(x) = 2^k (1 + r + q) - 1, q = r^2 P(r), summed so that 2^k - 1 + 2^k r comes first
//   log(x)   = k ln 2 + log(m),  x = 2^k m, m in [sqrt(1/2), sqrt(2)), log(1 + f) =
//              f - f^2/2 + s (f^2/2 + z P(z)), s = f / (2 + f), z = s^2 (f and k ln2_hi exact)
//   log1p(x) = log(u) + c / u, u = 1 + x rounded, c its exact rounding error
//   tanh(x)  = x + x Q(x^2) for |x| <= 0.9, else sign(x) (1 - 2 / (e^(2|x|) + 1))
//   erf(x)   = x + x Q(x^2) for |x| <= 1, else sign(x) (1 - erfc(|x|)), erfc by one of two
//              polynomials in |x| on [1, 2.2] and [2.2, 3.92] (erf rounds to +-1 beyond)
//
// f64 reductions (polynomial errors near 1e-10 relative, far below f32's half unit, so the single
// rounding at the end gives results within 0.5 ulp plus a hair; f64's exponent range covers every
// f32 result, so no special scaling is needed):
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
#include "compiler_passes/transforms/math_approximations.h"

#include <array>
#include <cmath>
#include <vector>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace disc_ral {
namespace {

// The scalar arithmetic the f64 and f32 emitters share, at one location. Self provides c(v),
// the constant v of its float type.
template <class Self>
class ScalarOps {
 public:
  ScalarOps(OpBuilder& b, Location loc) : b_(b), loc_(loc) {}

  Value add(Value a, Value b) { return b_.create<arith::AddFOp>(loc_, a, b); }
  Value sub(Value a, Value b) { return b_.create<arith::SubFOp>(loc_, a, b); }
  Value mul(Value a, Value b) { return b_.create<arith::MulFOp>(loc_, a, b); }
  Value div(Value a, Value b) { return b_.create<arith::DivFOp>(loc_, a, b); }
  Value neg(Value a) { return b_.create<arith::NegFOp>(loc_, a); }
  // a * b + c, fused where the target has FMA. Where exactness matters (the reductions, products
  // by powers of two) the product is exact either way; elsewhere the extra rounding without FMA
  // is a fraction of an ulp.
  Value fma(Value a, Value b, Value c) {
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
    Self& self = static_cast<Self&>(*this);
    v = select(cmp(arith::CmpFPredicate::OLT, v, self.c(lo)), self.c(lo), v);
    return select(cmp(arith::CmpFPredicate::OGT, v, self.c(hi)), self.c(hi), v);
  }

 protected:
  OpBuilder& b_;
  Location loc_;
};

// Emits f64 scalar arithmetic at one location.
class F64 : public ScalarOps<F64> {
 public:
  using ScalarOps::ScalarOps;

  Value c(double v) { return b_.create<arith::ConstantOp>(loc_, b_.getF64FloatAttr(v)); }
  Value ci(int64_t v) { return b_.create<arith::ConstantOp>(loc_, b_.getI64IntegerAttr(v)); }
  // Horner: coeffs[0] + x * (coeffs[1] + x * (...)).
  Value poly(Value x, ArrayRef<double> coeffs) {
    Value r = c(coeffs.back());
    for (int i = static_cast<int>(coeffs.size()) - 2; i >= 0; --i) r = fma(r, x, c(coeffs[i]));
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
    Value em = fma(mul(r, r), tail, r);
    Value two_k = pow2(k_int);
    Value scaled = fma(two_k, em, sub(two_k, c(1.0)));
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
    return fma(e, c(M_LN2), mul(s, series));
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
      Value b0 = fma(t2, b1, sub(c(coeffs[j]), b2));
      b2 = b1;
      b1 = b0;
    }
    return fma(t, b1, sub(c(coeffs[0] / 2), b2));
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
};

// Monomial coefficients, in u = x - (lo + hi) / 2 (in x itself where `centred` is false, for
// intervals starting at 0), of the polynomial of degree `degree` that interpolates f at the
// Chebyshev nodes of [lo, hi]: within a small factor of the best uniform approximation of that
// degree. Computed in double when the pass runs (f is a C library function, accurate to about
// 1e-16), so no coefficient is a magic literal.
template <typename F>
std::vector<double> chebyshevFit(F f, double lo, double hi, int degree, bool centred = true) {
  const int n = degree + 1;
  const double mid = (lo + hi) / 2, half = (hi - lo) / 2;
  std::vector<double> values(n), cheb(n), mono(n, 0.0);
  for (int k = 0; k < n; ++k) values[k] = f(mid + half * std::cos(M_PI * (k + 0.5) / n));
  for (int j = 0; j < n; ++j) {
    double sum = 0;
    for (int k = 0; k < n; ++k) sum += values[k] * std::cos(M_PI * j * (k + 0.5) / n);
    cheb[j] = (j == 0 ? 1.0 : 2.0) * sum / n;
  }
  // T_j in powers of t = u / half: T_0 = 1, T_1 = t, T_{j+1} = 2t T_j - T_{j-1}.
  std::vector<double> prev(n, 0.0), cur(n, 0.0);
  prev[0] = 1.0;
  if (n > 1) cur[1] = 1.0;
  for (int j = 0; j < n; ++j) {
    const std::vector<double>& t_j = j == 0 ? prev : cur;
    for (int i = 0; i < n; ++i) mono[i] += cheb[j] * t_j[i];
    if (j >= 1) {
      std::vector<double> next(n, 0.0);
      for (int i = 0; i + 1 < n; ++i) next[i + 1] = 2 * cur[i];
      for (int i = 0; i < n; ++i) next[i] -= prev[i];
      prev = cur;
      cur = next;
    }
  }
  double scale = 1.0;
  for (int i = 0; i < n; ++i, scale /= half) mono[i] *= scale;
  if (!centred) {
    // p(x - mid) expanded in x (synthetic division by x - mid, repeated).
    for (int i = 0; i < n; ++i)
      for (int j = n - 2; j >= i; --j) mono[j] -= mid * mono[j + 1];
  }
  return mono;
}

// The polynomials of the f32 functions, fitted once per process.
struct F32Polynomials {
  // (expm1(r) - r) / r^2 on |r| <= 0.35 (a little over ln(2)/2): expm1(r) = r + r^2 P(r), relative
  // error below 1e-9.
  std::vector<double> expm1 = chebyshevFit(
      [](double r) {
        if (std::fabs(r) < 1e-3) return 0.5 + r / 6 + r * r / 24 + r * r * r / 120;
        return (std::expm1(r) - r) / (r * r);
      },
      -0.35, 0.35, 5);
  // log(1+f) = f - f^2/2 + s (f^2/2 + z P(z)), s = f / (2 + f), z = s^2 <= 0.0295 (|f| <= 0.415):
  // z P(z) = 2 atanh(s) / s - 2, relative error of the sum below 1e-10.
  std::vector<double> log = chebyshevFit(
      [](double z) {
        const double s = std::sqrt(z);
        return (2 * std::atanh(s) / s - 2) / z;
      },
      0.0, 0.0296, 4, /*centred=*/false);
  // tanh(x) = x + x Q(x^2) for |x| <= 0.9: relative error 1e-9.
  std::vector<double> tanh = chebyshevFit(
      [](double z) {
        const double x = std::sqrt(z);
        return std::tanh(x) / x - 1;
      },
      0.0, kTanhSmall* kTanhSmall, 7, /*centred=*/false);
  // erf(x) = x + x Q(x^2) for |x| <= 1: relative error 1.3e-9.
  std::vector<double> erf_small = chebyshevFit(
      [](double z) {
        const double x = std::sqrt(z);
        return std::erf(x) / x - 1;
      },
      0.0, 1.0, 6, /*centred=*/false);
  // erfc on [1, 2.2] and [2.2, 3.92] (erf rounds to 1 in f32 beyond): absolute errors 4e-9 and
  // 1e-8, against erf's half unit of 3e-8 there.
  std::vector<double> erfc_mid =
      chebyshevFit([](double x) { return std::erfc(x); }, 1.0, kErfSplit, 9);
  std::vector<double> erfc_tail =
      chebyshevFit([](double x) { return std::erfc(x); }, kErfSplit, kErfMax, 9);

  static constexpr double kErfSplit = 2.2, kErfMax = 3.92, kTanhSmall = 0.9;
  static const F32Polynomials& get() {
    static const F32Polynomials polynomials;
    return polynomials;
  }
};

// Emits f32 scalar arithmetic (and i32 bit operations) at one location.
class F32 : public ScalarOps<F32> {
 public:
  using ScalarOps::ScalarOps;

  Value c(double v) {
    return b_.create<arith::ConstantOp>(loc_, b_.getF32FloatAttr(static_cast<float>(v)));
  }
  Value ci(int32_t v) { return b_.create<arith::ConstantOp>(loc_, b_.getI32IntegerAttr(v)); }
  Value toBits(Value v) { return b_.create<arith::BitcastOp>(loc_, b_.getI32Type(), v); }
  Value fromBits(Value v) { return b_.create<arith::BitcastOp>(loc_, b_.getF32Type(), v); }
  Value addi(Value a, Value b) { return b_.create<arith::AddIOp>(loc_, a, b); }
  Value subi(Value a, Value b) { return b_.create<arith::SubIOp>(loc_, a, b); }
  Value andi(Value a, Value b) { return b_.create<arith::AndIOp>(loc_, a, b); }
  Value shl(Value a, int32_t n) { return b_.create<arith::ShLIOp>(loc_, a, ci(n)); }
  Value ashr(Value a, int32_t n) { return b_.create<arith::ShRSIOp>(loc_, a, ci(n)); }
  Value abs(Value a) { return b_.create<math::AbsFOp>(loc_, a); }
  Value copysign(Value a, Value sign) { return b_.create<math::CopySignOp>(loc_, a, sign); }
  // Horner with FMA: coeffs[0] + u * (coeffs[1] + u * (...)).
  Value poly(Value u, const std::vector<double>& coeffs) {
    Value r = c(coeffs.back());
    for (int i = static_cast<int>(coeffs.size()) - 2; i >= 0; --i) r = fma(r, u, c(coeffs[i]));
    return r;
  }
  // Like poly, each coefficient chosen per element between two polynomials of one degree.
  Value poly2(Value u, Value first, const std::vector<double>& a, const std::vector<double>& b) {
    auto coeff = [&](size_t i) { return select(first, c(a[i]), c(b[i])); };
    Value r = coeff(a.size() - 1);
    for (int i = static_cast<int>(a.size()) - 2; i >= 0; --i) r = fma(r, u, coeff(i));
    return r;
  }
  // 2^k for an integer k in [-126, 127].
  Value pow2(Value k) { return fromBits(shl(addi(k, ci(127)), 23)); }

  // x = k ln 2 + r, k integral, |r| <= ln(2)/2 plus rounding. 1.5 * 2^23 + v has round(v) in
  // its low mantissa bits (|v| < 2^22): k without fptosi, which SSE2 lacks for vectors.
  // ln 2 = ln2_hi + ln2_lo, ln2_hi with 9 bits, so k ln2_hi is exact for |k| < 2^15 and so is
  // x - k ln2_hi (Sterbenz); the rounding of k ln2_lo is below 1e-9 relative to e^r.
  struct Reduced {
    Value k, k_int, r;
  };
  Reduced reduceByLn2(Value x) {
    constexpr double kMagic = 12582912.0;  // 1.5 * 2^23
    const double ln2_hi = 0.693359375, ln2_lo = M_LN2 - 0.693359375;
    Value m = add(mul(x, c(M_LOG2E)), c(kMagic));
    Value k = sub(m, c(kMagic));
    Value k_int = subi(toBits(m), ci(0x4B400000));  // the bits of kMagic
    Value r = fma(neg(k), c(ln2_hi), x);
    r = fma(neg(k), c(ln2_lo), r);
    return {k, k_int, r};
  }

  // e^x for x in [-104, 89] (0 and inf at the ends, subnormal results rounded once); NaN gives
  // NaN (r is NaN, whatever the integer bits of k).
  Value exp(Value x) {
    auto [k, k_int, r] = reduceByLn2(x);
    // e^r = 1 + t, t = r + r^2 P(r); 2^k (1 + t) as one FMA, so 1 + t is never rounded.
    Value t = fma(mul(r, r), poly(r, F32Polynomials::get().expm1), r);
    // 2^k as 2^k1 * 2^k2, both normal for k in [-150, 128]; 2^k1 (1 + t) is normal, so the
    // second product rounds at most once more, to a subnormal or infinity where the result is
    // one.
    Value k1 = ashr(k_int, 1);
    Value s1 = pow2(k1);
    return mul(fma(t, s1, s1), pow2(subi(k_int, k1)));
  }

  // e^x - 1 for x in [-20, 89] (-1 and inf at the ends).
  Value expm1(Value x) {
    auto [k, k_int, r] = reduceByLn2(x);
    Value q = mul(mul(r, r), poly(r, F32Polynomials::get().expm1));  // expm1(r) = r + q
    // 2^k (1 + r + q) - 1 = 2 h (r + q) + (2h - 1) with h = 2^(k-1): 2h - 1 + 2hr first (exact
    // where it matters: 1 + 2r for k = 1, which would otherwise lose a bit), then 2hq; the
    // final doubling is exact and overflows only where e^x does.
    Value h = pow2(subi(k_int, ci(1)));
    Value lead = fma(h, r, sub(h, c(0.5)));
    return mul(fma(h, q, lead), c(2.0));
  }

  // log(u) + c / u for a positive normal u with its exponent lowered by `extra` (an integer in
  // f32), c a correction no larger than half an ulp of u (log1p's rounding of 1 + x; 0 for log).
  Value logCore(Value u, Value correction, Value extra) {
    // u = 2^k m, m in [sqrt(1/2), sqrt(2)), by integer operations on the bits.
    Value bits = addi(toBits(u), ci(0x3F800000 - 0x3F3504F3));
    Value k_int = subi(ashr(bits, 23), ci(127));
    Value m = fromBits(addi(andi(bits, ci(0x007FFFFF)), ci(0x3F3504F3)));
    Value k = add(b_.create<arith::SIToFPOp>(loc_, b_.getF32Type(), k_int), extra);
    Value f = sub(m, c(1.0));  // exact
    Value s = div(f, add(f, c(2.0)));
    Value z = mul(s, s);
    Value r = mul(z, poly(z, F32Polynomials::get().log));
    Value hfsq = mul(mul(f, f), c(0.5));
    // ln2_hi has 16 bits: k ln2_hi is exact.
    const double ln2_hi = 0.693145751953125, ln2_lo = M_LN2 - 0.693145751953125;
    // Smallest terms first; f and k ln2_hi carry the bulk and are added last.
    Value small = fma(s, add(hfsq, r), fma(k, c(ln2_lo), correction));
    return fma(k, c(ln2_hi), add(sub(small, hfsq), f));
  }

  // erf x for any x; NaN gives NaN (every step carries it: clamps and selects keep it).
  Value erf(Value x) {
    const F32Polynomials& p = F32Polynomials::get();
    Value a = abs(x);
    Value z = mul(x, x);
    Value small = fma(x, poly(z, p.erf_small), x);
    // 1 < |x| < 3.92: 1 - erfc(|x|), erfc from one of two polynomials in |x| - centre.
    Value ac = clamp(a, 1.0, F32Polynomials::kErfMax);
    Value first = cmp(arith::CmpFPredicate::OLT, ac, c(F32Polynomials::kErfSplit));
    const double mid1 = (1.0 + F32Polynomials::kErfSplit) / 2;
    const double mid2 = (F32Polynomials::kErfSplit + F32Polynomials::kErfMax) / 2;
    Value u = sub(ac, select(first, c(mid1), c(mid2)));
    Value big = sub(c(1.0), poly2(u, first, p.erfc_mid, p.erfc_tail));
    big = select(cmp(arith::CmpFPredicate::OGE, a, c(F32Polynomials::kErfMax)), c(1.0), big);
    big = copysign(big, x);
    return select(cmp(arith::CmpFPredicate::OLE, a, c(1.0)), small, big);
  }

  // tanh x for any x; NaN gives NaN (as erf).
  Value tanh(Value x) {
    Value a = abs(x);
    Value small = fma(x, poly(mul(x, x), F32Polynomials::get().tanh), x);
    // |x| > 0.9: 1 - 2 / (e^(2|x|) + 1); |x| capped at 10, where tanh rounds to 1. (Closer to 0,
    // the rounding errors of e^(2|x|) and of the division would add up to over 1 ulp.)
    Value e = exp(mul(clamp(a, F32Polynomials::kTanhSmall, 10.0), c(2.0)));
    Value big = sub(c(1.0), div(c(2.0), add(e, c(1.0))));
    big = copysign(big, x);
    return select(cmp(arith::CmpFPredicate::OLE, a, c(F32Polynomials::kTanhSmall)), small, big);
  }
};

constexpr double kInf = HUGE_VAL;

// log and log1p at and below their pole (0 or -1), in either precision: +inf stays +inf, the
// pole gives -inf, anything below it NaN.
template <typename F>
Value logSpecialValues(F& f, Value x, Value y, double pole) {
  y = f.select(f.cmp(arith::CmpFPredicate::OEQ, x, f.c(kInf)), x, y);
  y = f.select(f.cmp(arith::CmpFPredicate::OEQ, x, f.c(pole)), f.c(-kInf), y);
  return f.select(f.cmp(arith::CmpFPredicate::OLT, x, f.c(pole)), f.c(NAN), y);
}

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

Value expViaF64(F64& f, Value x) { return f.exp(f.clamp(x, -104.0, 89.0)); }

Value expm1ViaF64(F64& f, Value x) {
  Value y = f.expm1(f.clamp(x, -104.0, 89.0));
  return f.select(f.cmp(arith::CmpFPredicate::OEQ, x, f.c(0.0)), x, y);  // keeps -0
}

Value logViaF64(F64& f, Value x) { return logSpecialValues(f, x, f.log(x), 0.0); }

Value log1pViaF64(F64& f, Value x) {
  Value u = f.add(f.c(1.0), x);  // exact unless |x| < 2^-29, where the factor below corrects it
  Value corrected = f.mul(f.log(u), f.div(x, f.sub(u, f.c(1.0))));
  Value y = f.select(f.cmp(arith::CmpFPredicate::OEQ, u, f.c(1.0)), x, corrected);
  return logSpecialValues(f, x, y, -1.0);
}

Value erfViaF64(F64& f, Value x) { return f.erf(x); }

Value tanhViaF64(F64& f, Value x) {
  Value a = f.clamp(f.select(f.cmp(arith::CmpFPredicate::OLT, x, f.c(0.0)), f.sub(f.c(0.0), x), x),
                    0.0, 20.0);
  Value t = f.expm1(f.add(a, a));
  Value magnitude = f.div(t, f.add(t, f.c(2.0)));
  // The sign of x, -0 included.
  return f.select(f.cmp(arith::CmpFPredicate::OEQ, x, f.c(0.0)), x,
                  f.select(f.cmp(arith::CmpFPredicate::OLT, x, f.c(0.0)),
                           f.sub(f.c(0.0), magnitude), magnitude));
}

// Rewrites a scalar f32 op: `compute` on its operand in f32; NaN in, NaN out (by a final select
// unless `compute` already carries NaN through, which saves two instructions per vector).
template <typename Op>
class F32Inline : public OpRewritePattern<Op> {
 public:
  using Compute = Value (*)(F32&, Value x);
  F32Inline(MLIRContext* context, Compute compute, bool propagates_nan)
      : OpRewritePattern<Op>(context), compute_(compute), propagates_nan_(propagates_nan) {}

  LogicalResult matchAndRewrite(Op op, PatternRewriter& rewriter) const override {
    if (!op.getType().isF32()) return failure();
    F32 f(rewriter, op.getLoc());
    Value x = op.getOperand();
    Value y = compute_(f, x);
    if (!propagates_nan_) y = f.select(f.cmp(arith::CmpFPredicate::UNO, x, x), x, y);
    rewriter.replaceOp(op, y);
    return success();
  }

 private:
  Compute compute_;
  bool propagates_nan_;
};

Value expF32(F32& f, Value x) { return f.exp(f.clamp(x, -104.0, 89.0)); }

Value expm1F32(F32& f, Value x) {
  Value y = f.expm1(f.clamp(x, -20.0, 89.0));
  return f.select(f.cmp(arith::CmpFPredicate::OEQ, x, f.c(0.0)), x, y);  // keeps -0
}

Value logF32(F32& f, Value x) {
  // Subnormal x: scaled by 2^23 into the normal range first.
  Value subnormal = f.cmp(arith::CmpFPredicate::OLT, x, f.c(0x1p-126));
  Value u = f.select(subnormal, f.mul(x, f.c(0x1p23)), x);
  Value y = f.logCore(u, f.c(0.0), f.select(subnormal, f.c(-23.0), f.c(0.0)));
  return logSpecialValues(f, x, y, 0.0);
}

Value log1pF32(F32& f, Value x) {
  // log1p(x) = log(u) + c/u, u = 1 + x rounded, c its rounding error (exact: Fast2Sum with the
  // larger operand first).
  Value u = f.add(f.c(1.0), x);
  Value c = f.select(f.cmp(arith::CmpFPredicate::OLT, x, f.c(1.0)), f.sub(x, f.sub(u, f.c(1.0))),
                     f.sub(f.c(1.0), f.sub(u, x)));
  Value y = f.logCore(u, f.div(c, u), f.c(0.0));
  y = f.select(f.cmp(arith::CmpFPredicate::OEQ, x, f.c(0.0)), x, y);  // keeps -0
  return logSpecialValues(f, x, y, -1.0);
}

Value erfF32(F32& f, Value x) { return f.erf(x); }

Value tanhF32(F32& f, Value x) { return f.tanh(x); }

// The f32 pattern of `Op`: computed in f64 (`wide`) or in f32 (`narrow`).
template <typename Op>
void addInline(RewritePatternSet& patterns, bool via_f64, Value (*wide)(F64&, Value),
               Value (*narrow)(F32&, Value), bool propagates_nan) {
  if (via_f64)
    patterns.add<F32ViaF64<Op>>(patterns.getContext(), wide);
  else
    patterns.add<F32Inline<Op>>(patterns.getContext(), narrow, propagates_nan);
}

}  // namespace

LogicalResult populateF32MathApproximations(RewritePatternSet& patterns, llvm::StringRef ops) {
  llvm::SmallVector<llvm::StringRef> names;
  ops.split(names, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef name : names) {
    name = name.trim();
    // "<op>.f64": the variant computed in f64 (0.5 ulp, half the vector width).
    const bool via_f64 = name.consume_back(".f64");
    if (name == "exp")
      addInline<math::ExpOp>(patterns, via_f64, &expViaF64, &expF32, /*propagates_nan=*/true);
    else if (name == "expm1")
      addInline<math::ExpM1Op>(patterns, via_f64, &expm1ViaF64, &expm1F32, false);
    else if (name == "log")
      addInline<math::LogOp>(patterns, via_f64, &logViaF64, &logF32, false);
    else if (name == "log1p")
      addInline<math::Log1pOp>(patterns, via_f64, &log1pViaF64, &log1pF32, false);
    else if (name == "tanh")
      addInline<math::TanhOp>(patterns, via_f64, &tanhViaF64, &tanhF32, true);
    else if (name == "erf")
      addInline<math::ErfOp>(patterns, via_f64, &erfViaF64, &erfF32, true);
    else
      return failure();
  }
  return success();
}

}  // namespace disc_ral
}  // namespace mlir
