// Memory planning: in-place chains, block reuse, and correct results with shared memory.
#include "mlp_util.h"

namespace weft {
namespace {

using test::kCpu;

TEST(ExecutorPlan, SigmoidChainRunsInOneBlock) {
  Symbol x = Symbol::Variable("x");
  Symbol y = x;
  for (int i = 0; i < 10; ++i) y = Operator("Activation").SetParam("act_type", "sigmoid")(y).CreateSymbol();
  NDArray xv(std::vector<float>(1000, 0.5f), Shape{10, 100}, kCpu);
  std::unique_ptr<Executor> e(y.Bind(kCpu, {xv}, {}, {}, {}));
  EXPECT_EQ(e->unshared_bytes(), 10u * 4000u);
  EXPECT_EQ(e->planned_bytes(), 4000u);  // every sigmoid after the first runs in place
  e->Forward(false);
  float v = 0.5f;
  for (int i = 0; i < 10; ++i) v = 1.f / (1.f + std::exp(-v));
  test::ExpectNear(test::Values(e->outputs[0]), std::vector<float>(1000, v));
}

TEST(ExecutorPlan, NoInplaceWhenTheInputIsStillNeeded) {
  // b = sigmoid(a') is read by both c and d: c cannot overwrite it.
  Symbol x = Symbol::Variable("x");
  Symbol a = x * 1.f;
  Symbol b = Operator("Activation").SetParam("act_type", "sigmoid")(a).CreateSymbol();
  Symbol c = Operator("Activation").SetParam("act_type", "tanh")(b).CreateSymbol();
  Symbol d = b * 2.f;
  Symbol y = c + d;
  NDArray xv({0.1f, -0.3f}, Shape{2}, kCpu);
  std::unique_ptr<Executor> e(y.Bind(kCpu, {xv}, {}, {}, {}));
  e->Forward(false);
  std::vector<float> want;
  for (float xx : {0.1f, -0.3f}) {
    float s = 1.f / (1.f + std::exp(-xx));
    want.push_back(std::tanh(s) + 2 * s);
  }
  test::ExpectNear(test::Values(e->outputs[0]), want);
}

// dropout(sigmoid(x * 1)) on x of shape (10, 100), p = 0.5.
Symbol SigmoidThenDropout() {
  Symbol x = Symbol::Variable("x");
  Symbol s = Operator("Activation").SetParam("act_type", "sigmoid")(x * 1.f).CreateSymbol();
  return Operator("Dropout").SetParam("p", 0.5f)(s).CreateSymbol();
}

float Sigmoid(float v) { return 1.f / (1.f + std::exp(-v)); }

// Dropout may write its output over its data (MXNet's FInplaceOption {0, 0}); not training it is
// then the identity with nothing copied.
TEST(ExecutorPlan, DropoutRunsInPlace) {
  const std::vector<float> xs = test::Pseudo(1000, 3);
  std::unique_ptr<Executor> e(SigmoidThenDropout().Bind(kCpu, {NDArray(xs, Shape{10, 100}, kCpu)}, {}, {}, {}));
  // x*1, the sigmoid and Dropout's output share one block; the hidden mask takes another.
  EXPECT_EQ(e->unshared_bytes(), 4u * 4000u);
  EXPECT_EQ(e->planned_bytes(), 2u * 4000u);
  e->Forward(false);
  std::vector<float> want;
  for (float v : xs) want.push_back(Sigmoid(v));
  test::ExpectNear(test::Values(e->outputs[0]), want);
}

TEST(ExecutorPlan, DropoutKeepsAnInputThatABackwardReads) {
  // The sigmoid's gradient reads its output, Dropout's data: Dropout must not overwrite it.
  // d/dx dropout(sigmoid(x)) = m * s * (1 - s), with m (0 or 1/(1-p)) = output / s.
  const std::vector<float> xs = test::Pseudo(1000, 4);
  NDArray gx(std::vector<float>(1000, 0.f), Shape{10, 100}, kCpu);
  std::unique_ptr<Executor> e(
      SigmoidThenDropout().Bind(kCpu, {NDArray(xs, Shape{10, 100}, kCpu)}, {gx}, {kWriteTo}, {}));
  e->Forward(true);
  e->Backward({NDArray(std::vector<float>(1000, 1.f), Shape{10, 100}, kCpu)});
  const std::vector<float> out = test::Values(e->outputs[0]), g = test::Values(gx);
  int dropped = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float sv = Sigmoid(xs[i]), m = std::round(out[i] / sv);
    ASSERT_TRUE(m == 0.f || m == 2.f) << "element " << i << ": output " << out[i] << ", sigmoid " << sv;
    dropped += m == 0.f;
    EXPECT_NEAR(g[i], m * sv * (1.f - sv), 1e-6f) << "element " << i;
  }
  EXPECT_GT(dropped, 400);
  EXPECT_LT(dropped, 600);
}

TEST(ExecutorPlan, TrainingGraphSharesMemoryAndMatchesHostMath) {
  Symbol net = test::Mlp();
  auto e = Executor::SimpleBind(net, kCpu, {{"data", Shape{8, 10}}}, "write", {{"softmax_label", "null"}});
  EXPECT_LT(e->planned_bytes(), e->unshared_bytes());
  // Host reference for the output.
  std::vector<float> x = test::Pseudo(80, 11), w1 = test::Pseudo(160, 12), b1 = test::Pseudo(16, 13),
                     w2 = test::Pseudo(64, 14), b2 = test::Pseudo(4, 15);
  e->arg_dict().at("data").SyncCopyFromCPU(x);
  e->arg_dict().at("fc1_weight").SyncCopyFromCPU(w1);
  e->arg_dict().at("fc1_bias").SyncCopyFromCPU(b1);
  e->arg_dict().at("fc2_weight").SyncCopyFromCPU(w2);
  e->arg_dict().at("fc2_bias").SyncCopyFromCPU(b2);
  e->Forward(true);
  e->Backward();
  std::vector<float> want;
  for (int n = 0; n < 8; ++n) {
    float h[16], o[4], mx = -1e30f, sum = 0;
    for (int j = 0; j < 16; ++j) {
      h[j] = b1[j];
      for (int k = 0; k < 10; ++k) h[j] += x[n * 10 + k] * w1[j * 10 + k];
      h[j] = std::max(h[j], 0.f);
    }
    for (int j = 0; j < 4; ++j) {
      o[j] = b2[j];
      for (int k = 0; k < 16; ++k) o[j] += h[k] * w2[j * 16 + k];
      mx = std::max(mx, o[j]);
    }
    for (float& v : o) sum += (v = std::exp(v - mx));
    for (float v : o) want.push_back(v / sum);
  }
  test::ExpectNear(test::Values(e->outputs[0]), want);
  // The data gradient exists and the label (null) has none.
  EXPECT_FALSE(e->grad_dict().at("data").is_none());
  EXPECT_TRUE(e->grad_dict().at("softmax_label").is_none());
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

TEST(ExecutorAux, BatchNormUpdatesMovingStatsAndDropoutMaskFlowsBack) {
  const Context cpu = Context::cpu();
  Symbol x = Symbol::Variable("data");
  Symbol bn = Operator("BatchNorm").SetParam("fix_gamma", false)(x).CreateSymbol("bn");
  Symbol y = Operator("Dropout").SetParam("p", 0.5f)(bn).CreateSymbol("drop");
  ASSERT_EQ(y.ListAuxiliaryStates(), (std::vector<std::string>{"bn_moving_mean", "bn_moving_var"}));
  auto e = Executor::SimpleBind(y, cpu, {{"data", Shape{4, 2}}});
  e->arg_dict().at("data").SyncCopyFromCPU(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
  e->arg_dict().at("bn_gamma") = 1.f;
  e->Forward(true);
  // Column means 4 and 5; moving_mean = 0.9 * 0 + 0.1 * mean.
  test::ExpectNear(test::Values(e->aux_dict().at("bn_moving_mean")), {0.4f, 0.5f});
  std::vector<float> out = test::Values(e->outputs[0]);
  NDArray head(std::vector<float>(8, 1.f), Shape{4, 2}, cpu);
  e->Backward({head});
  std::vector<float> gx = test::Values(e->grad_dict().at("data"));
  for (float v : gx) EXPECT_TRUE(std::isfinite(v));
  // Dropped elements (output 0) pass no gradient to beta: d beta = number of kept elements * 2
  // (inverted dropout scales kept ones by 1 / (1 - p)).
  std::vector<float> gbeta = test::Values(e->grad_dict().at("bn_beta"));
  float kept = 0;
  for (float v : out) kept += v != 0.f ? 2.f : 0.f;
  EXPECT_NEAR(gbeta[0] + gbeta[1], kept, 1e-4f);
}

}  // namespace
}  // namespace weft
