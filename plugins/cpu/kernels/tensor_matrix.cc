// The layout ops of defs/tensor_matrix.cc that move elements by a position map, forward and backward,
// compiled for the baseline ISA only: reverse, diag, depth_to_space, space_to_depth; and
// shape_array, size_array (int64 outputs). Every data-movement dtype for the forward ops, float32
// and float64 for the backward ones. (squeeze, broadcast_axis, _split_v2 and amp_cast reuse the
// copy, broadcast, split and cast kernels.)
//
// Each map is a list of (a, b) element pairs between the op's two sides; the forward reads one
// side and writes the other, the backward the reverse way, and elements of the written side that
// no pair reaches are zero (diag's off-diagonal elements).
#include <cstring>
#include <vector>

#include "tensor_kernels.h"
#include "weft/sdk/ops/matrix.hpp"

namespace weft::cpu::tensor {
namespace {

bool IsBackward(const KernelSetup& s) { return s.op_name.rfind("_backward_", 0) == 0; }

// Row-major strides of `d`.
std::vector<int64_t> Strides(const Dims& d) {
  std::vector<int64_t> st(static_cast<size_t>(d.ndim), 1);
  for (int a = d.ndim - 2; a >= 0; --a) st[a] = st[a + 1] * d.d[a + 1];
  return st;
}

// Calls f(index, coordinates) for every element of `d` in row-major order.
template <typename F>
void ForEachIndex(const Dims& d, F f) {
  std::vector<int64_t> idx(static_cast<size_t>(d.ndim), 0);
  for (int64_t i = 0, n = d.Size(); i < n; ++i) {
    f(i, idx);
    for (int a = d.ndim - 1; a >= 0; --a) {
      if (++idx[a] < d.d[a]) break;
      idx[a] = 0;
    }
  }
}

// pairs[k] = (offset on side A, offset on side B). The forward op writes side B from side A when
// `a_to_b`; its backward goes B's gradient -> A's.
struct PositionMap {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  bool a_to_b = true;
};

// reverse: A = data, B = output; element idx of the output comes from idx mirrored on `axes`.
PositionMap ReverseMap(const KernelSetup& s, const Dims& d) {
  std::vector<bool> flip(static_cast<size_t>(d.ndim), false);
  for (int64_t a : s.Params<sdk::ReverseParam>().axis) flip[NormalizeAxis(s, a, d.ndim, "axis")] = true;
  const std::vector<int64_t> st = Strides(d);
  PositionMap m;
  ForEachIndex(d, [&](int64_t i, const std::vector<int64_t>& idx) {
    int64_t src = 0;
    for (int a = 0; a < d.ndim; ++a) src += (flip[a] ? d.d[a] - 1 - idx[a] : idx[a]) * st[a];
    m.pairs.emplace_back(src, i);
  });
  return m;
}

// diag: A = the matrix side, B = the vector side. 1-D data (B) becomes the matrix (A): B -> A;
// N-D data (A) gives its diagonal (B): A -> B.
PositionMap DiagMap(const KernelSetup& s, const Dims& data) {
  const auto p = s.Params<sdk::DiagParam>();
  const int64_t k = p.k;
  PositionMap m;
  if (data.ndim == 1) {
    const int64_t n = data.d[0] + (k < 0 ? -k : k);
    for (int64_t l = 0; l < data.d[0]; ++l) {
      const int64_t r = k >= 0 ? l : l - k, col = k >= 0 ? l + k : l;
      m.pairs.emplace_back(r * n + col, l);
    }
    m.a_to_b = false;
    return m;
  }
  const int a1 = NormalizeAxis(s, p.axis1, data.ndim, "axis1");
  const int a2 = NormalizeAxis(s, p.axis2, data.ndim, "axis2");
  Dims rest;
  for (int a = 0; a < data.ndim; ++a)
    if (a != a1 && a != a2) rest.Push(data.d[a]);
  const int64_t d1 = data.d[a1], d2 = data.d[a2];
  const int64_t len = p.Length(d1, d2);
  const std::vector<int64_t> st = Strides(data);
  int64_t out = 0;
  ForEachIndex(rest, [&](int64_t, const std::vector<int64_t>& idx) {
    int64_t base = 0;
    for (int a = 0, j = 0; a < data.ndim; ++a)
      if (a != a1 && a != a2) base += idx[j++] * st[a];
    for (int64_t l = 0; l < len; ++l, ++out) {
      const int64_t i1 = k >= 0 ? l : l - k, i2 = k >= 0 ? l + k : l;
      m.pairs.emplace_back(base + i1 * st[a1] + i2 * st[a2], out);
    }
  });
  return m;
}

// depth_to_space: A = the depth side (N, C·b², H, W), B = the space side (N, C, H·b, W·b);
// space[n, c, h·b + i, w·b + j] = depth[n, (i·b + j)·C + c, h, w]. space_to_depth: B -> A.
PositionMap DepthSpaceMap(const KernelSetup& s, const Dims& depth, bool to_space) {
  const int64_t b = s.Params<sdk::DepthSpaceParam>().block_size;
  if (depth.ndim != 4 || b < 1 || depth.d[1] % (b * b) != 0) Invalid(s, "data must be 4-D NCHW fitting block_size");
  const int64_t n = depth.d[0], c = depth.d[1] / (b * b), h = depth.d[2], w = depth.d[3];
  PositionMap m;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t y = 0; y < h * b; ++y)
        for (int64_t x = 0; x < w * b; ++x) {
          const int64_t i = y % b, j = x % b;
          const int64_t d = ((in * c * b * b + (i * b + j) * c + ic) * h + y / b) * w + x / b;
          const int64_t sp = ((in * c + ic) * h * b + y) * w * b + x;
          m.pairs.emplace_back(d, sp);
        }
  m.a_to_b = to_space;
  return m;
}

class PositionMapKernel {
 public:
  explicit PositionMapKernel(const KernelSetup& s) : backward_(IsBackward(s)) {
    s.ExpectCounts(1, 1);
    if (s.inputs[0].dtype != s.outputs[0].dtype) Invalid(s, "input and output dtypes differ");
    if (backward_)
      DispatchFloat(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    else
      DispatchAll(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    const std::string op = backward_ ? s.op_name.substr(10) : s.op_name;
    const Dims data(backward_ ? s.outputs[0] : s.inputs[0]);
    if (op == "reverse") {
      map_ = ReverseMap(s, data);
    } else if (op == "diag") {
      map_ = DiagMap(s, data);
    } else {
      const bool to_space = op == "depth_to_space";
      const Dims depth = to_space ? data : Dims(backward_ ? s.inputs[0] : s.outputs[0]);
      map_ = DepthSpaceMap(s, depth, to_space);
    }
    // The side written: the forward's far side, or for the backward the forward's near side.
    const bool writes_b = map_.a_to_b != backward_;
    for (const auto& [a, b] : map_.pairs) {
      const int64_t dst = writes_b ? b : a, src = writes_b ? a : b;
      if (dst >= s.outputs[0].size() || src >= s.inputs[0].size()) Invalid(s, "shapes do not fit the attributes");
    }
    writes_b_ = writes_b;
  }

  void Compute(const KernelCall& c) const {
    const Tensor& out = c.outputs[0];
    if (sdk::IsNull(c.req[0])) return;
    DispatchAll("layout op", out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = static_cast<const T*>(c.inputs[0].raw());
      std::vector<T> y(static_cast<size_t>(out.size()), Convert<T>(0.0));
      for (const auto& [a, b] : map_.pairs) y[static_cast<size_t>(writes_b_ ? b : a)] = x[writes_b_ ? a : b];
      CopyOrAdd(out.raw(), y.data(), out.size(), out.dtype(), c.req[0]);
    });
  }

 private:
  bool backward_;
  bool writes_b_ = true;
  PositionMap map_;
};

class ShapeArrayKernel {
 public:
  explicit ShapeArrayKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    if (s.outputs[0].dtype != WEFT_DTYPE_INT64) Invalid(s, "the output must be int64");
    if (s.op_name == "size_array") {
      values_ = {s.inputs[0].size()};
    } else {
      values_ = s.inputs[0].shape;
    }
    if (static_cast<int64_t>(values_.size()) != s.outputs[0].size()) Invalid(s, "the output has the wrong length");
  }
  void Compute(const KernelCall& c) const {
    CopyOrAdd(c.outputs[0].raw(), values_.data(), static_cast<int64_t>(values_.size()), WEFT_DTYPE_INT64, c.req[0]);
  }

 private:
  std::vector<int64_t> values_;
};

}  // namespace

void RegisterMatrixKernels(KernelTable& t) {
  for (const char* op : {"reverse", "diag", "depth_to_space", "space_to_depth"})
    AddAny<PositionMapKernel>(t, op, kAllMask);
  for (const char* op : {"_backward_reverse", "_backward_diag", "_backward_depth_to_space", "_backward_space_to_depth"})
    AddAny<PositionMapKernel>(t, op, kFloatMask);
  for (const char* op : {"shape_array", "size_array"}) AddAny<ShapeArrayKernel>(t, op, kAllMask);
}

}  // namespace weft::cpu::tensor
