// weft SDK ops — the transpose family: transpose and SwapAxis (MXNet 1.9's TransposeParam,
// SwapAxisParam).
#pragma once

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// transpose: output axis i is input axis axes[i]; empty axes reverses them.
struct TransposeParam {
  Tuple axes;

  template <class V>
  void Visit(V& v) {
    v(axes, Attr("axes").Default("()").Doc("the permutation"));
  }
};

/// SwapAxis: axes dim1 and dim2 exchanged.
struct SwapAxisParam {
  int64_t dim1 = 0, dim2 = 0;

  template <class V>
  void Visit(V& v) {
    v(dim1, Attr("dim1").Default("0").Doc("first axis"));
    v(dim2, Attr("dim2").Default("0").Doc("second axis"));
  }
};

}  // namespace weft::sdk
