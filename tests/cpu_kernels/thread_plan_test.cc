// The CPU plugin's thread rule (plugins/cpu/kernels/thread_plan.h): the user's variables and the
// affinity mask are limits on the threads one kernel call uses, never a way to exceed the cores.
#include "thread_plan.h"

#include <gtest/gtest.h>

namespace weft::cpu {
namespace {

struct Split {
  int math, blas, omp;
};

Split Plan(int cores, ThreadEnv env) {
  const ThreadPlan p = PlanThreads(cores, env);
  EXPECT_TRUE(p.warnings.empty()) << p.warnings.front();
  return {p.math, p.blas, p.omp};
}

void ExpectSplit(Split got, Split want) {
  EXPECT_EQ(got.math, want.math);
  EXPECT_EQ(got.blas, want.blas);
  EXPECT_EQ(got.omp, want.omp);
}

TEST(ThreadPlan, NoVariablesUseEveryCoreOfTheMask) {
  ExpectSplit(Plan(2, {}), {2, 1, 2});
  ExpectSplit(Plan(1, {}), {1, 1, 1});
  ExpectSplit(Plan(64, {}), {64, 1, 64});
  ExpectSplit(Plan(0, {}), {1, 1, 1});  // a failed affinity query counts as one core
}

TEST(ThreadPlan, UserVariablesEqualToTheCoresChangeNothing) {
  // The issue-18 case: a habit of OMP_NUM_THREADS=2 on a 2-core machine must give the default.
  ThreadEnv env;
  env.omp = "2";
  env.openblas = "2";
  env.math = "2";
  ExpectSplit(Plan(2, env), {2, 1, 2});
}

TEST(ThreadPlan, VariablesAreLimitsNeverOversubscription) {
  ThreadEnv env;
  env.omp = "8";
  env.openblas = "16";
  env.math = "32";
  ExpectSplit(Plan(2, env), {2, 1, 2});
  env = {};
  env.workers = "2";  // two engine workers run kernels at once: each kernel gets half
  env.omp = "4";
  ExpectSplit(Plan(4, env), {2, 1, 2});
  env.workers = "8";  // more workers than cores: one thread per kernel
  ExpectSplit(Plan(4, env), {1, 1, 1});
}

TEST(ThreadPlan, LowerLimitsApplyToTheirLibrary) {
  ThreadEnv env;
  env.omp = "1";  // OpenBLAS falls back to OMP_NUM_THREADS, as OpenBLAS itself does
  ExpectSplit(Plan(4, env), {4, 1, 1});
  env.openblas = "3";
  ExpectSplit(Plan(4, env), {4, 3, 1});
  env = {};
  env.goto_blas = "2";
  ExpectSplit(Plan(4, env), {4, 1, 4});  // OpenMP has the team: OpenBLAS keeps one thread
  env.omp = "1";
  ExpectSplit(Plan(4, env), {4, 2, 1});
  env = {};
  env.math = "1";
  ExpectSplit(Plan(8, env), {1, 1, 1});
  env = {};
  env.omp = "3,2";  // nested list: the outermost team counts
  ExpectSplit(Plan(8, env), {8, 1, 3});
}

TEST(ThreadPlan, MalformedValuesWarnAndNeverRaiseTheCount) {
  ThreadEnv env;
  env.omp = "lots";
  env.math = "-3";
  const ThreadPlan p = PlanThreads(4, env);
  ASSERT_EQ(p.warnings.size(), 2u);
  EXPECT_NE(p.warnings[0].find("WEFT_CPU_MATH_THREADS='-3'"), std::string::npos) << p.warnings[0];
  EXPECT_NE(p.warnings[1].find("OMP_NUM_THREADS='lots'"), std::string::npos) << p.warnings[1];
  EXPECT_EQ(p.math, 1);  // a malformed WEFT_CPU_MATH_THREADS means the safe choice
  EXPECT_EQ(p.omp, 1);
  EXPECT_EQ(p.blas, 1);
  EXPECT_EQ(p.Describe(), "cores 4, workers 1 -> math 1 (OpenBLAS 1, OpenMP 1)");
}

TEST(ThreadPlan, AffinityCoresIsPositive) { EXPECT_GE(AffinityCores(), 1); }

}  // namespace
}  // namespace weft::cpu
