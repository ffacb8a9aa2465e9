#include "ral/registry.h"

#include <gtest/gtest.h>

#include <string>

#include "ral/api.h"
#include "ral/context.h"

namespace ral {
namespace {

void fnA(void*, void**) {}
void fnB(void*, void**) {}

ApiRegistration reg(std::string name, ral_fn fn, const ContextType* type, std::string where) {
  return ApiRegistration{std::move(name), fn, type, std::move(where)};
}

TEST(RegistryTest, DuplicateNamesBothPlacesAndPoisonsTheName) {
  Registry r;
  ASSERT_TRUE(r.add(reg("f___cpu___pvoid___void", fnA, &ExecutionContext::kType, "a.cc:1")).ok());
  Status dup = r.add(reg("f___cpu___pvoid___void", fnB, &ExecutionContext::kType, "b.cc:2"));
  EXPECT_EQ(dup.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(dup.message().find("a.cc:1"), std::string_view::npos) << dup;
  EXPECT_NE(dup.message().find("b.cc:2"), std::string_view::npos) << dup;
  // Never a silent first-wins: the name no longer resolves, and says why.
  auto found = r.findFunction("f___cpu___pvoid___void", &ExecutionContext::kType);
  EXPECT_EQ(found.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(found.status().message().find("b.cc:2"), std::string_view::npos);
  EXPECT_EQ(r.health().code(), StatusCode::kAlreadyExists);
}

TEST(RegistryTest, UnknownNameSuggestsClosest) {
  Registry r;
  ASSERT_TRUE(r.add(reg("ral_gemm___cpu___pvoid_m2df32_m2df32_m2df32_i1_i1___void", fnA,
                        &ExecutionContext::kType, "g.cc:1"))
                  .ok());
  ASSERT_TRUE(
      r.add(reg("ral_sort___cpu___pvoid_m1df32___void", fnA, &ExecutionContext::kType, "s.cc:1"))
          .ok());
  auto found = r.findFunction("ral_gemm___cpu___pvoid_m2df64_m2df64_m2df64_i1_i1___void",
                              &ExecutionContext::kType);
  ASSERT_EQ(found.status().code(), StatusCode::kNotFound);
  const std::string message(found.status().message());
  EXPECT_NE(message.find("closest registered: ral_gemm___cpu___pvoid_m2df32"), std::string::npos)
      << message;
  EXPECT_TRUE(r.health().ok());
  EXPECT_EQ(r.size(), 2u);
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
}

struct DerivedExec : ExecutionContext {
  static const ContextType kType;
  using ExecutionContext::ExecutionContext;
};
const ContextType DerivedExec::kType = {"derived", &ExecutionContext::kType};
struct OtherExec : ExecutionContext {
  static const ContextType kType;
};
const ContextType OtherExec::kType = {"other", &ExecutionContext::kType};

TEST(RegistryTest, HostOverridesArePreferredForTheirType) {
  Registry r;
  ASSERT_TRUE(
      r.add(reg("recv___cpu___pvoid___void", fnA, &ExecutionContext::kType, "base.cc:1")).ok());
  ASSERT_TRUE(
      r.add(reg("recv___cpu___pvoid___void", fnB, &DerivedExec::kType, "derived.cc:1")).ok());
  ASSERT_TRUE(
      r.add(reg("only_derived___cpu___pvoid___void", fnB, &DerivedExec::kType, "d.cc:2")).ok());
  EXPECT_EQ(*r.findFunction("recv___cpu___pvoid___void", &DerivedExec::kType), &fnB);
  EXPECT_EQ(*r.findFunction("recv___cpu___pvoid___void", &ExecutionContext::kType), &fnA);
  EXPECT_EQ(*r.findFunction("recv___cpu___pvoid___void", &OtherExec::kType), &fnA);
  auto wrong = r.findFunction("only_derived___cpu___pvoid___void", &OtherExec::kType);
  EXPECT_EQ(wrong.status().code(), StatusCode::kNotFound);
  EXPECT_NE(wrong.status().message().find("only for context type(s) derived"),
            std::string_view::npos)
      << wrong.status();
}

TEST(RegistryTest, ImportResolutionListsEveryMissingNameAndChangesNothing) {
  Registry r;
  ASSERT_TRUE(r.add(reg("a___cpu___pvoid___void", fnA, &ExecutionContext::kType, "a.cc:1")).ok());
  ASSERT_TRUE(r.add(reg("b___cpu___pvoid___void", fnB, &ExecutionContext::kType, "b.cc:1")).ok());
  ral_import table[] = {{"a___cpu___pvoid___void", nullptr},
                        {"missing_one___cpu___pvoid___void", nullptr},
                        {"b___cpu___pvoid___void", nullptr},
                        {"missing_two___cpu___pvoid___void", nullptr}};
  Status s = resolveImports(r, &ExecutionContext::kType, table, 4);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("2 of 4 imports"), std::string_view::npos) << s;
  EXPECT_NE(s.message().find("missing_one"), std::string_view::npos);
  EXPECT_NE(s.message().find("missing_two"), std::string_view::npos);
  for (const auto& entry : table) EXPECT_EQ(entry.fn, nullptr);

  ral_import good[] = {{"b___cpu___pvoid___void", nullptr}, {"a___cpu___pvoid___void", nullptr}};
  ASSERT_TRUE(resolveImports(r, &ExecutionContext::kType, good, 2).ok());
  EXPECT_EQ(good[0].fn, &fnB);
  EXPECT_EQ(good[1].fn, &fnA);
  ral_import unnamed[] = {{nullptr, nullptr}};
  EXPECT_EQ(resolveImports(r, &ExecutionContext::kType, unnamed, 1).code(), StatusCode::kNotFound);
  EXPECT_EQ(resolveImports(r, &ExecutionContext::kType, nullptr, 3).code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(resolveImports(r, &ExecutionContext::kType, nullptr, 0).ok());
}

TEST(RegistryTest, IncompleteRegistrationIsRejected) {
  Registry r;
  EXPECT_EQ(r.add(reg("", fnA, &ExecutionContext::kType, "x.cc:1")).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      r.add(reg("n___cpu___pvoid___void", nullptr, &ExecutionContext::kType, "x.cc:1")).code(),
      StatusCode::kInvalidArgument);
}

TEST(RegistryTest, GlobalRegistryIsHealthy) {
  // Every RAL_API in this binary and libral registered without conflict.
  EXPECT_TRUE(Registry::global().health().ok()) << Registry::global().health();
  EXPECT_GT(Registry::global().size(), 0u);
}

}  // namespace
}  // namespace ral
