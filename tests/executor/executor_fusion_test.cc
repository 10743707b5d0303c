// Inference graph fusion (core/executor/fuse_conv.h): for binds without gradients the executor
// runs Convolution -> [BatchNorm] -> [relu/clip] -> [add] -> [relu/clip] chains as one `_sg_conv`
// node. Each case binds the same network twice, WEFT_GRAPH_FUSION=0 and =1, with the same
// parameters, and compares outputs (float tolerance: folding BatchNorm into the weights rounds
// differently), what GetOptimizedSymbol shows, and the cases that must not fuse.
#include <cstdlib>
#include <cstring>
#include <random>

#include "test_util.h"
#include "weft/imperative.h"

namespace weft {
namespace {

using test::Values;

const Context kCpu = Context::cpu();

Symbol Conv(const Symbol& x, const std::string& name, int filters, int kernel, int groups = 1, bool bias = false) {
  return Operator("Convolution")
      .SetParam("kernel", Shape(kernel, kernel))
      .SetParam("pad", Shape(kernel / 2, kernel / 2))
      .SetParam("num_filter", filters)
      .SetParam("num_group", groups)
      .SetParam("no_bias", !bias)(x)
      .CreateSymbol(name);
}
Symbol Bn(const Symbol& x, const std::string& name, bool global = false) {
  return Operator("BatchNorm").SetParam("fix_gamma", false).SetParam("use_global_stats", global)(x).CreateSymbol(name);
}
Symbol Relu(const Symbol& x, const std::string& name) {
  return Operator("Activation").SetParam("act_type", "relu")(x).CreateSymbol(name);
}
Symbol Add(const Symbol& a, const Symbol& b, const std::string& name) {
  return Operator("elemwise_add")(std::vector<Symbol>{a, b}).CreateSymbol(name);
}

// Binds `s` for inference (or with `grad_req`) with the fusion on or off.
std::unique_ptr<Executor> BindWith(const Symbol& s, const Shape& data, bool fusion,
                                   const std::string& grad_req = "null") {
  setenv("WEFT_GRAPH_FUSION", fusion ? "1" : "0", 1);
  auto e = Executor::SimpleBind(s, kCpu, {{"data", data}}, grad_req);
  unsetenv("WEFT_GRAPH_FUSION");
  return e;
}

// Random arguments; moving variances and gammas away from 0 so BatchNorm's scale is not tiny.
void Randomize(Executor& e, uint32_t seed) {
  std::mt19937 rng(seed);
  auto fill = [&](NDArray& a, float lo, float hi) {
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> v(a.Size());
    for (float& x : v) x = u(rng);
    a.SyncCopyFromCPU(v);
  };
  for (auto& [name, a] : e.arg_dict()) {
    NDArray arr = a;
    const bool scale = name.ends_with("gamma");
    fill(arr, scale ? 0.5f : -1.0f, scale ? 1.5f : 1.0f);
  }
  for (auto& [name, a] : e.aux_dict()) {
    NDArray arr = a;
    if (name.ends_with("var"))
      fill(arr, 0.5f, 2.0f);
    else
      fill(arr, -0.5f, 0.5f);
  }
}

size_t CountOp(const Symbol& s, const std::string& op) {
  const std::string json = s.ToJSON(), key = "\"op\": \"" + op + "\"";
  size_t n = 0;
  for (size_t at = json.find(key); at != std::string::npos; at = json.find(key, at + 1)) ++n;
  return n;
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double err = 0, norm = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    err += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
    norm += static_cast<double>(want[i]) * want[i];
  }
  EXPECT_GT(norm, 0.0) << what;
  EXPECT_LE(err / norm, 1e-10) << what << ": relative squared error";
}

struct Pair {
  std::unique_ptr<Executor> plain, fused;
};

// The network bound unfused and fused with the same random parameters and data.
Pair BindBoth(const Symbol& s, const Shape& data, uint32_t seed = 1) {
  Pair p{BindWith(s, data, false), BindWith(s, data, true)};
  Randomize(*p.plain, seed);
  p.fused->CopyParamsFrom(p.plain->arg_dict(), p.plain->aux_dict());
  return p;
}

void ExpectSameOutputs(Pair& p, bool is_train, const std::string& what) {
  p.plain->Forward(is_train);
  p.fused->Forward(is_train);
  ASSERT_EQ(p.plain->outputs.size(), p.fused->outputs.size());
  for (size_t i = 0; i < p.plain->outputs.size(); ++i)
    ExpectClose(Values(p.fused->outputs[i]), Values(p.plain->outputs[i]), what + " output " + std::to_string(i));
}

TEST(ExecutorFusion, ConvBatchNorm) {
  // 3 -> 8 filters: plain layouts; 16 -> 32: oneDNN's blocked ones.
  for (int c : {3, 16}) {
    Symbol net = Bn(Conv(Symbol::Variable("data"), "conv", 2 * c, 3), "bn");
    Pair p = BindBoth(net, Shape(2, c, 9, 7));
    const Symbol opt = p.fused->GetOptimizedSymbol();
    EXPECT_EQ(CountOp(opt, "_sg_conv"), 1u) << opt.ToJSON();
    EXPECT_EQ(CountOp(opt, "BatchNorm"), 0u);
    EXPECT_EQ(CountOp(p.plain->GetOptimizedSymbol(), "_sg_conv"), 0u);
    EXPECT_NE(p.fused->DebugStr().find("Op:_sg_conv, Name=bn"), std::string::npos) << p.fused->DebugStr();
    EXPECT_EQ(p.fused->output_dict().count("bn_output"), 1u);  // named after the chain's last node
    ExpectSameOutputs(p, false, "conv+bn c=" + std::to_string(c));
  }
}

TEST(ExecutorFusion, ConvBatchNormReluAndClip) {
  Symbol data = Symbol::Variable("data");
  Symbol relu = Relu(Bn(Conv(data, "conv", 32, 3, 1, true), "bn"), "relu");
  Pair p = BindBoth(relu, Shape(2, 16, 8, 8));
  EXPECT_EQ(CountOp(p.fused->GetOptimizedSymbol(), "_sg_conv"), 1u);
  EXPECT_EQ(CountOp(p.fused->GetOptimizedSymbol(), "Activation"), 0u);
  ExpectSameOutputs(p, false, "conv(bias)+bn+relu");
  // MobileNet v2's depthwise convolution + BatchNorm + ReLU6 (clip).
  Symbol dw = Operator("clip")
                  .SetParam("a_min", 0)
                  .SetParam("a_max", 6)(Bn(Conv(data, "dw", 32, 3, 32), "bn2"))
                  .CreateSymbol("relu6");
  Pair q = BindBoth(dw, Shape(2, 32, 10, 10));
  EXPECT_EQ(CountOp(q.fused->GetOptimizedSymbol(), "_sg_conv"), 1u);
  EXPECT_EQ(CountOp(q.fused->GetOptimizedSymbol(), "clip"), 0u);
  ExpectSameOutputs(q, false, "depthwise conv+bn+clip");
}

// ResNet v1's basic block with a downsampling shortcut: relu(bn2(conv2(relu(bn1(conv1(x))))) +
// bn3(conv3(x))). Two chains reach the add; one takes it.
Symbol ResidualBlock(const Symbol& x, int filters) {
  Symbol body = Relu(Bn(Conv(x, "conv1", filters, 3), "bn1"), "relu1");
  body = Bn(Conv(body, "conv2", filters, 3), "bn2");
  Symbol shortcut = Bn(Conv(x, "conv3", filters, 1), "bn3");
  return Relu(Add(shortcut, body, "add"), "relu2");
}

TEST(ExecutorFusion, ResidualBlock) {
  Symbol block = ResidualBlock(Symbol::Variable("data"), 32);
  // Batch 12 at 56 x 56 runs the blocked primitives in chunks of images (DnnlConvChunk).
  for (const Shape& data : {Shape(1, 16, 12, 12), Shape(12, 16, 56, 56)}) {
    Pair p = BindBoth(block, data);
    const Symbol opt = p.fused->GetOptimizedSymbol();
    EXPECT_EQ(CountOp(opt, "_sg_conv"), 3u) << opt.ToJSON();
    EXPECT_EQ(CountOp(opt, "elemwise_add") + CountOp(opt, "Activation") + CountOp(opt, "BatchNorm"), 0u);
    EXPECT_NE(opt.ToJSON().find("\"with_sum\": \"True\""), std::string::npos);
    EXPECT_NE(opt.ToJSON().find("\"postsum_act_type\": \"relu\""), std::string::npos);
    ExpectSameOutputs(p, false, "residual block " + data.ToString());
    // Bit-identical run to run, and a change of the parameters shows in the next forward.
    const std::vector<float> first = Values(p.fused->outputs[0]);
    p.fused->Forward(false);
    const std::vector<float> second = Values(p.fused->outputs[0]);
    EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0);
    for (const char* name : {"conv2_weight", "bn2_gamma", "bn3_moving_var"}) {
      auto dict = std::string(name).ends_with("var") ? p.plain->aux_dict() : p.plain->arg_dict();
      NDArray a = dict.at(name);
      a *= 1.5f;
      p.fused->CopyParamsFrom(p.plain->arg_dict(), p.plain->aux_dict());
      ExpectSameOutputs(p, false, std::string("after changing ") + name);
    }
  }
}

TEST(ExecutorFusion, ValuesReadTwiceAreNotFused) {
  Symbol data = Symbol::Variable("data");
  Symbol conv = Conv(data, "conv", 16, 3);
  // The convolution's output feeds the BatchNorm and is also an output: no fusion of conv+bn.
  Symbol both = Symbol::Group({Relu(Bn(conv, "bn"), "relu"), conv});
  Pair p = BindBoth(both, Shape(2, 8, 6, 6));
  EXPECT_EQ(CountOp(p.fused->GetOptimizedSymbol(), "_sg_conv"), 0u) << p.fused->GetOptimizedSymbol().ToJSON();
  ExpectSameOutputs(p, false, "conv read twice");
  // The BatchNorm's output read twice: conv+bn fuse, the relu stays.
  Symbol bn = Bn(conv, "bn");
  Symbol twice = Add(Relu(bn, "relu"), bn, "add");
  Pair q = BindBoth(twice, Shape(2, 8, 6, 6));
  const Symbol opt = q.fused->GetOptimizedSymbol();
  EXPECT_EQ(CountOp(opt, "_sg_conv"), 1u) << opt.ToJSON();
  EXPECT_EQ(CountOp(opt, "Activation"), 1u);
  EXPECT_EQ(CountOp(opt, "elemwise_add"), 1u);
  ExpectSameOutputs(q, false, "bn read twice");
}

TEST(ExecutorFusion, TrainingBindsAndDisabledFusionKeepTheGraph) {
  Symbol net = Relu(Bn(Conv(Symbol::Variable("data"), "conv", 16, 3), "bn"), "relu");
  auto train = BindWith(net, Shape(2, 8, 6, 6), true, "write");
  EXPECT_EQ(CountOp(train->GetOptimizedSymbol(), "_sg_conv"), 0u);
  EXPECT_EQ(CountOp(train->GetOptimizedSymbol(), "BatchNorm"), 1u);
  auto off = BindWith(net, Shape(2, 8, 6, 6), false);
  EXPECT_EQ(CountOp(off->GetOptimizedSymbol(), "_sg_conv"), 0u);
}

TEST(ExecutorFusion, TrainingModeForwardUsesBatchStatistics) {
  // A grad-free bind run with is_train=true: BatchNorm normalises with the batch's statistics and
  // updates the moving ones, fused or not; use_global_stats keeps the moving ones.
  for (bool global : {false, true}) {
    Symbol data = Symbol::Variable("data");
    Symbol net = Relu(Add(Bn(Conv(data, "conv", 16, 3), "bn", global), data, "add"), "relu");
    Pair p = BindBoth(net, Shape(3, 16, 7, 7));
    EXPECT_EQ(CountOp(p.fused->GetOptimizedSymbol(), "_sg_conv"), 1u);
    for (int step = 0; step < 2; ++step) {
      ExpectSameOutputs(p, true, global ? "global stats" : "batch stats");
      for (const char* aux : {"bn_moving_mean", "bn_moving_var"})
        ExpectClose(Values(p.fused->aux_dict().at(aux)), Values(p.plain->aux_dict().at(aux)), aux);
    }
    ExpectSameOutputs(p, false, "inference after training-mode passes");
  }
}

}  // namespace
}  // namespace weft
