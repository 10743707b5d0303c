// Helpers shared by the autograd tests.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "ndarray_read.h"
#include "weft/autograd.h"
#include "weft/imperative.h"
#include "weft/ndarray.h"

namespace weft::test {

inline NDArray Array(const std::vector<float>& v, const Shape& s) { return NDArray(v, s, Context::cpu(0)); }

inline std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

inline void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

}  // namespace weft::test
