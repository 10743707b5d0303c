// Pieces of the shared GPU kernel layer (plugins/gpu_common) that the conformance cases are too
// small to reach, run on the host as the gpuhost plugin runs them: the two-pass reduction used
// when a reduction has few outputs (ReduceParts > 1), the index walk (IndexPlan::Start / Next)
// every reduction uses, and the moving-statistics update of the CUDA plugin's cuDNN BatchNorm.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "gpu_broadcast.h"
#include "gpu_launch_host.h"
#include "gpu_norm_batch_norm.h"
#include "gpu_strided.h"

namespace {

using namespace weft::host;  // NOLINT: the layer's host build lives in weft::host

TEST(GpuLayerIndexPlan, NextWalksWhatOffsetsComputes) {
  const Shape shape = {3, 1, 4, 5};
  const IndexPlan<2> p = MakeIndexPlan<2>(shape, {RowMajorStrides(shape), Shape{0, 0, 7, 1}});
  int64_t idx[WEFT_MAX_NDIM], off[2], want[2];
  p.Start(0, idx, off);
  for (int64_t i = 0; i < p.Size(); ++i) {
    p.Offsets(i, want);
    ASSERT_EQ(off[0], want[0]) << "item " << i;
    ASSERT_EQ(off[1], want[1]) << "item " << i;
    int64_t idx2[WEFT_MAX_NDIM], off2[2];
    p.Start(i, idx2, off2);  // a walk may start anywhere
    ASSERT_EQ(off2[0], want[0]);
    p.Next(idx, off);
  }
}

TEST(GpuLayerReduce, PartsSplitOnlyLargeReductionsWithFewOutputs) {
  EXPECT_EQ(ReduceParts(10, 100), 1);
  EXPECT_EQ(ReduceParts(1, 1 << 20), 4096) << "one output: 256 elements per part";
  EXPECT_EQ(ReduceParts(1, 1ll << 30), 65536) << "at most ~64K work items";
  EXPECT_EQ(ReduceParts(40000, 1 << 20), 1) << "enough outputs already";
  EXPECT_EQ(ReduceParts(0, 1 << 20), 1);
}

// Sum, mean-like scale and max (with a NaN) over several axis choices: two passes give the one-pass
// result (sums within float rounding, max exactly).
TEST(GpuLayerReduce, TwoPassesMatchOnePass) {
  const Shape shape = {3, 700, 5};
  std::vector<float> x(3 * 700 * 5);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : x) v = u(rng);
  const weft::sdk::DeviceCall call{};
  for (const std::vector<bool>& reduced :
       {std::vector<bool>{true, true, true}, {false, true, false}, {true, true, false}, {false, true, true}}) {
    const ReducePlan<3> plan = MakeReducePlan<3>(shape, reduced, {RowMajorStrides(shape), Shape(3, 0), Shape(3, 0)});
    int64_t outputs = 1;
    for (size_t a = 0; a < shape.size(); ++a) outputs *= reduced[a] ? 1 : shape[a];
    const int64_t parts = ReduceParts(outputs, plan.red_count);
    ASSERT_GT(parts, 1) << "the case must take the two-pass path";
    for (bool max : {false, true}) {
      if (max) x[1234] = NAN;
      const float scale = max ? 1.0f : 0.5f;
      std::vector<float> one(outputs), two(outputs, 3.0f), partials(outputs * parts);
      HostLaunch::Map(call, outputs,
                      ReduceMap<float, ReqWrite>{Term::kIdentity, BinOp::kAdd, max, scale, plan, x.data(), nullptr,
                                                 nullptr, one.data()});
      ReduceMap<float, ReqWrite> first{Term::kIdentity, BinOp::kAdd, max,     1.0f,           plan,
                                       x.data(),        nullptr,     nullptr, partials.data()};
      first.parts = parts;
      HostLaunch::Map(call, outputs * parts, first);
      HostLaunch::Map(call, outputs, ReducePartsMap<float, ReqAdd>{max, scale, parts, partials.data(), two.data()});
      for (int64_t k = 0; k < outputs; ++k) {
        if (std::isnan(one[k])) {
          EXPECT_TRUE(std::isnan(two[k])) << "NaN wins in both passes, output " << k;
          continue;
        }
        EXPECT_NEAR(two[k] - 3.0f, one[k], 1e-4f * (1.0f + std::fabs(one[k]))) << "output " << k << " max " << max;
      }
      x[1234] = 0.25f;
    }
  }
}

TEST(GpuLayerBatchNorm, MovingUpdateFromSavedInvStdIsTheBatchVariance) {
  BnShape p;
  p.c = 2, p.eps = 1e-3f, p.momentum = 0.9f;
  const float mean[2] = {0.5f, -2.0f};
  const double var[2] = {0.04, 3.0};
  float inv_std[2];
  for (int c = 0; c < 2; ++c) inv_std[c] = static_cast<float>(1.0 / std::sqrt(var[c] + p.eps));
  float mm[2] = {1.0f, 1.0f}, mv[2] = {2.0f, 2.0f};
  HostLaunch::Map(weft::sdk::DeviceCall{}, 2, BnMovingUpdateMap{p, mean, inv_std, mm, mv});
  for (int c = 0; c < 2; ++c) {
    EXPECT_NEAR(mm[c], 0.9 * 1.0 + 0.1 * mean[c], 1e-6);
    EXPECT_NEAR(mv[c], 0.9 * 2.0 + 0.1 * var[c], 1e-6) << "the biased batch variance, as the cpu's";
  }
}

}  // namespace
