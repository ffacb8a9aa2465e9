#include "ral/dtype.h"

#include <gtest/gtest.h>

namespace ral {
namespace {

TEST(DTypeTest, SizesNamesAndParsing) {
  struct Case {
    DType t;
    size_t size;
    const char* name;
  } cases[] = {{DType::kBool, 1, "i1"},   {DType::kI8, 1, "i8"},     {DType::kI16, 2, "i16"},
               {DType::kI32, 4, "i32"},   {DType::kI64, 8, "i64"},   {DType::kUI8, 1, "ui8"},
               {DType::kUI16, 2, "ui16"}, {DType::kUI32, 4, "ui32"}, {DType::kUI64, 8, "ui64"},
               {DType::kF16, 2, "f16"},   {DType::kBF16, 2, "bf16"}, {DType::kF32, 4, "f32"},
               {DType::kF64, 8, "f64"}};
  for (const auto& c : cases) {
    EXPECT_EQ(dtypeSize(c.t), c.size) << c.name;
    EXPECT_EQ(dtypeName(c.t), c.name);
    auto parsed = dtypeFromName(c.name);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, c.t);
  }
  EXPECT_EQ(*dtypeFromName("float32"), DType::kF32);
  EXPECT_EQ(*dtypeFromName("BF16"), DType::kBF16);
  auto bad = dtypeFromName("f128");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("f128"), std::string_view::npos);
  EXPECT_EQ(dtypeSize(static_cast<DType>(200)), 0u);
}

TEST(DTypeTest, CppTypesMap) {
  static_assert(kDTypeOf<bool> == DType::kBool);
  static_assert(kDTypeOf<int8_t> == DType::kI8);
  static_assert(kDTypeOf<int64_t> == DType::kI64);
  static_assert(kDTypeOf<long long> == DType::kI64);
  static_assert(kDTypeOf<uint16_t> == DType::kUI16);
  static_assert(kDTypeOf<float16> == DType::kF16);
  static_assert(kDTypeOf<bfloat16> == DType::kBF16);
  static_assert(kDTypeOf<const float> == DType::kF32);
  static_assert(kDTypeOf<double> == DType::kF64);
  static_assert(kDTypeOf<void*> == DType::kInvalid);
  EXPECT_TRUE(isFloatingPoint(DType::kBF16));
  EXPECT_TRUE(isSignedInteger(DType::kI16));
  EXPECT_TRUE(isUnsignedInteger(DType::kUI64));
  EXPECT_FALSE(isFloatingPoint(DType::kBool));
}

}  // namespace
}  // namespace ral
