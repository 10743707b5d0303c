// References of the ops that move elements: reshapes, Concat, SliceChannel, transpose, SwapAxis,
// slice, slice_axis, slice_like, stack, tile, repeat, broadcast_to / _like, Pad, take, pick, Cast,
// zeros_like, ones_like, one_hot. Each output element is read from the input position the op's
// definition names (MXNet 1.9's index rules, written out here).
#include <cmath>

#include "reference.h"
#include "weft/base.h"

namespace wconf::ref {
namespace {

using Index = std::vector<int64_t>;

// out[o] = x[source(o)] for every position o of output `k`.
template <typename F>
void Gather(Call& c, size_t k, const HostTensor& x, F source) {
  HostTensor& y = c.out[k];
  for (int64_t i = 0; i < y.shape.Size(); ++i)
    y.v[static_cast<size_t>(i)] = x.v[static_cast<size_t>(Ravel(source(Unravel(i, y.shape)), x.shape))];
}

void Copy(Call& c) { c.out[0].v = c.in(0).v; }

void Concat(Call& c) {
  const size_t dim = Axis(c.attrs().GetInt("dim", 1), c.out[0].shape.ndim());
  HostTensor& y = c.out[0];
  for (int64_t i = 0; i < y.shape.Size(); ++i) {
    Index o = Unravel(i, y.shape);
    size_t k = 0;
    while (o[dim] >= c.in(k).shape[dim]) o[dim] -= c.in(k++).shape[dim];
    y.v[static_cast<size_t>(i)] = c.in(k).v[static_cast<size_t>(Ravel(o, c.in(k).shape))];
  }
}

void SliceChannel(Call& c) {
  const Shape& s = c.in(0).shape;
  const size_t axis = Axis(c.attrs().GetInt("axis", 1), s.ndim());
  const bool squeeze = c.attrs().GetBool("squeeze_axis", false);
  const int64_t part = s[axis] / static_cast<int64_t>(c.out.size());
  for (size_t k = 0; k < c.out.size(); ++k)
    Gather(c, k, c.in(0), [&](Index o) {
      if (squeeze) o.insert(o.begin() + static_cast<std::ptrdiff_t>(axis), 0);
      o[axis] += static_cast<int64_t>(k) * part;
      return o;
    });
}

void Transpose(Call& c) {
  const size_t nd = c.in(0).shape.ndim();
  std::vector<int64_t> axes = c.attrs().GetTuple("axes", {});
  if (axes.empty())
    for (size_t a = nd; a-- > 0;) axes.push_back(static_cast<int64_t>(a));
  Gather(c, 0, c.in(0), [&](const Index& o) {
    Index p(nd);
    for (size_t a = 0; a < nd; ++a) p[Axis(axes[a], nd)] = o[a];
    return p;
  });
}

void SwapAxis(Call& c) {
  const size_t nd = c.in(0).shape.ndim();
  const size_t a = Axis(c.attrs().GetInt("dim1", 0), nd), b = Axis(c.attrs().GetInt("dim2", 0), nd);
  Gather(c, 0, c.in(0), [&](Index o) {
    std::swap(o[a], o[b]);
    return o;
  });
}

// MXNet's slice rules: a missing (None) begin is 0 for a positive step and n − 1 for a negative
// one; negative indices count from the end; begin is clamped into the axis (a negative step may
// start at n − 1 at most).
int64_t SliceBegin(int64_t b, bool none, int64_t step, int64_t n) {
  if (none) return step > 0 ? 0 : n - 1;
  if (b < 0) b += n;
  return step > 0 ? std::clamp<int64_t>(b, 0, n) : std::clamp<int64_t>(b, -1, n - 1);
}

void Slice(Call& c) {
  const Shape& s = c.in(0).shape;
  // ParseTuple reads None as -1: take the raw strings to tell them apart.
  auto entries = [&](const char* name) {
    std::vector<std::string> out;
    std::string v = c.attrs().GetString(name, "()");
    for (char ch : std::string("()[] ")) v.erase(std::remove(v.begin(), v.end(), ch), v.end());
    std::string cur;
    for (char ch : v + ",") {
      if (ch == ',') {
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
      } else {
        cur += ch;
      }
    }
    return out;
  };
  const std::vector<std::string> begin = entries("begin"), step = entries("step");
  Index first(s.ndim(), 0), stride(s.ndim(), 1);
  for (size_t a = 0; a < begin.size(); ++a) {
    stride[a] = a < step.size() && step[a] != "None" ? std::stoll(step[a]) : 1;
    first[a] = SliceBegin(begin[a] == "None" ? 0 : std::stoll(begin[a]), begin[a] == "None", stride[a], s[a]);
  }
  Gather(c, 0, c.in(0), [&](Index o) {
    for (size_t a = 0; a < o.size(); ++a) o[a] = first[a] + o[a] * stride[a];
    return o;
  });
}

void SliceAxis(Call& c) {
  const Shape& s = c.in(0).shape;
  const size_t axis = Axis(c.attrs().GetInt("axis"), s.ndim());
  int64_t b = c.attrs().GetInt("begin");
  if (b < 0) b += s[axis];
  Gather(c, 0, c.in(0), [&](Index o) {
    o[axis] += b;
    return o;
  });
}

// Output positions are input positions (slice_like keeps the leading part of each axis).
void Prefix(Call& c) {
  Gather(c, 0, c.in(0), [](const Index& o) { return o; });
}

void Stack(Call& c) {
  const size_t axis = Axis(c.attrs().GetInt("axis", 0), c.out[0].shape.ndim());
  HostTensor& y = c.out[0];
  for (int64_t i = 0; i < y.shape.Size(); ++i) {
    Index o = Unravel(i, y.shape);
    const size_t k = static_cast<size_t>(o[axis]);
    o.erase(o.begin() + static_cast<std::ptrdiff_t>(axis));
    y.v[static_cast<size_t>(i)] = c.in(k).v[static_cast<size_t>(Ravel(o, c.in(k).shape))];
  }
}

// tile: data's shape is padded with leading 1s to the output's rank; each axis repeats.
void Tile(Call& c) {
  const Shape& s = c.in(0).shape;
  const size_t lead = c.out[0].shape.ndim() - s.ndim();
  Gather(c, 0, c.in(0), [&](const Index& o) {
    Index p(s.ndim());
    for (size_t a = 0; a < s.ndim(); ++a) p[a] = o[lead + a] % s[a];
    return p;
  });
}

// repeat: each element `repeats` times along `axis` (None: of the flattened data).
void Repeat(Call& c) {
  const int64_t r = c.attrs().GetInt("repeats");
  const std::optional<int64_t> axis = c.attrs().GetOptionalInt("axis");
  if (!axis) {
    for (size_t i = 0; i < c.out[0].v.size(); ++i) c.out[0].v[i] = c.in(0).v[i / static_cast<size_t>(r)];
    return;
  }
  const size_t a = Axis(*axis, c.in(0).shape.ndim());
  Gather(c, 0, c.in(0), [&](Index o) {
    o[a] /= r;
    return o;
  });
}

void BroadcastTo(Call& c) {
  HostTensor& y = c.out[0];
  for (int64_t i = 0; i < y.shape.Size(); ++i)
    y.v[static_cast<size_t>(i)] = c.in(0).v[static_cast<size_t>(BroadcastSource(i, y.shape, c.in(0).shape))];
}

// Pad (4-D/5-D, spatial axes): constant value, edge (clamp) or reflect (mirror about the border
// element) outside the data.
void Pad(Call& c) {
  const Shape& s = c.in(0).shape;
  const std::vector<int64_t> width = c.attrs().GetTuple("pad_width");
  const std::string mode = c.attrs().GetString("mode");
  const double value = c.attrs().GetFloat("constant_value", 0.0);
  HostTensor& y = c.out[0];
  for (int64_t i = 0; i < y.shape.Size(); ++i) {
    Index o = Unravel(i, y.shape);
    bool outside = false;
    for (size_t a = 0; a < s.ndim(); ++a) {
      int64_t p = o[a] - width[2 * a];
      if (p < 0 || p >= s[a]) {
        outside = true;
        if (mode == "edge") p = std::clamp<int64_t>(p, 0, s[a] - 1);
        if (mode == "reflect") p = p < 0 ? -p : 2 * (s[a] - 1) - p;
      }
      o[a] = p;
    }
    y.v[static_cast<size_t>(i)] = outside && mode == "constant" ? value : c.in(0).v[static_cast<size_t>(Ravel(o, s))];
  }
}

// A position value truncated to an integer, clipped into [0, n − 1] or wrapped modulo n; mode
// raise (`raise`) refuses one outside.
int64_t Position(double v, int64_t n, bool wrap, bool raise = false) {
  const int64_t p = static_cast<int64_t>(std::trunc(v));
  WEFT_CHECK(!raise || (p >= 0 && p < n), "reference: take position {} outside 0..{} (mode raise)", p, n - 1);
  return wrap ? ((p % n) + n) % n : std::clamp<int64_t>(p, 0, n - 1);
}

// take: output = a.shape[:axis] + indices.shape + a.shape[axis+1:].
void Take(Call& c) {
  const HostTensor &a = c.in(0), &idx = c.in(1);
  const size_t axis = Axis(c.attrs().GetInt("axis", 0), a.shape.ndim());
  const std::string mode = c.attrs().GetString("mode", "clip");
  const size_t k = idx.shape.ndim();
  Gather(c, 0, a, [&](const Index& o) {
    Index p(o.begin(), o.begin() + static_cast<std::ptrdiff_t>(axis));
    const Index which(o.begin() + static_cast<std::ptrdiff_t>(axis), o.begin() + static_cast<std::ptrdiff_t>(axis + k));
    p.push_back(
        Position(idx.v[static_cast<size_t>(Ravel(which, idx.shape))], a.shape[axis], mode == "wrap", mode == "raise"));
    p.insert(p.end(), o.begin() + static_cast<std::ptrdiff_t>(axis + k), o.end());
    return p;
  });
}

// pick: the element at index[o] along `axis` for each output position o (index has the output's
// shape).
void Pick(Call& c) {
  const HostTensor &x = c.in(0), &idx = c.in(1);
  const size_t axis = Axis(c.attrs().GetInt("axis", -1), x.shape.ndim());
  const bool keep = c.attrs().GetBool("keepdims", false), wrap = c.attrs().GetString("mode", "clip") == "wrap";
  HostTensor& y = c.out[0];
  for (int64_t i = 0; i < y.shape.Size(); ++i) {
    Index o = Unravel(i, y.shape);
    if (!keep) o.insert(o.begin() + static_cast<std::ptrdiff_t>(axis), 0);
    o[axis] = Position(idx.v[static_cast<size_t>(i)], x.shape[axis], wrap);
    y.v[static_cast<size_t>(i)] = x.v[static_cast<size_t>(Ravel(o, x.shape))];
  }
}

// one_hot: on_value where the (truncated) index equals the position along the new last axis.
void OneHot(Call& c) {
  const int64_t depth = c.attrs().GetInt("depth");
  const double on = c.attrs().GetFloat("on_value", 1.0), off = c.attrs().GetFloat("off_value", 0.0);
  for (size_t i = 0; i < c.in(0).v.size(); ++i)
    for (int64_t k = 0; k < depth; ++k)
      c.out[0].v[i * static_cast<size_t>(depth) + static_cast<size_t>(k)] =
          static_cast<int64_t>(std::trunc(c.in(0).v[i])) == k ? on : off;
}

}  // namespace

void RegisterShapeReferences(Table& t) {
  // The same elements in the same order (the output shape is the node's signature); Cast's
  // conversion is the rounding to the output dtype.
  for (const char* op :
       {"Flatten", "Reshape", "expand_dims", "_copy", "reshape_like", "Cast", "_identity_with_attr_like_rhs"})
    t[op] = Copy;
  t["Concat"] = Concat;
  t["_rnn_param_concat"] = Concat;
  t["SliceChannel"] = SliceChannel;
  t["transpose"] = Transpose;
  t["SwapAxis"] = SwapAxis;
  t["slice"] = Slice;
  t["slice_axis"] = SliceAxis;
  t["slice_like"] = Prefix;
  t["stack"] = Stack;
  t["tile"] = Tile;
  t["repeat"] = Repeat;
  t["broadcast_to"] = BroadcastTo;
  t["broadcast_like"] = BroadcastTo;
  t["Pad"] = Pad;
  t["take"] = Take;
  t["pick"] = Pick;
  t["one_hot"] = OneHot;
  t["zeros_like"] = [](Call&) {};
  t["ones_like"] = [](Call& c) { std::fill(c.out[0].v.begin(), c.out[0].v.end(), 1.0); };
}

}  // namespace wconf::ref
