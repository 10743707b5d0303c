// Optimizers and the update ops against hand-computed MXNet 1.9 updates and against MXNet 1.9.1's
// own results (mxnet_expected.h, written by data/make_mxnet_expected.py), on cpu and simdev;
// learning-rate schedules, multipliers.
#include <gtest/gtest.h>

#include <cmath>

#include "mxnet_expected.h"
#include "ndarray_read.h"
#include "weft/imperative.h"
#include "weft/optimizer.h"
#include "weft/runtime.h"
#include "weft/symbol.h"

namespace weft {
namespace {

using weft::test::Read;

// Weights and gradients used throughout: two elements exercise sign and clipping.
const std::vector<float> kW{1.0f, -2.0f};
const std::vector<float> kG{0.5f, 3.0f};

struct Arrays {
  NDArray w, g;
  explicit Arrays(const Context& ctx = Context::cpu(0)) : w(kW, Shape(2), ctx), g(kG, Shape(2), ctx) {}
};

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<Context> Devices() {
  std::vector<Context> out{Context::cpu(0)};
  if (Runtime::Get().HasDevice(Context("simdev", 0))) out.emplace_back("simdev", 0);
  return out;
}

TEST(Optimizer, SgdWithWeightDecayRescaleAndClip) {
  for (const Context& ctx : Devices()) {
    auto opt = OptimizerRegistry::Create("sgd");
    opt->SetParam("lr", 0.1)->SetParam("wd", 0.01)->SetParam("rescale_grad", 0.5)->SetParam("clip_gradient", 1.0);
    Arrays r(ctx);
    opt->Update(0, r.w, r.g);
    const std::vector<float> w = Read(r.w);
    // g' = clip(0.5·g, ±1) = {0.25, 1}; w -= 0.1·(g' + 0.01·w)
    EXPECT_NEAR(w[0], 1.0f - 0.1f * (0.25f + 0.01f * 1.0f), 1e-6) << ctx.ToString();
    EXPECT_NEAR(w[1], -2.0f - 0.1f * (1.0f + 0.01f * -2.0f), 1e-6) << ctx.ToString();
  }
}

TEST(Optimizer, SgdMomentum) {
  auto opt = OptimizerRegistry::Create("SGD");
  opt->SetParam("learning_rate", 0.1)->SetParam("momentum", 0.9);
  Arrays r;
  opt->Update(3, r.w, r.g);
  opt->Update(3, r.w, r.g);
  // m1 = -0.1·g; m2 = 0.9·m1 - 0.1·g = -0.19·g; w = w0 - 0.29·g
  const std::vector<float> w = Read(r.w);
  EXPECT_NEAR(w[0], 1.0f - 0.29f * 0.5f, 1e-6);
  EXPECT_NEAR(w[1], -2.0f - 0.29f * 3.0f, 1e-6);
  EXPECT_EQ(opt->UpdateCount(3), 2u);
  EXPECT_EQ(opt->num_update(), 2u);
}

TEST(Optimizer, NagMomentum) {
  for (const Context& ctx : Devices()) {
    auto opt = OptimizerRegistry::Create("nag");
    opt->SetParam("lr", 0.1)->SetParam("momentum", 0.9)->SetParam("wd", 0.1);
    Arrays r(ctx);
    opt->Update(0, r.w, r.g);
    opt->Update(0, r.w, r.g);
    // By hand, element 0: g' = 0.5 + 0.1·1 = 0.6; m = 0.6; w = 1 - 0.1·(0.6 + 0.54) = 0.886
    // then g' = 0.5 + 0.0886 = 0.5886; m = 0.54 + 0.5886 = 1.1286; w = 0.886 - 0.1·(0.5886 + 1.01574)
    const float w1 = 0.886f, g2 = 0.5f + 0.1f * w1, m2 = 0.9f * 0.6f + g2;
    EXPECT_NEAR(Read(r.w)[0], w1 - 0.1f * (g2 + 0.9f * m2), 1e-5) << ctx.ToString();
  }
}

TEST(Optimizer, AdamBiasCorrection) {
  for (const Context& ctx : Devices()) {
    auto opt = OptimizerRegistry::Create("adam");
    EXPECT_EQ(opt->GetParam("lr"), "0.001");
    opt->SetParam("lr", 0.01);
    Arrays r(ctx);
    opt->Update(0, r.w, r.g);
    // t = 1: mean = 0.1·g, var = 0.001·g², lr_t = 0.01·sqrt(0.001)/0.1; step = lr_t·mean/(sqrt(var)+eps) ≈ 0.01
    double w = 1.0, g = 0.5;
    double mean = 0.1 * g, var = 0.001 * g * g, lr_t = 0.01 * std::sqrt(1 - 0.999) / (1 - 0.9);
    w -= lr_t * mean / (std::sqrt(var) + 1e-8);
    EXPECT_NEAR(Read(r.w)[0], w, 1e-6) << ctx.ToString();
    // t = 2 with the same gradient.
    opt->Update(0, r.w, r.g);
    mean = 0.9 * mean + 0.1 * g;
    var = 0.999 * var + 0.001 * g * g;
    lr_t = 0.01 * std::sqrt(1 - 0.999 * 0.999) / (1 - 0.9 * 0.9);
    w -= lr_t * mean / (std::sqrt(var) + 1e-8);
    EXPECT_NEAR(Read(r.w)[0], w, 1e-6) << ctx.ToString();
  }
}

TEST(Optimizer, RmsPropPlainAndCentered) {
  for (const Context& ctx : Devices()) {
    auto plain = OptimizerRegistry::Create("rmsprop");
    plain->SetParam("lr", 0.01);
    Arrays r(ctx);
    plain->Update(0, r.w, r.g);
    // n = 0.1·g²; w -= lr·g/sqrt(n + eps)
    EXPECT_NEAR(Read(r.w)[0], 1.0f - 0.01f * 0.5f / std::sqrt(0.1f * 0.25f + 1e-8f), 1e-6) << ctx.ToString();

    auto centered = OptimizerRegistry::Create("rmsprop");
    centered->SetParam("lr", 0.01)->SetParam("centered", true)->SetParam("clip_weights", 1.5);
    Arrays c(ctx);
    centered->Update(0, c.w, c.g);
    // n = 0.1·g², gm = 0.1·g, delta = -lr·g/sqrt(n - gm² + eps)
    const float n = 0.1f * 0.25f, gm = 0.05f;
    EXPECT_NEAR(Read(c.w)[0], 1.0f - 0.01f * 0.5f / std::sqrt(n - gm * gm + 1e-8f), 1e-6) << ctx.ToString();
    EXPECT_FLOAT_EQ(Read(c.w)[1], -1.5f) << ctx.ToString();  // clip_weights
  }
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 2e-6 * std::max(1.0f, std::fabs(want[i]))) << what << ", element " << i;
}

TEST(UpdateOps, MatchMxnet) {
  // Each op called `steps` times with the same gradient, states updated in place, on each device.
  for (const Context& ctx : Devices()) {
    for (const mxnet_expected::OpCase& c : mxnet_expected::kOpCases) {
      const std::string label =
          std::string(c.op) + " on " + ctx.ToString() + (c.attrs.count("clip_gradient") ? " (clip_gradient)" : "");
      std::vector<NDArray> arrays;
      for (const std::vector<float>& v : c.inputs) arrays.emplace_back(v, Shape(static_cast<int64_t>(v.size())), ctx);
      for (int step = 0; step < c.steps; ++step) {
        ImperativeCall call;
        call.op = c.op;
        call.inputs = arrays;
        call.params = c.attrs;
        std::vector<NDArray> out{arrays[0]};  // in place, as MXNet's optimizers call them
        Invoke(call, &out);
      }
      ExpectClose(Read(arrays[0]), c.expected[0], label + ": weight");
      for (size_t k = 1; k < c.expected.size(); ++k)
        ExpectClose(Read(arrays[k + 1]), c.expected[k], label + ": state " + std::to_string(k - 1));
    }
  }
}

TEST(Optimizer, MatchesMxnetOptimizers) {
  // MXNet's Python optimizers (three updates of index 0 through get_updater) against ours.
  for (const Context& ctx : Devices()) {
    for (const mxnet_expected::OptimizerCase& c : mxnet_expected::kOptimizerCases) {
      std::string label = std::string(c.type) + " on " + ctx.ToString();
      auto opt = OptimizerRegistry::Create(c.type);
      for (const auto& [k, v] : c.params) {
        opt->SetParamString(k, v);
        label += " " + k + "=" + v;
      }
      const Shape shape(static_cast<int64_t>(c.weight.size()));
      NDArray w(c.weight, shape, ctx), g(c.grad, shape, ctx);
      for (int i = 0; i < c.updates; ++i) opt->Update(0, w, g);
      ExpectClose(Read(w), c.expected, label);
    }
  }
}

TEST(Optimizer, ParametersAreChecked) {
  auto opt = OptimizerRegistry::Create("sgd");
  std::string msg = ErrorOf([&] { opt->SetParam("beta1", 0.9); });
  EXPECT_NE(msg.find("unknown parameter 'beta1'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("momentum"), std::string::npos) << msg;
  msg = ErrorOf([&] { opt->SetParam("lr", "fast"); });
  EXPECT_NE(msg.find("must be a number"), std::string::npos) << msg;
  msg = ErrorOf([] { OptimizerRegistry::Create("adagrad"); });
  EXPECT_NE(msg.find("known: sgd, nag, adam, rmsprop"), std::string::npos) << msg;
  std::unique_ptr<Optimizer> raw(OptimizerRegistry::Find("ccsgd"));
  EXPECT_EQ(raw->GetType(), "sgd");
  Arrays r;
  NDArray wrong(Shape(3), Context::cpu(0));
  msg = ErrorOf([&] { opt->Update(4, r.w, wrong); });
  EXPECT_NE(msg.find("index 4"), std::string::npos) << msg;
}

TEST(Optimizer, MultipliersFromSymbolAttributes) {
  Symbol w = Symbol::Variable("fc1_weight");
  w.SetAttr("lr_mult", "2");
  Symbol b = Symbol::Variable("fc1_bias");
  Symbol g = Symbol::Variable("bn_gamma");
  g.SetAttr("__wd_mult__", "0.5");
  Symbol net = Symbol::Group({w, b, g});
  auto opt = OptimizerRegistry::Create("sgd");
  opt->SetParam("lr", 0.1)->SetParam("wd", 0.01);
  opt->SetParamNames({{0, "fc1_weight"}, {1, "fc1_bias"}, {2, "bn_gamma"}}, &net);
  EXPECT_FLOAT_EQ(opt->GetLR(0), 0.2f);
  EXPECT_FLOAT_EQ(opt->GetLR(1), 0.1f);
  EXPECT_FLOAT_EQ(opt->GetWD(0), 0.01f);
  EXPECT_FLOAT_EQ(opt->GetWD(1), 0.0f);  // biases get no weight decay
  EXPECT_FLOAT_EQ(opt->GetWD(2), 0.005f);
  // The multiplier reaches the update.
  Arrays r;
  opt->Update(0, r.w, r.g);
  EXPECT_NEAR(Read(r.w)[0], 1.0f - 0.2f * (0.5f + 0.01f), 1e-6);
}

TEST(LRScheduler, FactorScheduler) {
  FactorScheduler s(2, 0.5f, 0.1f);
  s.SetLR(1.0f);
  EXPECT_FLOAT_EQ(s.GetLR(1), 1.0f);
  EXPECT_FLOAT_EQ(s.GetLR(2), 1.0f);
  EXPECT_FLOAT_EQ(s.GetLR(3), 0.5f);
  EXPECT_FLOAT_EQ(s.GetLR(5), 0.25f);
  EXPECT_FLOAT_EQ(s.GetLR(20), 0.1f);  // stop_factor_lr
  EXPECT_THROW(FactorScheduler(0), Error);
}

TEST(LRScheduler, MultiFactorScheduler) {
  MultiFactorScheduler s({2, 5}, 0.1f);
  s.SetLR(1.0f);
  EXPECT_FLOAT_EQ(s.GetLR(2), 1.0f);
  EXPECT_FLOAT_EQ(s.GetLR(3), 0.1f);
  EXPECT_FLOAT_EQ(s.GetLR(5), 0.1f);
  EXPECT_NEAR(s.GetLR(6), 0.01f, 1e-9);
  EXPECT_THROW(MultiFactorScheduler({3, 2}), Error);
}

TEST(LRScheduler, DrivesTheOptimizer) {
  auto opt = OptimizerRegistry::Create("sgd");
  opt->SetParam("lr", 1.0);
  opt->SetLRScheduler(std::make_unique<FactorScheduler>(1, 0.5f));
  Arrays r;
  opt->Update(0, r.w, r.g);  // num_update 1: lr 1
  opt->Update(0, r.w, r.g);  // num_update 2: lr 0.5
  EXPECT_NEAR(Read(r.w)[0], 1.0f - 1.0f * 0.5f - 0.5f * 0.5f, 1e-6);
}

TEST(Optimizer, SerializeRoundTrip) {
  auto a = OptimizerRegistry::Create("adam");
  a->SetParam("beta1", 0.8)->SetParam("lr", 0.02);
  Arrays r;
  a->Update(1, r.w, r.g);
  auto b = OptimizerRegistry::Create("adam");
  b->Deserialize(a->Serialize());
  EXPECT_EQ(b->GetParam("beta1"), "0.8");
  EXPECT_EQ(b->UpdateCount(1), 1u);
  auto s = OptimizerRegistry::Create("sgd");
  EXPECT_NE(ErrorOf([&] { s->Deserialize(a->Serialize()); }).find("adam"), std::string::npos);
}

}  // namespace
}  // namespace weft
