// weft SDK ops — element-wise binary ops with attributes: add_n (MXNet 1.9's ElementWiseSumParam)
// and _contrib_allclose (AllCloseParam). elemwise_* and broadcast_* have none.
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

/// _contrib_allclose: whether every |a − b| <= atol + rtol·|b| (numpy.allclose).
struct AllCloseParam {
  double rtol = 1e-5, atol = 1e-8;
  bool equal_nan = true;

  template <class V>
  void Visit(V& v) {
    v(rtol, Attr("rtol").Default("1e-05").Doc("relative tolerance (of |b|)"));
    v(atol, Attr("atol").Default("1e-08").Doc("absolute tolerance"));
    v(equal_nan, Attr("equal_nan").Default("True").Doc("whether NaN compares equal to NaN"));
  }
};

}  // namespace weft::sdk
