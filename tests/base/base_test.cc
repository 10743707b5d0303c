#include <gtest/gtest.h>

#include "weft/base.h"
#include "weft/context.h"
#include "weft/env.h"

namespace weft {
namespace {

TEST(Base, DTypeNamesAndSizesFollowMXNet) {
  EXPECT_EQ(DTypeSize(DType::kFloat32), 4u);
  EXPECT_EQ(DTypeSize(DType::kFloat16), 2u);
  EXPECT_EQ(DTypeSize(DType::kInt64), 8u);
  EXPECT_EQ(DTypeName(DType::kUint8), "uint8");
  EXPECT_EQ(DTypeFromName("bfloat16"), DType::kBfloat16);
  EXPECT_THROW(DTypeFromName("float8"), Error);
  EXPECT_THROW(DTypeSize(static_cast<DType>(42)), Error);
}

TEST(Base, ShapeStringsMatchMXNet) {
  EXPECT_EQ(Shape(2, 3).ToString(), "(2, 3)");
  EXPECT_EQ(Shape(5).ToString(), "(5,)");
  EXPECT_EQ(Shape().ToString(), "()");
  EXPECT_EQ(Shape(2, 3, 4).Size(), 24);
  EXPECT_EQ(Shape().Size(), 1);
}

TEST(Base, ContextParses) {
  EXPECT_EQ(Context::FromString("cpu"), Context::cpu(0));
  EXPECT_EQ(Context::FromString("cpu(3)"), Context::cpu(3));
  EXPECT_EQ(Context::FromString("cuda:1"), Context("cuda", 1));
  EXPECT_EQ(Context::cpu(2).ToString(), "cpu(2)");
  EXPECT_THROW(Context::FromString("cpu(-1)"), Error);
  EXPECT_THROW(Context::FromString("CPU"), Error);
  EXPECT_THROW(Context::FromString("cpu(1"), Error);
}

TEST(Base, EnvRejectsMalformedValues) {
  setenv("WEFT_TEST_INT", "12x", 1);
  EXPECT_THROW(GetEnvInt("WEFT_TEST_INT", 0), Error);
  setenv("WEFT_TEST_INT", "12", 1);
  EXPECT_EQ(GetEnvInt("WEFT_TEST_INT", 0), 12);
  setenv("WEFT_TEST_BOOL", "maybe", 1);
  EXPECT_THROW(GetEnvBool("WEFT_TEST_BOOL", false), Error);
  unsetenv("WEFT_TEST_BOOL");
  EXPECT_TRUE(GetEnvBool("WEFT_TEST_BOOL", true));
}

}  // namespace
}  // namespace weft
