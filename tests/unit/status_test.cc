#include "ral/status.h"

#include <gtest/gtest.h>

#include <memory>

namespace ral {
namespace {

TEST(StatusTest, OkIsDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.toString(), "OK");
}

TEST(StatusTest, BuildersCarryCodeAndMessage) {
  EXPECT_EQ(invalidArgument("rank ", 3, " != ", 2).toString(), "INVALID_ARGUMENT: rank 3 != 2");
  EXPECT_EQ(notFound("x").code(), StatusCode::kNotFound);
  EXPECT_EQ(unavailable("x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(outOfMemory("x").code(), StatusCode::kOutOfMemory);
  EXPECT_EQ(internalError("x").code(), StatusCode::kInternal);
  EXPECT_EQ(dataLoss("x").code(), StatusCode::kDataLoss);
  EXPECT_EQ(Status(StatusCode::kOk, "ignored").message(), "");
}

TEST(StatusTest, CopyMoveAndContext) {
  Status a = notFound("file.ralm");
  Status b = a;
  EXPECT_EQ(a, b);
  Status c = std::move(b);
  EXPECT_EQ(c.toString(), "NOT_FOUND: file.ralm");
  EXPECT_EQ(c.withContext("loading").message(), "loading: file.ralm");
  EXPECT_TRUE(Status().withContext("x").ok());
  EXPECT_NE(a, Status());
}

TEST(StatusTest, StatusOrHoldsValueOrError) {
  StatusOr<std::unique_ptr<int>> v = std::make_unique<int>(7);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(**v, 7);
  StatusOr<int> e = outOfRange("too big");
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kOutOfRange);
  StatusOr<int> bad = Status();  // OK without a value is a bug, reported as INTERNAL
  EXPECT_EQ(bad.status().code(), StatusCode::kInternal);
}

StatusOr<int> half(int x) {
  if (x % 2) return invalidArgument(x, " is odd");
  return x / 2;
}
Status quarter(int x, int* out) {
  RAL_ASSIGN_OR_RETURN(int h, half(x));
  RAL_ASSIGN_OR_RETURN(*out, half(h));
  RAL_RETURN_IF_ERROR(Status());
  return Status();
}

TEST(StatusTest, Macros) {
  int out = 0;
  EXPECT_TRUE(quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  EXPECT_EQ(quarter(6, &out).toString(), "INVALID_ARGUMENT: 3 is odd");
  auto f = []() -> Status {
    RAL_RETURN_IF_ERROR(half(5));
    return internalError("not reached");
  };
  EXPECT_EQ(f().code(), StatusCode::kInvalidArgument);
}

TEST(StatusDeathTest, ValueOfErrorStopsWithTheStatus) {
  StatusOr<int> e = notFound("the reason");
  EXPECT_DEATH((void)e.value(), "the reason");
}

}  // namespace
}  // namespace ral
