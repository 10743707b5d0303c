// The softmax family: softmax and log_softmax along every axis (with temperature) and SoftmaxOutput's
// gradient normalisation and ignore_label, against references, finite differences and req modes.
#include <gtest/gtest.h>

#include <cmath>

#include "nn_test_util.h"

namespace wtest {
namespace {

const std::vector<std::vector<int64_t>>& Shapes() {
  static const std::vector<std::vector<int64_t>> s = {{1}, {7}, {3, 1, 5}, {2, 3, 4}, {1, 1}, {5, 9}};
  return s;
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

}  // namespace
}  // namespace wtest
