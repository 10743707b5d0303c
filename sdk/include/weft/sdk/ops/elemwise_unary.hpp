// weft SDK ops — element-wise unary ops with attributes: the scalar ops (_plus_scalar,
// _minus_scalar, _rminus_scalar, _mul_scalar, _div_scalar, _rdiv_scalar, _power_scalar; MXNet
// 1.9's NumpyBinaryScalarParam) and clip (ClipParam). The math ops (sin, exp, relu, ...) have
// none.
#pragma once

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// The scalar operand of the scalar ops.
struct ScalarParam {
  double scalar = 1.0;
  bool is_int = true;

  template <class V>
  void Visit(V& v) {
    v(scalar, Attr("scalar").Default("1").Doc("the scalar operand"));
    v(is_int, Attr("is_int").Default("True").Ignored().Doc("MXNet 1.9: whether scalar was given as an integer"));
  }
};

/// clip: min(max(x, a_min), a_max).
struct ClipParam {
  double a_min = 0.0, a_max = 0.0;

  template <class V>
  void Visit(V& v) {
    v(a_min, Attr("a_min").MxType("float").Doc("lower bound"));
    v(a_max, Attr("a_max").MxType("float").Doc("upper bound"));
  }
};

}  // namespace weft::sdk
