// weft SDK ops — the slice family: slice, slice_axis, slice_like (MXNet 1.9's SliceParam,
// SliceAxisParam, SliceLikeParam) and their index ranges, shared by core's shape inference and
// every device's kernels so that all of them cut the same elements.
//
// A range walks one axis: elements begin, begin + step, ... (len of them; begin is 0 when len is
// 0). Errors throw weft::sdk::Error(WEFT_ERR_INVALID_ARGUMENT) naming the attribute values.
// Header-only, pure functions: thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// slice: data[begin:end:step] per axis (NumPy basic slicing).
struct SliceParam {
  // MXNet's frontend writes None for an axis' default step too (x[0:2] on a 2-d array passes
  // step=(None, None)): a None step is 1.
  OptTuple begin, end, step;

  template <class V>
  void Visit(V& v) {
    v(begin, Attr("begin").Doc("first index per axis (None = default)"));
    v(end, Attr("end").Doc("end index (exclusive) per axis (None = default)"));
    v(step, Attr("step").Default("()").Doc("step per axis (None or absent = 1; negative walks backwards)"));
  }
};

/// slice_axis: data[..., begin:end, ...] along `axis`.
struct SliceAxisParam {
  int64_t axis = 0, begin = 0;
  std::optional<int64_t> end;

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Doc("axis to slice"));
    v(begin, Attr("begin").Doc("first index"));
    v(end, Attr("end").Doc("end index (exclusive); None = the axis' length"));
  }
};

/// _slice_assign_scalar: slice's box of data set to `scalar` (MXNet's SliceAssignScalarParam:
/// scalar first, then slice's attributes).
struct SliceAssignScalarParam {
  double scalar = 0.0;
  SliceParam slice;

  template <class V>
  void Visit(V& v) {
    v(scalar, Attr("scalar").Default("0").Doc("the value assigned"));
    slice.Visit(v);
  }
};

/// slice_like: data cut to shape_like's extents along `axes` (every axis when empty).
struct SliceLikeParam {
  Tuple axes;

  template <class V>
  void Visit(V& v) {
    v(axes, Attr("axes").Default("()").Doc("axes to slice (negative counts from data's end)"));
  }
};

struct SliceRange {
  int64_t begin = 0;
  int64_t step = 1;
  int64_t len = 0;
};

/// One axis of length `len` sliced as Python's begin:end:step (MXNet's GetIndexRange): absent
/// begin/end default by the step's sign, negative ones count from the end, out-of-range ends are
/// clamped, and a begin outside the axis gives an empty range. `step` must not be 0.
inline SliceRange SliceAxisRange(int64_t len, std::optional<int64_t> begin, std::optional<int64_t> end, int64_t step) {
  int64_t b = begin ? *begin : (step < 0 ? len - 1 : 0);
  int64_t e = end ? *end : (step < 0 ? -1 : len);
  if (begin && b < 0) b += len;
  if (end && e < 0) e += len;
  if (b < 0 && step > 0) b = 0;
  if (b > len - 1 && step < 0) b = len - 1;
  if (b < 0 || b > len - 1) b = -1;
  e = std::min(std::max<int64_t>(e, -1), len);
  int64_t n = 0;
  if (b >= 0 && e != b) {
    if (step > 0 && e > b) n = (e - b - 1) / step + 1;
    if (step < 0 && e < b) n = (b - e - 1) / (-step) + 1;
  }
  return {n > 0 ? b : 0, step, n};
}

namespace detail {
inline std::string OptTupleText(const OptTuple& t) {
  std::string out = "(";
  for (size_t i = 0; i < t.size(); ++i) out += (i ? ", " : "") + (t[i] ? std::to_string(*t[i]) : std::string("None"));
  return out + (t.size() == 1 ? ",)" : ")");
}
}  // namespace detail

/// The ranges of `slice` on an input of `shape`: one per axis, axes past begin's length whole.
inline std::vector<SliceRange> SliceRanges(const SliceParam& p, const std::vector<int64_t>& shape) {
  auto fail = [&](const std::string& why) {
    throw Error(WEFT_ERR_INVALID_ARGUMENT, "begin=" + detail::OptTupleText(p.begin) +
                                               ", end=" + detail::OptTupleText(p.end) +
                                               ", step=" + detail::OptTupleText(p.step) + ": " + why);
  };
  if (p.begin.size() != p.end.size()) fail("begin and end must have the same length");
  if (!p.step.empty() && p.step.size() != p.begin.size()) fail("step must be empty or as long as begin");
  if (p.begin.size() > shape.size())
    fail("begin has more entries than the input has axes (" + std::to_string(shape.size()) + ")");
  std::vector<SliceRange> r;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i >= p.begin.size()) {
      r.push_back({0, 1, shape[i]});
      continue;
    }
    const int64_t s = p.step.empty() ? 1 : p.step[i].value_or(1);
    if (s == 0) fail("a step of 0 (axis " + std::to_string(i) + ")");
    r.push_back(SliceAxisRange(shape[i], p.begin[i], p.end[i], s));
  }
  return r;
}

/// The range of `slice_axis` (end None = the axis' length) on an input of `shape`; `*axis`
/// receives the axis made non-negative. MXNet requires a non-empty range inside the axis:
/// anything else throws.
inline SliceRange SliceAxisOpRange(const SliceAxisParam& p, const std::vector<int64_t>& shape, int* axis) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  int64_t ax = p.axis;
  if (ax < -nd || ax >= nd)
    throw Error(WEFT_ERR_INVALID_ARGUMENT,
                "axis=" + std::to_string(ax) + " is out of range for a " + std::to_string(nd) + "-d input");
  if (ax < 0) ax += nd;
  *axis = static_cast<int>(ax);
  const int64_t len = shape[static_cast<size_t>(ax)];
  int64_t b = p.begin;
  int64_t e = p.end ? *p.end : len;
  if (b < 0) b += len;
  if (e < 0) e += len;
  if (!(b >= 0 && b < len && e > b && e <= len))
    throw Error(WEFT_ERR_INVALID_ARGUMENT, "begin=" + std::to_string(p.begin) +
                                               " and end=" + (p.end ? std::to_string(*p.end) : std::string("None")) +
                                               " do not give a non-empty range of axis " + std::to_string(ax) +
                                               " (length " + std::to_string(len) + ")");
  return {b, 1, e - b};
}

}  // namespace weft::sdk
