// CachedOp: the same outputs and gradients as the executor and as the op-by-op imperative path (bit
// for bit on cpu), re-planning on a new batch size, calls recorded before one backward, inlining,
// aux states, flags.
#include <random>

#include "autograd_util.h"
#include "weft/cached_op.h"
#include "weft/executor.h"
#include "weft/networks.h"
#include "weft/operator.h"

namespace weft {
namespace {

using test::Read;

NDArray Random(const Shape& s, std::mt19937& rng, float scale = 0.5f) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(static_cast<size_t>(s.Size()));
  for (float& x : v) x = d(rng);
  return NDArray(v, s, Context::cpu(0));
}

// LeNet's arguments for batch n: data, parameters, labels (in ListInputs order).
std::vector<NDArray> LeNetInputs(const Symbol& net, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  ShapeInference si = net.InferShapePartial({{"data", Shape{n, 1, 28, 28}}});
  std::vector<NDArray> in;
  const std::vector<std::string> names = net.ListArguments();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "softmax_label") {
      std::vector<float> labels(static_cast<size_t>(n));
      for (int k = 0; k < n; ++k)
        labels[static_cast<size_t>(k)] = static_cast<float>((k * 7 + static_cast<int>(seed)) % 10);
      in.emplace_back(labels, Shape{n}, Context::cpu(0));
    } else {
      in.push_back(Random(*si.arg_shapes[i], rng, names[i] == "data" ? 1.0f : 0.2f));
    }
  }
  return in;
}

bool IsParam(const std::string& name) { return name != "data" && name != "softmax_label"; }

// Executor forward (training) + backward: output and parameter gradients (none for data/labels).
std::pair<NDArray, std::vector<NDArray>> ExecutorRun(const Symbol& net, const std::vector<NDArray>& in) {
  const std::vector<std::string> names = net.ListArguments();
  std::vector<NDArray> grads;
  std::vector<OpReqType> reqs;
  for (size_t i = 0; i < in.size(); ++i) {
    reqs.push_back(IsParam(names[i]) ? kWriteTo : kNullOp);
    grads.push_back(IsParam(names[i]) ? NDArray(in[i].GetShape(), Context::cpu(0), false) : NDArray());
  }
  Executor ex(net, Context::cpu(0), in, grads, reqs, {});
  ex.Forward(true);
  ex.Backward();
  NDArray out = ex.outputs[0].Copy(Context::cpu(0));
  return {out, grads};
}

// Marks the parameters of `in` (copies, so the caller's arrays stay unmarked) and returns them.
std::vector<NDArray> MarkParams(const Symbol& net, const std::vector<NDArray>& in) {
  const std::vector<std::string> names = net.ListArguments();
  std::vector<NDArray> v = in;
  for (size_t i = 0; i < v.size(); ++i)
    if (IsParam(names[i])) autograd::AttachGrad(&v[i]);
  return v;
}

TEST(CachedOp, ForwardAndGradientsEqualTheExecutorBitForBit) {
  const Symbol net = LeNet();
  const std::vector<NDArray> in = LeNetInputs(net, 4, 1);
  auto [want_out, want_grads] = ExecutorRun(net, in);

  CachedOp op(net, {{"static_alloc", "True"}});
  ASSERT_EQ(op.ListInputNames(), net.ListArguments());
  std::vector<NDArray> vars = MarkParams(net, in);
  NDArray out = test::Recorded([&] { return op.Invoke(vars).at(0); });
  autograd::Backward({out});
  EXPECT_EQ(Read(out), Read(want_out));
  const std::vector<std::string> names = net.ListArguments();
  for (size_t i = 0; i < in.size(); ++i)
    if (IsParam(names[i])) {
      EXPECT_EQ(Read(autograd::GetGrad(vars[i])), Read(want_grads[i])) << names[i];
    }

  // Inference: the same output as the executor's forward.
  auto train = autograd::TrainMode();  // the executor above ran with is_train
  EXPECT_EQ(Read(op.Invoke(in).at(0)), Read(want_out));
}

// LeNet op by op through Invoke (the imperative path a non-hybridized Gluon net takes).
NDArray LeNetImperative(const std::vector<NDArray>& v) {
  auto conv = [](const NDArray& x, const NDArray& w, const NDArray& b, int f) {
    return InvokeOne("Convolution", {x, w, b}, {{"kernel", "(5, 5)"}, {"num_filter", std::to_string(f)}});
  };
  auto tanh = [](const NDArray& x) { return InvokeOne("Activation", {x}, {{"act_type", "tanh"}}); };
  auto pool = [](const NDArray& x) {
    return InvokeOne("Pooling", {x}, {{"pool_type", "max"}, {"kernel", "(2, 2)"}, {"stride", "(2, 2)"}});
  };
  NDArray x = pool(tanh(conv(v[0], v[1], v[2], 20)));
  x = pool(tanh(conv(x, v[3], v[4], 50)));
  x = InvokeOne("Flatten", {x});
  x = tanh(InvokeOne("FullyConnected", {x, v[5], v[6]}, {{"num_hidden", "500"}}));
  x = InvokeOne("FullyConnected", {x, v[7], v[8]}, {{"num_hidden", "10"}});
  return InvokeOne("SoftmaxOutput", {x, v[9]});
}

TEST(CachedOp, GradientsEqualTheImperativePathBitForBit) {
  const Symbol net = LeNet();
  ASSERT_EQ(net.ListArguments().size(), 10u);
  const std::vector<NDArray> in = LeNetInputs(net, 3, 2);
  std::vector<NDArray> a = MarkParams(net, in), b = MarkParams(net, in);
  CachedOp op(net);
  NDArray ya, yb;
  {
    auto rec = autograd::Record();
    ya = op.Invoke(a).at(0);
    yb = LeNetImperative(b);
  }
  autograd::Backward({ya, yb});
  EXPECT_EQ(Read(ya), Read(yb));
  for (size_t i = 1; i + 1 < in.size(); ++i)
    EXPECT_EQ(Read(autograd::GetGrad(a[i])), Read(autograd::GetGrad(b[i]))) << net.ListArguments()[i];
}

TEST(CachedOp, PlansAgainForANewBatchSizeAndKeepsBoth) {
  const Symbol net = LeNet();
  CachedOp op(net);
  for (int n : {4, 7, 4}) {
    const std::vector<NDArray> in = LeNetInputs(net, n, static_cast<uint32_t>(n));
    auto rec = autograd::TrainMode();
    std::vector<NDArray> out = op.Invoke(in);
    ASSERT_EQ(out[0].GetShape(), (Shape{n, 10}));
    EXPECT_EQ(Read(out[0]), Read(ExecutorRun(net, in).first));
  }
  EXPECT_EQ(op.num_plans(), 2u);
  EXPECT_GT(op.planned_bytes(), 0u);
}

TEST(CachedOp, TwoRecordedCallsBeforeOneBackwardKeepTheirOwnValues) {
  const Symbol net = LeNet();
  const std::vector<NDArray> in1 = LeNetInputs(net, 2, 3);
  std::vector<NDArray> in2 = LeNetInputs(net, 2, 4);
  for (size_t i = 1; i + 1 < in1.size(); ++i) in2[i] = in1[i];  // same parameters, other data/labels
  const auto g1 = ExecutorRun(net, in1).second, g2 = ExecutorRun(net, in2).second;
  CachedOp op(net, {{"static_alloc", "True"}, {"static_shape", "True"}});
  std::vector<NDArray> v1 = MarkParams(net, in1);
  std::vector<NDArray> v2 = v1;
  v2[0] = in2[0];
  v2[9] = in2[9];
  NDArray y1, y2;
  {
    auto rec = autograd::Record();
    y1 = op.Invoke(v1).at(0);
    y2 = op.Invoke(v2).at(0);
  }
  EXPECT_EQ(op.num_plans(), 2u);  // the second call could not reuse the first's values
  autograd::Backward({y1, y2});
  for (size_t i = 1; i + 1 < in1.size(); ++i) {
    std::vector<float> got = Read(autograd::GetGrad(v1[i])), a = Read(g1[i]), b = Read(g2[i]);
    for (size_t k = 0; k < got.size(); ++k) ASSERT_NEAR(got[k], a[k] + b[k], 1e-5f) << net.ListArguments()[i];
  }
  // Released after backward: a third call reuses a plan.
  {
    auto rec = autograd::Record();
    y1 = op.Invoke(v1).at(0);
  }
  EXPECT_EQ(op.num_plans(), 2u);
}

TEST(CachedOp, SmallGraphsAreInlinedWhenRecording) {
  Symbol x = Symbol::Variable("x");
  Symbol y = Operator("FullyConnected").SetParam("num_hidden", 3)(x).CreateSymbol("fc");
  std::mt19937 rng(5);
  std::vector<NDArray> in = {Random(Shape{2, 4}, rng), Random(Shape{3, 4}, rng), Random(Shape{3}, rng)};
  autograd::AttachGrad(&in[1]);
  for (const char* limit : {"2", "0"}) {
    CachedOp op(y, {{"inline_limit", limit}});
    NDArray out = test::Recorded([&] { return op.Invoke(in).at(0); });
    const std::string node = autograd::GetSymbol(out).ListOutputs().at(0);
    if (std::string(limit) == "2") {
      EXPECT_EQ(node.rfind("node_", 0), 0u) << node;  // recorded op by op
      EXPECT_EQ(op.num_plans(), 0u);
    } else {
      // One _CachedOp node, its output named after the graph's (MXNet's "node_0_fc_output").
      EXPECT_EQ(node.rfind("node_", 0), 0u) << node;
      EXPECT_TRUE(node.ends_with("_fc_output")) << node;
      EXPECT_EQ(op.num_plans(), 1u);
    }
    autograd::Backward({out});
  }
}

// A call that is not inlined shows as one _CachedOp node (as test_gluon.py's test_inline counts
// MXNet's nodes), and that symbol binds and differentiates as the graph it holds.
TEST(CachedOp, GetSymbolShowsOneCachedOpNodeThatBindsAsItsGraph) {
  Symbol x = Symbol::Variable("x");
  Symbol fc = Operator("FullyConnected").SetParam("num_hidden", 3)(x).CreateSymbol("fc");
  Symbol net = Operator("BatchNorm").SetParam("fix_gamma", "False")(fc).CreateSymbol("bn");
  CachedOp op(net, {{"inline_limit", "0"}});
  std::mt19937 rng(9);
  std::vector<NDArray> in = {Random(Shape{4, 5}, rng, 1.0f),
                             Random(Shape{3, 5}, rng),
                             Random(Shape{3}, rng),
                             Random(Shape{3}, rng),
                             Random(Shape{3}, rng),
                             NDArray(std::vector<float>{0, 0, 0}, Shape{3}, Context::cpu(0)),
                             NDArray(std::vector<float>{1, 1, 1}, Shape{3}, Context::cpu(0))};
  ASSERT_EQ(op.ListInputNames().size(), in.size());
  for (size_t i = 0; i < 5; ++i) autograd::AttachGrad(&in[i]);
  NDArray out = test::Recorded([&] { return op.Invoke(in).at(0); });
  const Symbol got = autograd::GetSymbol(out);
  const std::string json = got.ToJSON();
  EXPECT_NE(json.find("\"op\": \"_CachedOp\""), std::string::npos) << json;
  EXPECT_EQ(json.find("FullyConnected"), std::string::npos) << json;  // the ops stay inside the node
  const std::vector<std::string> args = got.ListArguments(), aux = got.ListAuxiliaryStates();
  ASSERT_EQ(args.size(), 5u);
  ASSERT_EQ(aux.size(), 2u);  // the moving statistics stay aux states through the node

  // Bound with the call's arrays (arguments in ListArguments order: the call's first five inputs),
  // the symbol gives the call's output and the tape's gradients bit for bit.
  std::vector<NDArray> bargs(in.begin(), in.begin() + 5), grads;
  for (const NDArray& a : bargs) grads.emplace_back(a.GetShape(), Context::cpu(0), false);
  std::vector<NDArray> baux = {NDArray(std::vector<float>{0, 0, 0}, Shape{3}, Context::cpu(0)),
                               NDArray(std::vector<float>{1, 1, 1}, Shape{3}, Context::cpu(0))};
  Executor ex(got, Context::cpu(0), bargs, grads, std::vector<OpReqType>(5, kWriteTo), baux);
  ex.Forward(true);
  EXPECT_EQ(Read(ex.outputs[0]), Read(out));
  NDArray head = Random(out.GetShape(), rng, 1.0f);
  ex.Backward({head});
  autograd::Backward({out}, {head});
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(Read(grads[i]), Read(autograd::GetGrad(in[i]))) << args[i];

  // MXNet's JSON of it holds no graph: loading it says so and what to do instead.
  const std::string err = test::ErrorOf([&] { Symbol::LoadJSON(json); });
  EXPECT_NE(err.find("_CachedOp"), std::string::npos) << err;
  EXPECT_NE(err.find("HybridBlock.export"), std::string::npos) << err;
}

TEST(CachedOp, AuxStatesAreUpdatedInTheCallersArrays) {
  Symbol x = Symbol::Variable("x");
  Symbol bn = Operator("BatchNorm").SetParam("fix_gamma", "False")(x).CreateSymbol("bn");
  CachedOp op(bn);
  ASSERT_EQ(op.ListInputNames(),
            (std::vector<std::string>{"x", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"}));
  std::mt19937 rng(6);
  NDArray data = Random(Shape{4, 3}, rng, 2.0f);
  NDArray gamma(std::vector<float>{1, 1, 1}, Shape{3}, Context::cpu(0)),
      beta(std::vector<float>{0, 0, 0}, Shape{3}, Context::cpu(0));
  NDArray mean(std::vector<float>{0, 0, 0}, Shape{3}, Context::cpu(0)),
      var(std::vector<float>{1, 1, 1}, Shape{3}, Context::cpu(0));
  {
    auto train = autograd::TrainMode();
    op.Invoke({data, gamma, beta, mean, var});
  }
  // The same op imperatively on copies gives the same moving statistics.
  NDArray m2(std::vector<float>{0, 0, 0}, Shape{3}, Context::cpu(0)),
      v2(std::vector<float>{1, 1, 1}, Shape{3}, Context::cpu(0));
  ImperativeCall call;
  call.op = "BatchNorm";
  call.params = {{"fix_gamma", "False"}};
  call.inputs = {data, gamma, beta, m2, v2};
  call.is_train = true;
  Invoke(call);
  EXPECT_EQ(Read(mean), Read(m2));
  EXPECT_EQ(Read(var), Read(v2));
  EXPECT_NE(Read(mean), (std::vector<float>{0, 0, 0}));
}

// A CachedOp called three times on the same inputs, outside recording (inference), gives the
// same bits every time, from the first call (issue 32). The layer (100 x 784 x 128) is large
// enough for the cpu plugin's oneDNN path.
TEST(CachedOp, InferenceCallsRepeatBitForBit) {
  Symbol fc = Operator("FullyConnected")
                  .SetParam("num_hidden", 128)
                  .SetInput("data", Symbol::Variable("data"))
                  .CreateSymbol("fc");
  CachedOp op(fc, {{"static_alloc", "true"}, {"data_indices", "[0]"}, {"param_indices", "[1, 2]"}});
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto random = [&](const Shape& s) {
    std::vector<float> v(static_cast<size_t>(s.Size()));
    for (float& x : v) x = u(rng);
    return NDArray(v, s, Context::cpu());
  };
  const std::vector<NDArray> inputs = {random(Shape(100, 784)), random(Shape(128, 784)), random(Shape(128))};
  auto bits = [](const NDArray& a) {
    std::vector<uint32_t> b(a.Bytes() / sizeof(uint32_t));
    a.SyncCopyToCPUBytes(b.data(), b.size() * sizeof(uint32_t));
    return b;
  };
  const std::vector<uint32_t> first = bits(op.Invoke(inputs).at(0));
  for (int call = 1; call < 3; ++call) EXPECT_EQ(bits(op.Invoke(inputs).at(0)), first) << "call " << call + 1;
}

TEST(CachedOp, RefusesBadFlagsAndInputs) {
  const Symbol net = LeNet();
  EXPECT_NE(test::ErrorOf([&] {
              CachedOp(net, {{"static_aloc", "True"}});
            }).find("unknown flag 'static_aloc'"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { CachedOp(net, {{"inline_limit", "-1"}}); }).find("inline_limit"), std::string::npos);
  EXPECT_NE(test::ErrorOf([&] {
              CachedOp(net, {{"data_indices", "[0]"}, {"param_indices", "[0, 1]"}});
            }).find("both data_indices and param_indices"),
            std::string::npos);
  CachedOp op(net);
  EXPECT_NE(test::ErrorOf([&] { op.Invoke({NDArray(Shape{1}, Context::cpu(0))}); }).find("the graph takes 10"),
            std::string::npos);
  std::vector<NDArray> in = LeNetInputs(net, 2, 1);
  in[1] = NDArray(Shape{3, 3}, Context::cpu(0));
  EXPECT_NE(test::ErrorOf([&] { op.Invoke(in); }).find("conv1_weight"), std::string::npos);
}

}  // namespace
}  // namespace weft
