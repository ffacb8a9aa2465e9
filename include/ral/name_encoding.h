// Name encoding of RAL functions:
//   full_name = target___device___inputs___outputs
// where inputs/outputs are type codes joined by '_' (no result: "void"). The signature part is
// derived from a C++ function type at compile time; the runtime helpers below produce the same
// codes for tools (compilers, inspectors) that only know a DType and a rank.
#ifndef RAL_NAME_ENCODING_H_
#define RAL_NAME_ENCODING_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ral/dtype.h"
#include "ral/half.h"
#include "ral/memref.h"
#include "ral/status.h"

namespace ral {

// ---------------------------------------------------------------------------------------------
// A fixed-size string usable in constant expressions.
template <size_t N>
struct FixedString {
  char chars[N + 1] = {};
  constexpr FixedString() = default;
  constexpr explicit FixedString(const char (&s)[N + 1]) {
    for (size_t i = 0; i <= N; ++i) chars[i] = s[i];
  }
  static constexpr size_t size() { return N; }
  constexpr std::string_view view() const { return std::string_view(chars, N); }
  constexpr const char* c_str() const { return chars; }
};

template <size_t N>
constexpr FixedString<N - 1> fixedString(const char (&s)[N]) {
  return FixedString<N - 1>(s);
}

template <size_t A, size_t B>
constexpr FixedString<A + B> operator+(const FixedString<A>& a, const FixedString<B>& b) {
  FixedString<A + B> r;
  for (size_t i = 0; i < A; ++i) r.chars[i] = a.chars[i];
  for (size_t i = 0; i < B; ++i) r.chars[A + i] = b.chars[i];
  r.chars[A + B] = '\0';
  return r;
}

namespace encoding {

template <typename T>
struct Unsupported : std::false_type {};

// TypeCode<T>::value is the FixedString code of one argument or result type.
template <typename T, typename = void>
struct TypeCode {
  static_assert(Unsupported<T>::value,
                "type not supported by the RAL ABI: use bool, (u)int8..64, float16, bfloat16, "
                "float, double, pointers, or MemRef<T, N>");
};

template <size_t V>
constexpr auto decimal() {
  if constexpr (V < 10) {
    FixedString<1> r;
    r.chars[0] = static_cast<char>('0' + V);
    return r;
  } else {
    return decimal<V / 10>() + decimal<V % 10>();
  }
}

template <>
struct TypeCode<void> {
  static constexpr auto value = fixedString("void");
};
template <>
struct TypeCode<bool> {
  static constexpr auto value = fixedString("i1");
};
template <typename T>
struct TypeCode<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static constexpr auto bits = decimal<sizeof(T) * 8>();
  static constexpr auto value = [] {
    if constexpr (std::is_signed_v<T>) {
      return fixedString("i") + bits;
    } else {
      return fixedString("ui") + bits;
    }
  }();
};
template <>
struct TypeCode<float16> {
  static constexpr auto value = fixedString("f16");
};
template <>
struct TypeCode<bfloat16> {
  static constexpr auto value = fixedString("bf16");
};
template <>
struct TypeCode<float> {
  static constexpr auto value = fixedString("f32");
};
template <>
struct TypeCode<double> {
  static constexpr auto value = fixedString("f64");
};
// Element-like classes have codes of their own; pointers to them are "p" + code.
template <typename T>
struct IsCodedClass : std::false_type {};
template <>
struct IsCodedClass<float16> : std::true_type {};
template <>
struct IsCodedClass<bfloat16> : std::true_type {};
template <typename T, int N>
struct IsCodedClass<MemRef<T, N>> : std::true_type {};

template <typename T>
inline constexpr bool kIsOpaquePointee = std::is_void_v<T> ||
                                         (std::is_class_v<T> &&
                                          !IsCodedClass<std::remove_cv_t<T>>::value);

// Any pointer to void or to another class (contexts, opaque handles) is "pvoid".
template <typename T>
struct TypeCode<T*, std::enable_if_t<kIsOpaquePointee<T>>> {
  static constexpr auto value = fixedString("pvoid");
};
template <typename T>
struct TypeCode<T*, std::enable_if_t<!kIsOpaquePointee<T>>> {
  static constexpr auto value = fixedString("p") + TypeCode<std::remove_cv_t<T>>::value;
};
template <typename T, int N>
struct TypeCode<MemRef<T, N>> {
  static constexpr auto value =
      fixedString("m") + decimal<N>() + fixedString("d") + TypeCode<std::remove_cv_t<T>>::value;
};

template <typename T>
using Decay = std::remove_cv_t<std::remove_reference_t<T>>;

template <typename... Ts>
struct JoinCodes;
template <>
struct JoinCodes<> {
  static constexpr auto value = fixedString("void");
};
template <typename T>
struct JoinCodes<T> {
  static constexpr auto value = TypeCode<Decay<T>>::value;
};
template <typename T, typename U, typename... Rest>
struct JoinCodes<T, U, Rest...> {
  static constexpr auto value =
      TypeCode<Decay<T>>::value + fixedString("_") + JoinCodes<U, Rest...>::value;
};

// Results: void, a single type, or std::tuple<...> for several results.
template <typename R>
struct ResultCodes {
  static constexpr auto value = JoinCodes<R>::value;
};
template <>
struct ResultCodes<void> {
  static constexpr auto value = fixedString("void");
};
template <typename... Ts>
struct ResultCodes<std::tuple<Ts...>> {
  static constexpr auto value = JoinCodes<Ts...>::value;
};

}  // namespace encoding

// FunctionTraits of a plain function pointer type R(*)(Ctx*, Args...).
template <typename F>
struct FunctionTraits;
template <typename R, typename... A>
struct FunctionTraits<R (*)(A...)> {
  using Result = R;
  using Args = std::tuple<A...>;
  static constexpr size_t kArity = sizeof...(A);
};
template <typename R, typename... A>
struct FunctionTraits<R (*)(A...) noexcept> : FunctionTraits<R (*)(A...)> {};

namespace encoding {
template <typename R, typename ArgsTuple>
struct SignatureCodes;
template <typename R, typename Ctx, typename... A>
struct SignatureCodes<R, std::tuple<Ctx, A...>> {
  static_assert(std::is_pointer_v<Ctx>,
                "the first parameter of a RAL function must be the context pointer");
  static constexpr auto value = fixedString("pvoid") + (fixedString("_") + JoinCodes<A...>::value) +
                                fixedString("___") + ResultCodes<R>::value;
};
template <typename R, typename Ctx>
struct SignatureCodes<R, std::tuple<Ctx>> {
  static_assert(std::is_pointer_v<Ctx>,
                "the first parameter of a RAL function must be the context pointer");
  static constexpr auto value = fixedString("pvoid___") + ResultCodes<R>::value;
};
}  // namespace encoding

// "pvoid_m2df32_..._i1___void" for a function pointer type F; a compile-time constant.
template <typename F>
inline constexpr auto kSignatureOf =
    encoding::SignatureCodes<typename FunctionTraits<F>::Result,
                             typename FunctionTraits<F>::Args>::value;

// Code of one C++ type, e.g. typeCodeOf<MemRef<float, 2>>() == "m2df32".
template <typename T>
constexpr std::string_view typeCodeOf() {
  return encoding::TypeCode<T>::value.view();
}

// ---------------------------------------------------------------------------------------------
// Runtime helpers.

inline constexpr std::string_view kNameSeparator = "___";

// target___device___signature
std::string encodeApiName(std::string_view target, std::string_view device,
                          std::string_view signature);
// Codes for tools: "f32", "m2df32", "pf32".
std::string scalarTypeCode(DType t);
std::string memrefTypeCode(DType t, int rank);
// target___device___inputs___outputs from lists of codes (empty outputs -> "void").
std::string encodeApiName(std::string_view target, std::string_view device,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs);

struct ApiNameParts {
  std::string_view target;
  std::string_view device;
  std::string_view inputs;
  std::string_view outputs;
};
// Splits a full name; InvalidArgument when it does not have exactly four parts.
StatusOr<ApiNameParts> parseApiName(std::string_view full_name);

}  // namespace ral

#endif  // RAL_NAME_ENCODING_H_
