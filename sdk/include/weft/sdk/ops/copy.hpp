// weft SDK ops — the copy family: ops whose output holds the input's elements in the same order
// (_copy, BlockGrad, Flatten, Reshape, expand_dims, reshape_like) and zeros_like / ones_like.
// Attributes: Reshape (MXNet 1.9's ReshapeParam), expand_dims (ExpandDimParam), reshape_like
// (ReshapeLikeParam).
#pragma once

#include <optional>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// Reshape: `shape` with MXNet's codes 0, -1, -2, -3, -4; the deprecated target_shape.
struct ReshapeParam {
  Tuple shape;
  bool reverse = false;
  Tuple target_shape;
  bool keep_highest = false;

  template <class V>
  void Visit(V& v) {
    v(shape, Attr("shape").Default("()").Doc("target shape with codes"));
    v(reverse, Attr("reverse").Default("False").Doc("apply the codes right to left"));
    v(target_shape, Attr("target_shape").Default("()").Doc("deprecated (MXNet 0.x): target shape, 0 = infer"));
    v(keep_highest, Attr("keep_highest").Default("False").Doc("deprecated (MXNet 0.x): keep the first axis"));
  }
};

/// expand_dims: a new axis of length 1 at `axis`.
struct ExpandDimsParam {
  int64_t axis = 0;

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Doc("position of the new axis"));
  }
};

/// reshape_like: lhs reshaped to lhs.shape[:lhs_begin] + rhs.shape[rhs_begin:rhs_end] + lhs.shape[lhs_end:].
struct ReshapeLikeParam {
  std::optional<int64_t> lhs_begin, lhs_end, rhs_begin, rhs_end;

  template <class V>
  void Visit(V& v) {
    v(lhs_begin, Attr("lhs_begin").Default("None").Doc("first axis of lhs replaced"));
    v(lhs_end, Attr("lhs_end").Default("None").Doc("end of the replaced axes of lhs"));
    v(rhs_begin, Attr("rhs_begin").Default("None").Doc("first axis of rhs used"));
    v(rhs_end, Attr("rhs_end").Default("None").Doc("end of the used axes of rhs"));
  }
};

}  // namespace weft::sdk
