// The vectorisable float math of plugins/cpu/kernels/vector_math.h against double-precision libm
// rounded to float: a strided sweep over every float bit pattern in each function's range, error
// in units in the last place (ulp) of the correctly rounded result, plus the special values.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

#include "vector_math.h"

namespace wtest {
namespace {

namespace vm = weft::cpu::vmath;

// Distance in representable floats between a and b (same sign assumed near the reference).
double UlpDistance(float a, float b) {
  auto ordered = [](float f) {
    const int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? static_cast<int64_t>(INT32_MIN) - i : static_cast<int64_t>(i);
  };
  return std::fabs(static_cast<double>(ordered(a) - ordered(b)));
}

struct Sweep {
  double max_ulp = 0;
  float worst_x = 0;
  int64_t count = 0;
};

// Every 241st float in [lo, hi] (both signs when lo < 0), compared with ref rounded to float.
Sweep SweepUlp(float lo, float hi, const std::function<float(float)>& f, const std::function<double(double)>& ref) {
  Sweep s;
  auto visit = [&](float x) {
    if (x < lo || x > hi) return;
    const float want = static_cast<float>(ref(static_cast<double>(x)));
    const double d = UlpDistance(f(x), want);
    if (d > s.max_ulp) {
      s.max_ulp = d;
      s.worst_x = x;
    }
    ++s.count;
  };
  const uint32_t top = std::bit_cast<uint32_t>(std::max(std::fabs(lo), std::fabs(hi)));
  for (uint32_t bits = 0; bits <= top; bits += 241) {
    const float x = std::bit_cast<float>(bits);
    visit(x);
    visit(-x);
  }
  return s;
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(VectorMath, ExpWithinTwoUlp) {
  const Sweep s = SweepUlp(-87.0f, 88.0f, vm::Exp, [](double x) { return std::exp(x); });
  std::printf("exp: %lld points, max %.0f ulp at x = %.9g\n", static_cast<long long>(s.count), s.max_ulp,
              static_cast<double>(s.worst_x));
  EXPECT_LE(s.max_ulp, 2) << "at x = " << s.worst_x;
}

TEST(VectorMath, ExpM1WithinThreeUlpAlsoNearZero) {
  const Sweep s = SweepUlp(-87.0f, 88.0f, vm::ExpM1, [](double x) { return std::expm1(x); });
  std::printf("expm1: %lld points, max %.0f ulp at x = %.9g\n", static_cast<long long>(s.count), s.max_ulp,
              static_cast<double>(s.worst_x));
  EXPECT_LE(s.max_ulp, 3) << "at x = " << s.worst_x;
}

TEST(VectorMath, TanhWithinFourUlpAlsoNearZero) {
  const Sweep s = SweepUlp(-20.0f, 20.0f, vm::Tanh, [](double x) { return std::tanh(x); });
  std::printf("tanh: %lld points, max %.0f ulp at x = %.9g\n", static_cast<long long>(s.count), s.max_ulp,
              static_cast<double>(s.worst_x));
  EXPECT_LE(s.max_ulp, 4) << "at x = " << s.worst_x;
}

TEST(VectorMath, SigmoidWithinThreeUlp) {
  const Sweep s = SweepUlp(-80.0f, 80.0f, vm::Sigmoid, Sigmoid);
  std::printf("sigmoid: %lld points, max %.0f ulp at x = %.9g\n", static_cast<long long>(s.count), s.max_ulp,
              static_cast<double>(s.worst_x));
  EXPECT_LE(s.max_ulp, 3) << "at x = " << s.worst_x;
}

TEST(VectorMath, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(vm::Exp(0.0f), 1.0f);
  EXPECT_EQ(vm::ExpM1(0.0f), 0.0f);
  EXPECT_EQ(vm::Tanh(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(vm::Tanh(-0.0f)));
  EXPECT_EQ(vm::Sigmoid(0.0f), 0.5f);
  for (float x : {9.15f, 9.2f, 50.0f, 1e30f, inf}) {
    EXPECT_EQ(vm::Tanh(x), 1.0f) << x;
    EXPECT_EQ(vm::Tanh(-x), -1.0f) << x;
    if (x > 20.0f) {
      EXPECT_EQ(vm::Sigmoid(x), 1.0f) << x;
    }
    EXPECT_GE(vm::Sigmoid(-x), 0.0f) << x;
    EXPECT_LT(vm::Sigmoid(-x), 1e-3f) << x;
    EXPECT_TRUE(std::isfinite(vm::Exp(x))) << x;
  }
  EXPECT_EQ(vm::ExpM1(-inf), -1.0f);
  EXPECT_GE(vm::Exp(-inf), 0.0f);
  EXPECT_LT(vm::Exp(-inf), 1e-37f);
  EXPECT_TRUE(std::isnan(vm::Exp(nan)));
  EXPECT_TRUE(std::isnan(vm::ExpM1(nan)));
  EXPECT_TRUE(std::isnan(vm::Tanh(nan)));
  EXPECT_TRUE(std::isnan(vm::Sigmoid(nan)));
}

}  // namespace
}  // namespace wtest
