// Helpers shared by the executor tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "weft/executor.h"
#include "weft/ndarray.h"
#include "weft/operator.h"
#include "weft/symbol.h"

namespace weft::test {

/// The CPU context every executor test binds to.
inline const Context kCpu = Context::cpu();

inline std::vector<float> Values(const NDArray& a) {
  std::vector<float> v;
  a.SyncCopyToCPU(&v);
  return v;
}

inline void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

inline std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

/// data -> FullyConnected(num_hidden=6, name fc) -> Activation(relu) -> SoftmaxOutput (the MXNet
/// executor documentation's example network).
inline Symbol FcReluSoftmax() {
  Symbol data = Symbol::Variable("data");
  Symbol fc = Operator("FullyConnected").SetParam("num_hidden", 6)(data).CreateSymbol("fc");
  Symbol relu = Operator("Activation").SetParam("act_type", "relu")(fc).CreateSymbol("relu");
  return Operator("SoftmaxOutput")(relu).CreateSymbol("softmax");
}

}  // namespace weft::test
