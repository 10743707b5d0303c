// Inference graph fusion (core/executor/fuse_conv.h): for binds without gradients the executor
// runs Convolution -> [BatchNorm] -> [activation] -> [add] -> [activation] chains as one `_sg_conv`
// node. Each case binds the same network twice, WEFT_GRAPH_FUSION=0 and =1, with the same
// parameters, and compares outputs (float tolerance: folding BatchNorm into the weights rounds
// differently), what GetOptimizedSymbol shows, and the cases that must not fuse. The Blocked
// cases bind a third time with blocked activations (WEFT_BLOCKED_ACTIVATIONS, fuse_conv.h), which
// the other cases leave at its default (on).
//
// tests/executor/CMakeLists.txt also builds this file as executor_fusion_avx2_test, run with
// WEFT_CPU_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 (nChw8c instead of nChw16c) as suite
// ExecutorFusionAvx2.
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>

#include "test_util.h"
#include "weft/imperative.h"
#include "weft/internal/device.h"
#include "weft/internal/runtime.h"

#ifndef WEFT_FUSION_SUITE
#define WEFT_FUSION_SUITE ExecutorFusion
#endif

namespace weft {
namespace {

using test::Values;

using test::kCpu;

Symbol Conv(const Symbol& x, const std::string& name, int filters, int kernel, int groups = 1, bool bias = false,
            int stride = 1) {
  return Operator("Convolution")
      .SetParam("kernel", Shape(kernel, kernel))
      .SetParam("stride", Shape(stride, stride))
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

// The attributes of node `name` in `s`'s JSON (its text up to the next node).
std::string NodeText(const Symbol& s, const std::string& name) {
  const std::string json = s.ToJSON();
  const size_t at = json.find("\"name\": \"" + name + "\"");
  if (at == std::string::npos) return "";
  return json.substr(at, json.find("\"name\"", at + 1) - at);
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

TEST(WEFT_FUSION_SUITE, ConvBatchNorm) {
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

TEST(WEFT_FUSION_SUITE, ConvBatchNormReluAndClip) {
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
Symbol ResidualBlock(const Symbol& x, int filters, const std::string& prefix = "", int stride = 1) {
  Symbol body = Relu(Bn(Conv(x, prefix + "conv1", filters, 3, 1, false, stride), prefix + "bn1"), prefix + "relu1");
  body = Bn(Conv(body, prefix + "conv2", filters, 3), prefix + "bn2");
  Symbol shortcut = Bn(Conv(x, prefix + "conv3", filters, 1, 1, false, stride), prefix + "bn3");
  return Relu(Add(shortcut, body, prefix + "add"), prefix + "relu2");
}

TEST(WEFT_FUSION_SUITE, ResidualBlock) {
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

TEST(WEFT_FUSION_SUITE, ValuesReadTwiceAreNotFused) {
  Symbol data = Symbol::Variable("data");
  Symbol conv = Conv(data, "conv", 16, 3);
  // The convolution's output feeds the BatchNorm and is also an output: no fusion of conv+bn (the
  // convolution alone is a chain, the BatchNorm and relu one `_sg_batch_norm`).
  Symbol both = Symbol::Group({Relu(Bn(conv, "bn"), "relu"), conv});
  Pair p = BindBoth(both, Shape(2, 8, 6, 6));
  const Symbol popt = p.fused->GetOptimizedSymbol();
  EXPECT_EQ(CountOp(popt, "_sg_conv"), 1u) << popt.ToJSON();
  EXPECT_EQ(CountOp(popt, "BatchNorm") + CountOp(popt, "Activation"), 0u) << popt.ToJSON();
  EXPECT_EQ(CountOp(popt, "_sg_batch_norm"), 1u) << popt.ToJSON();
  EXPECT_NE(NodeText(popt, "relu").find("\"act_type\": \"relu\""), std::string::npos) << popt.ToJSON();
  EXPECT_EQ(NodeText(popt, "conv").find("with_bn"), std::string::npos) << popt.ToJSON();
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

TEST(WEFT_FUSION_SUITE, TrainingBindsAndDisabledFusionKeepTheGraph) {
  Symbol net = Relu(Bn(Conv(Symbol::Variable("data"), "conv", 16, 3), "bn"), "relu");
  auto train = BindWith(net, Shape(2, 8, 6, 6), true, "write");
  EXPECT_EQ(CountOp(train->GetOptimizedSymbol(), "_sg_conv"), 0u);
  EXPECT_EQ(CountOp(train->GetOptimizedSymbol(), "BatchNorm"), 1u);
  auto off = BindWith(net, Shape(2, 8, 6, 6), false);
  EXPECT_EQ(CountOp(off->GetOptimizedSymbol(), "_sg_conv"), 0u);
}

TEST(WEFT_FUSION_SUITE, TrainingModeForwardUsesBatchStatistics) {
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

// ---- blocked activations ---------------------------------------------------------------------------

// The cpu device's blocked layout, and the one this process should get: nChw16c where weft's loops
// and oneDNN may both use AVX-512, nChw8c with AVX2 (WEFT_CPU_ISA=avx2 with
// ONEDNN_MAX_CPU_ISA=AVX2: the avx2 build of this file).
std::string DeviceFormat() {
  for (const auto& [key, value] : internal::GetDevice(Runtime::Get(), kCpu).properties().attributes)
    if (key == "blocked_activations") return value;
  return "";
}
std::string ExpectedFormat() {
  const char* isa = std::getenv("WEFT_CPU_ISA");
  const bool avx2_only = isa != nullptr && std::string(isa) == "avx2";
  if (!avx2_only && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "nChw16c";
  return __builtin_cpu_supports("avx2") ? "nChw8c" : "";
}

std::unique_ptr<Executor> BindFused(const Symbol& s, const Shape& data, bool blocked) {
  setenv("WEFT_BLOCKED_ACTIVATIONS", blocked ? "1" : "0", 1);
  auto e = BindWith(s, data, true);
  unsetenv("WEFT_BLOCKED_ACTIVATIONS");
  return e;
}

// One network bound unfused, fused on plain layouts and fused with blocked activations.
struct Trio {
  std::unique_ptr<Executor> plain, fused, blocked;
};
Trio BindThree(const Symbol& s, const Shape& data, uint32_t seed = 1) {
  Trio t{BindWith(s, data, false), BindFused(s, data, false), BindFused(s, data, true)};
  Randomize(*t.plain, seed);
  t.fused->CopyParamsFrom(t.plain->arg_dict(), t.plain->aux_dict());
  t.blocked->CopyParamsFrom(t.plain->arg_dict(), t.plain->aux_dict());
  return t;
}

// The three agree within the fusion's tolerance, and the blocked one is bit-identical run to run.
void ExpectThreeAgree(Trio& t, bool is_train, const std::string& what) {
  for (Executor* e : {t.plain.get(), t.fused.get(), t.blocked.get()}) e->Forward(is_train);
  for (size_t i = 0; i < t.plain->outputs.size(); ++i) {
    const std::string out = what + " output " + std::to_string(i);
    ExpectClose(Values(t.fused->outputs[i]), Values(t.plain->outputs[i]), out + " fused");
    ExpectClose(Values(t.blocked->outputs[i]), Values(t.plain->outputs[i]), out + " blocked");
  }
  if (is_train) return;  // training mode updates the moving statistics: the next pass differs
  const std::vector<float> first = Values(t.blocked->outputs[0]);
  t.blocked->Forward(false);
  const std::vector<float> second = Values(t.blocked->outputs[0]);
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0) << what << ": run to run";
}

// How many `_sg_conv` nodes of `s` have attribute `key` = `value`.
size_t CountAttr(const Symbol& s, const std::string& key, const std::string& value) {
  const std::string json = s.ToJSON(), pair = "\"" + key + "\": \"" + value + "\"";
  size_t n = 0;
  for (size_t at = json.find(pair); at != std::string::npos; at = json.find(pair, at + 1)) ++n;
  return n;
}

// `opt` has `convs` _sg_conv nodes, `outs` of them writing format `f` and `ins` reading it; the
// nodes named in `blocked` write it, those in `plain` do not.
void ExpectLayouts(const Symbol& opt, const std::string& f, size_t convs, size_t outs, size_t ins,
                   const std::vector<std::string>& blocked, const std::vector<std::string>& plain) {
  EXPECT_EQ(CountOp(opt, "_sg_conv"), convs) << opt.ToJSON();
  EXPECT_EQ(CountAttr(opt, "out_format", f), outs) << opt.ToJSON();
  EXPECT_EQ(CountAttr(opt, "data_format", f), ins) << opt.ToJSON();
  for (const auto& name : blocked)
    EXPECT_NE(NodeText(opt, name).find("\"out_format\": \"" + f + "\""), std::string::npos) << name << opt.ToJSON();
  for (const auto& name : plain) EXPECT_EQ(NodeText(opt, name).find("out_format"), std::string::npos) << name;
}

// Skips the case on a cpu without a blocked layout (below AVX2); checks the device's choice.
#define REQUIRE_BLOCKED_FORMAT(f)                                                     \
  const std::string f = DeviceFormat();                                               \
  ASSERT_EQ(f, ExpectedFormat()) << "the cpu device's attribute blocked_activations"; \
  if (f.empty()) GTEST_SKIP() << "this cpu runs no blocked convolution layout (below AVX2)"

Symbol Stage(const Symbol& x, const std::string& name, int filters, int kernel) {
  return Relu(Bn(Conv(x, name, filters, kernel), name + "_bn"), name + "_relu");
}

TEST(WEFT_FUSION_SUITE, BlockedChainOfThree) {
  REQUIRE_BLOCKED_FORMAT(f);
  Symbol data = Symbol::Variable("data");
  Symbol net = Bn(Conv(Stage(Stage(data, "c1", 32, 3), "c2", 32, 3), "c3", 48, 1), "c3_bn");
  // Batch 12 at 40 x 40: the first layer (plain data) runs in chunks of images.
  for (const Shape& shape : {Shape(1, 16, 10, 10), Shape(12, 16, 40, 40)}) {
    Trio t = BindThree(net, shape);
    const Symbol opt = t.blocked->GetOptimizedSymbol();
    // c1 -> c2 -> c3 blocked; the data and the graph's output plain.
    ExpectLayouts(opt, f, 3, 2, 2, {"c1_relu", "c2_relu"}, {"c3_bn"});
    EXPECT_EQ(NodeText(opt, "c1_relu").find("data_format"), std::string::npos) << opt.ToJSON();
    EXPECT_NE(t.blocked->DebugStr().find("out_format=" + f), std::string::npos) << t.blocked->DebugStr();
    EXPECT_EQ(CountAttr(t.fused->GetOptimizedSymbol(), "out_format", f), 0u);
    ExpectThreeAgree(t, false, "3 convolutions " + shape.ToString());
  }
}

TEST(WEFT_FUSION_SUITE, BlockedResNetBlocks) {
  REQUIRE_BLOCKED_FORMAT(f);
  // Two basic blocks, the second downsampling (stride 2, 1x1 shortcut convolution). Blocked: a's
  // relu1, a's output and so its sum (both chains reaching a's add), b's relu1. b's output is the
  // graph's, so b's sum stays plain too.
  Symbol net = ResidualBlock(ResidualBlock(Symbol::Variable("data"), 32, "a_"), 64, "b_", 2);
  for (const Shape& shape : {Shape(1, 16, 14, 14), Shape(6, 16, 28, 28)}) {
    Trio t = BindThree(net, shape);
    ExpectLayouts(t.blocked->GetOptimizedSymbol(), f, 6, 4, 4, {"a_relu1", "a_relu2", "b_relu1"}, {"b_relu2"});
    ExpectThreeAgree(t, false, "resnet blocks " + shape.ToString());
  }
}

// Channels that fill no whole block (20, 24 in nChw16c; 12 in nChw8c) pass between convolution
// chains padded to whole blocks, with more channels than one block (12 in nChw16c: plain) and
// only to convolutions of one group or one per channel (c3 with two groups reads c2 plain). The
// 3x3 layers would take weft's Winograd, which needs whole blocks: on padded tensors they run
// oneDNN's direct kernels.
TEST(WEFT_FUSION_SUITE, BlockedPadsPartialBlocks) {
  REQUIRE_BLOCKED_FORMAT(f);
  const int block = f == "nChw8c" ? 8 : 16;
  Symbol data = Symbol::Variable("data");
  for (int c : {12, 20, 24}) {
    for (int groups : {1, 2}) {
      Symbol net = Bn(Conv(Stage(Stage(data, "c1", c, 3), "c2", c, 3), "c3", 16, 3, groups), "c3_bn");
      Trio t = BindThree(net, Shape(2, 16, 9, 9));
      const Symbol opt = t.blocked->GetOptimizedSymbol();
      const bool blocks = c % block == 0 || c > block;
      const std::string what = std::to_string(c) + " channels, c3 of " + std::to_string(groups) + " groups";
      EXPECT_EQ(CountOp(opt, "_sg_conv"), 3u);
      EXPECT_EQ(NodeText(opt, "c1_relu").find("out_format") != std::string::npos, blocks) << what << opt.ToJSON();
      EXPECT_EQ(NodeText(opt, "c2_relu").find("out_format") != std::string::npos,
                blocks && (c % block == 0 || groups == 1))
          << what << opt.ToJSON();
      ExpectThreeAgree(t, false, what);
    }
  }
  // A batch too large for the cache runs in chunks of images: padded images lie further apart.
  Symbol net = Bn(Conv(Stage(Stage(data, "c1", 24, 3), "c2", 24, 3), "c3", 16, 3), "c3_bn");
  Trio t = BindThree(net, Shape(9, 16, 64, 64));
  ExpectThreeAgree(t, false, "24 channels, 9 images of 64 x 64");
}

TEST(WEFT_FUSION_SUITE, BlockedNeverReachesOutputsOrOtherOps) {
  REQUIRE_BLOCKED_FORMAT(f);
  Symbol data = Symbol::Variable("data");
  Symbol c1 = Stage(data, "c1", 32, 3);
  Symbol c2 = Stage(c1, "c2", 32, 3);
  Symbol c3 = Bn(Conv(c2, "c3", 32, 3), "c3_bn");
  // c1's output is also a graph output, c2's is also pooled: both stay plain.
  Symbol pool = Operator("Pooling")
                    .SetParam("kernel", Shape(2, 2))
                    .SetParam("stride", Shape(2, 2))
                    .SetParam("pool_type", "max")(c2)
                    .CreateSymbol("pool");
  Trio t = BindThree(Symbol::Group({c3, c1, pool}), Shape(2, 16, 8, 8));
  const Symbol opt = t.blocked->GetOptimizedSymbol();
  EXPECT_EQ(CountOp(opt, "_sg_conv"), 3u) << opt.ToJSON();
  EXPECT_EQ(CountAttr(opt, "out_format", f) + CountAttr(opt, "data_format", f), 0u) << opt.ToJSON();
  ExpectThreeAgree(t, false, "outputs and pooling");
  // Without the pooling, c2's output passes to c3 blocked; c1's stays plain.
  Trio u = BindThree(Symbol::Group({c3, c1}), Shape(2, 16, 8, 8));
  const Symbol uopt = u.blocked->GetOptimizedSymbol();
  EXPECT_EQ(CountAttr(uopt, "out_format", f), 1u) << uopt.ToJSON();
  EXPECT_EQ(NodeText(uopt, "c1_relu").find("out_format"), std::string::npos) << uopt.ToJSON();
  ExpectThreeAgree(u, false, "c1 an output");
}

TEST(WEFT_FUSION_SUITE, BlockedOptimizedSymbolRebinds) {
  REQUIRE_BLOCKED_FORMAT(f);
  Symbol net = Bn(Conv(Stage(Stage(Symbol::Variable("data"), "c1", 32, 3), "c2", 32, 3), "c3", 16, 3), "c3_bn");
  Trio t = BindThree(net, Shape(2, 16, 8, 8));
  const Symbol opt = t.blocked->GetOptimizedSymbol();
  ASSERT_EQ(CountAttr(opt, "out_format", f), 2u) << opt.ToJSON();
  // Bound again as it is: the same layouts, the same values.
  auto again = BindWith(opt, Shape(2, 16, 8, 8), true);
  again->CopyParamsFrom(t.plain->arg_dict(), t.plain->aux_dict());
  again->Forward(false);
  t.plain->Forward(false);
  ExpectClose(Values(again->outputs[0]), Values(t.plain->outputs[0]), "rebound optimized symbol");
  // Cut at a blocked value: refused by name instead of returning blocked bytes as NCHW.
  try {
    BindWith(opt.GetInternals()["c1_relu_output"], Shape(2, 16, 8, 8), true);
    ADD_FAILURE() << "a blocked graph output was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("c1_relu"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
  }
}

// The monitor (all arrays) of the fused and the blocked executors sees the same `names` (in NCHW).
void ExpectMonitorsAgree(Trio& t, const std::vector<std::string>& names) {
  std::map<std::string, std::vector<float>> seen[2];
  for (int k = 0; k < 2; ++k) {
    Executor& e = k == 0 ? *t.fused : *t.blocked;
    e.SetMonitorCallback([&seen, k](const std::string& name, const NDArray& a) { seen[k][name] = Values(a); }, true);
    e.Forward(false);
  }
  for (const auto& name : names) {
    ASSERT_EQ(seen[1].count(name), 1u) << name;
    ExpectClose(seen[1][name], seen[0][name], name);
  }
}

TEST(WEFT_FUSION_SUITE, BlockedMonitorSeesNchw) {
  REQUIRE_BLOCKED_FORMAT(f);
  Symbol net = Bn(Conv(Stage(Stage(Symbol::Variable("data"), "c1", 32, 3), "c2", 32, 3), "c3", 16, 3), "c3_bn");
  Trio t = BindThree(net, Shape(2, 16, 6, 6));
  // Outputs, data inputs (both blocked in the second) and a plain one.
  ExpectMonitorsAgree(t, {"c1_relu_output", "c2_relu_output", "c2_relu_data", "c3_bn_data", "c3_bn_output"});
}

TEST(WEFT_FUSION_SUITE, BlockedTrainingModeForward) {
  REQUIRE_BLOCKED_FORMAT(f);
  // is_train=true with BatchNorm on batch statistics takes the kernels' unfused path, which
  // converts the blocked operands; a residual add makes one of them the sum.
  Symbol data = Symbol::Variable("data");
  Symbol c1 = Stage(data, "c1", 16, 3);
  Symbol net = Bn(Conv(Relu(Add(Bn(Conv(c1, "c2", 16, 3), "c2_bn"), c1, "add"), "relu"), "c3", 16, 3), "c3_bn");
  Trio t = BindThree(net, Shape(3, 16, 7, 7));
  const Symbol opt = t.blocked->GetOptimizedSymbol();
  EXPECT_EQ(CountAttr(opt, "out_format", f), 2u) << opt.ToJSON();
  for (int step = 0; step < 2; ++step) ExpectThreeAgree(t, true, "training mode");
  ExpectThreeAgree(t, false, "inference after training-mode passes");
}

Symbol Pool(const Symbol& x, const std::string& name, const std::string& type, int kernel, int stride, int pad,
            const std::string& convention = "valid") {
  return Operator("Pooling")
      .SetParam("kernel", Shape(kernel, kernel))
      .SetParam("stride", Shape(stride, stride))
      .SetParam("pad", Shape(pad, pad))
      .SetParam("pool_type", type)
      .SetParam("pooling_convention", convention)(x)
      .CreateSymbol(name);
}
Symbol Join(const std::vector<Symbol>& parts, const std::string& name) {
  return Operator("Concat")
      .SetParam("num_args", static_cast<int>(parts.size()))
      .SetParam("dim", 1)(parts)
      .CreateSymbol(name);
}

// The image networks' head: a global average pool ("global") then Flatten ("flat").
Symbol GlobalPoolFlat(const Symbol& x) {
  return Operator("Flatten")(Operator("Pooling")
                                 .SetParam("kernel", Shape(1, 1))
                                 .SetParam("global_pool", true)
                                 .SetParam("pool_type", "avg")(x)
                                 .CreateSymbol("global"))
      .CreateSymbol("flat");
}

// The image networks' pooling and concatenation between fused convolutions: ResNet's stem max
// pool (3x3, stride 2, pad 1), SqueezeNet's fire module (a concat of two expansions) and its max
// pool with ceil rounding (full convention), an Inception branch of avg pooling (3x3, stride 1,
// pad 1, counting the padding), a ceil-rounded avg pool whose windows reach past in + pad (not
// oneDNN's divisor: relayouts around the plain kernel), and the global average pool at the end.
Symbol PoolConcatNet() {
  Symbol x = Pool(Stage(Symbol::Variable("data"), "stem", 32, 3), "pool1", "max", 3, 2, 1);
  Symbol squeeze = Stage(x, "squeeze", 16, 1);
  Symbol fire = Join({Stage(squeeze, "expand1", 32, 1), Stage(squeeze, "expand3", 16, 3)}, "fire");
  x = Pool(fire, "pool2", "max", 3, 2, 0, "full");
  Symbol branch = Stage(Pool(x, "pool3", "avg", 3, 1, 1), "branch", 16, 1);
  x = Join({Stage(x, "mixed1", 32, 1), branch, x}, "mixed");
  x = Pool(Stage(x, "tail", 32, 3), "pool4", "avg", 3, 2, 0, "full");
  x = Pool(Stage(x, "last", 32, 1), "gpool", "avg", 1, 1, 0);
  return GlobalPoolFlat(x);
}

TEST(WEFT_FUSION_SUITE, BlockedPoolingAndConcat) {
  REQUIRE_BLOCKED_FORMAT(f);
  const Symbol net = PoolConcatNet();
  for (const Shape& shape : {Shape(1, 16, 20, 20), Shape(5, 16, 33, 33)}) {
    Trio t = BindThree(net, shape);
    const Symbol opt = t.blocked->GetOptimizedSymbol();
    // Every pooling and concat reads blocked; all but the global pool (1x1: plain) write it.
    for (const char* name : {"pool1", "pool2", "pool3", "pool4", "gpool", "fire", "mixed", "global"})
      EXPECT_NE(NodeText(opt, name).find("\"data_format\": \"" + f + "\""), std::string::npos) << name << opt.ToJSON();
    for (const char* name : {"pool1", "pool2", "pool3", "pool4", "gpool"})
      EXPECT_NE(NodeText(opt, name).find("\"out_format\": \"" + f + "\""), std::string::npos) << name;
    EXPECT_EQ(NodeText(opt, "global").find("out_format"), std::string::npos) << opt.ToJSON();
    // Every fused convolution reads and writes blocked but the stem's data: attributes of 8 of
    // them, 5 poolings and 2 concats.
    ExpectLayouts(opt, f, 8, 8 + 5, 7 + 6 + 2, {"stem_relu", "squeeze_relu", "last_relu"}, {});
    ExpectThreeAgree(t, false, "pooling and concat " + shape.ToString());
  }
}

TEST(WEFT_FUSION_SUITE, BlockedPoolingMonitorAndCut) {
  REQUIRE_BLOCKED_FORMAT(f);
  const Symbol net = PoolConcatNet();
  Trio t = BindThree(net, Shape(2, 16, 20, 20));
  ExpectMonitorsAgree(t, {"pool1_output", "fire_output", "mixed_output", "pool4_data", "global_output"});
  const Symbol opt = t.blocked->GetOptimizedSymbol();
  // Cut at a blocked concat: refused, as for a convolution's output.
  try {
    BindWith(opt.GetInternals()["fire_output"], Shape(2, 16, 20, 20), true);
    ADD_FAILURE() << "a blocked concat as the graph's output was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fire"), std::string::npos) << e.what();
  }
}

// SqueezeNet's tail: a fire module's concat, Dropout, a 1x1 classifier convolution to a channel
// count that is no multiple of a block (its output plain), relu, global average pooling. The
// Dropout keeps the concat blocked and the classifier reads it so (nn_dropout.cc).
Symbol DropoutNet() {
  Symbol squeeze = Stage(Symbol::Variable("data"), "squeeze", 16, 1);
  Symbol fire = Join({Stage(squeeze, "expand1", 32, 1), Stage(squeeze, "expand3", 16, 3)}, "fire");
  Symbol drop = Operator("Dropout").SetParam("p", 0.5f)(fire).CreateSymbol("drop");
  Symbol cls = Relu(Conv(drop, "cls", 20, 1, 1, true), "cls_relu");
  Symbol pool = Operator("Pooling")
                    .SetParam("kernel", Shape(1, 1))
                    .SetParam("global_pool", true)
                    .SetParam("pool_type", "avg")(cls)
                    .CreateSymbol("gpool");
  return Operator("Flatten")(pool).CreateSymbol("flat");
}

TEST(WEFT_FUSION_SUITE, BlockedDropout) {
  REQUIRE_BLOCKED_FORMAT(f);
  for (const Shape& shape : {Shape(1, 16, 13, 13), Shape(6, 16, 27, 27)}) {
    Trio t = BindThree(DropoutNet(), shape);
    const Symbol opt = t.blocked->GetOptimizedSymbol();
    for (const char* name : {"drop", "cls_relu"})  // the Dropout and the classifier read blocked
      EXPECT_NE(NodeText(opt, name).find("\"data_format\": \"" + f + "\""), std::string::npos) << opt.ToJSON();
    // squeeze, expand1, expand3 write blocked; the classifier (20 channels) writes plain.
    ExpectLayouts(opt, f, 4, 3, 3 + 1 + 1, {"squeeze_relu", "expand1_relu", "expand3_relu"}, {"cls_relu"});
    ExpectThreeAgree(t, false, "dropout " + shape.ToString());
    // Training mode draws the mask over NCHW positions, as the plain graph does with that seed.
    std::vector<float> out[3];
    for (int k = 0; k < 3; ++k) {
      Executor& e = k == 0 ? *t.plain : k == 1 ? *t.fused : *t.blocked;
      RandomSeed(11);
      e.Forward(true);
      out[k] = Values(e.outputs[0]);
    }
    ExpectClose(out[1], out[0], "dropout training fused " + shape.ToString());
    ExpectClose(out[2], out[0], "dropout training blocked " + shape.ToString());
  }
}

// A stem reading 3 plain channels (oneDNN takes them as they are, no reorder) runs the whole
// batch in one call where it ran chunks of images before (nn_conv_fused.cc); 12 images of 64 x 64
// make a 6 MB output, past the chunking bound.
TEST(WEFT_FUSION_SUITE, PlainStemWholeBatch) {
  Symbol net = Stage(Stage(Symbol::Variable("data"), "stem", 32, 3), "next", 32, 3);
  Trio t = BindThree(net, Shape(12, 3, 64, 64));
  ExpectThreeAgree(t, false, "plain stem");
}

// 3x3 stride-1 layers ask oneDNN for Winograd kernels (nn_conv_fused.cc; AVX-512 has them, the
// AVX2 path runs weft's own, nn_conv_winograd.h): with WEFT_CPU_CONV_WINOGRAD on (the default) and off, on plain and
// blocked layouts, with a residual sum, the outputs agree with the unfused graph's.
TEST(WEFT_FUSION_SUITE, WinogradAndDirectAgree) {
  Symbol net = ResidualBlock(Stage(Symbol::Variable("data"), "stem", 32, 3), 32);
  for (const char* winograd : {"1", "0"}) {
    setenv("WEFT_CPU_CONV_WINOGRAD", winograd, 1);
    for (const Shape& shape : {Shape(1, 16, 14, 14), Shape(3, 16, 23, 23)}) {
      Trio t = BindThree(net, shape);
      ExpectThreeAgree(t, false, std::string("winograd ") + winograd + " " + shape.ToString());
    }
  }
  setenv("WEFT_CPU_CONV_WINOGRAD", "yes", 1);
  try {
    BindWith(net, Shape(1, 16, 14, 14), true)->Forward(false);
    ADD_FAILURE() << "WEFT_CPU_CONV_WINOGRAD=yes was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("WEFT_CPU_CONV_WINOGRAD"), std::string::npos) << e.what();
  }
  unsetenv("WEFT_CPU_CONV_WINOGRAD");
}

Symbol Act(const Symbol& x, const std::string& name, const std::string& type) {
  return Operator("Activation").SetParam("act_type", type)(x).CreateSymbol(name);
}

// Activation's tanh, sigmoid and softrelu fuse too (the cpu device's attribute
// "fused_activations"; the kernel applies them after the convolution): LeNet (conv, tanh, max pool
// twice; the classifier's tanh stays), conv + BatchNorm + sigmoid (which ends its chain) added to a
// 1x1 convolution's output with softrelu after the sum, and tanh after 3x3 layers that run
// Winograd kernels. Inference and training-mode forward (the unfused path inside `_sg_conv`) agree
// with the unfused graph.
TEST(WEFT_FUSION_SUITE, TanhSigmoidSoftrelu) {
  Symbol data = Symbol::Variable("data");
  auto pool = [](const Symbol& x, const std::string& name) {
    return Operator("Pooling")
        .SetParam("kernel", Shape(2, 2))
        .SetParam("stride", Shape(2, 2))
        .SetParam("pool_type", "max")(x)
        .CreateSymbol(name);
  };
  Symbol h = pool(Act(Conv(data, "conv1", 20, 5, 1, true), "tanh1", "tanh"), "pool1");
  h = pool(Act(Conv(h, "conv2", 50, 5, 1, true), "tanh2", "tanh"), "pool2");
  h = Operator("FullyConnected").SetParam("num_hidden", 30)(h).CreateSymbol("fc1");
  Symbol lenet = Act(h, "tanh3", "tanh");
  Trio t = BindThree(lenet, Shape(3, 1, 28, 28));
  const Symbol opt = t.blocked->GetOptimizedSymbol();
  EXPECT_EQ(CountOp(opt, "_sg_conv"), 2u) << opt.ToJSON();
  EXPECT_EQ(CountOp(opt, "Activation"), 1u) << opt.ToJSON();
  EXPECT_NE(NodeText(opt, "tanh1").find("\"act_type\": \"tanh\""), std::string::npos) << opt.ToJSON();
  ExpectThreeAgree(t, false, "lenet");
  ExpectThreeAgree(t, true, "lenet training mode");

  Symbol body = Act(Bn(Conv(data, "conv", 16, 3), "bn"), "sig", "sigmoid");
  Symbol sum = Act(Add(body, Conv(data, "short", 16, 1), "add"), "soft", "softrelu");
  Trio u = BindThree(sum, Shape(2, 16, 9, 9));
  const Symbol uopt = u.blocked->GetOptimizedSymbol();
  EXPECT_EQ(CountOp(uopt, "Activation") + CountOp(uopt, "elemwise_add") + CountOp(uopt, "BatchNorm"), 0u)
      << uopt.ToJSON();
  EXPECT_NE(NodeText(uopt, "soft").find("\"postsum_act_type\": \"softrelu\""), std::string::npos) << uopt.ToJSON();
  ExpectThreeAgree(u, false, "sigmoid and softrelu");
  ExpectThreeAgree(u, true, "sigmoid and softrelu, training mode");

  Symbol wide = Act(Conv(Act(Conv(data, "w1", 32, 3), "t1", "tanh"), "w2", 32, 3), "t2", "tanh");
  for (const Shape& shape : {Shape(1, 16, 14, 14), Shape(3, 16, 23, 23)}) {
    Trio w = BindThree(wide, shape);
    EXPECT_EQ(CountOp(w.blocked->GetOptimizedSymbol(), "Activation"), 0u);
    ExpectThreeAgree(w, false, "3x3 tanh " + shape.ToString());
  }
}

// DenseNet's layer: a 1x1 chain, then a 3x3 convolution no BatchNorm follows (a chain alone: it
// reads the 1x1's output blocked and runs Winograd where oneDNN has it), joined with the layer's
// input (the graph's data: plain) and normalised by the next layer's BatchNorm and relu, one
// `_sg_batch_norm` (plain: its data is).
TEST(WEFT_FUSION_SUITE, BareConvolutionIsAChain) {
  REQUIRE_BLOCKED_FORMAT(f);
  Symbol data = Symbol::Variable("data");
  Symbol grown = Join({data, Conv(Stage(data, "c1", 32, 1), "c2", 16, 3)}, "join");
  Symbol net = Relu(Bn(grown, "next_bn"), "next_relu");
  for (const Shape& shape : {Shape(1, 16, 9, 9), Shape(4, 16, 20, 20)}) {
    Trio t = BindThree(net, shape);
    const Symbol opt = t.blocked->GetOptimizedSymbol();
    ExpectLayouts(opt, f, 2, 1, 1, {"c1_relu"}, {"c2"});
    EXPECT_NE(NodeText(opt, "c2").find("\"data_format\": \"" + f + "\""), std::string::npos) << opt.ToJSON();
    EXPECT_EQ(CountOp(opt, "Convolution") + CountOp(opt, "Concat") + CountOp(opt, "_sg_batch_norm"), 2u)
        << opt.ToJSON();
    EXPECT_EQ(CountOp(t.fused->GetOptimizedSymbol(), "_sg_conv"), 2u);
    ExpectThreeAgree(t, false, "bare convolution " + shape.ToString());
  }
}

// Layers whose kept weights reach 2 MiB keep them on huge pages where the kernel allows
// (nn_conv_fused.cc): a MobileNet-like classifier after global pooling (1280 -> 1000, 5 MB) and a
// 1x1 layer of 4 MB, each with the same values as the unfused graph.
TEST(WEFT_FUSION_SUITE, LargeWeights) {
  Symbol data = Symbol::Variable("data");
  Symbol pooled = Operator("Pooling")
                      .SetParam("global_pool", true)
                      .SetParam("pool_type", "avg")(Stage(data, "c1", 1280, 1))
                      .CreateSymbol("pool");
  Symbol net = Conv(Bn(Conv(pooled, "classifier", 1000, 1), "classifier_bn"), "wide", 1024, 1);
  for (const Shape& shape : {Shape(1, 16, 3, 3), Shape(3, 16, 3, 3)}) {
    Trio t = BindThree(net, shape);
    EXPECT_EQ(CountOp(t.blocked->GetOptimizedSymbol(), "_sg_conv"), 3u);
    ExpectThreeAgree(t, false, "large weights " + shape.ToString());
  }
}

// ---- 1x1 then depthwise convolution: with_dw ------------------------------------------------------

Symbol Relu6(const Symbol& x, const std::string& name) {
  return Operator("clip").SetParam("a_min", 0).SetParam("a_max", 6)(x).CreateSymbol(name);
}

// MobileNet v2's inverted residual block: a 1x1 expansion (BatchNorm, ReLU6), a 3x3 depthwise
// convolution (`dw_bias`: with a bias; BatchNorm, ReLU6) and a 1x1 projection (BatchNorm), plus
// the block's input when the shapes allow.
Symbol InvertedResidual(const Symbol& x, int in, int out, int stride, const std::string& name, bool dw_bias = false) {
  Symbol e = Relu6(Bn(Conv(x, name + "_expand", 6 * in, 1), name + "_bn1"), name + "_relu1");
  Symbol d = Relu6(Bn(Conv(e, name + "_dw", 6 * in, 3, 6 * in, dw_bias, stride), name + "_bn2"), name + "_relu2");
  Symbol p = Bn(Conv(d, name + "_project", out, 1), name + "_bn3");
  return stride == 1 && in == out ? Add(p, x, name + "_add") : p;
}

// The expansion and the depthwise chain become one `_sg_conv` with with_dw, named after the
// depthwise chain's end (oneDNN runs the depthwise convolution as a post-op of the 1x1 one); the
// outputs agree with the unfused graph's on plain and blocked layouts, bit-identical run to run,
// at stride 1 (with the residual sum) and 2, one image and a batch, with and without a depthwise
// bias, and after the parameters change.
TEST(WEFT_FUSION_SUITE, PointwiseThenDepthwise) {
  Symbol data = Symbol::Variable("data");
  for (int stride : {1, 2}) {
    for (const Shape& shape : {Shape(1, 16, 15, 15), Shape(3, 16, 28, 28)}) {
      Symbol net = InvertedResidual(InvertedResidual(data, 16, 16, stride, "b1", stride == 2), 16, 16, 1, "b2");
      const std::string what = "stride " + std::to_string(stride) + " " + shape.ToString();
      Trio t = BindThree(net, shape);
      for (Executor* e : {t.fused.get(), t.blocked.get()}) {
        const Symbol opt = e->GetOptimizedSymbol();
        EXPECT_EQ(CountOp(opt, "_sg_conv"), 4u) << opt.ToJSON();
        EXPECT_EQ(CountAttr(opt, "with_dw", "True"), 2u) << opt.ToJSON();
        EXPECT_EQ(CountOp(opt, "Convolution") + CountOp(opt, "BatchNorm") + CountOp(opt, "clip"), 0u);
        const std::string b1 = NodeText(opt, "b1_relu2");
        EXPECT_NE(b1.find("\"dw_stride\": \"" + std::to_string(stride) + "\""), std::string::npos) << b1;
        EXPECT_NE(b1.find("\"dw_act_type\": \"clip\""), std::string::npos) << b1;
        EXPECT_NE(b1.find("\"dw_no_bias\": \"" + std::string(stride == 2 ? "False" : "True") + "\""), std::string::npos)
            << b1;
      }
      ExpectThreeAgree(t, false, what);
      for (const char* name : {"b1_dw_weight", "b1_bn2_gamma", "b2_bn2_moving_var", "b2_expand_weight"}) {
        auto dict = std::string(name).ends_with("var") ? t.plain->aux_dict() : t.plain->arg_dict();
        NDArray a = dict.at(name);
        a *= 1.5f;
        t.fused->CopyParamsFrom(t.plain->arg_dict(), t.plain->aux_dict());
        t.blocked->CopyParamsFrom(t.plain->arg_dict(), t.plain->aux_dict());
        ExpectThreeAgree(t, false, what + " after changing " + name);
      }
    }
  }
}

// Training-mode forwards of a grad-free bind normalise both BatchNorms with the batch's
// statistics and update both moving ones, as the unfused graph does (the kernel runs the two
// stages apart through a plain intermediate).
TEST(WEFT_FUSION_SUITE, PointwiseThenDepthwiseTrainingMode) {
  Symbol net = InvertedResidual(Symbol::Variable("data"), 16, 24, 2, "b");
  Trio t = BindThree(net, Shape(2, 16, 12, 12));
  EXPECT_EQ(CountAttr(t.blocked->GetOptimizedSymbol(), "with_dw", "True"), 1u);
  for (int step = 0; step < 2; ++step) {
    ExpectThreeAgree(t, true, "training mode");
    for (const char* aux : {"b_bn1_moving_mean", "b_bn1_moving_var", "b_bn2_moving_mean", "b_bn2_moving_var"})
      for (Executor* e : {t.fused.get(), t.blocked.get()})
        ExpectClose(Values(e->aux_dict().at(aux)), Values(t.plain->aux_dict().at(aux)), aux);
  }
  ExpectThreeAgree(t, false, "inference after training-mode passes");
}

// Channel counts that are no multiple of a block (10 -> 60 -> 10: plain activations, oneDNN
// pads its own copies) merge and agree too.
TEST(WEFT_FUSION_SUITE, PointwiseThenDepthwiseOddChannels) {
  Symbol net = InvertedResidual(Symbol::Variable("data"), 10, 10, 1, "b");
  for (const Shape& shape : {Shape(1, 10, 9, 9), Shape(3, 10, 17, 17)}) {
    Trio t = BindThree(net, shape);
    EXPECT_EQ(CountAttr(t.blocked->GetOptimizedSymbol(), "with_dw", "True"), 1u);
    ExpectThreeAgree(t, false, "10 -> 60 channels " + shape.ToString());
  }
}

// The optimized symbol binds again as it is (no fusion pass: the with_dw node's inputs, aux
// states and shapes come from its op definition) and gives the unfused graph's values.
TEST(WEFT_FUSION_SUITE, PointwiseThenDepthwiseRebinds) {
  Symbol net = InvertedResidual(Symbol::Variable("data"), 16, 24, 2, "b", true);
  Trio t = BindThree(net, Shape(2, 16, 11, 11));
  for (Executor* e : {t.fused.get(), t.blocked.get()}) {
    const Symbol opt = e->GetOptimizedSymbol();
    ASSERT_EQ(CountAttr(opt, "with_dw", "True"), 1u) << opt.ToJSON();
    auto again = BindWith(opt, Shape(2, 16, 11, 11), false);
    EXPECT_EQ(again->arg_dict().at("b_dw_weight").GetShape(), Shape(96, 1, 3, 3));
    EXPECT_EQ(again->arg_dict().count("b_dw_bias"), 1u);
    EXPECT_EQ(again->aux_dict().count("b_bn2_moving_var"), 1u);
    EXPECT_EQ(again->outputs[0].GetShape(), Shape(2, 24, 6, 6));
    again->CopyParamsFrom(t.plain->arg_dict(), t.plain->aux_dict());
    again->Forward(false);
    t.plain->Forward(false);
    ExpectClose(Values(again->outputs[0]), Values(t.plain->outputs[0]), "rebound optimized symbol");
  }
}

// What stays apart: a 1x1 output read twice, a 1x1 convolution with a stride, a depthwise one
// without padding, a grouped one that is not depthwise, a 3x3 convolution before the depthwise
// one; the chains themselves still fuse.
TEST(WEFT_FUSION_SUITE, DepthwiseMergeNeedsItsShape) {
  Symbol data = Symbol::Variable("data");
  auto dw = [](const Symbol& x, int groups, int pad) {
    return Relu6(Bn(Operator("Convolution")
                        .SetParam("kernel", Shape(3, 3))
                        .SetParam("pad", Shape(pad, pad))
                        .SetParam("num_filter", 32)
                        .SetParam("num_group", groups)
                        .SetParam("no_bias", true)(x)
                        .CreateSymbol("dw"),
                    "dw_bn"),
                 "dw_relu");
  };
  Symbol e = Relu6(Bn(Conv(data, "e", 32, 1), "e_bn"), "e_relu");
  Symbol strided = Relu6(Bn(Conv(data, "e", 32, 1, 1, false, 2), "e_bn"), "e_relu");
  Symbol wide = Relu6(Bn(Conv(data, "e", 32, 3), "e_bn"), "e_relu");
  const std::vector<std::pair<std::string, Symbol>> cases = {{"read twice", Add(dw(e, 32, 1), e, "add")},
                                                             {"strided 1x1", dw(strided, 32, 1)},
                                                             {"no pad", dw(e, 32, 0)},
                                                             {"grouped, not depthwise", dw(e, 8, 1)},
                                                             {"3x3 first", dw(wide, 32, 1)},
                                                             {"control: merges", dw(e, 32, 1)}};
  for (const auto& [what, net] : cases) {
    Trio t = BindThree(net, Shape(2, 16, 10, 10));
    const Symbol opt = t.blocked->GetOptimizedSymbol();
    const bool merges = what.starts_with("control");
    EXPECT_EQ(CountAttr(opt, "with_dw", "True"), merges ? 1u : 0u) << what << opt.ToJSON();
    EXPECT_EQ(CountOp(opt, "_sg_conv"), merges ? 1u : 2u) << what << opt.ToJSON();
    ExpectThreeAgree(t, false, what);
  }
}

// MobileNet v2's 24-channel values (nChw16c: padded to 32 channels) between inverted residual
// blocks: b1's projection writes one, b2's reads it as its data and its sum and writes another,
// which b3's expansion reads. The executor plans the padded size for them, the monitor sees them
// in NCHW, and the outputs agree with the unfused graph's.
TEST(WEFT_FUSION_SUITE, BlockedPaddedInvertedResiduals) {
  REQUIRE_BLOCKED_FORMAT(f);
  const int64_t block = f == "nChw8c" ? 8 : 16, padded = (24 + block - 1) / block * block;
  Symbol b1 = InvertedResidual(Symbol::Variable("data"), 16, 24, 2, "b1");
  Symbol net = InvertedResidual(InvertedResidual(b1, 24, 24, 1, "b2"), 24, 32, 2, "b3");
  for (const Shape& shape : {Shape(1, 16, 28, 28), Shape(4, 16, 56, 56)}) {
    const std::string what = "inverted residuals " + shape.ToString();
    Trio t = BindThree(net, shape);
    const Symbol opt = t.blocked->GetOptimizedSymbol();
    for (const char* name : {"b1_bn3", "b2_add"})
      EXPECT_NE(NodeText(opt, name).find("\"out_format\": \"" + f + "\""), std::string::npos) << name << opt.ToJSON();
    for (const char* name : {"b2_relu2", "b2_add", "b3_relu2"})
      EXPECT_NE(NodeText(opt, name).find("\"data_format\": \"" + f + "\""), std::string::npos) << name << opt.ToJSON();
    // The same entries, two of them (b1's and b2's 24-channel outputs) padded.
    const int64_t plane = (shape[2] / 2) * (shape[3] / 2);
    EXPECT_EQ(t.blocked->unshared_bytes() - t.fused->unshared_bytes(),
              static_cast<uint64_t>(2 * shape[0] * (padded - 24) * plane) * sizeof(float))
        << what;
    ExpectThreeAgree(t, false, what);
    ExpectMonitorsAgree(t, {"b1_bn3_output", "b2_add_output", "b2_relu2_data", "b2_add_sum", "b3_relu2_data"});
  }
}

// ---- BatchNorm outside convolution chains: _sg_batch_norm ----------------------------------------

void ExpectSameBits(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << what;
}

// BatchNorm then relu as one `_sg_batch_norm`: BatchNorm's arithmetic then relu's, so the unfused
// graph's bits, in inference and in training mode (batch statistics, the moving ones updated
// alike) and with use_global_stats; a BatchNorm read twice keeps its relu apart.
TEST(WEFT_FUSION_SUITE, BatchNormReluIsExact) {
  Symbol data = Symbol::Variable("data");
  for (bool global : {false, true}) {
    Pair p = BindBoth(Relu(Bn(data, "bn", global), "relu"), Shape(3, 16, 5, 7));
    const Symbol opt = p.fused->GetOptimizedSymbol();
    EXPECT_EQ(CountOp(opt, "_sg_batch_norm"), 1u) << opt.ToJSON();
    EXPECT_EQ(CountOp(opt, "BatchNorm") + CountOp(opt, "Activation"), 0u) << opt.ToJSON();
    EXPECT_EQ(p.fused->output_dict().count("relu_output"), 1u);
    for (bool is_train : {false, true, true, false}) {
      const std::string what = std::string(global ? "global" : "batch") + (is_train ? " training" : " inference");
      p.plain->Forward(is_train);
      p.fused->Forward(is_train);
      ExpectSameBits(Values(p.fused->outputs[0]), Values(p.plain->outputs[0]), what);
      for (const char* aux : {"bn_moving_mean", "bn_moving_var"})
        ExpectSameBits(Values(p.fused->aux_dict().at(aux)), Values(p.plain->aux_dict().at(aux)), what + " " + aux);
    }
  }
  Symbol bn = Bn(data, "bn");
  Pair q = BindBoth(Add(Relu(bn, "relu"), bn, "add"), Shape(2, 16, 4, 4));
  const Symbol opt = q.fused->GetOptimizedSymbol();
  EXPECT_EQ(CountOp(opt, "_sg_batch_norm"), 1u) << opt.ToJSON();
  EXPECT_EQ(CountOp(opt, "Activation"), 1u) << opt.ToJSON();
  EXPECT_EQ(NodeText(opt, "bn").find("act_type"), std::string::npos) << opt.ToJSON();
  q.plain->Forward(false);
  q.fused->Forward(false);
  ExpectSameBits(Values(q.fused->outputs[0]), Values(q.plain->outputs[0]), "bn read twice");
}

// DenseNet: dense layers BN -> relu -> conv 1x1 -> BN -> relu -> conv 3x3, each output joined to
// the layer's input (a concat the next layer's BatchNorm reads); a transition BN -> relu -> conv
// 1x1 -> avg pool (run as the pool, then the convolution: pool_first.h); BN -> relu -> global pool
// at the end.
Symbol DenseLayer(const Symbol& x, const std::string& name) {
  Symbol y = Conv(Relu(Bn(x, name + "_bn1"), name + "_relu1"), name + "_conv1", 32, 1);
  y = Conv(Relu(Bn(y, name + "_bn2"), name + "_relu2"), name + "_conv2", 16, 3);
  return Join({x, y}, name + "_join");
}
Symbol DenseNet() {
  Symbol x = Pool(Stage(Symbol::Variable("data"), "stem", 32, 3), "stem_pool", "max", 3, 2, 1);
  x = DenseLayer(DenseLayer(x, "l1"), "l2");  // 32 -> 48 -> 64 channels
  x = Pool(Conv(Relu(Bn(x, "t_bn"), "t_relu"), "t_conv", 32, 1), "t_pool", "avg", 2, 2, 0);
  x = Relu(Bn(DenseLayer(x, "l3"), "last_bn"), "last_relu");
  return GlobalPoolFlat(x);
}

// A DenseNet stays blocked from the stem's output to the global pool: the pre-activation
// BatchNorms and relus (and the transition's) are `_sg_batch_norm` nodes reading and writing the
// blocked layout, so every concat, pooling and convolution between them does too.
TEST(WEFT_FUSION_SUITE, BlockedDenseNet) {
  REQUIRE_BLOCKED_FORMAT(f);
  const Symbol net = DenseNet();
  for (const Shape& shape : {Shape(1, 16, 16, 16), Shape(3, 16, 20, 20)}) {
    Trio t = BindThree(net, shape);
    const Symbol opt = t.blocked->GetOptimizedSymbol();
    EXPECT_EQ(CountOp(opt, "_sg_batch_norm"), 5u) << opt.ToJSON();
    EXPECT_EQ(CountOp(opt, "BatchNorm") + CountOp(opt, "Activation"), 0u) << opt.ToJSON();
    // The transition's pooling runs before its convolution (pool_first.h): "t_pool_before_conv",
    // then the convolution named "t_pool".
    EXPECT_NE(NodeText(opt, "t_pool").find("\"num_filter\": \"32\""), std::string::npos) << opt.ToJSON();
    EXPECT_NE(NodeText(opt, "t_pool_before_conv").find("\"pool_type\": \"avg\""), std::string::npos);
    for (const char* name : {"l1_relu1", "l2_relu1", "l3_relu1", "t_relu", "last_relu", "l1_join", "l2_join", "l3_join",
                             "stem_pool", "t_pool_before_conv", "t_pool", "global"})
      EXPECT_NE(NodeText(opt, name).find("\"data_format\": \"" + f + "\""), std::string::npos) << name << opt.ToJSON();
    // Every convolution but the stem (the graph's data) reads blocked, every one writes it.
    ExpectLayouts(opt, f, 8, 8 + 2, 7 + 5 + 3 + 3, {"stem_relu", "l1_conv2", "t_pool_before_conv", "t_pool"}, {});
    EXPECT_EQ(CountOp(t.fused->GetOptimizedSymbol(), "_sg_batch_norm"), 5u);
    EXPECT_EQ(CountAttr(t.fused->GetOptimizedSymbol(), "data_format", f), 0u);
    ExpectThreeAgree(t, false, "densenet " + shape.ToString());
    // Training mode: batch statistics of blocked data (from a plain copy), the moving ones updated.
    for (int step = 0; step < 2; ++step) ExpectThreeAgree(t, true, "densenet training mode " + shape.ToString());
    ExpectThreeAgree(t, false, "densenet inference after training-mode passes " + shape.ToString());
  }
}

TEST(WEFT_FUSION_SUITE, BlockedBatchNormMonitorAndCut) {
  REQUIRE_BLOCKED_FORMAT(f);
  Trio t = BindThree(DenseNet(), Shape(2, 16, 12, 12));
  const Symbol opt = t.blocked->GetOptimizedSymbol();
  // Bound again as it is: the same layouts, the same values.
  auto again = BindWith(opt, Shape(2, 16, 12, 12), true);
  again->CopyParamsFrom(t.plain->arg_dict(), t.plain->aux_dict());
  again->Forward(false);
  t.blocked->Forward(false);
  EXPECT_EQ(again->GetOptimizedSymbol().ToJSON(), opt.ToJSON());
  ExpectSameBits(Values(again->outputs[0]), Values(t.blocked->outputs[0]), "rebound optimized DenseNet");
  // After the forwards above: the callbacks ExpectMonitorsAgree installs outlive its locals.
  ExpectMonitorsAgree(t, {"l1_relu1_data", "l1_relu1_output", "l2_join_output", "last_relu_output"});
  // Cut at a blocked `_sg_batch_norm`: refused, as for a convolution's output.
  try {
    BindWith(opt.GetInternals()["t_relu_output"], Shape(2, 16, 12, 12), true);
    ADD_FAILURE() << "a blocked _sg_batch_norm as the graph's output was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t_relu"), std::string::npos) << e.what();
  }
  // A BatchNorm whose data is plain (the graph's) or that a plain op reads stays plain.
  Symbol data = Symbol::Variable("data");
  Symbol x = Relu(Bn(data, "in_bn"), "in_relu");
  Symbol net = Operator("elemwise_add")(
                   std::vector<Symbol>{Relu(Bn(Stage(x, "c1", 32, 3), "mid_bn"), "mid_relu"), Stage(x, "c2", 32, 3)})
                   .CreateSymbol("both");
  Trio u = BindThree(net, Shape(2, 16, 6, 6));
  const Symbol uopt = u.blocked->GetOptimizedSymbol();
  EXPECT_EQ(CountOp(uopt, "_sg_batch_norm"), 2u) << uopt.ToJSON();
  for (const char* name : {"in_relu", "mid_relu"})
    EXPECT_EQ(NodeText(uopt, name).find("data_format"), std::string::npos) << name << uopt.ToJSON();
  ExpectThreeAgree(u, false, "plain _sg_batch_norm");
}

// ---- Concat without the copy (core/executor/concat_view.h) ----------------------------------

// One network bound fused (blocked activations as `blocked` says) twice with the same parameters:
// its Concat inputs copied (WEFT_CONCAT_IN_PLACE=0) and written in place.
struct CopyAndView {
  std::unique_ptr<Executor> copy, view;
};
CopyAndView BindCopyAndView(const Symbol& s, const Shape& data, bool blocked = true) {
  setenv("WEFT_CONCAT_IN_PLACE", "0", 1);
  CopyAndView p{BindFused(s, data, blocked), nullptr};
  unsetenv("WEFT_CONCAT_IN_PLACE");
  p.view = BindFused(s, data, blocked);
  Randomize(*p.copy, 7);
  p.view->CopyParamsFrom(p.copy->arg_dict(), p.copy->aux_dict());
  return p;
}

// The entries DebugStr shows written in place ("<label> = <concat label> channels from <c>").
std::vector<std::string> InPlace(const Executor& e) {
  std::vector<std::string> found;
  const std::string text = e.DebugStr(), key = "Output in place:\n\t";
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    const size_t begin = at + key.size();
    found.push_back(text.substr(begin, text.find('\n', begin) - begin));
  }
  return found;
}

// Both bindings give the same bits, in inference (twice: run to run too) and, with `train`, in
// training mode (batch statistics: the kernels' unfused path).
void ExpectCopyAndViewAgree(CopyAndView& p, bool train, const std::string& what) {
  for (int pass = 0; pass < (train ? 3 : 2); ++pass) {
    const bool is_train = train && pass == 2;
    p.copy->Forward(is_train);
    p.view->Forward(is_train);
    for (size_t i = 0; i < p.copy->outputs.size(); ++i)
      ExpectSameBits(
          Values(p.view->outputs[i]), Values(p.copy->outputs[i]),
          what + (is_train ? " training mode" : " pass " + std::to_string(pass)) + " output " + std::to_string(i));
  }
}

// SqueezeNet's fire modules: a 1x1 squeeze, then a 1x1 and a 3x3 expansion joined (weft's
// Winograd on AVX2, oneDNN's on AVX-512 for the 3x3 ones at batch > 1).
Symbol FireNet() {
  Symbol x = Stage(Symbol::Variable("data"), "stem", 16, 3);
  x = Join({Stage(Stage(x, "sq1", 16, 1), "e1a", 32, 1), Stage(Stage(x, "sq1b", 16, 1), "e3a", 32, 3)}, "fire1");
  Symbol sq = Stage(x, "sq2", 16, 1);
  x = Join({Stage(sq, "e1b", 16, 1), Stage(sq, "e3b", 48, 3)}, "fire2");
  return GlobalPoolFlat(Stage(x, "last", 16, 1));
}

TEST(WEFT_FUSION_SUITE, ConcatInPlaceFire) {
  const std::vector<std::string> want = {
      "e1a_relu(0) = fire1(0) channels from 0", "e3a_relu(0) = fire1(0) channels from 32",
      "e1b_relu(0) = fire2(0) channels from 0", "e3b_relu(0) = fire2(0) channels from 16"};
  for (bool blocked : {true, false})
    for (const Shape& shape : {Shape(1, 8, 20, 20), Shape(6, 8, 20, 20)}) {
      const std::string what = (blocked ? "blocked fire " : "plain fire ") + shape.ToString();
      CopyAndView p = BindCopyAndView(FireNet(), shape, blocked);
      EXPECT_EQ(InPlace(*p.view), want) << what << "\n" << p.view->DebugStr();
      EXPECT_TRUE(InPlace(*p.copy).empty()) << what;
      ExpectCopyAndViewAgree(p, true, what);
    }
}

// DenseNet's layers: each joins its input (read by its BatchNorm too) and a 3x3 convolution's
// growth, one Concat reading the one before: every join and convolution writes into the last
// join's memory, which the BatchNorms read as slices. With `pool` the first input is a max
// pool's (as DenseNet's blocks start), which the first join copies into that memory.
Symbol DenseChain(bool pool) {
  Symbol x = Stage(Symbol::Variable("data"), "stem", 16, 3);
  if (pool) x = Pool(x, "pool", "max", 3, 1, 1);
  for (const std::string l : {"l1", "l2", "l3"})
    x = Join({x, Conv(Stage(Relu(Bn(x, l + "_bn"), l + "_relu"), l + "_mid", 32, 1), l + "_conv", 16, 3)}, l + "_join");
  return GlobalPoolFlat(Relu(Bn(x, "last_bn"), "last_relu"));
}

TEST(WEFT_FUSION_SUITE, ConcatInPlaceDenseChain) {
  const std::vector<std::string> joins = {
      "l1_conv(0) = l3_join(0) channels from 16", "l1_join(0) = l3_join(0) channels from 0",
      "l2_conv(0) = l3_join(0) channels from 32", "l2_join(0) = l3_join(0) channels from 0",
      "l3_conv(0) = l3_join(0) channels from 48"};
  for (bool pool : {false, true})
    for (const Shape& shape : {Shape(1, 8, 12, 12), Shape(5, 8, 12, 12)}) {
      const std::string what = (pool ? "dense chain after a pool " : "dense chain ") + shape.ToString();
      CopyAndView p = BindCopyAndView(DenseChain(pool), shape);
      std::vector<std::string> want = joins;
      if (!pool) want.insert(want.begin(), "stem_relu(0) = l3_join(0) channels from 0");
      EXPECT_EQ(InPlace(*p.view), want) << what << "\n" << p.view->DebugStr();
      ExpectCopyAndViewAgree(p, true, what);
    }
}

// Inputs that must be copied: one read by another node too, one joined twice, a pooling's; and a
// Concat that is the graph's output (plain) with both inputs in place.
TEST(WEFT_FUSION_SUITE, ConcatInPlaceOnlyWhereItCan) {
  Symbol x = Stage(Symbol::Variable("data"), "stem", 16, 3);
  Symbol a = Stage(x, "a", 16, 1), b = Stage(x, "b", 16, 3), c = Stage(x, "c", 16, 1);
  Symbol j1 = Join({a, b}, "j1"), j2 = Join({a, c, c, Pool(x, "pool", "max", 3, 1, 1)}, "j2");
  Symbol net = GlobalPoolFlat(Add(Stage(j1, "p", 16, 1), Stage(j2, "q", 16, 1), "add"));
  for (const Shape& shape : {Shape(1, 8, 10, 10), Shape(4, 8, 10, 10)}) {
    CopyAndView p = BindCopyAndView(net, shape);
    EXPECT_EQ(InPlace(*p.view), std::vector<std::string>{"b_relu(0) = j1(0) channels from 16"}) << shape.ToString();
    ExpectCopyAndViewAgree(p, false, "copied inputs " + shape.ToString());
  }
  Symbol out = Join({Stage(x, "d", 16, 1), Stage(x, "e", 24, 3)}, "out");
  CopyAndView p = BindCopyAndView(out, Shape(3, 8, 10, 10));
  EXPECT_EQ(InPlace(*p.view),
            (std::vector<std::string>{"d_relu(0) = out(0) channels from 0", "e_relu(0) = out(0) channels from 16"}));
  ExpectCopyAndViewAgree(p, false, "concat as the output");
}

// Channel counts that are no multiple of a block keep the Concat plain, where every channel slice
// is contiguous per image: written in place at any channel.
TEST(WEFT_FUSION_SUITE, ConcatInPlaceOddChannels) {
  Symbol x = Stage(Symbol::Variable("data"), "stem", 16, 3);
  Symbol j = Join({Stage(x, "a", 12, 1), Stage(x, "b", 20, 3), Stage(x, "c", 5, 1)}, "j");
  Symbol net = GlobalPoolFlat(Stage(j, "after", 16, 3));
  for (const Shape& shape : {Shape(1, 8, 14, 14), Shape(7, 8, 14, 14)}) {
    CopyAndView p = BindCopyAndView(net, shape);
    EXPECT_EQ(NodeText(p.view->GetOptimizedSymbol(), "j").find("data_format"), std::string::npos);
    EXPECT_EQ(InPlace(*p.view),
              (std::vector<std::string>{"a_relu(0) = j(0) channels from 0", "b_relu(0) = j(0) channels from 12",
                                        "c_relu(0) = j(0) channels from 32"}))
        << shape.ToString();
    ExpectCopyAndViewAgree(p, true, "odd channels " + shape.ToString());
  }
}

// The monitor sees the inputs written in place as arrays of their own, as without.
TEST(WEFT_FUSION_SUITE, ConcatInPlaceMonitor) {
  CopyAndView p = BindCopyAndView(FireNet(), Shape(3, 8, 12, 12));
  std::map<std::string, std::vector<float>> seen[2];
  for (int k = 0; k < 2; ++k) {
    Executor& e = k == 0 ? *p.copy : *p.view;
    e.SetMonitorCallback([&seen, k](const std::string& name, const NDArray& a) { seen[k][name] = Values(a); }, true);
    e.Forward(false);
    e.SetMonitorCallback(nullptr);
  }
  ASSERT_EQ(seen[0].size(), seen[1].size());
  for (const char* name : {"e1a_relu_output", "e3a_relu_output", "e3b_relu_output", "fire1_output"})
    ASSERT_EQ(seen[1].count(name), 1u) << name;
  for (const auto& [name, values] : seen[0]) ExpectSameBits(seen[1][name], values, name);
}

// ---- Average pooling before a 1x1 convolution (core/executor/pool_first.h) ------------------------

Symbol GlobalAvg(const Symbol& x, const std::string& name) {
  return Operator("Pooling")
      .SetParam("kernel", Shape(1, 1))
      .SetParam("global_pool", true)
      .SetParam("pool_type", "avg")(x)
      .CreateSymbol(name);
}

bool Swapped(const Symbol& opt) { return opt.ToJSON().find("_before_conv") != std::string::npos; }

// A 1x1 convolution (with a bias, one group or four) then an average pooling whose windows lie
// inside the image: the pooling runs first, named "<pool>_before_conv", and the convolution takes
// the pooling's name, so the output keeps its name; the values match the unfused graph and repeat
// bit for bit.
TEST(WEFT_FUSION_SUITE, AvgPoolMovesBeforePointwiseConv) {
  struct Case {
    int groups;
    Shape data;
    int kernel, stride;
    std::string convention;
    bool global;
  };
  const Case cases[] = {
      {1, Shape(2, 16, 8, 8), 2, 2, "valid", false},  // DenseNet's transition
      {1, Shape(1, 16, 9, 7), 2, 2, "valid", false},  // the last row and column unread
      {4, Shape(2, 16, 8, 8), 3, 2, "valid", false},  // grouped, overlapping windows
      {1, Shape(2, 16, 8, 8), 2, 2, "full", false},   // full that fits exactly
      {1, Shape(3, 8, 5, 6), 1, 1, "valid", true},    // global
  };
  for (const Case& c : cases) {
    Symbol conv = Conv(Symbol::Variable("data"), "conv", 24, 1, c.groups, true);
    Symbol net = c.global ? GlobalAvg(conv, "pool") : Pool(conv, "pool", "avg", c.kernel, c.stride, 0, c.convention);
    const std::string what = c.data.ToString() + " " + c.convention + (c.global ? " global" : "");
    Pair p = BindBoth(net, c.data);
    const Symbol opt = p.fused->GetOptimizedSymbol();
    EXPECT_TRUE(Swapped(opt)) << what << opt.ToJSON();
    EXPECT_NE(NodeText(opt, "pool_before_conv").find("\"pool_type\": \"avg\""), std::string::npos) << opt.ToJSON();
    EXPECT_NE(NodeText(opt, "pool").find("\"num_filter\": \"24\""), std::string::npos) << opt.ToJSON();
    EXPECT_EQ(CountOp(opt, "Pooling"), 1u) << opt.ToJSON();
    EXPECT_EQ(p.fused->output_dict().count("pool_output"), 1u) << what;
    EXPECT_FALSE(Swapped(p.plain->GetOptimizedSymbol()));
    ExpectSameOutputs(p, false, "pool before conv " + what);
    const std::vector<float> first = Values(p.fused->outputs[0]);
    p.fused->Forward(false);
    const std::vector<float> second = Values(p.fused->outputs[0]);
    EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0) << what << ": run to run";
  }
}

// What stays in its order: max pooling, padded or barely shrinking average pooling, full windows
// past the edge, a 3x3 or strided convolution, a convolution read twice, an activation between
// them, training binds and WEFT_GRAPH_FUSION=0.
TEST(WEFT_FUSION_SUITE, PoolingsThatDoNotMoveBeforeConvolutions) {
  Symbol data = Symbol::Variable("data");
  Symbol pointwise = Conv(data, "conv", 24, 1, 1, true);
  Symbol strided = Conv(data, "conv", 24, 1, 1, true, 2);
  const std::vector<std::pair<std::string, Symbol>> nets = {
      {"max", Pool(pointwise, "pool", "max", 2, 2, 0)},
      {"padded avg", Pool(pointwise, "pool", "avg", 3, 2, 1)},
      {"avg 2x2 stride 1", Pool(pointwise, "pool", "avg", 2, 1, 0)},
      {"full past the edge", Pool(pointwise, "pool", "avg", 2, 2, 0, "full")},
      {"3x3 convolution", Pool(Conv(data, "conv", 24, 3, 1, true), "pool", "avg", 2, 2, 0)},
      {"strided convolution", Pool(strided, "pool", "avg", 2, 2, 0)},
      {"convolution read twice", Symbol::Group({Pool(pointwise, "pool", "avg", 2, 2, 0), pointwise})},
      {"relu between", Pool(Relu(pointwise, "relu"), "pool", "avg", 2, 2, 0)},
  };
  for (const auto& [what, net] : nets) {
    Pair p = BindBoth(net, Shape(2, 16, 9, 9));
    EXPECT_FALSE(Swapped(p.fused->GetOptimizedSymbol())) << what << p.fused->GetOptimizedSymbol().ToJSON();
    ExpectSameOutputs(p, false, what);
  }
  Symbol transition = Pool(pointwise, "pool", "avg", 2, 2, 0);
  EXPECT_FALSE(Swapped(BindWith(transition, Shape(2, 16, 8, 8), true, "write")->GetOptimizedSymbol()));
  EXPECT_FALSE(Swapped(BindWith(transition, Shape(2, 16, 8, 8), false)->GetOptimizedSymbol()));
}

}  // namespace
}  // namespace weft
