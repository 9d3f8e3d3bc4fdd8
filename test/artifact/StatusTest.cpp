//===- StatusTest.cpp - Status, StatusOr and their macros -----------------===//

#include "runtime/base/Status.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace infer {
namespace {

StatusOr<int> half(int value) {
  if (value % 2)
    return invalidArgumentError(std::to_string(value) + " is odd");
  return value / 2;
}

StatusOr<int> quarter(int value) {
  ASSIGN_OR_RETURN(int once, half(value));
  ASSIGN_OR_RETURN(int twice, half(once));
  return twice;
}

Status checkEven(int value) {
  RETURN_IF_ERROR(half(value));
  return okStatus();
}

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().toString(), "OK");
  Status error = dataLossError("bad bytes");
  EXPECT_FALSE(error.ok());
  EXPECT_EQ(error.code(), StatusCode::kDataLoss);
  EXPECT_EQ(error.toString(), "DataLoss: bad bytes");
  EXPECT_EQ(error.withPrefix("m.infer").message(), "m.infer: bad bytes");
  EXPECT_EQ(error.withPrefix("m.infer").code(), StatusCode::kDataLoss);
}

TEST(StatusTest, MacrosPropagate) {
  EXPECT_EQ(*quarter(12), 3);
  StatusOr<int> failed = quarter(6); // 6 / 2 = 3 is odd
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(failed.status().message(), "3 is odd");
  EXPECT_TRUE(checkEven(4).ok());
  EXPECT_EQ(checkEven(5).message(), "5 is odd");
}

TEST(StatusTest, ErrnoCodes) {
  EXPECT_EQ(errnoError(ENOENT, "open x").code(), StatusCode::kNotFound);
  EXPECT_EQ(errnoError(EACCES, "open x").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(errnoError(ENOMEM, "mmap x").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(errnoError(EIO, "read x").code(), StatusCode::kInternal);
  EXPECT_EQ(errnoError(ENOENT, "open x").message(), "open x: No such file or directory");
}

} // namespace
} // namespace infer
