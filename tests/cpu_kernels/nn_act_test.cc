// Activation, LeakyReLU, softmax, log_softmax and the loss ops against references, finite
// differences (where the backward is a true derivative) and req modes.
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

TEST(NNKernels, SoftmaxAndLogSoftmaxAlongEveryAxis) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  for (const char* op : {"softmax", "log_softmax"})
    for (const auto& shape : Shapes())
      for (int axis = -static_cast<int>(shape.size()); axis < static_cast<int>(shape.size()); ++axis)
        for (const char* temp : {"None", "2.5"}) {
          SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis) + " T " + temp + " " +
                       ::testing::PrintToString(shape));
          Attrs a = {{"axis", std::to_string(axis)}, {"temperature", temp}};
          double t = std::string(temp) == "None" ? 1.0 : 2.5;
          Buf x = Buf::F(shape, Random(rng, Prod(shape), -4.0f, 4.0f));
          auto y = RunOp(op, a, {x}, {shape});
          // Reference: strided rows around the axis, in double.
          int ax = axis < 0 ? axis + static_cast<int>(shape.size()) : axis;
          int64_t inner = 1, len = shape[static_cast<size_t>(ax)];
          for (size_t i = static_cast<size_t>(ax) + 1; i < shape.size(); ++i) inner *= shape[i];
          std::vector<float> ref(static_cast<size_t>(x.size()));
          for (int64_t base = 0; base < x.size(); ++base) {
            if ((base / inner) % len != 0) continue;  // visit each row once, from its first element
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < len; ++j) mx = std::max(mx, static_cast<double>(x.as<float>()[base + j * inner]));
            for (int64_t j = 0; j < len; ++j) sum += std::exp((x.as<float>()[base + j * inner] - mx) / t);
            for (int64_t j = 0; j < len; ++j) {
              double z = (x.as<float>()[base + j * inner] - mx) / t;
              ref[static_cast<size_t>(base + j * inner)] =
                  static_cast<float>(std::string(op) == "softmax" ? std::exp(z) / sum : z - std::log(sum));
            }
          }
          EXPECT_LE(Nmse(ref, y[0].floats()), 1e-7);
          CheckReqModes(op, a, {x}, {shape}, {}, true, seed, 0);
          GradCase g(op, std::string("_backward_") + op, a, {x}, {shape});
          g.uses_inputs = false;
          g.uses_outputs = true;
          g.seed = seed;
          CheckGradient(g);
        }
}

// SoftmaxOutput's gradient is the cross-entropy gradient: softmax − one_hot(label), scaled.
TEST(NNKernels, SoftmaxOutputGradientNormalizationAndIgnore) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  const int64_t n = 5, c = 4;
  Buf x = Buf::F({n, c}, Random(rng, n * c, -2, 2));
  Buf label = Buf::F({n}, {0, 3, 1, 3, 2});
  for (const char* norm : {"null", "batch", "valid"})
    for (bool ignore : {false, true}) {
      SCOPED_TRACE(std::string(norm) + (ignore ? " use_ignore" : ""));
      Attrs a = {{"grad_scale", "0.5"},
                 {"normalization", norm},
                 {"use_ignore", ignore ? "True" : "False"},
                 {"ignore_label", "3"}};
      auto y = RunOp("SoftmaxOutput", a, {x, label}, {{n, c}});
      CheckReqModes("SoftmaxOutput", a, {x, label}, {{n, c}});
      std::vector<Buf> bin = {Buf::F({n, c}, Random(rng, n * c)), x, label, y[0]};
      auto g = RunOp("_backward_SoftmaxOutput", a, bin, {{n, c}, {n}});
      CheckReqModes("_backward_SoftmaxOutput", a, bin, {{n, c}, {n}});
      int64_t valid = ignore ? 3 : n;
      double scale = 0.5 / (std::string(norm) == "batch" ? n : std::string(norm) == "valid" ? valid : 1);
      std::vector<float> ref(static_cast<size_t>(n * c));
      for (int64_t i = 0; i < n; ++i) {
        int64_t k = static_cast<int64_t>(label.as<float>()[i]);
        for (int64_t j = 0; j < c; ++j)
          ref[static_cast<size_t>(i * c + j)] =
              ignore && k == 3 ? 0.0f : static_cast<float>((y[0].as<float>()[i * c + j] - (j == k)) * scale);
      }
      EXPECT_LE(Nmse(ref, g[0].floats()), 1e-7);
      for (float v : g[1].floats()) EXPECT_EQ(v, 0.0f);
    }
  // A label outside [0, classes) is an error, not a crash.
  Buf bad = Buf::F({n}, {0, 1, 9, 2, 1});
  std::vector<Buf> outs = {Buf::F({n, c}), Buf::F({n})};
  std::vector<Buf> bin = {Buf::F({n, c}), x, bad, Buf::F({n, c})};
  Kernel k("_backward_SoftmaxOutput", {}, bin, outs);
  ASSERT_TRUE(k.ok()) << k.error();
  Call call;
  for (Buf& b : bin) call.inputs.push_back(&b);
  for (Buf& b : outs) call.outputs.push_back(&b);
  EXPECT_NE(k.Run(call).find("label"), std::string::npos);
}

TEST(NNKernels, LinearRegressionAndMakeLoss) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  Buf x = Buf::F({4, 3}, Random(rng, 12)), label = Buf::F({4, 3}, Random(rng, 12));
  Attrs a = {{"grad_scale", "2"}};
  auto y = RunOp("LinearRegressionOutput", a, {x, label}, {{4, 3}});
  EXPECT_EQ(y[0].bytes, x.bytes);
  std::vector<Buf> bin = {Buf::F({4, 3}), x, label, y[0]};
  auto g = RunOp("_backward_LinearRegressionOutput", a, bin, {{4, 3}, {4, 3}});
  std::vector<float> ref(12);
  for (size_t i = 0; i < 12; ++i) ref[i] = (x.as<float>()[i] - label.as<float>()[i]) * 2.0f / 3.0f;
  EXPECT_LE(Nmse(ref, g[0].floats()), 1e-7);
  CheckReqModes("_backward_LinearRegressionOutput", a, bin, {{4, 3}, {4, 3}});

  auto m = RunOp("MakeLoss", a, {x}, {{4, 3}});
  EXPECT_EQ(m[0].bytes, x.bytes);
  CheckReqModes("MakeLoss", a, {x}, {{4, 3}}, {}, true, 1, 0);
  for (const char* norm : {"null", "batch"}) {
    Attrs b = {{"grad_scale", "2"}, {"normalization", norm}};
    auto mg = RunOp("_backward_MakeLoss", b, {Buf::F({4, 3}, Random(rng, 12))}, {{4, 3}});
    for (float v : mg[0].floats()) EXPECT_FLOAT_EQ(v, std::string(norm) == "batch" ? 0.5f : 2.0f);
  }
}

}  // namespace
}  // namespace wtest
