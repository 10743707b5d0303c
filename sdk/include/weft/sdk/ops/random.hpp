// weft SDK ops — the random samplers _random_uniform, _random_normal, _random_randint,
// _random_exponential, _random_gamma, _random_poisson, _random_negative_binomial,
// _random_generalized_negative_binomial (MXNet 1.9's SampleUniformParam, ... with shape, ctx and
// dtype after the distribution's own attributes) and _random_uniform_like / _random_normal_like
// (the distribution's attributes only); the samplers per parameter element _sample_uniform, ...
// (MultiSampleParam) and _sample_multinomial. The distributions' range checks are the kernels', as in
// MXNet (the error surfaces when the result is waited for), so none is declared here.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// A 64-bit integer attribute MXNet spells "long" (randint's bounds): parsed as an int, declared
/// with type "long".
struct LongAttr {
  int64_t value = 0;
  friend bool operator==(const LongAttr&, const LongAttr&) = default;
};

namespace detail {
template <>
struct AttrType<LongAttr> {
  static constexpr std::string_view kWord = "long";
  static std::string Spelling(const Attr&) { return "long"; }
  static LongAttr Parse(std::string_view text, const Attr& a) { return {AttrType<int64_t>::Parse(text, a)}; }
};
}  // namespace detail

struct UniformParam {
  double low = 0.0, high = 1.0;
  template <class V>
  void Visit(V& v) {
    v(low, Attr("low").Default("0").Doc("lower bound (inclusive)"));
    v(high, Attr("high").Default("1").Doc("upper bound (exclusive)"));
  }
};

struct NormalParam {
  double loc = 0.0, scale = 1.0;
  template <class V>
  void Visit(V& v) {
    v(loc, Attr("loc").Default("0").Doc("mean"));
    v(scale, Attr("scale").Default("1").Doc("standard deviation (> 0)"));
  }
};

struct RandintParam {
  LongAttr low, high;
  template <class V>
  void Visit(V& v) {
    v(low, Attr("low").Doc("lower bound (inclusive)"));
    v(high, Attr("high").Doc("upper bound (exclusive)"));
  }
};

/// _random_exponential (rate lam) and _random_poisson (mean lam).
template <bool kPoisson>
struct LamParamOf {
  double lam = 1.0;
  template <class V>
  void Visit(V& v) {
    v(lam, Attr("lam").Default("1").Doc(kPoisson ? "mean λ" : "rate λ"));
  }
};
using ExponentialParam = LamParamOf<false>;
using PoissonParam = LamParamOf<true>;

struct GammaParam {
  double alpha = 1.0, beta = 1.0;
  template <class V>
  void Visit(V& v) {
    v(alpha, Attr("alpha").Default("1").Doc("shape α"));
    v(beta, Attr("beta").Default("1").Doc("scale β"));
  }
};

struct NegativeBinomialParam {
  int64_t k = 1;
  double p = 1.0;
  template <class V>
  void Visit(V& v) {
    v(k, Attr("k").Default("1").Doc("successes k"));
    v(p, Attr("p").Default("1").Doc("success probability p"));
  }
};

struct GeneralizedNegativeBinomialParam {
  double mu = 1.0, alpha = 1.0;
  template <class V>
  void Visit(V& v) {
    v(mu, Attr("mu").Default("1").Doc("mean μ"));
    v(alpha, Attr("alpha").Default("1").Doc("dispersion α"));
  }
};

// MXNet's SampleOpParam dtype: 'None' is float32 (randint: int32).
inline constexpr std::string_view kSampleFloatDTypes[] = {"None", "float16", "float32", "float64"};
inline constexpr std::string_view kSampleIntDTypes[] = {"None", "int32", "int64"};

/// A creation sampler: the distribution D's attributes, then shape, ctx and dtype as MXNet lists
/// them. kInteger: randint's dtypes.
template <class D, bool kInteger = false>
struct SampleParam : D {
  Tuple shape;
  std::string ctx, dtype = "None";

  template <class V>
  void Visit(V& v) {
    D::Visit(v);
    v(shape, Attr("shape").Default("None").Doc("output shape (None or (): taken from the graph)"));
    v(ctx, Attr("ctx").Default("").Ignored().Doc("device the array is made on (the executor's context is used)"));
    v(dtype, Attr("dtype")
                 .Default("None")
                 .Choices(kInteger ? std::span<const std::string_view>(kSampleIntDTypes)
                                   : std::span<const std::string_view>(kSampleFloatDTypes))
                 .Doc(kInteger ? "output dtype (None: int32)" : "output dtype (None: float32)"));
  }
};

/// _sample_uniform, _sample_normal, ...: `shape` draws per element of the parameter arrays.
struct MultiSampleParam {
  Tuple shape;
  std::string dtype = "None";

  template <class V>
  void Visit(V& v) {
    v(shape, Attr("shape").Default("()").Doc("samples per parameter element"));
    v(dtype, Attr("dtype").Default("None").Choices(kSampleFloatDTypes).Doc("output dtype (None: float32)"));
  }
};

inline constexpr std::string_view kMultinomialDTypes[] = {"float16", "float32", "float64", "int32", "uint8"};

/// _sample_multinomial: `shape` category indices per row of data.
struct MultinomialParam {
  Tuple shape;
  bool get_prob = false;
  std::string dtype = "int32";

  template <class V>
  void Visit(V& v) {
    v(shape, Attr("shape").Default("()").Doc("draws per row"));
    v(get_prob, Attr("get_prob").Default("False").Doc("also output the log-probability of each draw"));
    v(dtype, Attr("dtype").Default("int32").Choices(kMultinomialDTypes).Doc("dtype of the indices"));
  }
};

}  // namespace weft::sdk
