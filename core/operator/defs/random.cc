// Random sampling ops of MXNet 1.9 (src/operator/random/sample_op.cc): _random_uniform,
// _random_normal, _random_randint, _random_exponential, _random_gamma, _random_poisson, _random_negative_binomial,
// _random_generalized_negative_binomial, which make
// an array of `shape` from their attributes, and _random_uniform_like / _random_normal_like, which
// take shape and dtype from their input. Attribute names, types, defaults and order are MXNet
// 1.9.1's (mx.operator.get_operator_arguments), and so are the aliases.
//
// The parameter checks MXNet makes when it samples (scale > 0, lam > 0, ...) are the kernels'
// (OPS.md): as in MXNet, a bad value is reported when the result is waited for, not at the call.
#include "operator/defs/builtin.h"
#include "operator/op_util.h"

namespace weft::opdef {
namespace {

// MXNet's SampleOpParam dtype: 'None' is float32 (randint: int32).
const std::vector<std::string> kFloatDTypes = {"None", "float16", "float32", "float64"};
const std::vector<std::string> kIntDTypes = {"None", "int32", "int64"};

// A creation sampler: the distribution's attributes, then shape, ctx and dtype as MXNet lists them.
OpDef Sampler(std::string name, std::string description, std::vector<AttrSpec> params, bool integer) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.attrs = std::move(params);
  d.attrs.push_back(Opt("shape", "shape", "None", "output shape (None or (): taken from the graph)"));
  d.attrs.push_back(Ignored(Opt("ctx", "string", "", "device the array is made on (the executor's context is used)")));
  d.attrs.push_back(Enum("dtype", integer ? kIntDTypes : kFloatDTypes, "None",
                         integer ? "output dtype (None: int32)" : "output dtype (None: float32)"));
  d.list_inputs = Fixed({});
  d.list_outputs = Fixed({"output"});
  // MXNet 1.x (legacy shape semantics): an empty shape, or a 0 extent, is unknown, to be inferred
  // from the node's consumers.
  SetShapeFn(d, [](ShapeIO& io) {
    std::vector<int64_t> s = io.attrs().GetTuple("shape", {});
    if (s.empty()) return;
    for (int64_t& e : s) {
      if (e < 0) io.Fail(fmt::format("shape {} has a negative extent", sdk::FormatTuple(s)));
      if (e == 0) e = -1;
    }
    io.AssignOut(0, Shape(s));
  });
  d.infer_type = [integer, op = d.name](const AttrMap& a, std::vector<int>&, std::vector<int>& out, std::vector<int>&) {
    const std::string t = a.GetString("dtype", "None");
    if (t != "None") return AssignType(op, "output", "output", out[0], static_cast<int>(DTypeFromName(t)));
    // MXNet's SampleOpType: 'None' takes a given output's dtype (an initializer drawing into a
    // float64 parameter with out=), else the default.
    if (out[0] < 0) {
      out[0] = static_cast<int>(integer ? DType::kInt32 : DType::kFloat32);
      return;
    }
    const auto given = static_cast<DType>(out[0]);
    const bool fits = integer ? given == DType::kInt32 || given == DType::kInt64
                              : given == DType::kFloat16 || given == DType::kFloat32 || given == DType::kFloat64;
    WEFT_CHECK(fits, "{}: the output is {}; the sampler draws {}", op, DTypeName(given),
               integer ? "int32 or int64" : "float16, float32 or float64");
  };
  d.grad = GradKind::kNone;
  d.resources = kResourceRandom;
  return d;
}

// A sampler shaped like its input `data` (float16/32/64, as MXNet), whose gradient is zero.
OpDef LikeSampler(std::string name, std::string description, std::vector<AttrSpec> params) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.attrs = std::move(params);
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

std::vector<AttrSpec> UniformParams() {
  return {Opt("low", "float", "0", "lower bound (inclusive)"), Opt("high", "float", "1", "upper bound (exclusive)")};
}
std::vector<AttrSpec> NormalParams() {
  return {Opt("loc", "float", "0", "mean"), Opt("scale", "float", "1", "standard deviation (> 0)")};
}

const char kUniform[] = "Samples uniformly from [low, high) (low <= high).";
const char kNormal[] = "Samples from the normal distribution of mean loc and standard deviation scale (> 0).";

}  // namespace

void RegisterRandomOps(OpRegistry& r) {
  r.Register(Sampler("_random_uniform", kUniform, UniformParams(), false));
  r.Register(Sampler("_random_normal", kNormal, NormalParams(), false));
  r.Register(Sampler("_random_randint", "Samples integers uniformly from [low, high) (low < high).",
                     {Req("low", "long", "lower bound (inclusive)"), Req("high", "long", "upper bound (exclusive)")},
                     true));
  r.Register(Sampler("_random_exponential", "Samples from the exponential distribution of rate lam (> 0): mean 1/lam.",
                     {Opt("lam", "float", "1", "rate λ")}, false));
  r.Register(Sampler("_random_gamma",
                     "Samples from the gamma distribution of shape alpha (> 0) and scale beta (> 0): mean alpha·beta.",
                     {Opt("alpha", "float", "1", "shape α"), Opt("beta", "float", "1", "scale β")}, false));
  r.Register(Sampler("_random_poisson",
                     "Samples from the Poisson distribution of mean lam (>= 0), as floating point counts.",
                     {Opt("lam", "float", "1", "mean λ")}, false));
  r.Register(Sampler("_random_negative_binomial",
                     "Samples from the negative binomial distribution: failures before the k-th success (k >= 0) of "
                     "probability p (in (0, 1]), as floating point counts.",
                     {Opt("k", "int", "1", "successes k"), Opt("p", "float", "1", "success probability p")}, false));
  r.Register(Sampler("_random_generalized_negative_binomial",
                     "Samples from the generalized negative binomial distribution of mean mu (>= 0) and dispersion "
                     "alpha (>= 0; variance mu + alpha·mu², alpha = 0 is Poisson), as floating point counts.",
                     {Opt("mu", "float", "1", "mean μ"), Opt("alpha", "float", "1", "dispersion α")}, false));
  r.Register(
      LikeSampler("_random_uniform_like", std::string(kUniform) + " Shape and dtype are data's.", UniformParams()));
  r.Register(LikeSampler("_random_normal_like", std::string(kNormal) + " Shape and dtype are data's.", NormalParams()));
  // MXNet 1.9.1's aliases of these ops (no more: there is no "randint" or "uniform_like").
  for (const char* op : {"uniform", "normal"}) r.AddAlias(op, std::string("_random_") + op);
  for (const char* op : {"uniform", "normal", "randint", "exponential", "gamma", "poisson", "negative_binomial",
                         "generalized_negative_binomial"})
    r.AddAlias(std::string("random_") + op, std::string("_random_") + op);
}

}  // namespace weft::opdef
