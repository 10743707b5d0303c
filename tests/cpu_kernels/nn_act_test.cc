// The nn family's Activation and LeakyReLU kernels against references, finite differences (where the
// backward is a true derivative) and req modes.
#include <gtest/gtest.h>

#include <cmath>

#include "nn_test_util.h"

namespace wtest {
namespace {

const std::vector<std::vector<int64_t>>& Shapes() {
  static const std::vector<std::vector<int64_t>> s = {{1}, {7}, {3, 1, 5}, {2, 3, 4}, {1, 1}, {5, 9}};
  return s;
}

float ActRef(const std::string& t, float x, float slope) {
  if (t == "relu") return x > 0 ? x : 0;
  if (t == "sigmoid") return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x))));
  if (t == "tanh") return static_cast<float>(std::tanh(static_cast<double>(x)));
  if (t == "softrelu") return static_cast<float>(std::log1p(std::exp(static_cast<double>(x))));
  if (t == "softsign") return x / (1 + std::fabs(x));
  if (t == "leaky") return x > 0 ? x : slope * x;
  return x > 0 ? x : static_cast<float>(slope * std::expm1(static_cast<double>(x)));  // elu
}

TEST(NNKernels, ActivationsMatchReferenceAndGradients) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  struct Op {
    std::string op, type;
    bool uses_in;
  };
  // uses_in: the backward gets data (OPS.md: Activation only for softsign).
  const std::vector<Op> ops = {{"Activation", "relu", false},    {"Activation", "sigmoid", false},
                               {"Activation", "tanh", false},    {"Activation", "softrelu", false},
                               {"Activation", "softsign", true}, {"LeakyReLU", "leaky", true},
                               {"LeakyReLU", "elu", true}};
  for (const Op& o : ops)
    for (const auto& shape : Shapes()) {
      SCOPED_TRACE(o.op + " " + o.type + " " + ::testing::PrintToString(shape));
      Attrs a = {{"act_type", o.type}};
      if (o.op == "LeakyReLU") a["slope"] = "0.3";
      std::vector<float> v = Random(rng, Prod(shape), -3.0f, 3.0f);
      AvoidKinks(v, {0.0f}, 0.05f);
      Buf x = Buf::F(shape, v);
      auto y = RunOp(o.op, a, {x}, {shape});
      std::vector<float> ref(v.size());
      for (size_t i = 0; i < v.size(); ++i) ref[i] = ActRef(o.type, v[i], 0.3f);
      EXPECT_LE(Nmse(ref, y[0].floats()), 1e-7);
      EXPECT_TRUE(AllFinite(y[0].floats()));
      CheckReqModes(o.op, a, {x}, {shape}, {}, true, seed, o.op == "Activation" ? 0 : -1);
      GradCase g(o.op, "_backward_" + o.op, a, {x}, {shape});
      g.uses_inputs = o.uses_in;
      g.uses_outputs = true;
      g.seed = seed;
      CheckGradient(g);
    }
}

TEST(NNKernels, ActivationBackwardWithoutDataOnlyWhereTheOutputSuffices) {
  const Buf g = Buf::F({4}), y = Buf::F({4});
  Kernel softsign("_backward_Activation", {{"act_type", "softsign"}}, {g, y}, {Buf::F({4})});
  EXPECT_FALSE(softsign.ok());
  EXPECT_NE(softsign.error().find("3 inputs (out_grad, data, output)"), std::string::npos) << softsign.error();
  Kernel tanh("_backward_Activation", {{"act_type", "tanh"}}, {g, y}, {Buf::F({4})});
  EXPECT_TRUE(tanh.ok()) << tanh.error();
  Kernel leaky("_backward_LeakyReLU", {{"act_type", "leaky"}}, {g, y}, {Buf::F({4})});
  EXPECT_FALSE(leaky.ok());
}

TEST(NNKernels, ActivationRejectsUnknownType) {
  Kernel k("Activation", {{"act_type", "swish"}}, {Buf::F({2})}, {Buf::F({2})});
  EXPECT_FALSE(k.ok());
  EXPECT_NE(k.error().find("act_type"), std::string::npos) << k.error();
}

}  // namespace
}  // namespace wtest
