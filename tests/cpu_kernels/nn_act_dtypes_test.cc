// Activation and _backward_Activation on float16 and float64 arrays (MXNet's test_module_dtype
// binds a float16 relu). float16: every act_type computes in float and rounds once, so each result
// is the float32 kernel's on the same values, rounded to float16. float64: the formulas in double.
// req add / null as ExpectOp checks them.
#include <gtest/gtest.h>

#include <cmath>

#include "tensor_test_util.h"

namespace ttest {
namespace {

TEST(NNKernelsDTypes, ActivationIsTheFloat32ResultRounded) {
  std::mt19937 rng(static_cast<uint32_t>(wtest::TestSeed()));
  const Shape shape = {3, 8, 7};  // more elements than one conversion block of some act types
  for (const char* type : {"relu", "sigmoid", "tanh", "softrelu", "softsign"}) {
    SCOPED_TRACE(type);
    const Attrs attrs = {{"act_type", type}};
    // Values representable in float16, so both kernels see the same inputs.
    std::vector<double> x = Values(Make(WEFT_DTYPE_FLOAT16, shape, Uniform(rng, Prod(shape), -4, 4)));
    std::vector<double> gy = Values(Make(WEFT_DTYPE_FLOAT16, shape, Uniform(rng, Prod(shape), -2, 2)));
    std::vector<Buf> y32 = {Buf::Of(WEFT_DTYPE_FLOAT32, shape)};
    ASSERT_EQ(RunKernel("Activation", attrs, {Make(WEFT_DTYPE_FLOAT32, shape, x)}, y32), "");
    ExpectOp("Activation", attrs, {Make(WEFT_DTYPE_FLOAT16, shape, x)},
             {Make(WEFT_DTYPE_FLOAT16, shape, Values(y32[0]))}, 1e-6);
    // The backward gets out_grad, data, output (data is read by softsign only).
    const std::vector<double> y = Values(Make(WEFT_DTYPE_FLOAT16, shape, Values(y32[0])));
    std::vector<Buf> g32 = {Buf::Of(WEFT_DTYPE_FLOAT32, shape)};
    ASSERT_EQ(RunKernel("_backward_Activation", attrs,
                        {Make(WEFT_DTYPE_FLOAT32, shape, gy), Make(WEFT_DTYPE_FLOAT32, shape, x),
                         Make(WEFT_DTYPE_FLOAT32, shape, y)},
                        g32),
              "");
    ExpectOp(
        "_backward_Activation", attrs,
        {Make(WEFT_DTYPE_FLOAT16, shape, gy), Make(WEFT_DTYPE_FLOAT16, shape, x), Make(WEFT_DTYPE_FLOAT16, shape, y)},
        {Make(WEFT_DTYPE_FLOAT16, shape, Values(g32[0]))}, 1e-6);
  }
}

TEST(NNKernelsDTypes, ActivationInDoubleIsTheFormulaInDouble) {
  std::mt19937 rng(static_cast<uint32_t>(wtest::TestSeed()));
  const Shape shape = {5, 9};
  const std::vector<double> x = Uniform(rng, Prod(shape), -4, 4), gy = Uniform(rng, Prod(shape), -2, 2);
  struct Case {
    const char* type;
    double (*f)(double);
    double (*df)(double x, double y);
  };
  const Case cases[] = {
      {"relu", [](double v) { return v > 0 ? v : 0.0; }, [](double, double y) { return y > 0 ? 1.0 : 0.0; }},
      {"sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }, [](double, double y) { return y * (1 - y); }},
      {"tanh", [](double v) { return std::tanh(v); }, [](double, double y) { return 1 - y * y; }},
      {"softrelu", [](double v) { return std::log1p(std::exp(v)); }, [](double, double y) { return -std::expm1(-y); }},
      {"softsign", [](double v) { return v / (1 + std::fabs(v)); },
       [](double v, double) { return 1 / ((1 + std::fabs(v)) * (1 + std::fabs(v))); }},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.type);
    std::vector<double> y(x.size()), g(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      y[i] = k.f(x[i]);
      g[i] = gy[i] * k.df(x[i], y[i]);
    }
    const Attrs attrs = {{"act_type", k.type}};
    ExpectOp("Activation", attrs, {Make(WEFT_DTYPE_FLOAT64, shape, x)}, {Make(WEFT_DTYPE_FLOAT64, shape, y)}, 1e-26);
    ExpectOp(
        "_backward_Activation", attrs,
        {Make(WEFT_DTYPE_FLOAT64, shape, gy), Make(WEFT_DTYPE_FLOAT64, shape, x), Make(WEFT_DTYPE_FLOAT64, shape, y)},
        {Make(WEFT_DTYPE_FLOAT64, shape, g)}, 1e-26);
  }
}

TEST(NNKernelsDTypes, ActivationRefusesMixedDtypes) {
  std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT32, {4})};
  const std::string err =
      RunKernel("Activation", {{"act_type", "relu"}}, {Buf::Of(WEFT_DTYPE_FLOAT16, {4})}, out, {}, {});
  EXPECT_NE(err.find("every one float16"), std::string::npos) << err;
}

}  // namespace
}  // namespace ttest
