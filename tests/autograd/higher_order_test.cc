// Second (and third) order gradients with create_graph against central differences of the
// first-order gradient, for every op with a higher-order rule (core/autograd/higher_order.h).
#include <cmath>

#include "autograd_util.h"

namespace weft {
namespace {

using test::Array;
using test::Read;

struct Unary {
  std::string op;
  std::map<std::string, std::string> params;
  std::vector<float> x;  // away from kinks and domain edges
  // Affine ops have a constant first derivative; x·op(x) makes the gradient flowing into the
  // op's backward depend on x, so that the second pass differentiates that backward.
  bool times_x = false;
};

// Test names and failure messages say the op, not the bytes of the parameter.
void PrintTo(const Unary& u, std::ostream* os) { *os << u.op << (u.times_x ? " (times x)" : ""); }

NDArray Apply(const Unary& u, const NDArray& x) {
  NDArray y = InvokeOne(u.op, {x}, u.params);
  return u.times_x ? x * y : y;
}

// f'(x) elementwise through first-order autograd.
std::vector<float> FirstDerivative(const Unary& u, std::vector<float> x) {
  NDArray a = Array(x, Shape{static_cast<int64_t>(x.size())});
  autograd::AttachGrad(&a);
  NDArray y = test::Recorded([&] { return Apply(u, a); });
  return Read(autograd::Grad({y}, {a})[0]);
}

class SecondOrder : public ::testing::TestWithParam<Unary> {};

TEST_P(SecondOrder, MatchesDifferencesOfTheFirstOrder) {
  const Unary& u = GetParam();
  NDArray x = Array(u.x, Shape{static_cast<int64_t>(u.x.size())});
  autograd::AttachGrad(&x);
  NDArray y = test::Recorded([&] { return Apply(u, x); });
  std::vector<NDArray> dx = autograd::Grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  autograd::Backward({dx[0]});
  const std::vector<float> second = Read(autograd::GetGrad(x));
  const float h = 1e-2f;
  std::vector<float> xp = u.x, xm = u.x;
  for (float& v : xp) v += h;
  for (float& v : xm) v -= h;
  const std::vector<float> fp = FirstDerivative(u, xp), fm = FirstDerivative(u, xm);
  for (size_t i = 0; i < u.x.size(); ++i) {
    const float fd = (fp[i] - fm[i]) / (2 * h);
    EXPECT_NEAR(second[i], fd, 2e-3f + 2e-3f * std::fabs(fd)) << u.op << " at " << u.x[i];
  }
}

const std::vector<float> kSigned = {-1.3f, -0.4f, 0.3f, 0.9f, 1.7f};
const std::vector<float> kPositive = {0.3f, 0.8f, 1.5f, 2.4f};

INSTANTIATE_TEST_SUITE_P(
    Rules, SecondOrder,
    ::testing::Values(Unary{"sin", {}, kSigned}, Unary{"cos", {}, kSigned}, Unary{"exp", {}, kSigned},
                      Unary{"log", {}, kPositive}, Unary{"sqrt", {}, kPositive}, Unary{"square", {}, kSigned},
                      Unary{"sigmoid", {}, kSigned}, Unary{"tanh", {}, kSigned}, Unary{"relu", {}, kSigned},
                      Unary{"abs", {}, kSigned}, Unary{"rsqrt", {}, kPositive}, Unary{"log1p", {}, kPositive},
                      Unary{"expm1", {}, kSigned}, Unary{"Activation", {{"act_type", "sigmoid"}}, kSigned},
                      Unary{"Activation", {{"act_type", "tanh"}}, kSigned},
                      Unary{"Activation", {{"act_type", "relu"}}, kSigned},
                      // Affine ops: their backward reads only the head gradient.
                      Unary{"_mul_scalar", {{"scalar", "3"}}, kSigned, true},
                      Unary{"_plus_scalar", {{"scalar", "2"}}, kSigned, true}, Unary{"negative", {}, kSigned, true},
                      Unary{"Reshape", {{"shape", "(-1,)"}}, kSigned, true}),
    [](const ::testing::TestParamInfo<Unary>& info) {
      std::string n = info.param.op + (info.param.params.empty() ? "" : "_" + info.param.params.begin()->second);
      for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return n;
    });

TEST(HigherOrder, ProductChainAndThirdOrder) {
  // y = x·sin(x): y' = sin x + x cos x; y'' = 2 cos x − x sin x; y''' = −3 sin x − x cos x.
  NDArray x = Array({0.7f, -1.1f}, Shape{2});
  autograd::AttachGrad(&x);
  NDArray y = test::Recorded([&] { return x * InvokeOne("sin", {x}); });
  NDArray d1 = autograd::Grad({y}, {x}, {}, std::nullopt, true)[0];
  NDArray d2 = autograd::Grad({d1}, {x}, {}, std::nullopt, true)[0];
  autograd::Backward({d2});
  const std::vector<float> v1 = Read(d1), v2 = Read(d2), v3 = Read(autograd::GetGrad(x));
  for (size_t i = 0; i < 2; ++i) {
    const double a = i == 0 ? 0.7 : -1.1;
    EXPECT_NEAR(v1[i], std::sin(a) + a * std::cos(a), 1e-5);
    EXPECT_NEAR(v2[i], 2 * std::cos(a) - a * std::sin(a), 1e-5);
    EXPECT_NEAR(v3[i], -3 * std::sin(a) - a * std::cos(a), 1e-5);
  }
}

TEST(HigherOrder, ThroughSumAndReshape) {
  // z = sum(reshape(x², (2, 2))): dz/dx = 2x; d(sum dz/dx)/dx = 2.
  NDArray x = Array({1, 2, 3, 4}, Shape{4});
  autograd::AttachGrad(&x);
  NDArray z = test::Recorded([&] {
    return InvokeOne("sum", {InvokeOne("Reshape", {InvokeOne("square", {x})}, {{"shape", "(2, 2)"}})});
  });
  NDArray d1 = autograd::Grad({z}, {x}, {}, std::nullopt, true)[0];
  EXPECT_EQ(Read(d1), (std::vector<float>{2, 4, 6, 8}));
  autograd::Backward({d1});
  EXPECT_EQ(Read(autograd::GetGrad(x)), (std::vector<float>{2, 2, 2, 2}));
}

}  // namespace
}  // namespace weft
