// Runtime element types (DType) and their mapping to C++ types.
#ifndef RAL_DTYPE_H_
#define RAL_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "ral/half.h"
#include "ral/status.h"

namespace ral {

// Values are stable: they are stored in module files.
enum class DType : uint8_t {
  kInvalid = 0,
  kBool = 1,
  kI8 = 2,
  kI16 = 3,
  kI32 = 4,
  kI64 = 5,
  kUI8 = 6,
  kUI16 = 7,
  kUI32 = 8,
  kUI64 = 9,
  kF16 = 10,
  kBF16 = 11,
  kF32 = 12,
  kF64 = 13,
};
inline constexpr int kNumDTypes = 14;

// Size in bytes of one element; 0 for kInvalid.
size_t dtypeSize(DType t);
// The name-encoding code: "i1", "i32", "ui8", "f16", "bf16", "f32", ... ("invalid" for kInvalid).
std::string_view dtypeName(DType t);
// Parses a code produced by dtypeName (also accepts "bool", "float32", ... for users).
StatusOr<DType> dtypeFromName(std::string_view name);
bool isFloatingPoint(DType t);
bool isSignedInteger(DType t);
bool isUnsignedInteger(DType t);

// DTypeOf<T>::value maps a C++ element type to its DType (kInvalid when unsupported).
template <typename T, typename = void>
struct DTypeOf : std::integral_constant<DType, DType::kInvalid> {};

namespace internal {
template <typename T>
constexpr DType integralDType() {
  if constexpr (std::is_same_v<T, bool>) {
    return DType::kBool;
  } else if constexpr (std::is_signed_v<T>) {
    switch (sizeof(T)) {
      case 1:
        return DType::kI8;
      case 2:
        return DType::kI16;
      case 4:
        return DType::kI32;
      case 8:
        return DType::kI64;
    }
  } else {
    switch (sizeof(T)) {
      case 1:
        return DType::kUI8;
      case 2:
        return DType::kUI16;
      case 4:
        return DType::kUI32;
      case 8:
        return DType::kUI64;
    }
  }
  return DType::kInvalid;
}
}  // namespace internal

// Every integral type maps by size and signedness, so `long` and `long long` both give kI64.
template <typename T>
struct DTypeOf<T, std::enable_if_t<std::is_integral_v<T>>>
    : std::integral_constant<DType, internal::integralDType<T>()> {};
template <>
struct DTypeOf<float16> : std::integral_constant<DType, DType::kF16> {};
template <>
struct DTypeOf<bfloat16> : std::integral_constant<DType, DType::kBF16> {};
template <>
struct DTypeOf<float> : std::integral_constant<DType, DType::kF32> {};
template <>
struct DTypeOf<double> : std::integral_constant<DType, DType::kF64> {};

template <typename T>
inline constexpr DType kDTypeOf = DTypeOf<std::remove_cv_t<T>>::value;

}  // namespace ral

#endif  // RAL_DTYPE_H_
