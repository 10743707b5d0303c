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

// The range-checked read: both ends are allowed, one past either end is an error that names the
// variable, the value, what to give and the range; the fallback is checked as well.
TEST(Base, EnvIntInRangeNamesTheRange) {
  auto message = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  setenv("WEFT_TEST_INT", "3", 1);
  EXPECT_EQ(GetEnvIntInRange("WEFT_TEST_INT", 5, 3, 9, "a count"), 3);
  setenv("WEFT_TEST_INT", "9", 1);
  EXPECT_EQ(GetEnvIntInRange("WEFT_TEST_INT", 5, 3, 9, "a count"), 9);
  setenv("WEFT_TEST_INT", "10", 1);
  EXPECT_NE(message([] {
              GetEnvIntInRange("WEFT_TEST_INT", 5, 3, 9, "a count");
            }).find("WEFT_TEST_INT=10 is out of range; give a count from 3 to 9"),
            std::string::npos);
  setenv("WEFT_TEST_INT", "2", 1);
  EXPECT_THROW(GetEnvIntInRange("WEFT_TEST_INT", 5, 3, 9, "a count"), Error);
  setenv("WEFT_TEST_INT", "x", 1);
  EXPECT_NE(message([] { GetEnvIntInRange("WEFT_TEST_INT", 5, 3, 9, "a count"); }).find("is not an integer"),
            std::string::npos);
  unsetenv("WEFT_TEST_INT");
  EXPECT_EQ(GetEnvIntInRange("WEFT_TEST_INT", 5, 3, 9, "a count"), 5);
  EXPECT_THROW(GetEnvIntInRange("WEFT_TEST_INT", 11, 3, 9, "a count"), Error);
}

// The storage pool's and the workspace slots' per-device settings share this naming.
TEST(Base, DeviceSettingNamesAreShellNames) {
  EXPECT_EQ(DeviceEnvName("cpu", "TEMP_COPY"), "WEFT_CPU_TEMP_COPY");
  EXPECT_EQ(DeviceEnvName("vulkan", "MEM_POOL_TYPE"), "WEFT_VULKAN_MEM_POOL_TYPE");
  EXPECT_EQ(DeviceEnvName("my-npu.2", "MEM_"), "WEFT_MY_NPU_2_MEM_");
}

// Issue 19: WEFT_LOG_LEVEL=chatty was silently ignored and WEFT_CPU_MATH_THREADS=abc only warned.
TEST(Base, SettingsAreValidatedWithTheAllowedValues) {
  auto error_of = [] {
    try {
      ValidateSettings();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  unsetenv("WEFT_LOG_LEVEL");
  unsetenv("WEFT_CPU_MATH_THREADS");
  EXPECT_EQ(error_of(), "no error");
  setenv("WEFT_LOG_LEVEL", "chatty", 1);
  EXPECT_EQ(error_of(),
            "environment variable WEFT_LOG_LEVEL='chatty' is not a log level; use debug, info, warning or error");
  setenv("WEFT_LOG_LEVEL", "info", 1);
  EXPECT_EQ(error_of(), "no error");
  unsetenv("WEFT_LOG_LEVEL");
  setenv("WEFT_CPU_MATH_THREADS", "abc", 1);
  EXPECT_NE(error_of().find("WEFT_CPU_MATH_THREADS='abc' is not an integer"), std::string::npos);
  setenv("WEFT_CPU_MATH_THREADS", "0", 1);
  EXPECT_NE(error_of().find("from 1 to 1024"), std::string::npos);
  unsetenv("WEFT_CPU_MATH_THREADS");
}

// libgomp's default spin took cores from the engine (a ResNet-18 step 3x slower on a loaded
// machine): weft shortens it unless the user chose a wait policy or spin count.
TEST(Base, OpenMPSpinDefaultKeepsTheUsersChoice) {
  unsetenv("OMP_WAIT_POLICY");
  unsetenv("GOMP_SPINCOUNT");
  ApplyOpenMPDefaults();
  EXPECT_EQ(GetEnv("GOMP_SPINCOUNT"), std::string(kDefaultGompSpinCount));
  setenv("GOMP_SPINCOUNT", "123", 1);
  ApplyOpenMPDefaults();
  EXPECT_EQ(GetEnv("GOMP_SPINCOUNT"), std::string("123"));
  unsetenv("GOMP_SPINCOUNT");
  setenv("OMP_WAIT_POLICY", "ACTIVE", 1);
  ApplyOpenMPDefaults();
  EXPECT_FALSE(GetEnv("GOMP_SPINCOUNT").has_value());
  unsetenv("OMP_WAIT_POLICY");
}

}  // namespace
}  // namespace weft
