// Philox4x32-10 and the bits -> float mapping of ral_rng_uniform / ral_rng_normal.
//
// This file is the single definition every device follows (CPU here; the CUDA and Vulkan GLSL
// ports mirror it line by line), so one (seed, offset) gives the same numbers bit for bit on each.
// It is header-only and uses only 32-bit integer arithmetic, separately rounded float/double
// + - * (no fused multiply-add: compile with -ffp-contract=off, `precise` in GLSL, __fmul_rn /
// __fadd_rn in CUDA), IEEE sqrt, and for f64 normals one IEEE division.
//
// Generator: Philox4x32-10 (Salmon et al., SC'11; Random123), checked against its known-answer
// vectors. Round: (hi0, lo0) = 0xD2511F53 * c0, (hi1, lo1) = 0xCD9E8D57 * c2 (32x32 -> 64 bits);
// c = {hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0}; then k0 += 0x9E3779B9, k1 += 0xBB67AE85.
//
// Stream: key = {lo32(seed), hi32(seed)}. Block b of a call with `offset` uses the counter
//   {lo32(offset + b), hi32(offset + b), 0, 0}   (64-bit sum, wrapping; in 32-bit code:
//   lo = offset_lo + b; hi = offset_hi + (lo < b ? 1 : 0))
// and yields four 32-bit words w0..w3. `offset` counts blocks: a call consumes
// blocksFor(dtype, n) blocks, so the next call continues the stream with offset + that.
// Element i is the i-th element of the output in row-major logical order (strides do not matter).
//
// Uniform in [low, high):  u = integer * 2^-bits (exact), then r = low + u * (high - low).
//   f32:  element i <- block i/4, word i%4, u = (w >> 8) * 2^-24
//   f16:  element i <- block i/4, word i%4, u = (w >> 21) * 2^-11, r computed in float, rounded
//   bf16: element i <- block i/4, word i%4, u = (w >> 24) * 2^-8,  r computed in float, rounded
//   f64:  element i <- block i/2, words a = w[2(i%2)], b = w[2(i%2)+1],
//         u = ((a >> 5) * 2^26 + (b >> 6)) * 2^-53
//   With low = 0, high = 1 every u is exactly representable, so r < 1; for other bounds the final
//   rounding may give `high` itself.
// Normal (Box-Muller): r = sqrt(-2 ln u1), theta = 2 pi u2, z = mean + stddev * (r cos theta) for
// the even element of a pair and mean + stddev * (r sin theta) for the odd one.
//   f32 (and f16/bf16, computed in float, then rounded): element i <- block i/4; pair p = (i%4)/2
//     uses u1 = ((w[2p] >> 8) + 1) * 2^-24 in (0, 1] and k = w[2p+1] >> 8 (24-bit angle).
//   f64: element i <- block i/2; u1 = (53-bit value of w0, w1 as above + 1) * 2^-53 in (0, 1],
//     k = 53-bit value of w2, w3.
//   theta = 2 pi k / 2^bits is reduced exactly with integers: quadrant q = top two bits of k; the
//   rest r is folded into [0, pi/4] (s = r or 2^(bits-2) - r), psi = s * (2 pi / 2^bits), and
//   sin/cos of psi come from the fixed polynomials below (Cephes coefficients), then rotated by q.
//   ln u1 comes from the fixed logf (Cephes) / series log (f64) below.
#ifndef RAL_KERNELS_RNG_PHILOX_H_
#define RAL_KERNELS_RNG_PHILOX_H_

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ral::philox {

struct Block {
  uint32_t w[4];
};

inline constexpr uint32_t kMul0 = 0xD2511F53u;
inline constexpr uint32_t kMul1 = 0xCD9E8D57u;
inline constexpr uint32_t kWeyl0 = 0x9E3779B9u;
inline constexpr uint32_t kWeyl1 = 0xBB67AE85u;

inline void mulHiLo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}

// Philox4x32 with 10 rounds on counter `c` and key {k0, k1}.
inline Block philox4x32_10(Block c, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mulHiLo(kMul0, c.w[0], &hi0, &lo0);
    mulHiLo(kMul1, c.w[2], &hi1, &lo1);
    c = Block{{hi1 ^ c.w[1] ^ k0, lo1, hi0 ^ c.w[3] ^ k1, lo0}};
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return c;
}

// The four words of block `block` of the stream (seed, offset).
inline Block streamBlock(uint64_t seed, uint64_t offset, uint64_t block) {
  const uint64_t ctr = offset + block;
  return philox4x32_10(Block{{static_cast<uint32_t>(ctr), static_cast<uint32_t>(ctr >> 32), 0, 0}},
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// Blocks one call consumes for `n` elements: 4 elements per block for 32-bit-or-narrower floats,
// 2 for f64.
inline uint64_t blocksFor(bool is_f64, uint64_t n) { return is_f64 ? (n + 1) / 2 : (n + 3) / 4; }

// ---- bits -> uniform -------------------------------------------------------------------------

inline constexpr float kTwoPow24Inv = 1.0f / 16777216.0f;
inline constexpr float kTwoPow11Inv = 1.0f / 2048.0f;
inline constexpr float kTwoPow8Inv = 1.0f / 256.0f;
inline constexpr double kTwoPow53Inv = 1.0 / 9007199254740992.0;

inline float uniform24(uint32_t w) { return static_cast<float>(w >> 8) * kTwoPow24Inv; }
inline float uniform11(uint32_t w) { return static_cast<float>(w >> 21) * kTwoPow11Inv; }
inline float uniform8(uint32_t w) { return static_cast<float>(w >> 24) * kTwoPow8Inv; }
// 53 bits from two words as an exact double integer (no 64-bit integers needed).
inline double bits53(uint32_t a, uint32_t b) {
  return static_cast<double>(a >> 5) * 67108864.0 + static_cast<double>(b >> 6);
}
inline double uniform53(uint32_t a, uint32_t b) { return bits53(a, b) * kTwoPow53Inv; }

// ---- deterministic elementary functions ------------------------------------------------------

// Natural log of x in [2^-24, 1] (Cephes logf; about 1 ulp).
inline float logf01(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  int e = static_cast<int>(bits >> 23) - 126;
  bits = (bits & 0x007fffffu) | 0x3f000000u;  // mantissa in [0.5, 1)
  float m;
  std::memcpy(&m, &bits, sizeof(m));
  float t;
  if (m < 0.707106781186547524f) {
    e -= 1;
    t = (m + m) - 1.0f;
  } else {
    t = m - 1.0f;
  }
  const float z = t * t;
  float y = 7.0376836292E-2f;
  y = y * t - 1.1514610310E-1f;
  y = y * t + 1.1676998740E-1f;
  y = y * t - 1.2420140846E-1f;
  y = y * t + 1.4249322787E-1f;
  y = y * t - 1.6668057665E-1f;
  y = y * t + 2.0000714765E-1f;
  y = y * t - 2.4999993993E-1f;
  y = y * t + 3.3333331174E-1f;
  y = (y * t) * z;
  const float fe = static_cast<float>(e);
  y = y + (-2.12194440e-4f * fe);
  y = y + (-0.5f * z);
  float r = t + y;
  r = r + 0.693359375f * fe;
  return r;
}

// sin and cos of psi in [0, pi/4] (Cephes sinf/cosf polynomials).
inline float sinf04(float x) {
  const float z = x * x;
  float y = -1.9515295891E-4f;
  y = y * z + 8.3321608736E-3f;
  y = y * z - 1.6666654611E-1f;
  return ((y * z) * x) + x;
}
inline float cosf04(float x) {
  const float z = x * x;
  float y = 2.443315711809948E-5f;
  y = y * z - 1.388731625493765E-3f;
  y = y * z + 4.166664568298827E-2f;
  return (((y * z) * z) - (0.5f * z)) + 1.0f;
}

// Natural log of x in [2^-53, 1]: x = m 2^e, m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s) with
// s = (m - 1) / (m + 1), |s| < 0.172, summed to s^23.
inline double log01(double x) {
  int e = 0;
  double m = std::frexp(x, &e);  // m in [0.5, 1); exact
  if (m < 0.70710678118654752440) {
    m = m + m;
    e -= 1;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double z = s * s;
  double p = 1.0 / 23.0;
  p = p * z + 1.0 / 21.0;
  p = p * z + 1.0 / 19.0;
  p = p * z + 1.0 / 17.0;
  p = p * z + 1.0 / 15.0;
  p = p * z + 1.0 / 13.0;
  p = p * z + 1.0 / 11.0;
  p = p * z + 1.0 / 9.0;
  p = p * z + 1.0 / 7.0;
  p = p * z + 1.0 / 5.0;
  p = p * z + 1.0 / 3.0;
  p = p * z;
  const double lnm = (s + s) + (s + s) * p;
  const double fe = static_cast<double>(e);
  return fe * 6.93147180369123816490e-01 + (fe * 1.90821492927058770002e-10 + lnm);
}

inline double sin04(double x) {
  const double z = x * x;
  double p = 1.58962301576546568060E-10;
  p = p * z - 2.50507477628578072866E-8;
  p = p * z + 2.75573136213857245213E-6;
  p = p * z - 1.98412698295895385996E-4;
  p = p * z + 8.33333333332211858878E-3;
  p = p * z - 1.66666666666666307295E-1;
  return x + x * (z * p);
}
inline double cos04(double x) {
  const double z = x * x;
  double p = -1.13585365213876817300E-11;
  p = p * z + 2.08757008419747316778E-9;
  p = p * z - 2.75573141792967388112E-7;
  p = p * z + 2.48015872888517045348E-5;
  p = p * z - 1.38888888888730564116E-3;
  p = p * z + 4.16666666666665929218E-2;
  return (1.0 - 0.5 * z) + (z * z) * p;
}

// (sin, cos) of q * pi/2 + x from sr = sin x and cr = cos x, for the quadrant q in [0, 3].
template <typename T>
inline void fromQuadrant(int q, T sr, T cr, T* s, T* c) {
  switch (q) {
    case 0:
      *s = sr, *c = cr;
      break;
    case 1:
      *s = cr, *c = -sr;
      break;
    case 2:
      *s = -sr, *c = -cr;
      break;
    default:
      *s = -cr, *c = sr;
      break;
  }
}

// (sin, cos) of 2 pi k / 2^24 for a 24-bit k, reduced exactly.
inline void sinCos24(uint32_t k, float* s, float* c) {
  const uint32_t q = k >> 22;
  const uint32_t r = k & 0x3fffffu;
  const bool fold = r >= 0x200000u;
  const uint32_t a = fold ? 0x400000u - r : r;                        // in [0, 2^21]
  const float psi = static_cast<float>(a) * 3.7450702829239288e-07f;  // 2 pi / 2^24
  const float sp = sinf04(psi), cp = cosf04(psi);
  const float sr = fold ? cp : sp, cr = fold ? sp : cp;  // sin, cos of the in-quadrant angle
  fromQuadrant(static_cast<int>(q), sr, cr, s, c);
}

// (sin, cos) of 2 pi k / 2^53 for a 53-bit k held exactly in a double.
inline void sinCos53(double k, double* s, double* c) {
  const double quarter = 2251799813685248.0;  // 2^51
  const double q = std::floor(k / quarter);   // exact: division by a power of two
  const double r = k - q * quarter;           // exact
  const bool fold = r >= quarter * 0.5;
  const double a = fold ? quarter - r : r;
  const double psi = a * 6.9757369960172638e-16;  // 2 pi / 2^53
  const double sp = sin04(psi), cp = cos04(psi);
  const double sr = fold ? cp : sp, cr = fold ? sp : cp;
  fromQuadrant(static_cast<int>(q), sr, cr, s, c);
}

// ---- per-element values ----------------------------------------------------------------------

// Standard normal pair from two words (f32 path): {r cos theta, r sin theta}.
inline void normalPair24(uint32_t w_radius, uint32_t w_angle, float* z0, float* z1) {
  const float u1 = static_cast<float>((w_radius >> 8) + 1u) * kTwoPow24Inv;
  const float radius = std::sqrt(-2.0f * logf01(u1));
  float s, c;
  sinCos24(w_angle >> 8, &s, &c);
  *z0 = radius * c;
  *z1 = radius * s;
}

// Standard normal pair from one block (f64 path).
inline void normalPair53(const Block& b, double* z0, double* z1) {
  const double u1 = (bits53(b.w[0], b.w[1]) + 1.0) * kTwoPow53Inv;
  const double radius = std::sqrt(-2.0 * log01(u1));
  double s, c;
  sinCos53(bits53(b.w[2], b.w[3]), &s, &c);
  *z0 = radius * c;
  *z1 = radius * s;
}

}  // namespace ral::philox

#endif  // RAL_KERNELS_RNG_PHILOX_H_
