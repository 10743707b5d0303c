// weft SDK ops — the broadcast family: tile, repeat, broadcast_to, broadcast_like (MXNet 1.9's
// TileParam, RepeatParam, BroadcastToParam, BroadcastLikeParam).
#pragma once

#include <optional>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// tile: the whole array repeated reps[i] times along axis i.
struct TileParam {
  Tuple reps;

  template <class V>
  void Visit(V& v) {
    v(reps, Attr("reps").Doc("repetitions per axis"));
  }
  void Validate() const {
    for (int64_t r : reps) CheckParam(r >= 0, "reps " + FormatTuple(reps) + " must not be negative");
  }
};

/// repeat: each element `repeats` times along `axis` (of the flattened array when None).
struct RepeatParam {
  int64_t repeats = 0;
  std::optional<int64_t> axis;

  template <class V>
  void Visit(V& v) {
    v(repeats, Attr("repeats").Min(0).MxType("int").Doc("copies of each element"));
    v(axis, Attr("axis").Default("None").Doc("axis; None = flatten"));
  }
};

/// broadcast_to: data broadcast to `shape` (a 0 keeps data's extent).
struct BroadcastToParam {
  Tuple shape;

  template <class V>
  void Visit(V& v) {
    v(shape, Attr("shape").Default("()").Doc("target shape"));
  }
};

/// broadcast_like: lhs broadcast to rhs's shape, or lhs_axes to the extents of rhs_axes.
struct BroadcastLikeParam {
  // None (every axis) stays distinct from an empty tuple, which MXNet refuses.
  std::optional<Tuple> lhs_axes, rhs_axes;

  template <class V>
  void Visit(V& v) {
    v(lhs_axes, Attr("lhs_axes").Default("None").Doc("axes of lhs to broadcast (None = all)"));
    v(rhs_axes, Attr("rhs_axes").Default("None").Doc("axes of rhs giving the extents"));
  }
};

}  // namespace weft::sdk
