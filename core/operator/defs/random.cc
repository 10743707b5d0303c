// Random sampling ops of MXNet 1.9 (src/operator/random/sample_op.cc): _random_uniform,
// _random_normal, _random_randint, _random_exponential, _random_gamma, _random_poisson, _random_negative_binomial,
// _random_generalized_negative_binomial, which make
// an array of `shape` from their attributes, and _random_uniform_like / _random_normal_like, which
// take shape and dtype from their input. Attribute names, types, defaults and order are MXNet
// 1.9.1's (mx.operator.get_operator_arguments), and so are the aliases.
//
// The parameter checks MXNet makes when it samples (scale > 0, lam > 0, ...) are the kernels'
// (OPS.md): as in MXNet, a bad value is reported when the result is waited for, not at the call.
#include "weft/sdk/ops/random.hpp"
#include "operator/defs/builtin.h"
#include "operator/op_util.h"

namespace weft::opdef {
namespace {

// A creation sampler of distribution D: D's attributes, then shape, ctx and dtype as MXNet lists
// them (sdk::SampleParam).
template <class D, bool kInteger = false>
OpDef Sampler(std::string name, std::string description) {
  using P = sdk::SampleParam<D, kInteger>;
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  DeclareParams<P>(d);
  d.list_inputs = Fixed({});
  d.list_outputs = Fixed({"output"});
  // MXNet 1.x (legacy shape semantics): an empty shape, or a 0 extent, is unknown, to be inferred
  // from the node's consumers.
  SetShapeFn<P>(d, [](ShapeIO& io, const P& p) {
    std::vector<int64_t> s = p.shape;
    if (s.empty()) return;
    for (int64_t& e : s) {
      if (e < 0) io.Fail(fmt::format("shape {} has a negative extent", sdk::FormatTuple(s)));
      if (e == 0) e = -1;
    }
    io.AssignOut(0, Shape(s));
  });
  d.infer_type = [op = d.name](const AttrMap& a, std::vector<int>&, std::vector<int>& out, std::vector<int>&) {
    const std::string t = sdk::ParseParams<P>(a).dtype;
    if (t != "None") return AssignType(op, "output", "output", out[0], static_cast<int>(DTypeFromName(t)));
    // MXNet's SampleOpType: 'None' takes a given output's dtype (an initializer drawing into a
    // float64 parameter with out=), else the default.
    if (out[0] < 0) {
      out[0] = static_cast<int>(kInteger ? DType::kInt32 : DType::kFloat32);
      return;
    }
    const auto given = static_cast<DType>(out[0]);
    const bool fits = kInteger ? given == DType::kInt32 || given == DType::kInt64
                               : given == DType::kFloat16 || given == DType::kFloat32 || given == DType::kFloat64;
    WEFT_CHECK(fits, "{}: the output is {}; the sampler draws {}", op, DTypeName(given),
               kInteger ? "int32 or int64" : "float16, float32 or float64");
  };
  d.grad = GradKind::kNone;
  d.resources = kResourceRandom;
  return d;
}

// A sampler shaped like its input `data` (float16/32/64, as MXNet), whose gradient is zero.
template <class D>
OpDef LikeSampler(std::string name, std::string description) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  DeclareParams<D>(d);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, SameShapeAll);
  d.infer_type = [op = d.name](const AttrMap&, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
    if (in[0] < 0 && out[0] >= 0) in[0] = out[0];
    if (in[0] < 0) return;
    const auto t = static_cast<DType>(in[0]);
    WEFT_CHECK(t == DType::kFloat16 || t == DType::kFloat32 || t == DType::kFloat64,
               "{}: input 'data' is {}; this operation only supports floating point types (float16, float32, "
               "float64)",
               op, DTypeName(t));
    AssignType(op, "output", "output", out[0], in[0]);
  };
  d.grad = GradKind::kZero;
  d.resources = kResourceRandom;
  return d;
}

const char kUniform[] = "Samples uniformly from [low, high) (low <= high).";
const char kNormal[] = "Samples from the normal distribution of mean loc and standard deviation scale (> 0).";

}  // namespace

void RegisterRandomOps(OpRegistry& r) {
  r.Register(Sampler<sdk::UniformParam>("_random_uniform", kUniform));
  r.Register(Sampler<sdk::NormalParam>("_random_normal", kNormal));
  r.Register(
      Sampler<sdk::RandintParam, true>("_random_randint", "Samples integers uniformly from [low, high) (low < high)."));
  r.Register(Sampler<sdk::ExponentialParam>(
      "_random_exponential", "Samples from the exponential distribution of rate lam (> 0): mean 1/lam."));
  r.Register(Sampler<sdk::GammaParam>(
      "_random_gamma",
      "Samples from the gamma distribution of shape alpha (> 0) and scale beta (> 0): mean alpha·beta."));
  r.Register(Sampler<sdk::PoissonParam>(
      "_random_poisson", "Samples from the Poisson distribution of mean lam (>= 0), as floating point counts."));
  r.Register(Sampler<sdk::NegativeBinomialParam>(
      "_random_negative_binomial",
      "Samples from the negative binomial distribution: failures before the k-th success (k >= 0) of "
      "probability p (in (0, 1]), as floating point counts."));
  r.Register(Sampler<sdk::GeneralizedNegativeBinomialParam>(
      "_random_generalized_negative_binomial",
      "Samples from the generalized negative binomial distribution of mean mu (>= 0) and dispersion "
      "alpha (>= 0; variance mu + alpha·mu², alpha = 0 is Poisson), as floating point counts."));
  r.Register(
      LikeSampler<sdk::UniformParam>("_random_uniform_like", std::string(kUniform) + " Shape and dtype are data's."));
  r.Register(
      LikeSampler<sdk::NormalParam>("_random_normal_like", std::string(kNormal) + " Shape and dtype are data's."));
  const std::string like = " Shape and dtype are data's.";
  r.Register(LikeSampler<sdk::ExponentialParam>("_random_exponential_like",
                                                "Samples from the exponential distribution of rate lam." + like));
  r.Register(LikeSampler<sdk::GammaParam>("_random_gamma_like",
                                          "Samples from the gamma distribution of shape alpha and scale beta." + like));
  r.Register(LikeSampler<sdk::PoissonParam>("_random_poisson_like",
                                            "Samples from the Poisson distribution of mean lam." + like));
  r.Register(LikeSampler<sdk::NegativeBinomialParam>(
      "_random_negative_binomial_like",
      "Samples from the negative binomial distribution of k successes of probability p." + like));
  r.Register(LikeSampler<sdk::GeneralizedNegativeBinomialParam>(
      "_random_generalized_negative_binomial_like",
      "Samples from the generalized negative binomial distribution of mean mu and dispersion alpha." + like));
  // MXNet 1.9.1's aliases of these ops (no more: there is no "randint" or "uniform_like"; mx.nd.random's
  // *_like functions call the _random_*_like names).
  for (const char* op : {"uniform", "normal"}) r.AddAlias(op, std::string("_random_") + op);
  for (const char* op : {"uniform", "normal", "randint", "exponential", "gamma", "poisson", "negative_binomial",
                         "generalized_negative_binomial"})
    r.AddAlias(std::string("random_") + op, std::string("_random_") + op);
}

}  // namespace weft::opdef
