// weft SDK ops — the shape and layout ops of MXNet's matrix_op family beyond slice, concat and
// transpose: squeeze, reverse (flip), diag, broadcast_axis, depth_to_space / space_to_depth and
// amp_cast (MXNet 1.9's SqueezeParam, ReverseParam, DiagParam, BroadcastAxesParam,
// DepthToSpaceParam, AMPCastParam). _split_v2 is in concat.hpp.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// squeeze: the axes of extent 1 named by `axis` removed (every axis of extent 1 when None).
struct SqueezeParam {
  std::optional<Tuple> axis;

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Default("None").Doc("axes to remove (each of extent 1); None = every axis of extent 1"));
  }
};

/// reverse: the elements' order reversed along each axis of `axis`.
struct ReverseParam {
  Tuple axis;

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Doc("axes to reverse"));
  }
};

/// diag: a vector on diagonal k of a square matrix, or diagonal k of axes axis1, axis2.
struct DiagParam {
  int64_t k = 0, axis1 = 0, axis2 = 1;

  template <class V>
  void Visit(V& v) {
    v(k, Attr("k").Default("0").Doc("diagonal offset"));
    v(axis1, Attr("axis1").Default("0").Doc("first axis of the 2-D sub-arrays"));
    v(axis2, Attr("axis2").Default("1").Doc("second axis of the 2-D sub-arrays"));
  }
  /// The length of diagonal k of a d1 × d2 matrix (MXNet: 0 when it lies outside).
  int64_t Length(int64_t d1, int64_t d2) const {
    return std::max<int64_t>(k >= 0 ? std::min(d1, d2 - k) : std::min(d1 + k, d2), 0);
  }
};

/// broadcast_axis: the axes of `axis` (each of extent 1) repeated to the extents of `size`.
struct BroadcastAxisParam {
  Tuple axis, size;

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Default("()").Doc("axes to broadcast"));
    v(size, Attr("size").Default("()").Doc("their new extents"));
  }
};

/// depth_to_space / space_to_depth (NCHW): square blocks of edge block_size.
struct DepthSpaceParam {
  int64_t block_size = 1;

  template <class V>
  void Visit(V& v) {
    v(block_size, Attr("block_size").Min(1).MxType("int").Doc("edge of the square blocks"));
  }
};

inline constexpr std::string_view kAmpCastDTypes[] = {"float16", "bfloat16", "float32", "float64",
                                                      "uint8",   "int8",     "int32",   "int64"};

/// amp_cast: floating-point inputs cast to `dtype`.
struct AmpCastParam {
  std::string dtype;

  template <class V>
  void Visit(V& v) {
    v(dtype, Attr("dtype").Choices(kAmpCastDTypes).Doc("target dtype of floating-point inputs"));
  }
};

}  // namespace weft::sdk
