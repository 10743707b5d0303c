// weft SDK ops — reductions: sum, mean, max, min, prod, nansum, nanprod (MXNet 1.9's ReduceAxesParam) and
// norm (NormParam).
#pragma once

#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// sum, mean, max, min, prod, nansum, nanprod over `axis` (every axis when empty; the axes not
/// listed with exclude).
struct ReduceParam {
  Tuple axis;
  bool keepdims = false, exclude = false;

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Default("()").Doc("axes to reduce; () or None = all"));
    v(keepdims, Attr("keepdims").Default("False").Doc("keep reduced axes with length 1"));
    v(exclude, Attr("exclude").Default("False").Doc("reduce the axes not listed"));
  }
};

inline constexpr std::string_view kNormOutDTypes[] = {"None",  "float16", "float32", "float64",
                                                      "int32", "int64",   "int8"};

/// norm: the L1 (ord 1) or L2 (ord 2) norm over at most two axes (every element when None).
struct NormParam {
  int64_t ord = 2;
  Tuple axis;
  DTypeAttr out_dtype;
  bool keepdims = false;

  template <class V>
  void Visit(V& v) {
    v(ord, Attr("ord").Default("2").Min(1).Max(2).Doc("1 or 2"));
    v(axis, Attr("axis").Default("None").Doc("axes to reduce; None = all"));
    v(out_dtype,
      Attr("out_dtype").Default("None").Choices(kNormOutDTypes).DefaultOnly().Doc("output dtype (the input's only)"));
    v(keepdims, Attr("keepdims").Default("False").Doc("keep reduced axes with length 1"));
  }
  void Validate() const {
    CheckParam(axis.size() <= 2, "axis " + FormatTuple(axis) + " names more than two axes (MXNet's limit)");
  }
};

}  // namespace weft::sdk
