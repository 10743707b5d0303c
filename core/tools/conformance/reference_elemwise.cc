// References of the element-wise ops: unary math, scalar ops, element-wise and broadcast binary
// ops, add_n, clip, where, Activation and LeakyReLU (MXNet 1.9's formulas, mshadow_op.h). maximum,
// minimum and the rest of MXNet's binary math are in reference_math.cc.
#include <cmath>
#include <set>

#include "reference.h"
#include "weft/base.h"

namespace wconf::ref {
namespace {

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

const std::map<std::string, Unary>& UnaryOps() {
  static const std::map<std::string, Unary> ops = {
      {"sin", [](double x) { return std::sin(x); }},
      {"cos", [](double x) { return std::cos(x); }},
      {"exp", [](double x) { return std::exp(x); }},
      {"log", [](double x) { return std::log(x); }},
      {"sqrt", [](double x) { return std::sqrt(x); }},
      {"rsqrt", [](double x) { return 1.0 / std::sqrt(x); }},
      {"square", [](double x) { return x * x; }},
      {"abs", [](double x) { return std::fabs(x); }},
      {"negative", [](double x) { return -x; }},
      {"relu", [](double x) { return x > 0 ? x : 0.0; }},
      {"sigmoid", Sigmoid},
      {"tanh", [](double x) { return std::tanh(x); }},
      {"log1p", [](double x) { return std::log1p(x); }},
      {"expm1", [](double x) { return std::expm1(x); }},
      {"floor", [](double x) { return std::floor(x); }},
      // MXNet rounds halves away from zero.
      {"round", [](double x) { return std::round(x); }},
      {"sign", [](double x) { return x > 0   ? 1.0
                                     : x < 0 ? -1.0
                                             : 0.0; }},
  };
  return ops;
}

// Scalar ops: f(x, scalar).
const std::map<std::string, Binary>& ScalarOps() {
  static const std::map<std::string, Binary> ops = {
      {"_plus_scalar", [](double x, double s) { return x + s; }},
      {"_minus_scalar", [](double x, double s) { return x - s; }},
      {"_rminus_scalar", [](double x, double s) { return s - x; }},
      {"_mul_scalar", [](double x, double s) { return x * s; }},
      {"_div_scalar", [](double x, double s) { return x / s; }},
      {"_rdiv_scalar", [](double x, double s) { return s / x; }},
      {"_power_scalar", [](double x, double s) { return std::pow(x, s); }},
  };
  return ops;
}

const std::map<std::string, Binary>& BinaryOps() {
  static const std::map<std::string, Binary> ops = {
      {"add", [](double a, double b) { return a + b; }},
      {"sub", [](double a, double b) { return a - b; }},
      {"mul", [](double a, double b) { return a * b; }},
      {"div", [](double a, double b) { return a / b; }},
  };
  return ops;
}

// MXNet's SELU constants (Klambauer et al. 2017).
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluLambda = 1.0507009873554804934193349852946;

void LeakyReLU(Call& c) {
  const std::string type = c.attrs().GetString("act_type", "leaky");
  const double slope = c.attrs().GetFloat("slope", 0.25);
  const HostTensor& x = c.in(0);
  HostTensor& y = c.out[0];
  if (type == "rrelu") {
    const double lo = c.attrs().GetFloat("lower_bound", 0.125), hi = c.attrs().GetFloat("upper_bound", 0.334);
    // Training draws a slope per element: the device's draws (its mask output) are taken, checked to
    // lie in [lo, hi] (hi: float rounding) and not all equal; outside training the slope is (lo + hi) / 2.
    const bool drawn = c.spec.is_train;
    std::string bad;
    for (size_t i = 0; i < x.v.size(); ++i) {
      const double s = drawn ? c.device.out.at(1).v[i] : RoundTo(x.dtype, 0.5 * (lo + hi));
      if (drawn && !(s >= RoundTo(x.dtype, lo) && s <= RoundTo(x.dtype, hi)) && bad.empty())
        bad = fmt::format("rrelu slope {} of element {} outside [{}, {}]; ", s, i, lo, hi);
      c.out[1].v[i] = s;
      y.v[i] = x.v[i] > 0 ? x.v[i] : s * x.v[i];
    }
    if (drawn && x.v.size() > 4 &&
        *std::min_element(c.out[1].v.begin(), c.out[1].v.end()) ==
            *std::max_element(c.out[1].v.begin(), c.out[1].v.end()))
      bad += "rrelu's slopes in training are all equal: not drawn; ";
    *c.error += bad;
    return;
  }
  if (type == "prelu") {
    // One slope per channel of axis 1 (or a single one).
    const HostTensor& gamma = c.in(1);
    const int64_t channels = x.shape.ndim() > 1 ? x.shape[1] : 1;
    const int64_t inner = Prod(x.shape, 2, x.shape.ndim());
    for (size_t i = 0; i < x.v.size(); ++i) {
      const int64_t ch = gamma.v.size() == 1 ? 0 : (static_cast<int64_t>(i) / inner) % channels;
      y.v[i] = x.v[i] > 0 ? x.v[i] : gamma.v[static_cast<size_t>(ch)] * x.v[i];
    }
    return;
  }
  for (size_t i = 0; i < x.v.size(); ++i) {
    const double v = x.v[i];
    if (type == "leaky") {
      y.v[i] = v > 0 ? v : slope * v;
    } else if (type == "elu") {
      y.v[i] = v > 0 ? v : slope * std::expm1(v);
    } else if (type == "selu") {
      y.v[i] = v > 0 ? kSeluLambda * v : kSeluLambda * kSeluAlpha * std::expm1(v);
    } else if (type == "gelu") {
      y.v[i] = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));  // MXNet 1.9's erf form
    } else {
      weft::Fail("reference: LeakyReLU act_type '{}' has no reference", type);
    }
  }
}

// Integer outputs of add, sub, mul and div (scalar forms included) as the integer arithmetic gives
// them: wrapped to the dtype (uint8 3 - 4 is 255), divisions truncated toward zero and a division by
// zero 0 (the cpu kernels' choice where MXNet's cpu dies of SIGFPE: elemwise_arith_ops.h). rdiv and
// power compute in float in MXNet and convert, saturating (tensor_util.h): RoundTo's rule.
ForwardFn WithIntegerArith(const std::string& name, ForwardFn f) {
  static const std::set<std::string> kWrapping = {
      "add", "sub", "mul", "div", "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar"};
  if (kWrapping.count(name) == 0) return f;
  return [f](Call& c) {
    f(c);
    for (HostTensor& y : c.out)
      if (!IsFloatType(y.dtype))
        for (double& x : y.v) x = WrapTo(y.dtype, x);
  };
}

}  // namespace

double Activation(const std::string& type, double x) {
  if (type == "relu") return x > 0 ? x : 0.0;
  if (type == "sigmoid") return Sigmoid(x);
  if (type == "tanh") return std::tanh(x);
  if (type == "softrelu") return std::log1p(std::exp(x));
  if (type == "softsign") return x / (1.0 + std::fabs(x));
  weft::Fail("reference: Activation act_type '{}' has no reference", type);
}

void RegisterElemwiseReferences(Table& t) {
  for (const auto& [name, f] : UnaryOps()) t[name] = MapUnary(f);
  for (const auto& [name, f] : ScalarOps()) t[name] = WithIntegerArith(name, MapScalar(f));
  for (const auto& [name, f] : BinaryOps()) {
    t["broadcast_" + name] = WithIntegerArith(name, [f = f](Call& c) { Broadcast(c, f); });
    t["elemwise_" + name] = WithIntegerArith(name, [f = f](Call& c) { Broadcast(c, f); });
  }
  // MXNet's scatter ops on dense arrays are the plain ops.
  t["_scatter_plus_scalar"] = t["_plus_scalar"];
  t["_scatter_minus_scalar"] = t["_minus_scalar"];
  t["_scatter_elemwise_div"] = t["elemwise_div"];
  t["add_n"] = WithIntegerArith("add", [](Call& c) {
    for (const HostTensor& x : c.spec.in)
      for (size_t i = 0; i < x.v.size(); ++i) c.out[0].v[i] += x.v[i];
  });
  t["clip"] = [](Call& c) {
    const double lo = c.attrs().GetFloat("a_min"), hi = c.attrs().GetFloat("a_max");
    for (size_t i = 0; i < c.in(0).v.size(); ++i) c.out[0].v[i] = std::min(std::max(c.in(0).v[i], lo), hi);
  };
  // condition of x's shape, or 1-D of x's first extent (one choice per row); non-zero picks x.
  t["where"] = [](Call& c) {
    const HostTensor &cond = c.in(0), &x = c.in(1), &y = c.in(2);
    const int64_t row = cond.v.size() == x.v.size() ? 1 : static_cast<int64_t>(x.v.size() / cond.v.size());
    for (size_t i = 0; i < x.v.size(); ++i) c.out[0].v[i] = cond.v[i / static_cast<size_t>(row)] != 0 ? x.v[i] : y.v[i];
  };
  t["Activation"] = [](Call& c) {
    const std::string type = c.attrs().GetString("act_type");
    for (size_t i = 0; i < c.in(0).v.size(); ++i) c.out[0].v[i] = Activation(type, c.in(0).v[i]);
  };
  t["LeakyReLU"] = LeakyReLU;
}

}  // namespace wconf::ref
