#include "ral/dtype.h"

#include <cctype>
#include <string>

namespace ral {
namespace {
struct DTypeInfo {
  DType type;
  std::string_view name;
  size_t size;
};
constexpr DTypeInfo kInfo[kNumDTypes] = {
    {DType::kInvalid, "invalid", 0}, {DType::kBool, "i1", 1},   {DType::kI8, "i8", 1},
    {DType::kI16, "i16", 2},         {DType::kI32, "i32", 4},   {DType::kI64, "i64", 8},
    {DType::kUI8, "ui8", 1},         {DType::kUI16, "ui16", 2}, {DType::kUI32, "ui32", 4},
    {DType::kUI64, "ui64", 8},       {DType::kF16, "f16", 2},   {DType::kBF16, "bf16", 2},
    {DType::kF32, "f32", 4},         {DType::kF64, "f64", 8},
};
const DTypeInfo& info(DType t) {
  const auto i = static_cast<size_t>(t);
  return i < kNumDTypes ? kInfo[i] : kInfo[0];
}
}  // namespace

size_t dtypeSize(DType t) { return info(t).size; }
std::string_view dtypeName(DType t) { return info(t).name; }

StatusOr<DType> dtypeFromName(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (int i = 1; i < kNumDTypes; ++i)
    if (kInfo[i].name == lower) return kInfo[i].type;
  struct Alias {
    std::string_view name;
    DType type;
  };
  static constexpr Alias kAliases[] = {
      {"bool", DType::kBool},   {"int8", DType::kI8},     {"int16", DType::kI16},
      {"int32", DType::kI32},   {"int64", DType::kI64},   {"uint8", DType::kUI8},
      {"uint16", DType::kUI16}, {"uint32", DType::kUI32}, {"uint64", DType::kUI64},
      {"float16", DType::kF16}, {"half", DType::kF16},    {"bfloat16", DType::kBF16},
      {"float32", DType::kF32}, {"float", DType::kF32},   {"float64", DType::kF64},
      {"double", DType::kF64},  {"u8", DType::kUI8},      {"u16", DType::kUI16},
      {"u32", DType::kUI32},    {"u64", DType::kUI64},
  };
  for (const Alias& a : kAliases)
    if (a.name == lower) return a.type;
  return invalidArgument("unknown element type '", name,
                         "' (expected one of i1 i8 i16 i32 i64 ui8 ui16 ui32 ui64 f16 bf16 f32 "
                         "f64)");
}

bool isFloatingPoint(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kF64;
}
bool isSignedInteger(DType t) {
  return t == DType::kI8 || t == DType::kI16 || t == DType::kI32 || t == DType::kI64;
}
bool isUnsignedInteger(DType t) {
  return t == DType::kUI8 || t == DType::kUI16 || t == DType::kUI32 || t == DType::kUI64;
}

}  // namespace ral
