// Element-wise kernels: unary math, scalar ops, elemwise_* and broadcast_* binary ops, add_n.
// Forward against double-precision loops, backward against finite differences, req modes and
// in-place aliasing.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "tensor_test_util.h"

namespace ttest {
namespace {

const int32_t kFloatTypes[] = {WEFT_DTYPE_FLOAT32, WEFT_DTYPE_FLOAT64};

struct UnaryCase {
  const char* op;
  std::function<double(double)> f;
  double lo, hi;  // input range (kept inside the domain)
  bool kinked;    // non-smooth at 0: skip |x| < 1e-3 in the gradient check
};

const UnaryCase kUnary[] = {
    {"sin", [](double x) { return std::sin(x); }, -3, 3, false},
    {"cos", [](double x) { return std::cos(x); }, -3, 3, false},
    {"exp", [](double x) { return std::exp(x); }, -3, 3, false},
    {"log", [](double x) { return std::log(x); }, 0.2, 4, false},
    {"sqrt", [](double x) { return std::sqrt(x); }, 0.2, 4, false},
    {"square", [](double x) { return x * x; }, -3, 3, false},
    {"abs", [](double x) { return std::fabs(x); }, -3, 3, true},
    {"negative", [](double x) { return -x; }, -3, 3, false},
    {"relu", [](double x) { return x > 0 ? x : 0; }, -3, 3, true},
    {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -5, 5, false},
    {"tanh", [](double x) { return std::tanh(x); }, -3, 3, false},
};

std::vector<double> Apply(const std::vector<double>& x, const std::function<double(double)>& f) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = f(x[i]);
  return y;
}

TEST(TensorUnary, ForwardAndGradient) {
  const uint64_t seed = wtest::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (const UnaryCase& u : kUnary) {
    SCOPED_TRACE(u.op);
    for (int trial = 0; trial < 3; ++trial) {
      Shape s = RandomShape(rng, 0, 4, 200);
      std::vector<double> x = UniformF(rng, Prod(s), u.lo, u.hi);
      for (int32_t dt : kFloatTypes) ExpectOp(u.op, {}, {Make(dt, s, x)}, {Make(dt, s, Apply(x, u.f))});
      GradSpec g;
      g.op = u.op;
      g.inputs = {Make(WEFT_DTYPE_FLOAT64, s, x)};
      g.outputs = {s};
      g.uses_inputs = g.uses_outputs = true;
      if (u.kinked) g.skip = [x](size_t, int64_t i) { return std::fabs(x[static_cast<size_t>(i)]) < 1e-3; };
      ExpectGradient(g, seed + static_cast<uint64_t>(trial));
    }
  }
}

// MXNet's choice at the kink: relu'(0) = abs'(0) = 0.
TEST(TensorUnary, DerivativeAtZero) {
  Buf zero = Make(WEFT_DTYPE_FLOAT32, {1}, {0.0});
  Buf one = Make(WEFT_DTYPE_FLOAT32, {1}, {1.0});
  for (const char* op : {"_backward_relu", "_backward_abs"}) {
    std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT32, {1})};
    ASSERT_EQ(RunKernel(op, {}, {one, zero, zero}, out), "");
    EXPECT_EQ(Get(out[0], 0), 0.0) << op;
  }
}

TEST(TensorUnary, InPlace) {
  std::mt19937 rng(5);
  Shape s = {3, 7};
  std::vector<double> x = UniformF(rng, Prod(s), 0.2, 2);
  Buf in = Make(WEFT_DTYPE_FLOAT32, s, x);
  std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT32, s)};
  ASSERT_EQ(RunKernel("sqrt", {}, {in}, out, {WEFT_REQ_WRITE_INPLACE}, {{0, 0}}), "");
  EXPECT_LE(Nmse(Apply(x, [](double v) { return std::sqrt(v); }), Values(out[0])), 1e-12);
}

struct ScalarCase {
  const char* op;
  std::function<double(double, double)> f;
  bool uses_data;
  double lo, hi;
};

const ScalarCase kScalar[] = {
    {"_plus_scalar", [](double x, double s) { return x + s; }, false, -2, 2},
    {"_minus_scalar", [](double x, double s) { return x - s; }, false, -2, 2},
    {"_rminus_scalar", [](double x, double s) { return s - x; }, false, -2, 2},
    {"_mul_scalar", [](double x, double s) { return x * s; }, false, -2, 2},
    {"_div_scalar", [](double x, double s) { return x / s; }, false, -2, 2},
    {"_rdiv_scalar", [](double x, double s) { return s / x; }, true, 0.5, 3},
    {"_power_scalar", [](double x, double s) { return std::pow(x, s); }, true, 0.5, 3},
};

TEST(TensorScalar, ForwardAndGradient) {
  const uint64_t seed = wtest::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (const ScalarCase& sc : kScalar) {
    for (double scalar : {2.5, -0.75}) {
      SCOPED_TRACE(std::string(sc.op) + " scalar " + std::to_string(scalar));
      Shape s = RandomShape(rng, 1, 3, 100);
      std::vector<double> x = UniformF(rng, Prod(s), sc.lo, sc.hi);
      Attrs attrs = {{"scalar", std::to_string(scalar)}};
      std::vector<double> y(x.size());
      for (size_t i = 0; i < x.size(); ++i) y[i] = sc.f(x[i], scalar);
      for (int32_t dt : kFloatTypes) ExpectOp(sc.op, attrs, {Make(dt, s, x)}, {Make(dt, s, y)});
      GradSpec g;
      g.op = sc.op;
      g.backward = std::string("_backward") + sc.op;  // _backward_mul_scalar
      g.attrs = attrs;
      g.inputs = {Make(WEFT_DTYPE_FLOAT64, s, x)};
      g.outputs = {s};
      g.uses_inputs = sc.uses_data;
      ExpectGradient(g, seed);
    }
  }
}

struct BinaryCase {
  const char* name;
  std::function<double(double, double)> f;
  bool uses_inputs;
};

const BinaryCase kBinary[] = {
    {"add", [](double a, double b) { return a + b; }, false},
    {"sub", [](double a, double b) { return a - b; }, false},
    {"mul", [](double a, double b) { return a * b; }, true},
    {"div", [](double a, double b) { return a / b; }, true},
};

// Right-hand values away from 0 so that div stays well conditioned.
std::vector<double> Denominators(std::mt19937& rng, int64_t n) {
  std::vector<double> v = UniformF(rng, n, 0.5, 2);
  std::bernoulli_distribution neg(0.5);
  for (double& x : v) x = neg(rng) ? -x : x;
  return v;
}

TEST(TensorBinary, ElemwiseForwardAndGradient) {
  const uint64_t seed = wtest::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (const BinaryCase& bc : kBinary) {
    const std::string op = std::string("elemwise_") + bc.name;
    SCOPED_TRACE(op);
    for (int trial = 0; trial < 3; ++trial) {
      Shape s = RandomShape(rng, 0, 4, 120);
      std::vector<double> a = UniformF(rng, Prod(s)), b = Denominators(rng, Prod(s));
      std::vector<double> y(a.size());
      for (size_t i = 0; i < a.size(); ++i) y[i] = bc.f(a[i], b[i]);
      for (int32_t dt : kFloatTypes) ExpectOp(op, {}, {Make(dt, s, a), Make(dt, s, b)}, {Make(dt, s, y)});
      GradSpec g;
      g.op = op;
      g.inputs = {Make(WEFT_DTYPE_FLOAT64, s, a), Make(WEFT_DTYPE_FLOAT64, s, b)};
      g.outputs = {s};
      g.uses_inputs = bc.uses_inputs;
      ExpectGradient(g, seed + static_cast<uint64_t>(trial));
    }
  }
}

TEST(TensorBinary, ElemwiseInPlaceEitherOperand) {
  std::mt19937 rng(9);
  Shape s = {5, 3};
  std::vector<double> a = UniformF(rng, 15), b = Denominators(rng, 15);
  for (int aliased : {0, 1}) {
    std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT32, s)};
    ASSERT_EQ(RunKernel("elemwise_div", {}, {Make(WEFT_DTYPE_FLOAT32, s, a), Make(WEFT_DTYPE_FLOAT32, s, b)}, out,
                        {WEFT_REQ_WRITE_INPLACE}, {{0, aliased}}),
              "");
    std::vector<double> want(15);
    for (size_t i = 0; i < 15; ++i) want[i] = static_cast<float>(a[i]) / static_cast<float>(b[i]);
    EXPECT_LE(Nmse(want, Values(out[0])), 1e-14) << "aliased input " << aliased;
  }
}

// Random broadcast pairs: an output shape, each operand dropping leading axes or setting axes to 1.
void RandomBroadcastPair(std::mt19937& rng, Shape* a, Shape* b, Shape* out) {
  *out = RandomShape(rng, 1, 4, 150);
  std::bernoulli_distribution coin(0.4);
  for (Shape* s : {a, b}) {
    *s = *out;
    for (int64_t& e : *s)
      if (coin(rng)) e = 1;
    const int drop = std::uniform_int_distribution<int>(0, static_cast<int>(s->size()))(rng);
    if (coin(rng)) s->erase(s->begin(), s->begin() + drop);
  }
  // The output is the broadcast of the two (an axis both set to 1 shrinks).
  const size_t nd = std::max(a->size(), b->size());
  Shape o(nd);
  for (size_t i = 0; i < nd; ++i) {
    const int ia = static_cast<int>(i) - static_cast<int>(nd - a->size());
    const int ib = static_cast<int>(i) - static_cast<int>(nd - b->size());
    const int64_t ea = ia >= 0 ? (*a)[static_cast<size_t>(ia)] : 1, eb = ib >= 0 ? (*b)[static_cast<size_t>(ib)] : 1;
    o[i] = std::max(ea, eb);
  }
  *out = o;
}

TEST(TensorBinary, BroadcastForwardAndGradient) {
  const uint64_t seed = wtest::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (const BinaryCase& bc : kBinary) {
    const std::string op = std::string("broadcast_") + bc.name;
    for (int trial = 0; trial < 8; ++trial) {
      Shape sa, sb, so;
      RandomBroadcastPair(rng, &sa, &sb, &so);
      SCOPED_TRACE(op + " " + Str(sa) + " with " + Str(sb) + " -> " + Str(so));
      std::vector<double> a = UniformF(rng, Prod(sa)), b = Denominators(rng, Prod(sb));
      std::vector<double> y(static_cast<size_t>(Prod(so)));
      for (int64_t i = 0; i < Prod(so); ++i) {
        y[static_cast<size_t>(i)] =
            bc.f(a[static_cast<size_t>(BroadcastIndex(so, sa, i))], b[static_cast<size_t>(BroadcastIndex(so, sb, i))]);
      }
      for (int32_t dt : kFloatTypes) ExpectOp(op, {}, {Make(dt, sa, a), Make(dt, sb, b)}, {Make(dt, so, y)});
      GradSpec g;
      g.op = op;
      g.inputs = {Make(WEFT_DTYPE_FLOAT64, sa, a), Make(WEFT_DTYPE_FLOAT64, sb, b)};
      g.outputs = {so};
      g.uses_inputs = bc.uses_inputs;
      ExpectGradient(g, seed + static_cast<uint64_t>(trial));
    }
  }
}

TEST(TensorBinary, BroadcastRejectsIncompatibleShapes) {
  std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT32, {2, 3})};
  std::string err =
      RunKernel("broadcast_add", {}, {Buf::Of(WEFT_DTYPE_FLOAT32, {2, 3}), Buf::Of(WEFT_DTYPE_FLOAT32, {2, 2})}, out);
  EXPECT_NE(err.find("do not broadcast"), std::string::npos) << err;
}

TEST(TensorAddN, ForwardGradientAndInPlace) {
  const uint64_t seed = wtest::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (int n = 1; n <= 5; ++n) {
    Shape s = RandomShape(rng, 1, 3, 64);
    std::vector<Buf> in;
    std::vector<double> sum(static_cast<size_t>(Prod(s)), 0.0);
    for (int k = 0; k < n; ++k) {
      std::vector<double> v = UniformF(rng, Prod(s));
      for (size_t i = 0; i < v.size(); ++i) sum[i] += v[i];
      in.push_back(Make(WEFT_DTYPE_FLOAT64, s, v));
    }
    Attrs attrs = {{"num_args", std::to_string(n)}};
    ExpectOp("add_n", attrs, in, {Make(WEFT_DTYPE_FLOAT64, s, sum)}, 1e-20);
    ExpectOp("add_n", attrs, ToDType(in, WEFT_DTYPE_FLOAT32), {Make(WEFT_DTYPE_FLOAT32, s, sum)});
    std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT64, s)};
    ASSERT_EQ(RunKernel("add_n", attrs, in, out, {WEFT_REQ_WRITE_INPLACE}, {{0, 0}}), "");
    EXPECT_LE(Nmse(sum, Values(out[0])), 1e-20) << "in-place into input 0";
    GradSpec g;
    g.op = "add_n";
    g.attrs = attrs;
    g.inputs = in;
    g.outputs = {s};
    ExpectGradient(g, seed + static_cast<uint64_t>(n));
  }
}

// The MXNet documentation's example (mxnet.executor): 2*a + b with a = [1, 2], b = [2, 3] is
// [4, 7]; backward with head gradient [4, 7] gives grad a = [8, 14], grad b = [4, 7].
TEST(TensorElemwise, MXNetExecutorDocExample) {
  Buf a = Make(WEFT_DTYPE_FLOAT32, {2}, {1, 2});
  Buf b = Make(WEFT_DTYPE_FLOAT32, {2}, {2, 3});
  std::vector<Buf> twice = {Buf::Of(WEFT_DTYPE_FLOAT32, {2})};
  ASSERT_EQ(RunKernel("_mul_scalar", {{"scalar", "2"}}, {a}, twice), "");
  std::vector<Buf> y = {Buf::Of(WEFT_DTYPE_FLOAT32, {2})};
  ASSERT_EQ(RunKernel("elemwise_add", {}, {twice[0], b}, y), "");
  EXPECT_EQ(Values(y[0]), (std::vector<double>{4, 7}));

  Buf head = Make(WEFT_DTYPE_FLOAT32, {2}, {4, 7});
  std::vector<Buf> add_grads = {Buf::Of(WEFT_DTYPE_FLOAT32, {2}), Buf::Of(WEFT_DTYPE_FLOAT32, {2})};
  ASSERT_EQ(RunKernel("_backward_elemwise_add", {}, {head}, add_grads), "");
  std::vector<Buf> grad_a = {Buf::Of(WEFT_DTYPE_FLOAT32, {2})};
  ASSERT_EQ(RunKernel("_backward_mul_scalar", {{"scalar", "2"}}, {add_grads[0]}, grad_a), "");
  EXPECT_EQ(Values(grad_a[0]), (std::vector<double>{8, 14}));
  EXPECT_EQ(Values(add_grads[1]), (std::vector<double>{4, 7}));
}

}  // namespace
}  // namespace ttest

namespace ttest {
namespace {

TEST(TensorElemwise, UnknownReqIsAnError) {
  Buf x = Make(WEFT_DTYPE_FLOAT32, {3}, {1, 2, 3});
  for (const char* op : {"exp", "_copy", "transpose", "sum"}) {
    std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT32, {std::string(op) == "sum" ? 1 : 3})};
    const std::string err = RunKernel(op, {}, {x}, out, {7});
    EXPECT_NE(err.find("unknown write request 7"), std::string::npos) << op << ": " << err;
  }
}

// Tensors with a zero extent reach the kernels with null data pointers: nothing to do, no crash.
TEST(TensorElemwise, ZeroSizeTensors) {
  Buf e = Buf::Of(WEFT_DTYPE_FLOAT32, {0, 3});
  auto run = [](const std::string& op, const Attrs& attrs, std::vector<Buf> in, std::vector<Shape> outs) {
    std::vector<Buf> out;
    for (const Shape& s : outs) out.push_back(Buf::Of(WEFT_DTYPE_FLOAT32, s));
    EXPECT_EQ(RunKernel(op, attrs, std::move(in), out), "") << op;
  };
  run("_copy", {}, {e}, {{0, 3}});
  run("exp", {}, {e}, {{0, 3}});
  run("elemwise_add", {}, {e, e}, {{0, 3}});
  run("broadcast_mul", {}, {e, Buf::Of(WEFT_DTYPE_FLOAT32, {3})}, {{0, 3}});
  run("transpose", {}, {e}, {{3, 0}});
  run("Concat", {{"num_args", "2"}, {"dim", "0"}}, {e, e}, {{0, 3}});
  run("dot", {}, {e, Buf::Of(WEFT_DTYPE_FLOAT32, {3, 2})}, {{0, 2}});
  // An empty contraction gives zeros (write) and leaves add-to alone.
  ExpectOp("dot", {}, {Buf::Of(WEFT_DTYPE_FLOAT32, {2, 0}), Buf::Of(WEFT_DTYPE_FLOAT32, {0, 3})},
           {Make(WEFT_DTYPE_FLOAT32, {2, 3}, std::vector<double>(6, 0.0))}, 0.0);
  // Summing an empty axis gives zeros.
  std::vector<Buf> out = {Make(WEFT_DTYPE_FLOAT32, {3}, {5, 5, 5})};
  ASSERT_EQ(RunKernel("sum", {{"axis", "(0,)"}}, {e}, out), "");
  EXPECT_EQ(Values(out[0]), (std::vector<double>{0, 0, 0}));
}

}  // namespace
}  // namespace ttest
