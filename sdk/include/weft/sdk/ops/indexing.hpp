// weft SDK ops — the indexing and assignment ops of MXNet's NDArray frontend: _set_value,
// scatter_nd / _scatter_set_nd and _histogram (MXNet 1.9's SetValue,
// ScatterNDParam, HistogramParam). _slice_assign(_scalar) take slice.hpp's structs.
#pragma once

#include <optional>
#include <string>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// _set_value: every element of the output set to `src`.
struct SetValueParam {
  double src = 0.0;

  template <class V>
  void Visit(V& v) {
    v(src, Attr("src").Doc("the value"));
  }
};

/// scatter_nd, _scatter_set_nd: the output's shape.
struct ScatterNdParam {
  Tuple shape;

  template <class V>
  void Visit(V& v) {
    v(shape, Attr("shape").Doc("output shape"));
  }
};

/// _histogram: bin_cnt equal bins over range, or (bin_cnt None) the edges given as an input.
struct HistogramParam {
  std::optional<int64_t> bin_cnt;
  std::optional<FloatTuple> range;

  template <class V>
  void Visit(V& v) {
    v(bin_cnt, Attr("bin_cnt").Default("None").Min(1).Doc(
                   "number of equal bins over range; None = the bins input gives the edges"));
    v(range, Attr("range").Default("None").Doc("(min, max) of the bins when bin_cnt is given"));
  }
  void Validate() const {
    if (!bin_cnt) return;
    CheckParam(range.has_value(), "range (min, max) is required with bin_cnt");
    CheckParam(range->size() == 2 && (*range)[0] < (*range)[1],
               "range must be (min, max) with min < max, got " + Text(*range));
  }

 private:
  static std::string Text(const FloatTuple& t) {
    std::string out = "(";
    for (size_t i = 0; i < t.size(); ++i) out += (i ? ", " : "") + std::to_string(t[i]);
    return out + ")";
  }
};

}  // namespace weft::sdk
