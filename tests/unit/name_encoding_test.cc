#include "ral/name_encoding.h"

#include <gtest/gtest.h>

#include <tuple>

#include "ral/api.h"
#include "ral/execution_context.h"

namespace ral {
namespace {

template <typename T>
void gemm(ExecutionContext*, MemRef<T, 2>, MemRef<T, 2>, MemRef<T, 2>, bool, bool) {}

TEST(NameEncodingTest, SeedGemmExample) {
  static_assert(kSignatureOf<decltype(&gemm<float>)>.view() ==
                "pvoid_m2df32_m2df32_m2df32_i1_i1___void");
  EXPECT_EQ(apiName<&gemm<float>>("ral_gemm", "cpu"),
            "ral_gemm___cpu___pvoid_m2df32_m2df32_m2df32_i1_i1___void");
  EXPECT_EQ(apiName<&gemm<float16>>("ral_gemm", "cuda"),
            "ral_gemm___cuda___pvoid_m2df16_m2df16_m2df16_i1_i1___void");
}

TEST(NameEncodingTest, EveryScalarType) {
  static_assert(typeCodeOf<bool>() == "i1");
  static_assert(typeCodeOf<int8_t>() == "i8");
  static_assert(typeCodeOf<int16_t>() == "i16");
  static_assert(typeCodeOf<int32_t>() == "i32");
  static_assert(typeCodeOf<int64_t>() == "i64");
  static_assert(typeCodeOf<long long>() == "i64");
  static_assert(typeCodeOf<uint8_t>() == "ui8");
  static_assert(typeCodeOf<uint16_t>() == "ui16");
  static_assert(typeCodeOf<uint32_t>() == "ui32");
  static_assert(typeCodeOf<uint64_t>() == "ui64");
  static_assert(typeCodeOf<float16>() == "f16");
  static_assert(typeCodeOf<bfloat16>() == "bf16");
  static_assert(typeCodeOf<float>() == "f32");
  static_assert(typeCodeOf<double>() == "f64");
  static_assert(typeCodeOf<void*>() == "pvoid");
  static_assert(typeCodeOf<ExecutionContext*>() == "pvoid");
  static_assert(typeCodeOf<float*>() == "pf32");
  static_assert(typeCodeOf<const int64_t*>() == "pi64");
  static_assert(typeCodeOf<float16*>() == "pf16");
  static_assert(typeCodeOf<uint8_t**>() == "ppui8");
  static_assert(typeCodeOf<MemRef<float, 2>*>() == "pm2df32");
}

TEST(NameEncodingTest, EveryMemRefRank) {
  static_assert(typeCodeOf<MemRef<float, 0>>() == "m0df32");
  static_assert(typeCodeOf<MemRef<int8_t, 1>>() == "m1di8");
  static_assert(typeCodeOf<MemRef<bool, 2>>() == "m2di1");
  static_assert(typeCodeOf<MemRef<uint32_t, 3>>() == "m3dui32");
  static_assert(typeCodeOf<MemRef<double, 4>>() == "m4df64");
  static_assert(typeCodeOf<MemRef<bfloat16, 5>>() == "m5dbf16");
  static_assert(typeCodeOf<MemRef<float16, 6>>() == "m6df16");
  static_assert(typeCodeOf<MemRef<int64_t, 7>>() == "m7di64");
  static_assert(typeCodeOf<MemRef<int16_t, 8>>() == "m8di16");
  static_assert(typeCodeOf<MemRef<float, 12>>() == "m12df32");
  for (int rank = 0; rank <= 8; ++rank)
    EXPECT_EQ(memrefTypeCode(DType::kF32, rank), "m" + std::to_string(rank) + "df32");
}

int64_t noArgs(ExecutionContext*) { return 0; }
void nothing(void*) {}
MemRef<float, 2> alloc2(ExecutionContext*, int64_t, int64_t) { return {}; }
std::tuple<MemRef<float, 1>, MemRef<int64_t, 1>> topk(ExecutionContext*, MemRef<float, 2>,
                                                      int32_t) {
  return {};
}
void refs(ExecutionContext*, const MemRef<float, 1>&, const double&) {}

TEST(NameEncodingTest, ResultsAndVoid) {
  static_assert(kSignatureOf<decltype(&noArgs)>.view() == "pvoid___i64");
  static_assert(kSignatureOf<decltype(&nothing)>.view() == "pvoid___void");
  static_assert(kSignatureOf<decltype(&alloc2)>.view() == "pvoid_i64_i64___m2df32");
  static_assert(kSignatureOf<decltype(&topk)>.view() == "pvoid_m2df32_i32___m1df32_m1di64");
  static_assert(kSignatureOf<decltype(&refs)>.view() == "pvoid_m1df32_f64___void");
}

TEST(NameEncodingTest, RuntimeEncodingMatchesCompileTime) {
  EXPECT_EQ(encodeApiName("ral_gemm", "cpu",
                          {"pvoid", memrefTypeCode(DType::kF32, 2), memrefTypeCode(DType::kF32, 2),
                           memrefTypeCode(DType::kF32, 2), scalarTypeCode(DType::kBool),
                           scalarTypeCode(DType::kBool)},
                          {}),
            apiName<&gemm<float>>("ral_gemm", "cpu"));
  EXPECT_EQ(encodeApiName("f", "cpu", {"pvoid"}, {"m1df32", "m1di64"}),
            "f___cpu___pvoid___m1df32_m1di64");
}

TEST(NameEncodingTest, Parse) {
  auto parts = parseApiName("ral_gemm___cpu___pvoid_m2df32___void");
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->target, "ral_gemm");
  EXPECT_EQ(parts->device, "cpu");
  EXPECT_EQ(parts->inputs, "pvoid_m2df32");
  EXPECT_EQ(parts->outputs, "void");
  for (const char* bad : {"", "ral_gemm", "a___b___c", "a___b___c___d___e", "___b___c___d"})
    EXPECT_EQ(parseApiName(bad).status().code(), StatusCode::kInvalidArgument) << bad;
}

}  // namespace
}  // namespace ral
