// Helpers shared by the autograd tests (ErrorOf, ExpectNear, Values come from the executor tests').
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "../executor/test_util.h"
#include "ndarray_read.h"
#include "weft/autograd.h"
#include "weft/imperative.h"
#include "weft/ndarray.h"

namespace weft::test {

inline NDArray Array(const std::vector<float>& v, const Shape& s) { return NDArray(v, s, Context::cpu(0)); }

/// `make()` run while recording (autograd.record()); its result.
inline NDArray Recorded(const std::function<NDArray()>& make) {
  auto rec = autograd::Record();
  return make();
}

// Every test waits for its pushed work before the process exits: oneDNN's function-local statics
// can be destroyed before the engine's shutdown runs what is still queued.
class WaitForAllAtExit : public ::testing::Environment {
 public:
  void TearDown() override { NDArray::WaitAll(); }
};
inline ::testing::Environment* const kWaitForAllAtExit = ::testing::AddGlobalTestEnvironment(new WaitForAllAtExit);

}  // namespace weft::test
