// weft SDK ops — element-wise binary ops with attributes: add_n (MXNet 1.9's ElementWiseSumParam).
// elemwise_* and broadcast_* have none.
#pragma once

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// add_n: the sum of num_args arrays of one shape.
struct AddNParam {
  int64_t num_args = 1;

  template <class V>
  void Visit(V& v) {
    v(num_args, Attr("num_args").Min(1).Doc("number of inputs"));
  }
};

}  // namespace weft::sdk
