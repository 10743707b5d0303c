// weft SDK ops — the dot family: dot and batch_dot (MXNet 1.9's DotParam).
#pragma once

#include <string>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

inline constexpr std::string_view kForwardStypes[] = {"None", "default", "csr", "row_sparse"};

/// dot and batch_dot: lhs and rhs, each optionally transposed.
struct DotParam {
  bool transpose_a = false, transpose_b = false;
  std::string forward_stype;

  template <class V>
  void Visit(V& v) {
    v(transpose_a, Attr("transpose_a").Default("False").Doc("use lhs transposed"));
    v(transpose_b, Attr("transpose_b").Default("False").Doc("use rhs transposed"));
    v(forward_stype, Attr("forward_stype").Default("None").Choices(kForwardStypes).Ignored());
  }
};

}  // namespace weft::sdk
