// Run-time ISA dispatch (plugins/cpu/kernels/isa_dispatch.h). Where a second path exists (AVX2+FMA,
// AVX-512, up to what this machine runs and WEFT_CPU_ISA allows) it is forced through the test hook
// and the dispatched kernels (element-wise, broadcast, activation, reduction, softmax, pooling,
// optimizer) must give the baseline's results: bit for bit where a loop has no multiply feeding
// an add, to float rounding (FMA contraction) elsewhere. The baseline itself is checked against
// independent references by the kernel tests and the conformance suite, not here. Sanitizer builds
// have the baseline only: the comparisons are not compiled there.
//
// The hook must refuse the levels above the ceiling (the machine's level, lowered by WEFT_CPU_ISA).
// On a machine that has every level nothing is above it, so the test runs itself again with
// WEFT_CPU_ISA=baseline, where AVX2 and AVX-512 are above the ceiling.
#include "isa_dispatch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "nn_test_util.h"
#include "run_self.h"

namespace wtest {
namespace {

using weft::cpu::isa::Level;

// Restores the level the plugin chose at load, whatever the test did.
class IsaDispatch : public ::testing::Test {
 protected:
  void TearDown() override { weft::cpu::isa::SetActiveForTesting(initial_); }
  const Level initial_ = weft::cpu::isa::Active();
};

#ifdef WEFT_CPU_ISA_DISPATCH
struct Case {
  std::string name;
  bool exact;  // no multiply-add in the loop: every variant must agree bit for bit
  std::function<std::vector<float>()> run;
};

std::vector<float> Concat(const std::vector<Buf>& bufs) {
  std::vector<float> all;
  for (const Buf& b : bufs) {
    std::vector<float> f = b.floats();
    all.insert(all.end(), f.begin(), f.end());
  }
  return all;
}

// Sizes with vector bodies and remainders for every width (4, 8, 16 lanes).
std::vector<Case> Cases() {
  std::mt19937 rng(1234);
  const int64_t n = 1000 + 13;
  Buf a = Buf::F({n}, Random(rng, n, -4.0f, 4.0f));
  Buf b = Buf::F({n}, Random(rng, n, 0.5f, 2.0f));
  Buf m = Buf::F({n}, Random(rng, n, -0.1f, 0.1f));
  Buf rows = Buf::F({37, 27}, Random(rng, 37 * 27, -3.0f, 3.0f));
  Buf col = Buf::F({37, 1}, Random(rng, 37, -3.0f, 3.0f));
  Buf img = Buf::F({3, 5, 24, 24}, Random(rng, 3 * 5 * 24 * 24, -2.0f, 2.0f));
  Buf pooled_grad = Buf::F({3, 5, 12, 12}, Random(rng, 3 * 5 * 12 * 12, -1.0f, 1.0f));
  Buf label = Buf::F({37}, std::vector<float>(37, 3.0f));
  const Attrs pool = {{"kernel", "(2,2)"}, {"stride", "(2,2)"}, {"pool_type", "max"}};
  const Attrs avg_pool = {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}, {"pool_type", "avg"}};
  auto unary = [=](const std::string& op, bool exact) {
    return Case{op, exact, [=] { return Concat(RunOp(op, {}, {a}, {{n}})); }};
  };
  auto act = [=](const std::string& type) {
    return Case{"Activation " + type, type == "relu", [=] {
                  Attrs at = {{"act_type", type}};
                  std::vector<Buf> y = RunOp("Activation", at, {a}, {{n}});
                  std::vector<Buf> gx = RunOp("_backward_Activation", at, {b, y[0]}, {{n}});
                  return Concat({y[0], gx[0]});
                }};
  };
  return {
      unary("tanh", false),
      unary("sigmoid", false),
      unary("exp", false),
      unary("relu", true),
      {"elemwise_add", true,
       [=] {
         return Concat(RunOp("elemwise_add", {}, {a, b}, {{n}}));
       }},
      {"elemwise_mul", true,
       [=] {
         return Concat(RunOp("elemwise_mul", {}, {a, b}, {{n}}));
       }},
      {"broadcast_mul", true,
       [=] {
         return Concat(RunOp("broadcast_mul", {}, {rows, col}, {{37, 27}}));
       }},
      act("relu"),
      act("tanh"),
      act("sigmoid"),
      {"sum axis 1", true,
       [=] {
         return Concat(RunOp("sum", {{"axis", "1"}}, {rows}, {{37}}));
       }},
      {"sum axis 0", true,
       [=] {
         return Concat(RunOp("sum", {{"axis", "0"}}, {rows}, {{27}}));
       }},
      {"max", true,
       [=] {
         return Concat(RunOp("max", {{"axis", "1"}}, {rows}, {{37}}));
       }},
      {"softmax", false,
       [=] {
         return Concat(RunOp("softmax", {}, {rows}, {{37, 27}}));
       }},
      {"SoftmaxOutput", false,
       [=] {
         std::vector<Buf> y = RunOp("SoftmaxOutput", {}, {rows, label}, {{37, 27}});
         std::vector<Buf> g = RunOp("_backward_SoftmaxOutput", {}, {rows, rows, label, y[0]}, {{37, 27}, {37}});
         return Concat({y[0], g[0]});
       }},
      {"Pooling max", true,
       [=] {
         std::vector<Buf> y = RunOp("Pooling", pool, {img}, {{3, 5, 12, 12}});
         std::vector<Buf> gx = RunOp("_backward_Pooling", pool, {pooled_grad, img, y[0]}, {{3, 5, 24, 24}});
         return Concat({y[0], gx[0]});
       }},
      {"Pooling avg", false,
       [=] {
         return Concat(RunOp("Pooling", avg_pool, {img}, {{3, 5, 12, 12}}));
       }},
      {"sgd_mom_update", false,
       [=] {
         std::vector<Buf> mom = {m};
         Attrs at = {{"lr", "0.05"}, {"momentum", "0.9"}, {"wd", "0.0001"}, {"rescale_grad", "0.01"}};
         std::vector<Buf> w = RunOp("sgd_mom_update", at, {a, b}, {{n}}, &mom);
         return Concat({w[0], mom[0]});
       }},
      {"adam_update", false,
       [=] {
         std::vector<Buf> st = {m, Buf::F({n}, std::vector<float>(static_cast<size_t>(n), 0.01f))};
         std::vector<Buf> w = RunOp("adam_update", {{"lr", "0.01"}}, {a, b}, {{n}}, &st);
         return Concat({w[0], st[0], st[1]});
       }},
  };
}

void CompareWithBaseline(Level level) {
  if (level > weft::cpu::isa::Ceiling())
    GTEST_SKIP() << weft::cpu::isa::Name(level) << " is not available here: this CPU has "
                 << weft::cpu::isa::Name(weft::cpu::isa::Supported()) << ", WEFT_CPU_ISA allows "
                 << weft::cpu::isa::Name(weft::cpu::isa::Ceiling());
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(weft::cpu::isa::SetActiveForTesting(Level::kBaseline));
    const std::vector<float> base = c.run();
    ASSERT_TRUE(weft::cpu::isa::SetActiveForTesting(level));
    ASSERT_EQ(weft::cpu::isa::Active(), level);
    const std::vector<float> got = c.run();
    ASSERT_EQ(got.size(), base.size());
    ASSERT_FALSE(base.empty());
    int bad = 0;
    for (size_t i = 0; i < base.size() && bad < 5; ++i) {
      const float tol = c.exact ? 0.0f : 4e-6f * std::max(1.0f, std::fabs(base[i]));
      const bool same = std::isnan(base[i]) ? std::isnan(got[i]) : std::fabs(got[i] - base[i]) <= tol;
      if (!same) {
        ADD_FAILURE() << "element " << i << ": " << weft::cpu::isa::Name(level) << " " << got[i] << ", baseline "
                      << base[i];
        ++bad;
      }
    }
  }
}

TEST_F(IsaDispatch, Avx2MatchesBaseline) { CompareWithBaseline(Level::kAvx2); }
TEST_F(IsaDispatch, Avx512MatchesBaseline) { CompareWithBaseline(Level::kAvx512); }
#endif

TEST_F(IsaDispatch, HookRefusesLevelsAboveTheCeiling) {
  const Level ceiling = weft::cpu::isa::Ceiling();
  EXPECT_LE(ceiling, weft::cpu::isa::Supported());
  // A build with fewer copies (WEFT_CPU_ISA_COPIES=host) never selects a level it has no loops for.
  EXPECT_LE(static_cast<int>(weft::cpu::isa::Supported()), WEFT_CPU_ISA_MAX_LEVEL);
  EXPECT_EQ(initial_, ceiling) << "the plugin starts at its ceiling";
  int refused = 0;
  for (Level l : {Level::kBaseline, Level::kAvx2, Level::kAvx512}) {
    if (l <= ceiling) {
      EXPECT_TRUE(weft::cpu::isa::SetActiveForTesting(l)) << weft::cpu::isa::Name(l);
      continue;
    }
    ASSERT_TRUE(weft::cpu::isa::SetActiveForTesting(ceiling));
    EXPECT_FALSE(weft::cpu::isa::SetActiveForTesting(l))
        << weft::cpu::isa::Name(l) << " above the ceiling " << weft::cpu::isa::Name(ceiling);
    EXPECT_EQ(weft::cpu::isa::Active(), ceiling) << "a refused level changed the active one";
    ++refused;
  }
  if (refused > 0) return;
  // Nothing above this machine's ceiling: lower it in a child run of this very test.
  int status = -1;
  const std::string out = RunSelf("IsaDispatch.HookRefusesLevelsAboveTheCeiling", "WEFT_CPU_ISA=baseline", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
  EXPECT_EQ(out.find("SKIPPED"), std::string::npos) << out;
}

}  // namespace
}  // namespace wtest
