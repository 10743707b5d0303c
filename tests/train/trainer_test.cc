// The data-parallel trainer on Fashion-MNIST subsets: learning, checkpoints, resuming, and that
// splitting a batch over devices gives the same step as one device.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "train/checkpoint.h"
#include "train/data_parallel.h"
#include "train/networks.h"
#include "weft/io.h"
#include "weft/runtime.h"

namespace weft::train {
namespace {

namespace fs = std::filesystem;
const std::string kDir = "/usr/share/datasets/fashion-mnist/";

#define REQUIRE_FASHION_MNIST() \
  if (!fs::exists(kDir + "train-images-idx3-ubyte.gz")) GTEST_SKIP() << "Fashion-MNIST is not installed at " << kDir

std::string TempPrefix(const std::string& name) {
  return (fs::temp_directory_path() / fmt::format("weft-trainer-{}-{}", ::getpid(), name)).string();
}

MNISTIter TrainData(size_t n, int batch) {
  return MNISTIter(kDir + "train-images-idx3-ubyte.gz", kDir + "train-labels-idx1-ubyte.gz",
                   {.batch_size = batch, .shuffle = true, .flat = true, .seed = 1, .max_samples = n});
}
MNISTIter TestData(size_t n, int batch) {
  return MNISTIter(kDir + "t10k-images-idx3-ubyte.gz", kDir + "t10k-labels-idx1-ubyte.gz",
                   {.batch_size = batch, .shuffle = false, .flat = true, .max_samples = n});
}

std::unique_ptr<DataParallelTrainer> MakeTrainer(int batch, std::vector<Context> ctxs = {Context::cpu(0)},
                                                 const std::string& kv = "local", bool init = true) {
  DataParallelOptions o;
  o.contexts = std::move(ctxs);
  o.kvstore = kv;
  auto t = std::make_unique<DataParallelTrainer>(MnistMLP(), Shape(batch, 784), o);
  if (init) {
    Xavier x(Xavier::gaussian, Xavier::in, 2.0f);
    x.Seed(5);
    t->InitParams(x);
  }
  return t;
}

std::unique_ptr<Optimizer> Sgd(int batch) {
  auto opt = OptimizerRegistry::Create("sgd");
  opt->SetParam("lr", 0.1)->SetParam("momentum", 0.9)->SetParam("rescale_grad", 1.0 / batch);
  return opt;
}

void Epoch(DataParallelTrainer& t, MNISTIter& it) {
  it.Reset();
  while (it.Next()) t.TrainStep(it.GetData(), it.GetLabel());
}

float Evaluate(DataParallelTrainer& t, MNISTIter& it) {
  Accuracy acc;
  it.Reset();
  while (it.Next()) {
    t.Forward(it.GetData());
    t.UpdateMetric(acc, it.GetLabel());
  }
  return acc.Get();
}

float MaxDiff(const std::map<std::string, NDArray>& a, const std::map<std::string, NDArray>& b) {
  float worst = 0;
  for (const auto& [name, x] : a) {
    std::vector<float> va, vb;
    x.SyncCopyToCPU(&va);
    b.at(name).SyncCopyToCPU(&vb);
    for (size_t i = 0; i < va.size(); ++i) worst = std::max(worst, std::abs(va[i] - vb[i]));
  }
  return worst;
}

TEST(Trainer, LearnsFashionMnistSubset) {
  REQUIRE_FASHION_MNIST();
  MNISTIter train = TrainData(3000, 50), test = TestData(1000, 50);
  auto t = MakeTrainer(50, {Context::cpu(0), Context::cpu(1)});
  t->SetOptimizer(Sgd(50));
  const float before = Evaluate(*t, test);
  for (int e = 0; e < 3; ++e) Epoch(*t, train);
  const float after = Evaluate(*t, test);
  std::cout << "[ info ] validation accuracy " << before << " -> " << after << "\n";
  EXPECT_GT(after, 0.6f);  // chance is 0.1
}

TEST(Trainer, CheckpointRoundTripGivesIdenticalPredictions) {
  REQUIRE_FASHION_MNIST();
  MNISTIter train = TrainData(500, 50), test = TestData(100, 100);
  auto t = MakeTrainer(50);
  t->SetOptimizer(Sgd(50));
  Epoch(*t, train);
  const std::string prefix = TempPrefix("ck");
  SaveCheckpoint(prefix, 1, MnistMLP(), t->ArgParams(), t->AuxParams());
  ASSERT_TRUE(fs::exists(prefix + "-symbol.json"));
  ASSERT_TRUE(fs::exists(prefix + "-0001.params"));
  Checkpoint ck = LoadCheckpoint(prefix, 1);
  EXPECT_EQ(ck.arg_params.size(), t->param_names().size());
  EXPECT_EQ(ck.symbol.ListArguments(), MnistMLP().ListArguments());

  DataParallelOptions o;
  DataParallelTrainer loaded(ck.symbol, Shape(100, 784), o);
  loaded.SetParams(ck.arg_params, ck.aux_params);
  auto original = MakeTrainer(100, {Context::cpu(0)}, "local", false);
  original->SetParams(t->ArgParams(), t->AuxParams());
  test.Reset();
  ASSERT_TRUE(test.Next());
  loaded.Forward(test.GetData());
  original->Forward(test.GetData());
  std::vector<float> a, b;
  loaded.Outputs().SyncCopyToCPU(&a);
  original->Outputs().SyncCopyToCPU(&b);
  EXPECT_EQ(a, b);
  EXPECT_THROW(LoadCheckpoint(prefix, 2), Error);
  fs::remove(prefix + "-symbol.json");
  fs::remove(prefix + "-0001.params");
}

TEST(Trainer, ResumeContinuesFromTheSavedEpoch) {
  REQUIRE_FASHION_MNIST();
  const std::string prefix = TempPrefix("resume");
  // Two epochs straight.
  MNISTIter it = TrainData(400, 50);
  auto straight = MakeTrainer(50);
  straight->SetOptimizer(Sgd(50));
  Epoch(*straight, it);
  Epoch(*straight, it);
  // One epoch, checkpoint with optimizer states, a fresh process-like start, one more epoch.
  // (The iterator shuffles once, so every epoch and every Reset sees the same order.)
  auto first = MakeTrainer(50);
  first->SetOptimizer(Sgd(50));
  Epoch(*first, it);
  SaveCheckpoint(prefix, 1, MnistMLP(), first->ArgParams(), first->AuxParams());
  first->kvstore().SaveOptimizerStates(prefix + "-0001.states", true);
  auto resumed = MakeTrainer(50, {Context::cpu(0)}, "local", false);
  Checkpoint ck = LoadCheckpoint(prefix, 1);
  resumed->SetParams(ck.arg_params, ck.aux_params);
  resumed->SetOptimizer(OptimizerRegistry::Create("sgd"));
  resumed->kvstore().LoadOptimizerStates(prefix + "-0001.states");
  EXPECT_EQ(resumed->kvstore().optimizer()->num_update(), 8u);
  Epoch(*resumed, it);
  EXPECT_LT(MaxDiff(straight->ArgParams(), resumed->ArgParams()), 1e-5f);
  // Without the momentum states the second epoch differs: the test can fail.
  auto cold = MakeTrainer(50, {Context::cpu(0)}, "local", false);
  cold->SetParams(ck.arg_params, ck.aux_params);
  cold->SetOptimizer(Sgd(50));
  Epoch(*cold, it);
  EXPECT_GT(MaxDiff(straight->ArgParams(), cold->ArgParams()), 1e-4f);
  for (const char* s : {"-symbol.json", "-0001.params", "-0001.states"}) fs::remove(prefix + s);
}

TEST(Trainer, SplitBatchMatchesOneDevice) {
  REQUIRE_FASHION_MNIST();
  std::vector<std::pair<std::vector<Context>, std::string>> setups{
      {{Context::cpu(0), Context::cpu(1), Context::cpu(2)}, "local"}, {{Context::cpu(1), Context::cpu(3)}, "device"}};
  if (Runtime::Get().DeviceCount("simdev") >= 2) {
    setups.push_back({{Context("simdev", 0), Context("simdev", 1)}, "device"});
    setups.push_back({{Context("simdev", 0), Context::cpu(2)}, "local"});
  }
  MNISTIter it = TrainData(200, 50);
  auto one = MakeTrainer(50);
  one->SetOptimizer(Sgd(50));
  Epoch(*one, it);
  for (const auto& [ctxs, kv] : setups) {
    auto many = MakeTrainer(50, ctxs, kv);
    many->SetOptimizer(Sgd(50));
    Epoch(*many, it);
    EXPECT_LT(MaxDiff(one->ArgParams(), many->ArgParams()), 1e-5f) << ctxs.size() << " devices, " << kv;
  }
}

}  // namespace
}  // namespace weft::train
