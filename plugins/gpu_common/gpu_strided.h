// weft GPU kernel layer — the strided index space of the data-moving ops (as vk_strided.cc is
// Vulkan's). An IndexPlan walks an iteration shape (row-major, at most WEFT_MAX_NDIM axes) and
// gives each operand's element offset (its own strides; 0 repeats an operand, negative steps walk
// backwards). Broadcasting, transposes, slices and concat are all plans built on the host. A
// ReducePlan splits the shape into kept axes (one work item per kept element, written
// contiguously) and reduced axes (looped by the item), so reductions need no atomics and sum in a
// fixed order. StridedCopyMap / RunCopy move elements along a plan.
#pragma once

#include <array>
#include <vector>

#include "gpu_kernel.h"
#include "weft/sdk/operator.h"

namespace weft::WEFT_GPU_NS {

// ---- plans ------------------------------------------------------------------------------------

/// A row-major walk over `shape` giving K operands' offsets: off[k] = base[k] + Σ idx[a]·stride[k][a].
template <int K>
struct IndexPlan {
  int ndim = 1;
  int64_t shape[WEFT_MAX_NDIM] = {1};
  int64_t stride[K][WEFT_MAX_NDIM] = {};
  int64_t base[K] = {};
  int64_t Size() const {
    int64_t n = 1;
    for (int a = 0; a < ndim; ++a) n *= shape[a];
    return n;
  }
  /// Offsets of item i (0 <= i < Size()), base included.
  WEFT_HD void Offsets(int64_t i, int64_t (&off)[K]) const {
    for (int k = 0; k < K; ++k) off[k] = base[k];
    for (int a = ndim - 1; a >= 0; --a) {
      const int64_t q = i / shape[a], r = i - q * shape[a];
      for (int k = 0; k < K; ++k) off[k] += r * stride[k][a];
      i = q;
    }
  }
  /// Item i's offsets and its index digits `idx`, the start of a walk by Next.
  WEFT_HD void Start(int64_t i, int64_t (&idx)[WEFT_MAX_NDIM], int64_t (&off)[K]) const {
    for (int k = 0; k < K; ++k) off[k] = base[k];
    for (int a = ndim - 1; a >= 0; --a) {
      const int64_t q = i / shape[a];
      idx[a] = i - q * shape[a];
      for (int k = 0; k < K; ++k) off[k] += idx[a] * stride[k][a];
      i = q;
    }
  }
  /// Steps (idx, off) to the next item in row-major order: additions only (no division per item).
  WEFT_HD void Next(int64_t (&idx)[WEFT_MAX_NDIM], int64_t (&off)[K]) const {
    for (int a = ndim - 1; a >= 0; --a) {
      for (int k = 0; k < K; ++k) off[k] += stride[k][a];
      if (++idx[a] < shape[a]) return;
      for (int k = 0; k < K; ++k) off[k] -= shape[a] * stride[k][a];
      idx[a] = 0;
    }
  }
};

/// Kept axes (work items, output written at the item's index) and reduced axes (looped).
template <int K>
struct ReducePlan {
  IndexPlan<K> kept, red;
  int64_t red_count = 1;
};

// ---- plans (host) -------------------------------------------------------------------------------

inline Shape RowMajorStrides(const Shape& shape) {
  Shape st(shape.size());
  int64_t s = 1;
  for (size_t a = shape.size(); a-- > 0;) st[a] = s, s *= shape[a];
  return st;
}

/// Strides of an operand of shape `s`, right-aligned against `out` (0 where it repeats).
inline Shape BroadcastStrides(const Shape& s, const Shape& out) {
  const Shape own = RowMajorStrides(s);
  Shape st(out.size(), 0);
  for (size_t a = 0; a < out.size(); ++a) {
    const ptrdiff_t sa = static_cast<ptrdiff_t>(a) - static_cast<ptrdiff_t>(out.size() - s.size());
    if (sa >= 0 && s[static_cast<size_t>(sa)] != 1) st[a] = own[static_cast<size_t>(sa)];
  }
  return st;
}

/// The plan walking `shape` with each operand's strides: extent-1 axes dropped, neighbours every
/// operand walks as one run merged.
template <int K>
IndexPlan<K> MakeIndexPlan(const Shape& shape, const std::array<Shape, K>& strides,
                           const std::array<int64_t, K>& base = {}) {
  IndexPlan<K> p;
  p.ndim = 0;
  for (int k = 0; k < K; ++k) p.base[k] = base[static_cast<size_t>(k)];
  for (size_t a = 0; a < shape.size(); ++a) {
    if (shape[a] == 1) continue;
    bool merge = p.ndim > 0 && shape[a] != 0 && p.shape[p.ndim - 1] != 0;
    for (int k = 0; k < K && merge; ++k)
      merge = p.stride[k][p.ndim - 1] == strides[static_cast<size_t>(k)][a] * shape[a];
    if (merge) {
      p.shape[p.ndim - 1] *= shape[a];
      for (int k = 0; k < K; ++k) p.stride[k][p.ndim - 1] = strides[static_cast<size_t>(k)][a];
    } else {
      if (p.ndim == WEFT_MAX_NDIM) throw Error(WEFT_ERR_UNSUPPORTED, "more than WEFT_MAX_NDIM axes");
      p.shape[p.ndim] = shape[a];
      for (int k = 0; k < K; ++k) p.stride[k][p.ndim] = strides[static_cast<size_t>(k)][a];
      ++p.ndim;
    }
  }
  if (p.ndim == 0) {
    p.ndim = 1;
    p.shape[0] = 1;
    for (int k = 0; k < K; ++k) p.stride[k][0] = 0;
  }
  return p;
}

/// Kept axes of `shape` (not flagged) as the work items, flagged axes as each item's loop.
template <int K>
ReducePlan<K> MakeReducePlan(const Shape& shape, const std::vector<bool>& reduced,
                             const std::array<Shape, K>& strides) {
  Shape ks, rs;
  std::array<Shape, K> kst, rst;
  for (size_t a = 0; a < shape.size(); ++a) {
    (reduced[a] ? rs : ks).push_back(shape[a]);
    for (size_t k = 0; k < K; ++k) (reduced[a] ? rst : kst)[k].push_back(strides[k][a]);
  }
  ReducePlan<K> p;
  p.kept = MakeIndexPlan<K>(ks, kst);
  p.red = MakeIndexPlan<K>(rs, rst);
  p.red_count = p.red.Size();
  return p;
}

// ---- copies along a plan ------------------------------------------------------------------------

/// out[o0] (=|+=) in[o1] at the plan's offsets of item i: copies, transposes, slices (gather and
/// scatter), concat parts. T is the element type (one of kMoveDTypes').
template <typename T, class Assign>
struct StridedCopyMap {
  IndexPlan<2> p;
  const T* in;
  T* out;
  WEFT_HD void operator()(int64_t i) const {
    int64_t o[2];
    p.Offsets(i, o);
    Assign::Put(out[o[0]], in[o[1]]);
  }
};

/// Runs StridedCopyMap over `plan` (element type of `dtype`) with req.
template <class L>
void RunCopy(const DeviceCall& c, const char* op, int32_t dtype, int32_t req, const IndexPlan<2>& plan,
             const DeviceTensor& in, const DeviceTensor& out) {
  WithMoveType(op, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    WithReq(req, [&](auto a) {
      L::Map(c, plan.Size(),
             StridedCopyMap<T, decltype(a)>{plan, L::template Ptr<const T>(in), L::template Ptr<T>(out)});
    });
  });
}

/// A contiguous copy of n elements.
inline IndexPlan<2> LinearPlan(int64_t n) { return MakeIndexPlan<2>(Shape{n}, {Shape{1}, Shape{1}}); }

}  // namespace weft::WEFT_GPU_NS
