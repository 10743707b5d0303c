// References of the random samplers (_random_uniform, _random_normal, _random_randint,
// _random_exponential, _random_gamma, _random_poisson, _random_negative_binomial,
// _random_generalized_negative_binomial, _random_uniform_like, _random_normal_like; the _sample_*
// forms with parameter arrays, _sample_multinomial and _shuffle).
// Draws cannot be recomputed independently of the device's generator, so each reference takes the
// device's values and checks them against the distribution: every value in its support, and the
// sample mean within 6 standard errors of the distribution's mean (plus the rounding of the
// output dtype). What is wrong goes to *error; the device's values are returned, so the
// comparison that follows checks only the dtype rounding.
#include <algorithm>
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

// The law of distribution `kind` (uniform, normal, exponential, gamma, poisson,
// negative_binomial, generalized_negative_binomial) with parameters p, q in the op's order
// (exponential and poisson: p alone).
Law LawOf(const std::string& kind, double p, double q) {
  Law d;
  if (kind == "uniform") {
    d = {(p + q) / 2, (q - p) * (q - p) / 12, p, q, q > p};
  } else if (kind == "normal") {
    d = {p, q * q};
  } else if (kind == "exponential") {
    d = {1 / p, 1 / (p * p), 0};
  } else if (kind == "gamma") {
    d = {p * q, p * q * q, 0};
  } else if (kind == "poisson") {
    d = {p, p, 0};
    d.integer = true;
  } else if (kind == "negative_binomial") {
    d = {p * (1 - q) / q, p * (1 - q) / (q * q), 0};
    d.integer = true;
  } else {  // generalized_negative_binomial: mean mu, variance mu + alpha·mu²
    d = {p, p + q * p * p, 0};
    d.integer = true;
  }
  return d;
}

Law LawOf(const Call& c) {
  const weft::AttrMap& a = c.attrs();
  std::string kind = c.spec.op.substr(std::string("_random_").size());
  if (kind.ends_with("_like")) kind.resize(kind.size() - 5);
  if (kind == "randint") {
    const double lo = static_cast<double>(a.GetInt("low")), hi = static_cast<double>(a.GetInt("high"));
    return {(lo + hi - 1) / 2, ((hi - lo) * (hi - lo) - 1) / 12, lo, hi, true, true};
  }
  if (kind == "uniform") return LawOf(kind, a.GetFloat("low", 0), a.GetFloat("high", 1));
  if (kind == "normal") return LawOf(kind, a.GetFloat("loc", 0), a.GetFloat("scale", 1));
  if (kind == "gamma") return LawOf(kind, a.GetFloat("alpha", 1), a.GetFloat("beta", 1));
  if (kind == "negative_binomial") return LawOf(kind, static_cast<double>(a.GetInt("k", 1)), a.GetFloat("p", 1));
  if (kind == "generalized_negative_binomial") return LawOf(kind, a.GetFloat("mu", 1), a.GetFloat("alpha", 1));
  return LawOf(kind, a.GetFloat("lam", 1), 0);
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

// Checks draws [begin, end) of the device's output 0 against law d (copying them into the
// reference's output).
void CheckDraws(Call& c, const Law& d, size_t begin, size_t end) {
  const HostTensor& got = c.device.out.at(0);
  const DType dtype = c.out[0].dtype;
  size_t outside = 0, first = 0;
  double sum = 0, scale = 0;
  for (size_t i = begin; i < end; ++i) {
    const double v = got.v[i];
    if (!InSupport(d, dtype, v) && outside++ == 0) first = i;
    sum += v;
    scale = std::max(scale, std::fabs(v));
    c.out[0].v[i] = v;
  }
  const std::string& op = c.spec.op;
  if (outside > 0)
    *c.error += fmt::format("{}: {} of {} draws outside the support (element {}: {}); ", op, outside, end - begin,
                            first, got.v[first]);
  if (end == begin) return;
  const double n = static_cast<double>(end - begin), mean = sum / n;
  const double allowed = 6 * std::sqrt(d.variance / n) + 2 * Epsilon(dtype) * std::max(scale, std::fabs(d.mean));
  if (!(std::fabs(mean - d.mean) <= allowed))
    *c.error += fmt::format(
        "{}: sample mean {:.6g} of {} draws is {:.3g} from the distribution's mean {:.6g} "
        "(more than 6 standard errors, {:.3g}); ",
        op, mean, end - begin, std::fabs(mean - d.mean), d.mean, allowed);
}

void Sampler(Call& c) { CheckDraws(c, LawOf(c), 0, c.device.out.at(0).v.size()); }

// _sample_*: the draws of each parameter element against that element's law.
void MultiSampler(Call& c) {
  const std::string kind = c.spec.op.substr(std::string("_sample_").size());
  const size_t n = c.in(0).v.size(), total = c.device.out.at(0).v.size();
  const size_t m = n == 0 ? 0 : total / n;
  for (size_t j = 0; j < n; ++j)
    CheckDraws(c, LawOf(kind, c.in(0).v[j], c.spec.in.size() > 1 ? c.in(1).v[j] : 0.0), j * m, (j + 1) * m);
}

// _sample_multinomial: every index a category of non-zero probability, its log-probability (the
// second output, with get_prob) recomputed, and each category's frequency within 6 standard errors
// of its probability.
void Multinomial(Call& c) {
  const HostTensor& p = c.in(0);
  const HostTensor& got = c.device.out.at(0);
  const size_t k = static_cast<size_t>(p.shape[p.shape.ndim() - 1]), rows = p.v.size() / k;
  const size_t m = rows == 0 ? 0 : got.v.size() / rows;
  for (size_t r = 0; r < rows; ++r) {
    std::vector<double> count(k, 0.0);
    for (size_t s = 0; s < m; ++s) {
      const size_t i = r * m + s;
      const double cat = got.v[i];
      c.out[0].v[i] = cat;
      if (!(cat >= 0 && cat < static_cast<double>(k)) || p.v[r * k + static_cast<size_t>(cat)] <= 0) {
        *c.error += fmt::format(
            "_sample_multinomial: draw {} of row {} is category {}, not one of positive "
            "probability; ",
            s, r, cat);
        return;
      }
      count[static_cast<size_t>(cat)] += 1;
      if (c.out.size() > 1) c.out[1].v[i] = RoundTo(c.out[1].dtype, std::log(p.v[r * k + static_cast<size_t>(cat)]));
    }
    for (size_t j = 0; j < k && m > 0; ++j) {
      const double q = p.v[r * k + j], f = count[j] / static_cast<double>(m);
      if (std::fabs(f - q) > 6 * std::sqrt(q * (1 - q) / static_cast<double>(m)) + 1e-3)
        *c.error += fmt::format(
            "_sample_multinomial: row {} drew category {} with frequency {:.4g}, probability "
            "{:.4g}; ",
            r, j, f, q);
    }
  }
}

// _shuffle: the device's output must hold data's first-axis slices, each once.
void Shuffle(Call& c) {
  const HostTensor& x = c.in(0);
  const HostTensor& got = c.device.out.at(0);
  const size_t rows = x.shape.ndim() == 0 ? 1 : static_cast<size_t>(x.shape[0]);
  const size_t w = rows == 0 ? 0 : x.v.size() / rows;
  auto row = [w](const std::vector<double>& v, size_t r) {
    return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(r * w),
                               v.begin() + static_cast<std::ptrdiff_t>((r + 1) * w));
  };
  std::vector<std::vector<double>> want, have;
  for (size_t r = 0; r < rows; ++r) {
    want.push_back(row(x.v, r));
    have.push_back(row(got.v, r));
  }
  std::sort(want.begin(), want.end());
  std::sort(have.begin(), have.end());
  if (want != have) *c.error += "_shuffle: the output's rows are not a permutation of data's; ";
  c.out[0].v = got.v;
}

}  // namespace

void RegisterRandomReferences(Table& t) {
  for (const char* op :
       {"_random_uniform", "_random_normal", "_random_randint", "_random_exponential", "_random_gamma",
        "_random_poisson", "_random_negative_binomial", "_random_generalized_negative_binomial", "_random_uniform_like",
        "_random_normal_like", "_random_exponential_like", "_random_gamma_like", "_random_poisson_like",
        "_random_negative_binomial_like", "_random_generalized_negative_binomial_like"})
    t[op] = Sampler;
  for (const char* op : {"_sample_uniform", "_sample_normal", "_sample_gamma", "_sample_exponential", "_sample_poisson",
                         "_sample_negative_binomial", "_sample_generalized_negative_binomial"})
    t[op] = MultiSampler;
  t["_sample_multinomial"] = Multinomial;
  t["_shuffle"] = Shuffle;
}

}  // namespace wconf::ref
