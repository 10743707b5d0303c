// MXNet 1.9's samplers whose distribution parameters are arrays (src/operator/random/
// multisample_op.cc, sample_multinomial_op.cc, shuffle_op.cc): _sample_uniform, _sample_normal,
// _sample_gamma, _sample_exponential, _sample_poisson, _sample_negative_binomial,
// _sample_generalized_negative_binomial draw `shape` samples for every element of their parameter
// arrays (output shape: the parameters' shape + shape); _sample_multinomial draws `shape` category
// indices per row of probabilities; _shuffle permutes its input along the first axis. Names,
// attributes, defaults and aliases are MXNet 1.9.1's (mx.operator.get_operator_arguments).
//
// As in MXNet, the _sample_* ops do not check their parameter values (a negative scale gives what
// the formulas give, e.g. a mirrored normal): the values are data, not attributes.
#include "operator/defs/builtin.h"
#include "operator/op_util.h"
#include "weft/sdk/ops/random.hpp"

namespace weft::opdef {
namespace {

bool IsFloat(int t) {
  const auto d = static_cast<DType>(t);
  return d == DType::kFloat16 || d == DType::kFloat32 || d == DType::kFloat64;
}

// One sampler per element of its parameter arrays `params` (all of one shape and dtype).
OpDef MultiSampler(std::string name, std::string description, std::vector<std::string> params) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description) +
                  " Draws `shape` samples per element of the parameter arrays (all of one shape and dtype): the "
                  "output has the parameters' shape followed by `shape`. Parameter values are not checked (as "
                  "MXNet). The parameters get a zero gradient.";
  DeclareParams<sdk::MultiSampleParam>(d);
  d.list_inputs = Fixed(params);
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::MultiSampleParam>(d, [](ShapeIO& io, const sdk::MultiSampleParam& p) {
    for (size_t i = 0; i < io.num_in(); ++i)
      if (io.in(i))
        for (size_t j = 0; j < io.num_in(); ++j) io.AssignIn(j, *io.in(i));
    if (!io.in(0)) return;
    std::vector<int64_t> out = io.in(0)->dims();
    for (int64_t e : p.shape) out.push_back(e);
    io.AssignOut(0, Shape(out));
  });
  d.infer_type = [op = d.name](const AttrMap& a, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
    int known = -1;
    for (int t : in)
      if (t >= 0) known = t;
    if (known >= 0) {
      WEFT_CHECK(IsFloat(known), "{}: the parameters are {}; they must be float16, float32 or float64", op,
                 DTypeName(static_cast<DType>(known)));
      for (size_t i = 0; i < in.size(); ++i) AssignType(op, "input", std::to_string(i), in[i], known);
    }
    const std::string t = sdk::ParseParams<sdk::MultiSampleParam>(a).dtype;
    AssignType(op, "output", "output", out[0], static_cast<int>(t == "None" ? DType::kFloat32 : DTypeFromName(t)));
  };
  d.grad = GradKind::kZero;
  d.resources = kResourceRandom;
  return d;
}

OpDef SampleMultinomial() {
  OpDef d;
  d.name = "_sample_multinomial";
  d.description =
      "Draws `shape` category indices per row of `data` (probabilities along the last axis, summing to 1): output "
      "shape data.shape[:-1] + shape ((1,) for 1-D data and an empty shape). A draw beyond the row's total (a sum "
      "below 1) takes the last category. With get_prob, a second output holds the log-probability of each draw, "
      "whose gradient reaches data (d log p / d p = 1 / p at the drawn category).";
  DeclareParams<sdk::MultinomialParam>(d);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = [](const AttrMap& a) {
    return sdk::ParseParams<sdk::MultinomialParam>(a).get_prob ? std::vector<std::string>{"output0", "output1"}
                                                               : std::vector<std::string>{"output"};
  };
  SetShapeFn<sdk::MultinomialParam>(d, [](ShapeIO& io, const sdk::MultinomialParam& p) {
    if (!io.in(0)) return;
    const Shape& data = *io.in(0);
    if (data.ndim() == 0) io.Fail("input 'data' must have at least one axis (the categories)");
    std::vector<int64_t> out(data.begin(), data.end() - 1);
    for (int64_t e : p.shape) out.push_back(e);
    if (out.empty()) out.push_back(1);
    for (size_t i = 0; i < io.num_out(); ++i) io.AssignOut(i, Shape(out));
  });
  d.infer_type = [](const AttrMap& a, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
    const char* op = "_sample_multinomial";
    AssignType(op, "output", "output", out[0],
               static_cast<int>(DTypeFromName(sdk::ParseParams<sdk::MultinomialParam>(a).dtype)));
    if (in[0] < 0 && out.size() > 1) in[0] = out[1];
    if (in[0] < 0) return;
    WEFT_CHECK(IsFloat(in[0]), "{}: input 'data' is {}; the probabilities must be float16, float32 or float64", op,
               DTypeName(static_cast<DType>(in[0])));
    if (out.size() > 1) AssignType(op, "output", "output1", out[1], in[0]);
  };
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_sample_multinomial";
  d.backward_uses = kUsesInputs | kUsesOutputs;
  d.resources = kResourceRandom;
  return d;
}

OpDef Shuffle() {
  OpDef d;
  d.name = "_shuffle";
  d.description =
      "data with its first-axis slices in a uniformly random order (every dtype). The gradient is not defined "
      "(MXNet registers none): inputs get zeros.";
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, SameShapeAll);
  d.grad = GradKind::kNone;
  d.resources = kResourceRandom;
  return d;
}

}  // namespace

void RegisterRandomMultiOps(OpRegistry& r) {
  r.Register(MultiSampler("_sample_uniform", "Uniform on [low, high).", {"low", "high"}));
  r.Register(MultiSampler("_sample_normal", "Normal of mean mu and standard deviation sigma.", {"mu", "sigma"}));
  r.Register(MultiSampler("_sample_gamma", "Gamma of shape alpha and scale beta.", {"alpha", "beta"}));
  r.Register(MultiSampler("_sample_exponential", "Exponential of rate lam.", {"lam"}));
  r.Register(MultiSampler("_sample_poisson", "Poisson of mean lam, as floating point counts.", {"lam"}));
  r.Register(MultiSampler("_sample_negative_binomial",
                          "Negative binomial: failures before the k-th success of probability p.", {"k", "p"}));
  r.Register(MultiSampler("_sample_generalized_negative_binomial",
                          "Generalized negative binomial of mean mu and dispersion alpha (variance mu + alpha·mu²).",
                          {"mu", "alpha"}));
  r.Register(SampleMultinomial());
  r.Register(Shuffle());
  for (const char* op : {"uniform", "normal", "gamma", "exponential", "poisson", "negative_binomial",
                         "generalized_negative_binomial", "multinomial"})
    r.AddAlias(std::string("sample_") + op, std::string("_sample_") + op);
  r.AddAlias("shuffle", "_shuffle");
}

}  // namespace weft::opdef
