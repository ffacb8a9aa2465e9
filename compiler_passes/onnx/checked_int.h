// Exact int64 arithmetic for what the importer computes at import time from a model's attributes
// and constants (window sizes, paddings, element counts, split offsets): a value, or none once any
// step overflowed, so a formula is written plainly and checked once. Sizes follow the runtime's
// limit (ral/io_checks.h, limits.h): beyond kMaxElements a size is refused, so offsets and byte
// counts derived from a checked size cannot overflow either.
//
// Data arithmetic (an Add of two int8 constants) is not this: it wraps in the element type, as
// numpy and ONNX do (foldIndexBinary in ops_elementwise.cc).
#ifndef RAL_COMPILER_PASSES_ONNX_CHECKED_INT_H_
#define RAL_COMPILER_PASSES_ONNX_CHECKED_INT_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
namespace disc_ral {
namespace onnx {

// The largest size (dim, element count) a tensor may have: the runtime's limit.
inline constexpr int64_t kMaxSize = int64_t{1} << 48;

class CheckedInt {
 public:
  CheckedInt(int64_t v) : value_(v) {}  // NOLINT: implicit, so formulas read as arithmetic
  static CheckedInt overflow() { return CheckedInt(); }

  bool valid() const { return value_.has_value(); }
  int64_t value() const { return *value_; }
  std::optional<int64_t> get() const { return value_; }
  // A valid value in [lo, hi].
  bool within(int64_t lo, int64_t hi) const { return value_ && *value_ >= lo && *value_ <= hi; }
  // A valid size: in [0, kMaxSize].
  bool isSize() const { return within(0, kMaxSize); }

  friend CheckedInt operator+(CheckedInt a, CheckedInt b) {
    int64_t r;
    if (!a.value_ || !b.value_ || __builtin_add_overflow(*a.value_, *b.value_, &r)) return {};
    return r;
  }
  friend CheckedInt operator-(CheckedInt a, CheckedInt b) {
    int64_t r;
    if (!a.value_ || !b.value_ || __builtin_sub_overflow(*a.value_, *b.value_, &r)) return {};
    return r;
  }
  friend CheckedInt operator*(CheckedInt a, CheckedInt b) {
    int64_t r;
    if (!a.value_ || !b.value_ || __builtin_mul_overflow(*a.value_, *b.value_, &r)) return {};
    return r;
  }
  // Rounded towards negative / positive infinity; none for a zero divisor or INT64_MIN / -1.
  static CheckedInt floorDiv(CheckedInt a, CheckedInt b) {
    if (!divisible(a, b)) return {};
    const int64_t q = *a.value_ / *b.value_, r = *a.value_ % *b.value_;
    return (r != 0 && ((r < 0) != (*b.value_ < 0))) ? q - 1 : q;
  }
  static CheckedInt ceilDiv(CheckedInt a, CheckedInt b) {
    if (!divisible(a, b)) return {};
    const int64_t q = *a.value_ / *b.value_, r = *a.value_ % *b.value_;
    return (r != 0 && ((r < 0) == (*b.value_ < 0))) ? q + 1 : q;
  }
  CheckedInt& operator+=(CheckedInt b) { return *this = *this + b; }
  CheckedInt& operator*=(CheckedInt b) { return *this = *this * b; }

  // A double that is an integer-valued count (already floored or ceiled): none for NaN,
  // infinities and values outside int64.
  static CheckedInt fromDouble(double v) {
    // 2^63 is the first double beyond int64; every double below it converts exactly.
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return {};
    return static_cast<int64_t>(v);
  }

 private:
  CheckedInt() = default;
  static bool divisible(CheckedInt a, CheckedInt b) {
    return a.value_ && b.value_ && *b.value_ != 0 && !(*a.value_ == INT64_MIN && *b.value_ == -1);
  }
  std::optional<int64_t> value_;
};

// The product of `values` (an element count), checked.
template <typename Range>
CheckedInt checkedProduct(const Range& values) {
  CheckedInt p = 1;
  for (int64_t v : values) p *= v;
  return p;
}

// "2^48" for kMaxSize, the number otherwise: how messages state a limit.
inline std::string limitText(int64_t limit) {
  return limit == kMaxSize ? std::string("2^48") : std::to_string(limit);
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_ONNX_CHECKED_INT_H_
