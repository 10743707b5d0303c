// Executor::AliasArgument and the inference group's copy-free batches: a pass reads the aliased
// array where it is (whole arrays and views of one data set), with and without bulk segments;
// the group never copies a batch into an aliased array; refusals change nothing.
#include <cstdlib>

#include "mlp_util.h"
#include "require.h"
#include "weft/executor_group.h"
#include "weft/runtime.h"

namespace weft {
namespace {

const Shape kData{8, 10};

// The Mlp's parameters, seeded; labels 0..3 in turn.
void SetParams(Executor& e, const Symbol& net) {
  uint32_t seed = 11;
  for (const std::string& name : net.ListArguments()) {
    if (name == "data") continue;
    NDArray a = e.arg_dict().at(name);
    std::vector<float> v = test::Pseudo(a.Size(), seed++);
    if (name == "softmax_label")
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 4);
    a.SyncCopyFromCPU(v);
  }
}

// The forward output for `data` through the executor's own (copied-into) array.
std::vector<float> CopiedForward(const Symbol& net, const std::vector<float>& data) {
  auto e = Executor::SimpleBind(net, Context::cpu(), {{"data", kData}}, "null");
  SetParams(*e, net);
  e->arg_dict().at("data").SyncCopyFromCPU(data);
  e->Forward(false);
  return test::Values(e->outputs[0]);
}

class ExecutorAlias : public ::testing::TestWithParam<const char*> {
 protected:
  // Bulk settings are read at bind: each case binds with WEFT_EXEC_BULK_EXEC_INFERENCE set.
  void SetUp() override { setenv("WEFT_EXEC_BULK_EXEC_INFERENCE", GetParam(), 1); }
  void TearDown() override { unsetenv("WEFT_EXEC_BULK_EXEC_INFERENCE"); }
};

TEST_P(ExecutorAlias, PassesReadTheAliasedArrayWhereItIs) {
  Symbol net = test::Mlp();
  const std::vector<float> a = test::Pseudo(kData.Size(), 101), b = test::Pseudo(kData.Size(), 202);
  const std::vector<float> want_a = CopiedForward(net, a), want_b = CopiedForward(net, b);
  ASSERT_NE(want_a, want_b);

  auto e = Executor::SimpleBind(net, Context::cpu(), {{"data", kData}}, "null");
  SetParams(*e, net);
  NDArray bound = e->arg_dict().at("data");
  bound.SyncCopyFromCPU(std::vector<float>(kData.Size(), 0.25f));
  NDArray xa(a, kData, Context::cpu()), xb(b, kData, Context::cpu());

  ASSERT_TRUE(e->AliasArgument("data", xa));
  EXPECT_TRUE(e->arg_dict().at("data").SharesChunkWith(xa));
  e->Forward(false);
  test::ExpectNear(test::Values(e->outputs[0]), want_a, 0);
  ASSERT_TRUE(e->AliasArgument("data", xb));
  e->Forward(false);
  test::ExpectNear(test::Values(e->outputs[0]), want_b, 0);
  // Writing the aliased array changes the next pass, as for arrays given at bind.
  xb.SyncCopyFromCPU(a);
  e->Forward(false);
  test::ExpectNear(test::Values(e->outputs[0]), want_a, 0);

  // Consecutive views of one data set (what an unshuffled MNISTIter hands out).
  std::vector<float> both = a;
  both.insert(both.end(), b.begin(), b.end());
  NDArray set(both, Shape{16, 10}, Context::cpu());
  ASSERT_TRUE(e->AliasArgument("data", set.Slice(8, 16)));
  e->Forward(false);
  test::ExpectNear(test::Values(e->outputs[0]), want_b, 0);
  ASSERT_TRUE(e->AliasArgument("data", set.Slice(0, 8)));
  e->Forward(false);
  test::ExpectNear(test::Values(e->outputs[0]), want_a, 0);

  // Back to the bound array: its values were never written.
  ASSERT_TRUE(e->AliasArgument("data", bound));
  EXPECT_EQ(test::Values(bound), std::vector<float>(kData.Size(), 0.25f));
  bound.SyncCopyFromCPU(b);
  e->Forward(false);
  test::ExpectNear(test::Values(e->outputs[0]), want_b, 0);
}

INSTANTIATE_TEST_SUITE_P(Bulk, ExecutorAlias, ::testing::Values("0", "1"));

TEST(ExecutorAliasRefusals, ChangeNothing) {
  Symbol net = test::Mlp();
  auto e = Executor::SimpleBind(net, Context::cpu(), {{"data", kData}}, "null");
  SetParams(*e, net);
  const NDArray bound = e->arg_dict().at("data");
  std::string m = test::ErrorOf([&] { e->AliasArgument("data", NDArray(Shape{4, 10}, Context::cpu())); });
  EXPECT_NE(m.find("'data' is bound as (8, 10)"), std::string::npos) << m;
  m = test::ErrorOf([&] { e->AliasArgument("dat", NDArray(kData, Context::cpu())); });
  EXPECT_NE(m.find("'dat' is not an argument"), std::string::npos) << m;
  // An array the executor already uses (a view of fc1's 16x10 weight).
  NDArray w = e->arg_dict().at("fc1_weight");
  EXPECT_FALSE(e->AliasArgument("data", w.Slice(0, 8)));
  EXPECT_TRUE(e->arg_dict().at("data").SharesChunkWith(bound));

  // An argument that is also an output keeps its array.
  Symbol x = Symbol::Variable("x");
  Symbol both = Symbol::Group({x, Operator("relu")(x).CreateSymbol("r")});
  auto g = Executor::SimpleBind(both, Context::cpu(), {{"x", Shape{3}}}, "null");
  EXPECT_FALSE(g->AliasArgument("x", NDArray(Shape{3}, Context::cpu())));
}

TEST(ExecutorGroupAlias, InferenceBatchesAreReadInPlaceAndNeverOverwritten) {
  const Context cpu = Context::cpu(), sim("simdev", 0);
  Symbol net = test::Mlp();
  std::map<std::string, Shape> shapes = {{"data", kData}, {"softmax_label", Shape{8}}};
  DataParallelExecutorGroup group(net, {cpu}, shapes, {}, {}, {}, /*for_training=*/false);
  auto ref = Executor::SimpleBind(net, cpu, {{"data", kData}}, "null");
  SetParams(*ref, net);
  std::map<std::string, NDArray> params;
  for (const std::string& p : group.param_names()) params[p] = ref->arg_dict().at(p);
  group.SetParams(params, {});
  const std::vector<float> a = test::Pseudo(kData.Size(), 7), b = test::Pseudo(kData.Size(), 8);
  const std::vector<float> want_a = CopiedForward(net, a), want_b = CopiedForward(net, b);
  NDArray label(std::vector<float>{0, 1, 2, 3, 0, 1, 2, 3}, Shape{8}, cpu);

  NDArray xa(a, kData, cpu);
  group.LoadDataBatch({{"data", xa}, {"softmax_label", label}});
  EXPECT_TRUE(group.executor(0).arg_dict().at("data").SharesChunkWith(xa));
  group.Forward(false);
  test::ExpectNear(test::Values(group.outputs(0)[0]), want_a, 0);

  // A batch on another device is copied, into the executor's own array, not into xa.
  if (!Runtime::Get().HasDevice(sim)) WEFT_SKIP_UNLESS_REQUIRED() << "the simdev test plugin is not loaded";
  NDArray xb(b, kData, sim);
  group.LoadDataBatch({{"data", xb}, {"softmax_label", label.Copy(sim)}});
  group.Forward(false);
  test::ExpectNear(test::Values(group.outputs(0)[0]), want_b, 0);
  EXPECT_EQ(test::Values(xa), a);
  EXPECT_FALSE(group.executor(0).arg_dict().at("data").SharesChunkWith(xa));
}

}  // namespace
}  // namespace weft
