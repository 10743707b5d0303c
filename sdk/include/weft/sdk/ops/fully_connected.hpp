// weft SDK ops — FullyConnected (MXNet 1.9's FullyConnectedParam).
#pragma once

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// out = data · weightᵀ + bias; weight is (num_hidden, K).
struct FullyConnectedParam {
  int64_t num_hidden = 0;
  bool no_bias = false, flatten = true;

  template <class V>
  void Visit(V& v) {
    v(num_hidden, Attr("num_hidden").Min(1).Doc("number of output units"));
    v(no_bias, Attr("no_bias").Default("False").Doc("drop the bias input"));
    v(flatten, Attr("flatten").Default("True").Doc(
                   "collapse data to (N, K) over all but the first axis; else apply to the last axis"));
  }
};

}  // namespace weft::sdk
