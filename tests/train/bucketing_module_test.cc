// BucketingModule (issue 32): three buckets of one network over sequences of 10, 20 and 30 steps
// train the same weights to the accuracy of one bucket alone, bind in the default bucket's
// memory (measured in the storage pool, against separately bound modules as the control), see
// each other's updates, and refuse a bucket whose parameters differ.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>

#include "ndarray_read.h"
#include "weft/bucketing_module.h"
#include "weft/operator.h"
#include "weft/storage.h"

namespace weft {
namespace {

constexpr int kBatch = 64, kFeatures = 16, kClasses = 4, kHidden = 256;

// A sequence of `len` steps through a shared per-step layer, averaged over the steps: the same
// parameters for every length (FullyConnected with flatten=false acts on the last axis only).
// `hidden` differs only in the test of a bucket whose parameters do not match.
Symbol SequenceNet(int len, int hidden = kHidden) {
  (void)len;  // the shapes come from the bound data; the graph is the same for every length
  Symbol data = Symbol::Variable("data");  // (batch, len, features)
  Symbol h = Operator("FullyConnected")
                 .SetParam("num_hidden", hidden)
                 .SetParam("flatten", false)
                 .SetInput("data", data)
                 .CreateSymbol("step_fc");
  h = Operator("Activation").SetParam("act_type", "relu").SetInput("data", h).CreateSymbol("step_relu");
  h = Operator("mean").SetParam("axis", 1).SetInput("data", h).CreateSymbol("over_steps");
  h = Operator("FullyConnected").SetParam("num_hidden", kClasses).SetInput("data", h).CreateSymbol("out_fc");
  return Operator("SoftmaxOutput")
      .SetInput("data", h)
      .SetInput("label", Symbol::Variable("softmax_label"))
      .CreateSymbol("softmax");
}

// A batch of `len`-step sequences: class c's steps are its mean vector plus noise several times
// larger, so one step says little and the average over steps says the class.
DataBatch MakeBatch(std::mt19937& rng, int len) {
  std::normal_distribution<float> noise(0.0f, 2.5f);
  std::uniform_int_distribution<int> cls(0, kClasses - 1);
  std::vector<float> x(static_cast<size_t>(kBatch) * len * kFeatures), y(kBatch);
  for (int b = 0; b < kBatch; ++b) {
    const int c = cls(rng);
    y[b] = static_cast<float>(c);
    for (int t = 0; t < len; ++t)
      for (int f = 0; f < kFeatures; ++f)
        x[(static_cast<size_t>(b) * len + t) * kFeatures + f] = (f % kClasses == c ? 1.0f : 0.0f) + noise(rng);
  }
  DataBatch batch;
  batch.data = NDArray(x.data(), Shape(kBatch, len, kFeatures), Context::cpu(0));
  batch.label = NDArray(y.data(), Shape(kBatch), Context::cpu(0));
  batch.bucket_key = len;
  return batch;
}

std::unique_ptr<Optimizer> Sgd() {
  auto opt = OptimizerRegistry::Create("sgd");
  opt->SetParam("lr", 0.1)->SetParam("momentum", 0.9)->SetParam("rescale_grad", 1.0 / kBatch);
  return opt;
}

std::map<std::string, Shape> DataShape(int len) { return {{"data", Shape(kBatch, len, kFeatures)}}; }
std::map<std::string, Shape> LabelShape() { return {{"softmax_label", Shape(kBatch)}}; }

uint64_t BytesInUse() {
  NDArray::WaitAll();
  return Storage::Get()->Stats(Context::cpu(0)).bytes_in_use;
}

// Validation accuracy over 20 batches of each length, in `lengths`, through `forward` (which
// runs one batch and returns the outputs).
float BucketAccuracy(const std::vector<int>& lengths, const std::function<NDArray(const DataBatch&)>& forward) {
  std::mt19937 rng(99);
  size_t right = 0, total = 0;
  for (int len : lengths)
    for (int i = 0; i < 20; ++i) {
      DataBatch b = MakeBatch(rng, len);
      std::vector<float> p = test::Read(forward(b)), y = test::Read(b.label);
      for (int r = 0; r < kBatch; ++r) {
        int best = 0;
        for (int c = 1; c < kClasses; ++c)
          if (p[r * kClasses + c] > p[r * kClasses + best]) best = c;
        right += best == static_cast<int>(y[r]);
        ++total;
      }
    }
  return static_cast<float>(right) / static_cast<float>(total);
}

TEST(BucketingModule, ThreeBucketsTrainToTheSingleBucketAccuracy) {
  const int steps = 150;
  // One bucket: batches of 30 steps only.
  Module single(SequenceNet(30));
  single.Bind(DataShape(30), LabelShape());
  Xavier init;
  single.InitParams(init);
  single.InitOptimizer("local", Sgd());
  std::mt19937 rng(1);
  for (int s = 0; s < steps; ++s) {
    DataBatch b = MakeBatch(rng, 30);
    single.Forward(b, true);
    single.Backward();
    single.Update();
  }
  // Three buckets, the batches' lengths cycling 10, 20, 30.
  BucketingModule mod([](int len) { return BucketSymbol{SequenceNet(len)}; }, 30);
  mod.Bind(DataShape(30), LabelShape());
  Xavier init2;
  mod.InitParams(init2);
  mod.InitOptimizer("local", Sgd());
  std::mt19937 rng2(1);
  const int lengths[] = {10, 20, 30};
  for (int s = 0; s < steps; ++s) {
    DataBatch b = MakeBatch(rng2, lengths[s % 3]);
    mod.Forward(b, true);
    mod.Backward();
    mod.Update();
  }
  EXPECT_EQ(mod.bucket_keys(), (std::vector<int>{30, 10, 20}));
  const float single_acc = BucketAccuracy({30}, [&](const DataBatch& b) {
    single.Forward(b, false);
    return single.GetOutputs()[0];
  });
  auto bucketed = [&](const DataBatch& b) {
    mod.Forward(b, false);
    return mod.GetOutputs()[0];
  };
  const float bucket_acc = BucketAccuracy({30}, bucketed), bucket_acc_all = BucketAccuracy({10, 20, 30}, bucketed);
  // Chance is 0.25; the averaged steps separate the classes well (the single bucket reaches ~0.95).
  std::printf("validation accuracy on 30 steps: one bucket %.4f, three buckets %.4f (%.4f over 10/20/30 steps)\n",
              single_acc, bucket_acc, bucket_acc_all);
  EXPECT_GT(single_acc, 0.8f);
  EXPECT_GE(bucket_acc, single_acc - 0.02f) << "single bucket " << single_acc << ", three buckets " << bucket_acc;
  EXPECT_GT(bucket_acc_all, 0.8f);
}

TEST(BucketingModule, BucketsBindInTheDefaultBucketsMemory) {
  const uint64_t before = BytesInUse();
  BucketingModule mod([](int len) { return BucketSymbol{SequenceNet(len)}; }, 30);
  mod.Bind(DataShape(30), LabelShape());
  Xavier init;
  mod.InitParams(init);
  const uint64_t largest = BytesInUse() - before;
  mod.SwitchBucket(10, DataShape(10), LabelShape());
  mod.SwitchBucket(20, DataShape(20), LabelShape());
  const uint64_t all = BytesInUse() - before;
  EXPECT_LE(static_cast<double>(all), 1.1 * static_cast<double>(largest))
      << "three buckets take " << all << " bytes, the largest alone " << largest;
  EXPECT_EQ(mod.module(10).exec_group().executor(0).allocated_bytes(), 0u)
      << "the 10-step bucket's planned values all fit in the 30-step bucket's blocks";

  // The control: the same two buckets bound on their own take memory of their own, so the
  // bound above is one the measure can miss.
  const uint64_t before_control = BytesInUse();
  Module alone10(SequenceNet(10)), alone20(SequenceNet(20));
  alone10.Bind(DataShape(10), LabelShape());
  alone20.Bind(DataShape(20), LabelShape());
  const uint64_t control = BytesInUse() - before_control;
  EXPECT_GT(static_cast<double>(control), 0.5 * static_cast<double>(largest));
  std::printf(
      "bytes in use: the 30-step bucket %llu, all three buckets %llu, the 10- and 20-step buckets bound "
      "alone %llu\n",
      static_cast<unsigned long long>(largest), static_cast<unsigned long long>(all),
      static_cast<unsigned long long>(control));
}

TEST(BucketingModule, BucketsShareParametersAndUpdates) {
  BucketingModule mod([](int len) { return BucketSymbol{SequenceNet(len)}; }, 30);
  mod.Bind(DataShape(30), LabelShape());
  Xavier init;
  mod.InitParams(init);
  mod.InitOptimizer("local", Sgd());
  std::mt19937 rng(3);
  DataBatch probe = MakeBatch(rng, 10);
  mod.Forward(probe, false);
  const std::vector<float> out_before = test::Read(mod.GetOutputs()[0]);
  // One step trained in the 20-step bucket changes what the 10-step bucket computes.
  DataBatch b = MakeBatch(rng, 20);
  mod.Forward(b, true);
  mod.Backward();
  mod.Update();
  mod.Forward(probe, false);
  const std::vector<float> out_after = test::Read(mod.GetOutputs()[0]);
  double moved = 0;
  for (size_t i = 0; i < out_after.size(); ++i) moved += std::fabs(out_after[i] - out_before[i]);
  EXPECT_GT(moved, 1e-3) << "the 10-step bucket did not see the update made through the 20-step one";
  // Every bucket's parameter arrays are the default bucket's.
  const auto [args10, aux10] = mod.module(10).GetParams();
  const auto [args30, aux30] = mod.GetParams();
  for (const auto& [name, a] : args30) EXPECT_EQ(test::Read(a), test::Read(args10.at(name))) << name;
}

TEST(BucketingModule, RefusesABucketWithOtherParameterShapes) {
  BucketingModule mod([](int len) { return BucketSymbol{SequenceNet(len, len == 30 ? kHidden : 32)}; }, 30);
  mod.Bind(DataShape(30), LabelShape());
  try {
    mod.SwitchBucket(10, DataShape(10), LabelShape());
    FAIL() << "a bucket with other parameter shapes was bound";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("every bucket needs the same parameter shapes"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(mod.module(10), Error);
  EXPECT_THROW(BucketingModule([](int) { return BucketSymbol{}; }, -1), Error);
}

}  // namespace
}  // namespace weft
