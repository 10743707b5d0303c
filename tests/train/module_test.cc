// Module on Fashion-MNIST subsets: learning (Fit), checkpoints, resuming with optimizer states,
// and that splitting a batch over devices gives the same step as one device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>

#include "require.h"
#include "weft/io.h"
#include "weft/lr_scheduler.h"
#include "weft/module.h"
#include "weft/networks.h"
#include "weft/runtime.h"

namespace weft {
namespace {

namespace fs = std::filesystem;
const std::string kDir = "/usr/share/datasets/fashion-mnist/";

#define REQUIRE_FASHION_MNIST()                         \
  if (!fs::exists(kDir + "train-images-idx3-ubyte.gz")) \
  WEFT_SKIP_UNLESS_REQUIRED() << "Fashion-MNIST is not installed at " << kDir

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

// The message of the weft::Error `fn` throws ("" when it throws none).
std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::unique_ptr<Optimizer> Sgd(int batch) {
  auto opt = OptimizerRegistry::Create("sgd");
  opt->SetParam("lr", 0.1)->SetParam("momentum", 0.9)->SetParam("rescale_grad", 1.0 / batch);
  return opt;
}

// A module bound for batches of `batch` on `ctxs`, with Xavier-initialised parameters (seed 5)
// unless init is false, and an SGD optimizer in a `kv` KVStore unless opt is false.
Module MakeModule(int batch, std::vector<Context> ctxs = {Context::cpu(0)}, const std::string& kv = "local",
                  bool init = true, bool opt = true) {
  Module m(MnistMLP(), {"data"}, {"softmax_label"}, std::move(ctxs));
  m.Bind({{"data", Shape(batch, 784)}}, {{"softmax_label", Shape(batch)}});
  if (init) {
    Xavier x(Xavier::gaussian, Xavier::in, 2.0f);
    x.Seed(5);
    m.InitParams(x);
    if (opt) m.InitOptimizer(kv, Sgd(batch));
  }
  return m;
}

void Epoch(Module& m, MNISTIter& it) {
  it.Reset();
  while (it.Next()) {
    DataBatch b = it.GetDataBatch();
    m.Forward(b, true);
    m.Backward();
    m.Update();
  }
}

std::map<std::string, NDArray> Args(const Module& m) { return m.GetParams().first; }

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

TEST(Module, FitLearnsFashionMnistSubset) {
  REQUIRE_FASHION_MNIST();
  MNISTIter train = TrainData(3000, 50), test = TestData(1000, 50);
  Module m(MnistMLP(), {"data"}, {"softmax_label"}, {Context::cpu(0), Context::cpu(1)});
  Xavier x(Xavier::gaussian, Xavier::in, 2.0f);
  size_t batches = 0;
  std::vector<float> val;
  FitOptions o;
  o.num_epoch = 3;
  o.initializer = &x;
  o.optimizer_params = {{"lr", "0.1"}, {"momentum", "0.9"}};
  o.batch_end_callback = [&](const BatchEndParam&) { ++batches; };
  o.epoch_end_callback = [&](const EpochEndParam& p) {
    ASSERT_NE(p.eval_metric, nullptr);
    val.push_back(p.eval_metric->Get());
    EXPECT_EQ(p.num_samples, 3000u);
  };
  m.Fit(train, &test, o);
  EXPECT_EQ(batches, 3u * 60u);
  ASSERT_EQ(val.size(), 3u);
  std::cout << "[ info ] validation accuracy per epoch " << val[0] << " " << val[1] << " " << val[2] << "\n";
  EXPECT_GT(val[2], 0.6f);  // chance is 0.1
  Accuracy again;
  EXPECT_FLOAT_EQ(m.Score(test, again), val[2]);
}

TEST(Module, StepsOutOfOrderNameTheMissingStep) {
  Module m(MnistMLP());
  EXPECT_NE(ErrorOf([&] { m.Forward({}, false); }).find("Bind"), std::string::npos);
  m.Bind({{"data", Shape(10, 784)}}, {{"softmax_label", Shape(10)}});
  EXPECT_NE(ErrorOf([&] { m.InitOptimizer("local", Sgd(10)); }).find("InitParams"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { m.Update(); }).find("InitOptimizer"), std::string::npos);
  EXPECT_NE(ErrorOf([] { Module(MnistMLP(), {"pixels"}); }).find("'pixels' is not an argument"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { m.SetParams({}, {}); }).find("fc1_weight"), std::string::npos);
}

TEST(Module, CheckpointRoundTripGivesIdenticalPredictions) {
  REQUIRE_FASHION_MNIST();
  MNISTIter train = TrainData(500, 50), test = TestData(100, 100);
  Module m = MakeModule(50);
  Epoch(m, train);
  const std::string prefix = TempPrefix("ck");
  m.SaveCheckpoint(prefix, 1);
  ASSERT_TRUE(fs::exists(prefix + "-symbol.json"));
  ASSERT_TRUE(fs::exists(prefix + "-0001.params"));
  Checkpoint ck = LoadCheckpoint(prefix, 1);
  EXPECT_EQ(ck.arg_params.size(), m.param_names().size());
  EXPECT_EQ(ck.symbol.ListArguments(), MnistMLP().ListArguments());

  Module loaded = Module::Load(prefix, 1);
  loaded.Bind({{"data", Shape(100, 784)}}, {}, /*for_training=*/false);
  Module original = MakeModule(100, {Context::cpu(0)}, "local", false);
  auto [args, aux] = m.GetParams();
  original.SetParams(args, aux);
  std::vector<float> a, b;
  loaded.Predict(test).SyncCopyToCPU(&a);
  original.Predict(test).SyncCopyToCPU(&b);
  EXPECT_EQ(a.size(), 100u * 10u);
  EXPECT_EQ(a, b);
  // Predict read the iterator's batches in place; an explicit Forward on a training module
  // copies (MXNet's semantics: the caller may write the batch before Backward).
  EXPECT_TRUE(loaded.exec_group().executor(0).arg_dict().at("data").SharesChunkWith(test.GetData()));
  EXPECT_TRUE(original.exec_group().executor(0).arg_dict().at("data").SharesChunkWith(test.GetData()));
  original.Forward(test.GetDataBatch(), false);
  EXPECT_FALSE(original.exec_group().executor(0).arg_dict().at("data").SharesChunkWith(test.GetData()));
  std::vector<float> c;
  original.GetOutputs()[0].SyncCopyToCPU(&c);
  // (Not bitwise: the second pass over unchanged weights runs FullyConnected on oneDNN.)
  ASSERT_EQ(c.size(), b.size());
  for (size_t i = 0; i < c.size(); ++i) EXPECT_NEAR(c[i], b[i], 1e-5f) << i;
  EXPECT_THROW(LoadCheckpoint(prefix, 2), Error);
  fs::remove(prefix + "-symbol.json");
  fs::remove(prefix + "-0001.params");
}

// An iterator as DataIter allows: every Next overwrites the same two arrays (with a synchronous
// host write, which waits for queued readers). Batch k's labels are `labels[k]`.
class ReusingIter : public DataIter {
 public:
  ReusingIter(std::vector<std::vector<float>> data, std::vector<std::vector<float>> labels, int batch)
      : data_(std::move(data)),
        labels_(std::move(labels)),
        batch_(batch),
        x_(Shape(batch, 784), Context::cpu(0)),
        y_(Shape(batch), Context::cpu(0)) {}
  void BeforeFirst() override { next_ = 0; }
  bool Next() override {
    if (next_ == data_.size()) return false;
    x_.SyncCopyFromCPU(data_[next_]);
    y_.SyncCopyFromCPU(labels_[next_]);
    ++next_;
    return true;
  }
  NDArray GetData() override { return x_; }
  NDArray GetLabel() override { return y_; }
  int GetPadNum() override { return 0; }
  std::vector<int> GetIndex() override { return std::vector<int>(static_cast<size_t>(batch_), 0); }
  std::vector<std::vector<float>>& labels() { return labels_; }

 private:
  std::vector<std::vector<float>> data_, labels_;
  int batch_;
  size_t next_ = 0;
  NDArray x_, y_;
};

// Score and Predict queue batch n before reading batch n-1's results: they must still pair each
// batch's outputs with its own labels when the iterator and the next forward overwrite both. The
// labels are the module's own predictions except in batch 0, where every label is wrong: the right
// pairing scores exactly 11/12, a pairing with the next batch's labels or outputs about 0.1, and
// reading both late (batch 0 never seen) 1. Two devices, so each device's slice is paired too.
TEST(Module, ScoreAndPredictPairEveryBatchWithItsOwnLabelsWhileTheNextIsQueued) {
  constexpr int kBatch = 32, kBatches = 12;
  std::vector<std::vector<float>> data(kBatches, std::vector<float>(kBatch * 784));
  uint32_t state = 7;
  for (auto& b : data)
    for (float& v : b) v = static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) / 16777216.0f;
  Module m = MakeModule(kBatch, {Context::cpu(0), Context::cpu(1)}, "local", true, false);
  std::vector<std::vector<float>> outputs;  // batch by batch, each read before the next forward
  ReusingIter it(data, std::vector<std::vector<float>>(kBatches, std::vector<float>(kBatch, 0.f)), kBatch);
  for (int k = 0; it.Next(); ++k) {
    m.Forward(it.GetDataBatch(), false);
    outputs.emplace_back();
    m.GetOutputs()[0].SyncCopyToCPU(&outputs.back());
    for (int r = 0; r < kBatch; ++r) {
      const float* row = outputs.back().data() + r * 10;
      const auto best = static_cast<float>(std::max_element(row, row + 10) - row);
      it.labels()[static_cast<size_t>(k)][static_cast<size_t>(r)] = k == 0 ? std::fmod(best + 1, 10.f) : best;
    }
  }
  Accuracy acc;
  EXPECT_FLOAT_EQ(m.Score(it, acc), (kBatches - 1) / static_cast<float>(kBatches));
  EXPECT_EQ(acc.num_inst(), kBatch * kBatches);
  std::vector<float> predicted, expected;
  m.Predict(it).SyncCopyToCPU(&predicted);
  for (const auto& o : outputs) expected.insert(expected.end(), o.begin(), o.end());
  EXPECT_EQ(predicted, expected);
  Accuracy first3;  // num_batch stops the pipeline early: only those batches count
  EXPECT_FLOAT_EQ(m.Score(it, first3, 3), 2.0f / 3.0f);
  EXPECT_EQ(first3.num_inst(), kBatch * 3);
}

// What a training program prints and remembers at epoch ends (LogEpoch, DoCheckpoint,
// last_checkpoint), and MXNet's rescale_grad rule.
TEST(Module, TrainingProgramCallbacks) {
  Accuracy train, val;
  const NDArray labels(std::vector<float>{0, 1}, Shape(2), Context::cpu(0));
  train.Update(labels, NDArray(std::vector<float>{0.9f, 0.1f, 0.2f, 0.8f}, Shape(2, 2), Context::cpu(0)));
  val.Update(labels, NDArray(std::vector<float>{0.9f, 0.1f, 0.9f, 0.1f}, Shape(2, 2), Context::cpu(0)));
  Module m = MakeModule(50);
  EXPECT_EQ(m.last_checkpoint(), "");
  testing::internal::CaptureStdout();
  LogEpoch()({3, train, &val, 1000, 4.0, m});
  LogEpoch()({4, train, nullptr, 10, 0.5, m});
  EXPECT_EQ(testing::internal::GetCapturedStdout(),
            "Epoch[3] Train-accuracy=1.0000 Validation-accuracy=0.5000 Speed=250 samples/s Time=4.0s\n"
            "Epoch[4] Train-accuracy=1.0000 Speed=20 samples/s Time=0.5s\n");

  const std::string prefix = TempPrefix("callbacks");
  testing::internal::CaptureStdout();
  DoCheckpoint(prefix, 2)({0, train, nullptr, 10, 1.0, m});  // epoch 1 of period 2: nothing
  DoCheckpoint(prefix, 2)({1, train, nullptr, 10, 1.0, m});
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "Saved checkpoint to \"" + prefix + "-0002.params\"\n");
  EXPECT_EQ(m.last_checkpoint(), prefix + "-0002.params");
  EXPECT_FALSE(fs::exists(CheckpointParamsFile(prefix, 1)));
  EXPECT_EQ(Module::Load(prefix, 2).last_checkpoint(), prefix + "-0002.params");
  for (const char* s : {"-symbol.json", "-0002.params"}) fs::remove(prefix + s);

  const auto local = KVStore::Create("local");
  EXPECT_FLOAT_EQ(DefaultRescaleGrad(*local, 100), 0.01f);
  EXPECT_NE(ErrorOf([&] { DefaultRescaleGrad(*local, 0); }).find("positive"), std::string::npos);
}

// RequireDevices: the contexts a program asked for, or an error before any work saying what is
// missing (the GPU plugins' device notes are checked in tests/gpu through train_mnist).
TEST(Module, RequireDevicesGivesContextsOrSaysWhatIsMissing) {
  ASSERT_EQ(Runtime::Get().DeviceCount("cpu"), 4) << "module_test runs with WEFT_CPU_DEVICES=4";
  EXPECT_EQ(RequireDevices("cpu", 2), (std::vector<Context>{Context::cpu(0), Context::cpu(1)}));
  EXPECT_EQ(RequireDevices("cpu", 4).size(), 4u);
  EXPECT_EQ(ErrorOf([] { RequireDevices("cpu", 5); }), "only 4 cpu device(s) are present, 5 requested");
  const std::string none = ErrorOf([] { RequireDevices("nosuch", 1); });
  EXPECT_NE(none.find("no nosuch device is present: no loaded plugin provides it (device types: cpu"),
            std::string::npos)
      << none;
  EXPECT_NE(none.find("weft-info"), std::string::npos) << none;
  EXPECT_NE(ErrorOf([] { RequireDevices("cpu", 0); }).find("at least 1"), std::string::npos);
}

// MXNet fit.py's epoch steps: the rate drops after the last update of each listed epoch.
TEST(Module, EpochStepSchedulerStepsAtEpochEnds) {
  auto s = EpochStepScheduler({2, 3}, 10, 0.5f);
  ASSERT_NE(s, nullptr);
  s->SetLR(1.0f);
  EXPECT_FLOAT_EQ(s->GetLR(20), 1.0f);  // the last update of epoch 2 (epochs counted from 1)
  EXPECT_FLOAT_EQ(s->GetLR(21), 0.5f);
  EXPECT_FLOAT_EQ(s->GetLR(31), 0.25f);
  EXPECT_EQ(EpochStepScheduler({}, 10, 0.5f), nullptr);       // no steps: constant rate
  EXPECT_EQ(EpochStepScheduler({2}, 10, 1.0f), nullptr);      // factor 1: constant rate
  EXPECT_THROW(EpochStepScheduler({3, 2}, 10, 0.5f), Error);  // as MultiFactorScheduler
  EXPECT_THROW(EpochStepScheduler({0}, 10, 0.5f), Error);
  EXPECT_THROW(EpochStepScheduler({2}, 0, 0.5f), Error);
  EXPECT_THROW(EpochStepScheduler({2}, 10, 2.0f), Error);
  EXPECT_THROW(EpochStepScheduler({100000}, 100000, 0.5f), Error);  // 1e10 updates
}

TEST(Module, ResumeContinuesFromTheSavedEpoch) {
  REQUIRE_FASHION_MNIST();
  const std::string prefix = TempPrefix("resume");
  // Two epochs straight.
  MNISTIter it = TrainData(400, 50);
  Module straight = MakeModule(50);
  Epoch(straight, it);
  Epoch(straight, it);
  // One epoch, checkpoint with optimizer states, a fresh process-like start, one more epoch.
  // (The iterator shuffles once, so every epoch and every Reset sees the same order.)
  Module first = MakeModule(50);
  Epoch(first, it);
  DoCheckpoint(prefix, 1, true)({0, Accuracy(), nullptr, 400, 1.0, first});  // epoch 0 ends: saves as 1
  Module resumed = Module::Load(prefix, 1, /*load_optimizer_states=*/true);
  resumed.Bind({{"data", Shape(50, 784)}}, {{"softmax_label", Shape(50)}});
  resumed.InitOptimizer("local", OptimizerRegistry::Create("sgd"));
  EXPECT_EQ(resumed.kvstore().optimizer()->num_update(), 8u);
  Epoch(resumed, it);
  EXPECT_LT(MaxDiff(Args(straight), Args(resumed)), 1e-5f);
  // Without the momentum states the second epoch differs: the test can fail.
  Module cold = Module::Load(prefix, 1);
  cold.Bind({{"data", Shape(50, 784)}}, {{"softmax_label", Shape(50)}});
  cold.InitOptimizer("local", Sgd(50));
  Epoch(cold, it);
  EXPECT_GT(MaxDiff(Args(straight), Args(cold)), 1e-4f);
  for (const char* s : {"-symbol.json", "-0001.params", "-0001.states"}) fs::remove(prefix + s);
}

TEST(Module, SplitBatchMatchesOneDevice) {
  REQUIRE_FASHION_MNIST();
  std::vector<std::pair<std::vector<Context>, std::string>> setups{
      {{Context::cpu(0), Context::cpu(1), Context::cpu(2)}, "local"}, {{Context::cpu(1), Context::cpu(3)}, "device"}};
  if (Runtime::Get().DeviceCount("simdev") >= 2) {
    setups.push_back({{Context("simdev", 0), Context("simdev", 1)}, "device"});
    setups.push_back({{Context("simdev", 0), Context::cpu(2)}, "local"});
  }
  MNISTIter it = TrainData(200, 50);
  Module one = MakeModule(50);
  Epoch(one, it);
  for (const auto& [ctxs, kv] : setups) {
    Module many = MakeModule(50, ctxs, kv);
    Epoch(many, it);
    EXPECT_LT(MaxDiff(Args(one), Args(many)), 1e-5f) << ctxs.size() << " devices, " << kv;
  }
}

// A parameter set to NaN stops Fit at the next check, naming it, before the epoch-end callback
// (where checkpoints are written); with the check off the same run finishes.
TEST(Module, FitStopsNamingTheFirstNonFiniteParameter) {
  REQUIRE_FASHION_MNIST();
  MNISTIter train = TrainData(200, 50);
  auto poisoned = [] {
    Module m = MakeModule(50, {Context::cpu(0)}, "local", true, false);
    EXPECT_EQ(m.FirstNonFiniteParam(), "");
    auto [args, aux] = m.GetParams();
    std::vector<float> w;
    args.at("fc2_bias").SyncCopyToCPU(&w);
    w[3] = std::numeric_limits<float>::infinity();
    args["fc2_bias"] = NDArray(w, args.at("fc2_bias").GetShape(), Context::cpu(0));
    m.SetParams(args, aux);
    EXPECT_EQ(m.FirstNonFiniteParam(), "fc2_bias");
    m.InitOptimizer("local", Sgd(50));
    return m;
  };
  int epochs_ended = 0;
  FitOptions o;
  o.num_epoch = 2;
  o.nan_check_every = 2;
  o.epoch_end_callback = [&](const EpochEndParam&) { ++epochs_ended; };
  Module m = poisoned();
  const std::string error = ErrorOf([&] { m.Fit(train, nullptr, o); });
  // After two steps the Inf has spread backwards into every layer: fc1_weight comes first.
  EXPECT_NE(error.find("epoch 0 batch 2: parameter 'fc1_weight' became NaN or infinite"), std::string::npos) << error;
  EXPECT_EQ(epochs_ended, 0);
  o.nan_check_every = 0;
  Module unchecked = poisoned();
  EXPECT_TRUE(unchecked.Fit(train, nullptr, o));
  EXPECT_EQ(epochs_ended, 2);
  EXPECT_NE(unchecked.FirstNonFiniteParam(), "");
}

TEST(Module, FitStopsBetweenStepsWhenAsked) {
  REQUIRE_FASHION_MNIST();
  MNISTIter train = TrainData(200, 50);  // 4 batches an epoch
  Module m = MakeModule(50);
  size_t batches = 0;
  std::vector<int> ended;
  FitOptions o;
  o.num_epoch = 3;
  o.batch_end_callback = [&](const BatchEndParam&) { ++batches; };
  o.epoch_end_callback = [&](const EpochEndParam& p) { ended.push_back(p.epoch); };
  o.stop_requested = [&] { return batches == 6; };  // in the middle of the second epoch
  EXPECT_FALSE(m.Fit(train, nullptr, o));
  EXPECT_EQ(batches, 6u);
  EXPECT_EQ(ended, std::vector<int>{0});  // the unfinished epoch 1 is not reported (no checkpoint)
  EXPECT_EQ(m.kvstore().optimizer()->num_update(), 6u);
  o.begin_epoch = 4;
  EXPECT_NE(ErrorOf([&] { m.Fit(train, nullptr, o); }).find("begin_epoch 4 must be in 0..num_epoch (3)"),
            std::string::npos);
}

TEST(Module, LoadingMissingOptimizerStatesIsAnErrorAtLoad) {
  Module m = MakeModule(10);
  const std::string prefix = TempPrefix("nostates");
  m.SaveCheckpoint(prefix, 1);
  const std::string error = ErrorOf([&] { Module::Load(prefix, 1, /*load_optimizer_states=*/true); });
  EXPECT_NE(error.find(prefix + "-0001.states is missing"), std::string::npos) << error;
  EXPECT_NE(error.find("load_optimizer_states=false"), std::string::npos) << error;
  EXPECT_EQ(ErrorOf([&] { Module::Load(prefix, 1); }), "");
  for (const char* s : {"-symbol.json", "-0001.params"}) fs::remove(prefix + s);
}

TEST(Module, NonFiniteLearningRateFactorIsRefused) {
  for (float f : {std::nanf(""), -std::numeric_limits<float>::infinity()})
    EXPECT_NE(ErrorOf([&] { MultiFactorScheduler({10}, f); }).find("finite"), std::string::npos) << f;
}

}  // namespace
}  // namespace weft
