// weft SDK ops — ops without inputs that make arrays from their attributes: _zeros, _ones, _full
// (MXNet 1.9's InitOpParam, InitOpWithScalarParam), _arange (RangeParam), _linspace
// (LinspaceParam) and _eye (EyeParam). Each declares its own attributes first and then MXNet's
// `ctx` and `dtype`: MXNet's Python functions take them by position in that order
// (mx.nd.zeros(shape, ctx, dtype)).
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

inline constexpr std::string_view kInitDTypes[] = {"float32", "float64", "float16", "bfloat16", "uint8",
                                                   "int8",    "int32",   "int64",   "bool"};
// The dtypes MXNet's RangeParam / LinspaceParam list (no bool) and EyeParam's (no bfloat16, bool).
inline constexpr std::string_view kArangeDTypes[] = {"float32", "float64", "float16", "bfloat16",
                                                     "uint8",   "int8",    "int32",   "int64"};
inline constexpr std::string_view kEyeDTypes[] = {"float32", "float64", "float16", "uint8", "int8", "int32", "int64"};

namespace detail {
// MXNet's trailing `ctx` and `dtype` of the init ops.
template <class V, size_t N>
void VisitCtxDType(V& v, std::string& ctx, DTypeAttr& dtype, const std::string_view (&dtypes)[N]) {
  v(ctx, Attr("ctx").Default("").Ignored().Doc("device the array is made on (the executor's context is used)"));
  v(dtype, Attr("dtype").Default("float32").Choices(dtypes).Doc("output dtype"));
}
}  // namespace detail

/// _zeros, _ones (with_value false) and _full (true): an array of `shape`.
template <bool kWithValue>
struct FillParamOf {
  std::string ctx;
  DTypeAttr dtype{WEFT_DTYPE_FLOAT32};
  Tuple shape;
  double value = 0.0;

  template <class V>
  void Visit(V& v) {
    v(shape, Attr("shape").Default("()").Doc("output shape"));
    detail::VisitCtxDType(v, ctx, dtype, kInitDTypes);
    if constexpr (kWithValue) v(value, Attr("value").Doc("fill value"));
  }
  void Validate() const {
    for (int64_t e : shape) CheckParam(e >= 0, "shape " + FormatTuple(shape) + " has a negative extent");
  }
  /// The output shape as shape inference sees it: MXNet 1.x (not numpy mode) reads an extent of 0
  /// as unknown (-1), inferred from the graph, as in the begin states of mx.rnn cells,
  /// zeros(shape=(0, num_hidden)), whose batch comes from data.
  Tuple InferredShape() const {
    Tuple s = shape;
    for (int64_t& e : s)
      if (e == 0) e = -1;
    return s;
  }
};
using FillParam = FillParamOf<false>;
using FullParam = FillParamOf<true>;

/// _arange: start, start + step, ... below stop (stop None: from 0 to start), each value
/// `repeat` times.
struct ArangeParam {
  std::string ctx;
  DTypeAttr dtype{WEFT_DTYPE_FLOAT32};
  double start = 0.0;
  std::optional<double> stop;
  double step = 1.0;
  int64_t repeat = 1;
  bool infer_range = false;

  template <class V>
  void Visit(V& v) {
    v(start, Attr("start").Doc("first value (the end when stop is None)"));
    v(stop, Attr("stop").Default("None").Doc("end (exclusive)"));
    v(step, Attr("step").Default("1").Doc("spacing"));
    v(repeat, Attr("repeat").Default("1").Min(1).Doc("copies of each value"));
    v(infer_range,
      Attr("infer_range").Default("False").DefaultOnly().Doc("take the length from the graph (unsupported)"));
    detail::VisitCtxDType(v, ctx, dtype, kArangeDTypes);
  }
  void Validate() const {
    CheckParam(step != 0, "step must not be 0");
    Length();
  }
  /// The first value (MXNet's RangeParam: with stop None the range is [0, start)).
  double First() const { return stop ? start : 0.0; }
  /// Elements of the output: ceil((stop − start) / step) values, each `repeat` times.
  int64_t Length() const {
    const double lo = First(), hi = stop ? *stop : start;
    const double n = std::ceil((hi - lo) / step);
    return n <= 0 ? 0 : static_cast<int64_t>(n) * repeat;
  }
};

/// _linspace: num values evenly spaced from start to stop (MXNet's LinspaceParam; its
/// registration lists RangeParam's fields, but parses these).
struct LinspaceParam {
  double start = 0.0, stop = 0.0;
  int64_t num = 0;
  bool endpoint = true;
  std::string ctx;
  DTypeAttr dtype{WEFT_DTYPE_FLOAT32};

  template <class V>
  void Visit(V& v) {
    v(start, Attr("start").Doc("first value"));
    v(stop, Attr("stop").Doc("last value (or the end when endpoint is False)"));
    v(num, Attr("num").Min(0).Doc("number of values"));
    v(endpoint, Attr("endpoint").Default("True").Doc("whether stop is the last value"));
    detail::VisitCtxDType(v, ctx, dtype, kArangeDTypes);
  }
};

/// _eye: an N × M array (M = 0: N × N) with ones on diagonal k.
struct EyeParam {
  int64_t N = 0, M = 0, k = 0;
  std::string ctx;
  DTypeAttr dtype{WEFT_DTYPE_FLOAT32};

  template <class V>
  void Visit(V& v) {
    v(N, Attr("N").Min(0).Doc("rows"));
    v(M, Attr("M").Default("0").Min(0).Doc("columns; 0 = N"));
    v(k, Attr("k").Default("0").Doc("diagonal offset (k > 0 above the main one)"));
    detail::VisitCtxDType(v, ctx, dtype, kEyeDTypes);
  }
  /// Columns of the output.
  int64_t Columns() const { return M > 0 ? M : N; }
};

}  // namespace weft::sdk
