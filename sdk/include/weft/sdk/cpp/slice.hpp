// weft SDK C++ helpers — MXNet 1.9's index ranges of `slice` and `slice_axis`, shared by core's
// shape inference and every device's kernels so that all of them cut the same elements.
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

#include "weft/sdk/cpp/attrs.hpp"

namespace weft::sdk {

/// Parses a tuple whose elements may be "None" (slice's begin/end): those become nullopt, so
/// "None" stays distinct from -1. Same forms and errors as ParseTuple.
inline std::vector<std::optional<int64_t>> ParseOptionalTuple(std::string_view value, std::string_view name) {
  std::vector<std::optional<int64_t>> out;
  std::string_view s = detail::Trim(value);
  if (!s.empty() && (s.front() == '(' || s.front() == '[')) s = s.substr(1, s.size() >= 2 ? s.size() - 2 : 0);
  // Split on commas; each element is "None" or goes through ParseTuple's integer rules.
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    std::string_view item = detail::Trim(s.substr(start, comma == std::string_view::npos ? s.npos : comma - start));
    if (item == "None") {
      out.emplace_back(std::nullopt);
    } else if (!item.empty()) {
      std::vector<int64_t> one = ParseTuple(item, name);
      if (one.size() != 1) detail::BadAttr(name, value, "a tuple of integers or None, e.g. (0, None)");
      out.emplace_back(one[0]);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  ParseTuple(value, name);  // the same syntax checks as any tuple ("None" is accepted there)
  return out;
}

/// Attribute `name` of `a` as ParseOptionalTuple; empty when absent or "None".
inline std::vector<std::optional<int64_t>> GetOptionalTuple(const AttrMap& a, std::string_view name) {
  const std::string* v = a.Find(name);
  if (!v || IsNone(*v)) return {};
  return ParseOptionalTuple(*v, name);
}

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

/// The ranges of `slice` (attributes begin, end, step) on an input of `shape`: one per axis,
/// axes past begin's length whole.
inline std::vector<SliceRange> SliceRanges(const AttrMap& a, const std::vector<int64_t>& shape) {
  const std::vector<std::optional<int64_t>> begin = GetOptionalTuple(a, "begin"), end = GetOptionalTuple(a, "end");
  // MXNet's frontend writes None for an axis' default step (x[0:2] on a 2-d array passes
  // step=(None, None)): None is 1.
  std::vector<int64_t> step;
  for (const std::optional<int64_t>& s : GetOptionalTuple(a, "step")) step.push_back(s.value_or(1));
  auto fail = [&](const std::string& why) {
    throw Error(WEFT_ERR_INVALID_ARGUMENT, "begin=" + a.GetString("begin", "None") +
                                               ", end=" + a.GetString("end", "None") +
                                               ", step=" + a.GetString("step", "()") + ": " + why);
  };
  if (begin.size() != end.size()) fail("begin and end must have the same length");
  if (!step.empty() && step.size() != begin.size()) fail("step must be empty or as long as begin");
  if (begin.size() > shape.size())
    fail("begin has more entries than the input has axes (" + std::to_string(shape.size()) + ")");
  std::vector<SliceRange> r;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i >= begin.size()) {
      r.push_back({0, 1, shape[i]});
      continue;
    }
    const int64_t s = step.empty() ? 1 : step[i];
    if (s == 0) fail("a step of 0 (axis " + std::to_string(i) + ")");
    r.push_back(SliceAxisRange(shape[i], begin[i], end[i], s));
  }
  return r;
}

/// The range of `slice_axis` (attributes axis, begin, end; end "None" = the axis' length) on an
/// input of `shape`; `*axis` receives the axis made non-negative. MXNet requires a non-empty range
/// inside the axis: anything else throws.
inline SliceRange SliceAxisOpRange(const AttrMap& a, const std::vector<int64_t>& shape, int* axis) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  int64_t ax = a.GetInt("axis");
  if (ax < -nd || ax >= nd)
    throw Error(WEFT_ERR_INVALID_ARGUMENT,
                "axis=" + std::to_string(ax) + " is out of range for a " + std::to_string(nd) + "-d input");
  if (ax < 0) ax += nd;
  *axis = static_cast<int>(ax);
  const int64_t len = shape[static_cast<size_t>(ax)];
  int64_t b = a.GetInt("begin");
  const std::optional<int64_t> e_opt = a.GetOptionalInt("end");
  int64_t e = e_opt ? *e_opt : len;
  if (b < 0) b += len;
  if (e < 0) e += len;
  if (!(b >= 0 && b < len && e > b && e <= len))
    throw Error(WEFT_ERR_INVALID_ARGUMENT, "begin=" + a.GetString("begin") + " and end=" + a.GetString("end", "None") +
                                               " do not give a non-empty range of axis " + std::to_string(ax) +
                                               " (length " + std::to_string(len) + ")");
  return {b, 1, e - b};
}

}  // namespace weft::sdk
