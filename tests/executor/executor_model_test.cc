// MXNet 1.2.0's VGG-like network (fixture model1_vgg_like.json) bound at batch 32, 300x300,
// forward and backward on cpu: the big-graph smoke test (run once).
// WEFT_TEST_MODEL_BATCH and WEFT_TEST_MODEL_SIZE shrink it (the sanitizer preset runs the same
// graph at batch 2, 64x64: every node and plan decision, a fraction of the memory and time).
#include <cmath>
#include <cstdio>
#include <string>

#include "test_util.h"
#include "weft/env.h"

namespace weft {
namespace {

TEST(ExecutorModel, VggLikeBindsAndRunsForwardBackward) {
  const int64_t batch = GetEnvInt("WEFT_TEST_MODEL_BATCH", 32);
  const int64_t size = GetEnvInt("WEFT_TEST_MODEL_SIZE", 300);
  std::printf("VGG-like at batch %lld, %lldx%lld\n", static_cast<long long>(batch), static_cast<long long>(size),
              static_cast<long long>(size));
  Symbol net = Symbol::Load(std::string(WEFT_SHARED_DIR) + "/fixtures/mxnet/model1_vgg_like.json");
  const Context cpu = Context::cpu();
  auto e = Executor::SimpleBind(net, cpu, {{"data", Shape{batch, 3, size, size}}}, "write",
                                {{"data", "null"}, {net.ListArguments().back(), "null"}});
  EXPECT_LT(e->planned_bytes(), e->unshared_bytes());
  // Small deterministic weights so activations stay finite.
  uint32_t seed = 7;
  for (auto [name, a] : e->arg_dict()) {
    std::vector<float> v(a.Size());
    for (float& x : v) {
      seed = seed * 1664525u + 1013904223u;
      x = (static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) - 0.5f) * 0.05f;
    }
    if (name.find("label") != std::string::npos)
      for (float& x : v) x = 1;
    a.SyncCopyFromCPU(v);
  }
  e->Forward(true);
  e->Backward();
  std::vector<float> out = test::Values(e->outputs[0]);
  ASSERT_EQ(out.size() % static_cast<size_t>(batch), 0u);
  const size_t classes = out.size() / static_cast<size_t>(batch);
  float row = 0;
  for (size_t i = 0; i < classes; ++i) row += out[i];
  EXPECT_NEAR(row, 1.f, 1e-4);
  for (const auto& [name, g] : e->grad_dict()) {
    if (g.is_none()) continue;
    std::vector<float> v = test::Values(g);
    for (float x : v) ASSERT_TRUE(std::isfinite(x)) << name;
  }
  std::string dbg = e->DebugStr();
  EXPECT_NE(dbg.find("MB allocated"), std::string::npos);
}

}  // namespace
}  // namespace weft
