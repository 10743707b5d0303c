// Skipping a test for a missing capability, or failing it where every capability must be present.
//
// A test that needs something a machine may lack (root and network namespaces, Fashion-MNIST, a
// Vulkan driver, a test plugin or program this tree builds) skips with the reason:
//
//   if (!fs::exists(dir)) WEFT_SKIP_UNLESS_REQUIRED() << "Fashion-MNIST is not installed at " << dir;
//
// CI has all of these, so there a skip would hide a lost capability behind a green run: with
// WEFT_REQUIRE_ALL=1 in the environment (scripts/test.sh sets it) the same line fails the test,
// naming the reason. Hardware no machine of the project has (CUDA and HIP GPUs) keeps GTEST_SKIP.
// Like GTEST_SKIP, it returns from the function it is used in (a test body or SetUp).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

namespace wtest {

/// True when WEFT_REQUIRE_ALL is set to 1: a missing capability is a failure.
inline bool RequireAll() {
  const char* v = std::getenv("WEFT_REQUIRE_ALL");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace wtest

// GTEST_SKIP's own expansion with the result type chosen at run time.
#define WEFT_SKIP_UNLESS_REQUIRED()                                                                               \
  return GTEST_MESSAGE_AT_(                                                                                       \
      __FILE__, __LINE__, ::wtest::RequireAll() ? "WEFT_REQUIRE_ALL=1 and a required capability is missing" : "", \
      ::wtest::RequireAll() ? ::testing::TestPartResult::kFatalFailure : ::testing::TestPartResult::kSkip)
