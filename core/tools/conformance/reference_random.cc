// References of the random samplers (_random_uniform, _random_normal, _random_randint,
// _random_exponential, _random_gamma, _random_poisson, _random_uniform_like, _random_normal_like).
// Draws cannot be recomputed independently of the device's generator, so each reference takes the
// device's values and checks them against the distribution: every value in its support, and the
// sample mean within 6 standard errors of the distribution's mean (plus the rounding of the
// output dtype). What is wrong goes to *error; the device's values are returned, so the
// comparison that follows checks only the dtype rounding.
#include <cmath>

#include "reference.h"

namespace wconf::ref {
namespace {

// A distribution's moments and support, from the node's attributes.
struct Law {
  double mean = 0, variance = 0;
  double lo = -INFINITY, hi = INFINITY;  // support bounds; hi exclusive when hi_open
  bool hi_open = false;
  bool integer = false;
};

Law LawOf(const Call& c) {
  const weft::AttrMap& a = c.attrs();
  const std::string& op = c.spec.op;
  Law d;
  if (op == "_random_uniform" || op == "_random_uniform_like") {
    const double lo = a.GetFloat("low", 0), hi = a.GetFloat("high", 1);
    d = {(lo + hi) / 2, (hi - lo) * (hi - lo) / 12, lo, hi, hi > lo};
  } else if (op == "_random_normal" || op == "_random_normal_like") {
    const double s = a.GetFloat("scale", 1);
    d = {a.GetFloat("loc", 0), s * s};
  } else if (op == "_random_randint") {
    const double lo = static_cast<double>(a.GetInt("low")), hi = static_cast<double>(a.GetInt("high"));
    d = {(lo + hi - 1) / 2, ((hi - lo) * (hi - lo) - 1) / 12, lo, hi, true, true};
  } else if (op == "_random_exponential") {
    const double lam = a.GetFloat("lam", 1);
    d = {1 / lam, 1 / (lam * lam), 0};
  } else if (op == "_random_gamma") {
    const double alpha = a.GetFloat("alpha", 1), beta = a.GetFloat("beta", 1);
    d = {alpha * beta, alpha * beta * beta, 0};
  } else {
    const double lam = a.GetFloat("lam", 1);
    d = {lam, lam, 0};
    d.integer = true;
  }
  return d;
}

bool InSupport(const Law& d, DType dtype, double v) {
  if (!std::isfinite(v) || v < RoundTo(dtype, d.lo)) return false;
  if (d.integer && v != std::floor(v)) return false;
  return d.hi_open ? v < d.hi : v <= d.hi;
}

// Machine epsilon of the output dtype (0 for integers): the rounding a value may carry.
double Epsilon(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return 0x1.0p-10;
    case DType::kBfloat16:
      return 0x1.0p-7;
    case DType::kFloat32:
      return 0x1.0p-23;
    case DType::kFloat64:
      return 0x1.0p-52;
    default:
      return 0;
  }
}

void Sampler(Call& c) {
  const HostTensor& got = c.device.out.at(0);
  const Law d = LawOf(c);
  const DType dtype = c.out[0].dtype;
  size_t outside = 0, first = 0;
  double sum = 0, scale = 0;
  for (size_t i = 0; i < got.v.size(); ++i) {
    const double v = got.v[i];
    if (!InSupport(d, dtype, v) && outside++ == 0) first = i;
    sum += v;
    scale = std::max(scale, std::fabs(v));
    c.out[0].v[i] = v;
  }
  const std::string& op = c.spec.op;
  if (outside > 0)
    *c.error += fmt::format("{}: {} of {} draws outside the support (element {}: {}); ", op, outside, got.v.size(),
                            first, got.v[first]);
  if (got.v.empty()) return;
  const double n = static_cast<double>(got.v.size()), mean = sum / n;
  const double allowed = 6 * std::sqrt(d.variance / n) + 2 * Epsilon(dtype) * std::max(scale, std::fabs(d.mean));
  if (!(std::fabs(mean - d.mean) <= allowed))
    *c.error += fmt::format(
        "{}: sample mean {:.6g} of {} draws is {:.3g} from the distribution's mean {:.6g} "
        "(more than 6 standard errors, {:.3g}); ",
        op, mean, got.v.size(), std::fabs(mean - d.mean), d.mean, allowed);
}

}  // namespace

void RegisterRandomReferences(Table& t) {
  for (const char* op : {"_random_uniform", "_random_normal", "_random_randint", "_random_exponential", "_random_gamma",
                         "_random_poisson", "_random_uniform_like", "_random_normal_like"})
    t[op] = Sampler;
}

}  // namespace wconf::ref
