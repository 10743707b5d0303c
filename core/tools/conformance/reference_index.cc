// References of MXNet's indexing, assignment and layout ops that its Python frontend calls:
// _slice_assign, _slice_assign_scalar, _set_value, gather_nd, scatter_nd, _scatter_set_nd,
// _onehot_encode, _histogram, _eye, _linspace, squeeze, reverse, diag, shape_array, size_array,
// broadcast_axis, _split_v2, depth_to_space, space_to_depth and amp_cast. Each output element is
// written from the definition of the op (MXNet 1.9's rules: matrix_op-inl.h, indexing_op.h,
// diag_op-inl.h, init_op.h, histogram-inl.h), not from the kernels' loops.
#include <algorithm>
#include <cmath>
#include <string>

#include "reference.h"
#include "weft/base.h"

namespace wconf::ref {
namespace {

using Index = std::vector<int64_t>;

// The entries of a tuple attribute such as "(1, None, -2)"; nullopt for None.
std::vector<std::optional<int64_t>> OptionalTuple(const Call& c, const char* name) {
  std::vector<std::optional<int64_t>> out;
  const std::string text = c.attrs().GetString(name, "()");
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find_first_of(",)", at);
    std::string item = text.substr(at, (end == std::string::npos ? text.size() : end) - at);
    item.erase(0, item.find_first_not_of("([ "));
    item.erase(item.find_last_not_of(" ]") + 1);
    if (!item.empty()) out.push_back(item == "None" ? std::nullopt : std::optional<int64_t>(std::stoll(item)));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

// The box begin:end:step selects on `shape` (MXNet's slice rules, axes past the tuples whole):
// per axis the first position, the step and the extent.
struct Box {
  Index first, step, extent;
};

Box SliceBox(const Call& c, const Shape& shape) {
  const auto begin = OptionalTuple(c, "begin"), end = OptionalTuple(c, "end"), step = OptionalTuple(c, "step");
  Box b{Index(shape.ndim(), 0), Index(shape.ndim(), 1), Index(shape.begin(), shape.end())};
  for (size_t a = 0; a < begin.size() && a < shape.ndim(); ++a) {
    const int64_t n = shape[a];
    const int64_t s = a < step.size() && step[a] ? *step[a] : 1;
    // A plain flag and value, not a copied std::optional: GCC 12 at -O1 (the TSan preset) warns
    // that a copied optional's value may be uninitialized.
    const bool has_end = a < end.size() && end[a].has_value();
    int64_t first = begin[a] ? *begin[a] : (s > 0 ? 0 : n - 1);
    int64_t last = has_end ? *end[a] : (s > 0 ? n : -1);  // exclusive
    if (first < 0) first += n;
    if (has_end && last < 0) last += n;
    if (s > 0) {
      first = std::clamp<int64_t>(first, 0, n);
      last = std::clamp<int64_t>(last, 0, n);
    } else {
      first = std::min(first, n - 1);
      last = std::clamp<int64_t>(last, -1, n);
    }
    b.first[a] = first;
    b.step[a] = s;
    b.extent[a] =
        s > 0 ? std::max<int64_t>(0, (last - first + s - 1) / s) : std::max<int64_t>(0, (first - last - s - 1) / -s);
  }
  return b;
}

// out = lhs, then lhs[box] = rhs (or `scalar` everywhere in the box).
void SliceAssign(Call& c, bool scalar) {
  const HostTensor& x = c.in(0);
  c.out[0].v = x.v;
  const Box b = SliceBox(c, x.shape);
  const Shape box(b.extent);
  const double value = scalar ? c.attrs().GetFloat("scalar", 0.0) : 0.0;
  for (int64_t i = 0; i < box.Size(); ++i) {
    Index p = Unravel(i, box);
    for (size_t a = 0; a < p.size(); ++a) p[a] = b.first[a] + p[a] * b.step[a];
    c.out[0].v[static_cast<size_t>(Ravel(p, x.shape))] = scalar ? value : c.in(1).v[static_cast<size_t>(i)];
  }
}

// The element of `data` that position y (of indices' trailing axes) and `rest` address: indices
// column y gives the first M axes (truncated; negative ones wrap when `wrap`).
size_t NdSource(const HostTensor& idx, int64_t y, const Index& rest, const Shape& data, bool wrap) {
  const int64_t m = idx.shape[0], cols = idx.shape.Size() / m;
  Index p;
  for (int64_t j = 0; j < m; ++j) {
    int64_t q = static_cast<int64_t>(std::trunc(idx.v[static_cast<size_t>(j * cols + y)]));
    const int64_t n = data[static_cast<size_t>(j)];
    if (wrap) q = ((q % n) + n) % n;
    WEFT_CHECK(q >= 0 && q < n, "reference: position {} outside axis {} of extent {}", q, j, n);
    p.push_back(q);
  }
  p.insert(p.end(), rest.begin(), rest.end());
  return static_cast<size_t>(Ravel(p, data));
}

// gather_nd: output[y, rest] = data[indices[:, y], rest].
void GatherNd(Call& c) {
  const HostTensor &data = c.in(0), &idx = c.in(1);
  const int64_t cols = idx.shape.Size() / idx.shape[0];
  const Shape rest(Index(data.shape.begin() + idx.shape[0], data.shape.end()));
  for (int64_t y = 0; y < cols; ++y)
    for (int64_t r = 0; r < rest.Size(); ++r)
      c.out[0].v[static_cast<size_t>(y * rest.Size() + r)] =
          data.v[NdSource(idx, y, Unravel(r, rest), data.shape, true)];
}

// scatter_nd (zeros elsewhere) and _scatter_set_nd (lhs elsewhere): output[indices[:, y], rest] =
// data[y, rest]. The cases hold no position twice.
void ScatterNd(Call& c, bool onto_lhs) {
  const size_t d = onto_lhs ? 1 : 0;
  const HostTensor &data = c.in(d), &idx = c.in(d + 1);
  HostTensor& out = c.out[0];
  if (onto_lhs) out.v = c.in(0).v;
  const int64_t cols = idx.shape.Size() / idx.shape[0];
  const Shape rest(Index(out.shape.begin() + idx.shape[0], out.shape.end()));
  for (int64_t y = 0; y < cols; ++y)
    for (int64_t r = 0; r < rest.Size(); ++r)
      out.v[NdSource(idx, y, Unravel(r, rest), out.shape, false)] = data.v[static_cast<size_t>(y * rest.Size() + r)];
}

// _histogram with bin_cnt equal bins over range (lo, hi): bin ⌊(x − lo)·n / (hi − lo)⌋, hi in the
// last bin, values outside uncounted; with a bins input, the bin whose [edge, next) holds x.
void Histogram(Call& c) {
  const HostTensor& x = c.in(0);
  HostTensor &counts = c.out[0], &edges = c.out[1];
  const int64_t n = counts.shape.Size();
  if (c.spec.in.size() > 1) {
    edges.v = c.in(1).v;
  } else {
    std::string r = c.attrs().GetString("range");
    for (char& ch : r)
      if (ch == '(' || ch == ')' || ch == ',') ch = ' ';
    double lo = 0, hi = 0;
    WEFT_CHECK(std::sscanf(r.c_str(), "%lf %lf", &lo, &hi) == 2, "reference: range {}", r);
    for (int64_t i = 0; i <= n; ++i) edges.v[static_cast<size_t>(i)] = lo + (hi - lo) * static_cast<double>(i) / n;
  }
  for (double v : x.v) {
    if (n == 0 || !(v >= edges.v.front() && v <= edges.v.back())) continue;
    int64_t k = 0;
    while (k + 1 < n && v >= edges.v[static_cast<size_t>(k + 1)]) ++k;
    counts.v[static_cast<size_t>(k)] += 1;
  }
}

// diag of a 1-D input: the (N+|k|)² matrix with data on diagonal k.
void DiagMatrix(Call& c) {
  const int64_t k = c.attrs().GetInt("k", 0), n = c.out[0].shape[0];
  for (size_t i = 0; i < c.in(0).v.size(); ++i) {
    const int64_t row = static_cast<int64_t>(i) + (k < 0 ? -k : 0), col = static_cast<int64_t>(i) + (k > 0 ? k : 0);
    c.out[0].v[static_cast<size_t>(row * n + col)] = c.in(0).v[i];
  }
}

// diag of 2 or more axes: output[others…, d] = data[… axis1 = d + max(−k, 0), axis2 = d + max(k, 0) …].
void Diag(Call& c) {
  const HostTensor& x = c.in(0);
  if (x.shape.ndim() == 1) return DiagMatrix(c);
  const int64_t k = c.attrs().GetInt("k", 0);
  const size_t a1 = Axis(c.attrs().GetInt("axis1", 0), x.shape.ndim());
  const size_t a2 = Axis(c.attrs().GetInt("axis2", 1), x.shape.ndim());
  HostTensor& y = c.out[0];
  for (int64_t i = 0; i < y.shape.Size(); ++i) {
    const Index o = Unravel(i, y.shape);
    Index p(x.shape.ndim());
    for (size_t a = 0, j = 0; a < p.size(); ++a)
      if (a != a1 && a != a2) p[a] = o[j++];
    p[a1] = o.back() + (k < 0 ? -k : 0);
    p[a2] = o.back() + (k > 0 ? k : 0);
    y.v[static_cast<size_t>(i)] = x.v[static_cast<size_t>(Ravel(p, x.shape))];
  }
}

void Reverse(Call& c) {
  const HostTensor& x = c.in(0);
  std::vector<bool> flip(x.shape.ndim(), false);
  for (int64_t a : c.attrs().GetTuple("axis")) flip[Axis(a, x.shape.ndim())] = true;
  for (int64_t i = 0; i < x.shape.Size(); ++i) {
    Index p = Unravel(i, x.shape);
    for (size_t a = 0; a < p.size(); ++a)
      if (flip[a]) p[a] = x.shape[a] - 1 - p[a];
    c.out[0].v[static_cast<size_t>(i)] = x.v[static_cast<size_t>(Ravel(p, x.shape))];
  }
}

// _split_v2: part k starts at k·len/sections (or indices[k]) along the axis; squeeze_axis drops it.
void SplitV2(Call& c) {
  const HostTensor& x = c.in(0);
  const size_t axis = Axis(c.attrs().GetInt("axis", 1), x.shape.ndim());
  const int64_t sections = c.attrs().GetInt("sections", 0);
  const Index starts = c.attrs().GetTuple("indices", {});
  const bool squeeze = c.attrs().GetBool("squeeze_axis", false);
  for (size_t k = 0; k < c.out.size(); ++k) {
    const int64_t start = sections > 0 ? static_cast<int64_t>(k) * (x.shape[axis] / sections) : starts[k];
    HostTensor& y = c.out[k];
    for (int64_t i = 0; i < y.shape.Size(); ++i) {
      Index p = Unravel(i, y.shape);
      if (squeeze) p.insert(p.begin() + static_cast<std::ptrdiff_t>(axis), 0);
      if (p.size() > x.shape.ndim()) p.resize(x.shape.ndim());  // (1,) for a squeezed 1-D part
      p[axis] += start;
      y.v[static_cast<size_t>(i)] = x.v[static_cast<size_t>(Ravel(p, x.shape))];
    }
  }
}

// depth_to_space: output[n, c, h·b + i, w·b + j] = data[n, (i·b + j)·C + c, h, w] (C output
// channels); space_to_depth moves the same elements back.
void DepthSpace(Call& c, bool to_space) {
  const int64_t b = c.attrs().GetInt("block_size");
  const HostTensor& x = c.in(0);
  const Shape& deep = to_space ? x.shape : c.out[0].shape;
  const Shape& wide = to_space ? c.out[0].shape : x.shape;
  const int64_t channels = wide[1];
  for (int64_t i = 0; i < wide.Size(); ++i) {
    const Index w = Unravel(i, wide);
    const Index d = {w[0], ((w[2] % b) * b + w[3] % b) * channels + w[1], w[2] / b, w[3] / b};
    const size_t di = static_cast<size_t>(Ravel(d, deep)), wi = static_cast<size_t>(i);
    if (to_space)
      c.out[0].v[wi] = x.v[di];
    else
      c.out[0].v[di] = x.v[wi];
  }
}

// batch_take: a viewed as (rows, m); output[i] = a[i, clamp(indices[i], 0, m - 1)].
void BatchTake(Call& c) {
  const HostTensor &a = c.in(0), &idx = c.in(1);
  const int64_t m = a.shape[a.shape.ndim() - 1];
  for (size_t i = 0; i < c.out[0].v.size(); ++i) {
    const int64_t j = std::clamp<int64_t>(static_cast<int64_t>(idx.v[i]), 0, m - 1);
    c.out[0].v[i] = a.v[i * static_cast<size_t>(m) + static_cast<size_t>(j)];
  }
}

// fill_element_0index: lhs with [i, trunc(rhs[i])] = mhs[i] where that column exists.
void FillElement(Call& c) {
  const HostTensor &lhs = c.in(0), &val = c.in(1), &pos = c.in(2);
  const int64_t m = lhs.shape[1];
  c.out[0].v = lhs.v;
  for (size_t i = 0; i < val.v.size(); ++i) {
    const double j = std::trunc(pos.v[i]);
    if (j >= 0 && j < static_cast<double>(m))
      c.out[0].v[i * static_cast<size_t>(m) + static_cast<size_t>(j)] = val.v[i];
  }
}

}  // namespace

void RegisterIndexReferences(Table& t) {
  t["batch_take"] = BatchTake;
  t["fill_element_0index"] = FillElement;
  t["_slice_assign"] = [](Call& c) { SliceAssign(c, false); };
  t["_slice_assign_scalar"] = [](Call& c) { SliceAssign(c, true); };
  t["_set_value"] = [](Call& c) { std::fill(c.out[0].v.begin(), c.out[0].v.end(), c.attrs().GetFloat("src")); };
  // _sparse_retain of a dense data: the rows the indices name (cast toward zero), zero elsewhere.
  t["_sparse_retain"] = [](Call& c) {
    const HostTensor &data = c.in(0), &idx = c.in(1);
    const size_t width = data.shape[0] == 0 ? 0 : data.v.size() / static_cast<size_t>(data.shape[0]);
    for (double i : idx.v) {
      const auto r = static_cast<size_t>(std::trunc(i));
      std::copy_n(data.v.begin() + static_cast<std::ptrdiff_t>(r * width), width,
                  c.out[0].v.begin() + static_cast<std::ptrdiff_t>(r * width));
    }
  };
  t["gather_nd"] = GatherNd;
  t["scatter_nd"] = [](Call& c) { ScatterNd(c, false); };
  t["_scatter_set_nd"] = [](Call& c) { ScatterNd(c, true); };
  t["_onehot_encode"] = [](Call& c) {
    const int64_t depth = c.out[0].shape[1];
    for (size_t i = 0; i < c.in(0).v.size(); ++i) {
      const int64_t hot = static_cast<int64_t>(std::trunc(c.in(0).v[i]));
      if (hot >= 0 && hot < depth) c.out[0].v[i * static_cast<size_t>(depth) + static_cast<size_t>(hot)] = 1;
    }
  };
  t["_histogram"] = Histogram;
  t["_eye"] = [](Call& c) {
    const int64_t k = c.attrs().GetInt("k", 0), cols = c.out[0].shape[1];
    for (int64_t i = 0; i < c.out[0].shape.Size(); ++i) c.out[0].v[static_cast<size_t>(i)] = i % cols - i / cols == k;
  };
  t["_linspace"] = [](Call& c) {
    const double start = c.attrs().GetFloat("start"), stop = c.attrs().GetFloat("stop");
    const int64_t num = c.attrs().GetInt("num"), steps = num - (c.attrs().GetBool("endpoint", true) ? 1 : 0);
    for (int64_t i = 0; i < num; ++i)
      c.out[0].v[static_cast<size_t>(i)] = steps > 0 ? start + static_cast<double>(i) * (stop - start) / steps : start;
  };
  // The same elements in the same order; amp_cast's conversion is the rounding to the output dtype.
  for (const char* op : {"squeeze", "amp_cast"}) t[op] = [](Call& c) { c.out[0].v = c.in(0).v; };
  t["reverse"] = Reverse;
  t["diag"] = Diag;
  t["shape_array"] = [](Call& c) {
    for (size_t a = 0; a < c.in(0).shape.ndim(); ++a) c.out[0].v[a] = static_cast<double>(c.in(0).shape[a]);
  };
  t["size_array"] = [](Call& c) { c.out[0].v[0] = static_cast<double>(c.in(0).shape.Size()); };
  t["broadcast_axis"] = [](Call& c) {
    HostTensor& y = c.out[0];
    for (int64_t i = 0; i < y.shape.Size(); ++i)
      y.v[static_cast<size_t>(i)] = c.in(0).v[static_cast<size_t>(BroadcastSource(i, y.shape, c.in(0).shape))];
  };
  t["_split_v2"] = SplitV2;
  t["depth_to_space"] = [](Call& c) { DepthSpace(c, true); };
  t["space_to_depth"] = [](Call& c) { DepthSpace(c, false); };
}

}  // namespace wconf::ref
