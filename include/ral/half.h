// float16 (IEEE binary16) and bfloat16 storage types with exact widening to float and
// round-to-nearest-even narrowing from float. Arithmetic happens in float; these types only
// store bits, so they are trivially copyable and 2 bytes wide, as MemRef element types must be.
#ifndef RAL_HALF_H_
#define RAL_HALF_H_

#include <cstdint>
#include <cstring>

namespace ral {

namespace internal {
inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}
}  // namespace internal

// Converts a float to IEEE half with round-to-nearest-even; overflow gives ±inf, NaN stays NaN
// (quiet, sign kept), values below half's subnormal range round to ±0.
inline uint16_t floatToHalfBits(float f) {
  const uint32_t x = internal::floatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    if (abs == 0x7f800000u) return sign | 0x7c00u;
    return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x1ffu));
  }
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65536: overflow to inf
  if (abs < 0x38800000u) {                        // below 2^-14: half subnormal or zero
    if (abs < 0x33000000u) return sign;           // < 2^-25 rounds to zero (2^-25 ties to 0)
    const uint32_t exp = abs >> 23;               // 102..112
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exp;  // result = mant >> shift, with RNE
    uint32_t result = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (result & 1u))) ++result;
    return static_cast<uint16_t>(sign | result);
  }
  // Normal: rebias exponent (127 -> 15) and round 13 dropped mantissa bits to nearest even.
  uint32_t result = abs - 0x38000000u;
  const uint32_t rem = result & 0x1fffu;
  result >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (result & 1u))) ++result;  // carry may reach inf: ok
  return static_cast<uint16_t>(sign | result);
}

// Exact: every half value is representable as a float.
inline float halfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1fu) return internal::bitsFloat(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) return internal::bitsFloat(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return internal::bitsFloat(sign);
  // Subnormal half: normalise into a float.
  uint32_t e = 113;
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return internal::bitsFloat(sign | (e << 23) | ((mant & 0x3ffu) << 13));
}

// Converts a float to bfloat16 with round-to-nearest-even; NaN stays a quiet NaN.
inline uint16_t floatToBFloat16Bits(float f) {
  const uint32_t x = internal::floatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

inline float bfloat16BitsToFloat(uint16_t b) {
  return internal::bitsFloat(static_cast<uint32_t>(b) << 16);
}

struct float16 {
  uint16_t bits = 0;
  float16() = default;
  explicit float16(float f) : bits(floatToHalfBits(f)) {}
  static float16 fromBits(uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return halfBitsToFloat(bits); }
  float toFloat() const { return halfBitsToFloat(bits); }
};

struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f) : bits(floatToBFloat16Bits(f)) {}
  static bfloat16 fromBits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return bfloat16BitsToFloat(bits); }
  float toFloat() const { return bfloat16BitsToFloat(bits); }
};

static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2, "16-bit storage types");

}  // namespace ral

#endif  // RAL_HALF_H_
