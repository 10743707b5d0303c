// weft CPU kernels — the reduction driver shared by sum / mean / max and by the backward of the
// broadcast ops (which sum the gradient over broadcast axes).
//
//   ReduceTo(in, in_dims, reduced, out, req, op, scale)
//       out[kept index] (=|+=) scale * op-fold of `in` over the axes flagged in `reduced`.
//
// `out` is contiguous over the kept axes in order (keepdims does not change the layout).
// Reductions accumulate in the element type, with eight interleaved partial results along
// contiguous runs: that keeps the loop vectorisable and the rounding error growing with
// n / 8 instead of n. Thread-safe: no state.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "elemwise_driver.h"
#include "tensor_util.h"

namespace weft::cpu::tensor {

/// Sum: identity 0.
template <typename T>
struct SumOp {
  static T Init() { return T(0); }
  T operator()(T a, T b) const { return a + b; }
};

/// Max: identity -inf (lowest for integers); a NaN wins so that it shows in the result.
template <typename T>
struct MaxOp {
  static T Init() {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::lowest();
  }
  T operator()(T a, T b) const {
    const T m = b > a ? b : a;  // select, then patch NaN: both compile to branch-free vector code
    return IsNan(b) ? b : m;
  }
};

namespace detail {

template <typename T, typename Op>
T Fold(const T* p, int64_t n, const Op& op) {
  constexpr int kLanes = 8;
  T acc[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = Op::Init();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] = op(acc[j], p[i + j]);
  }
  for (int j = 0; j < kLanes; ++j) {
    if (i + j < n) acc[j] = op(acc[j], p[i + j]);
  }
  for (int w = kLanes / 2; w > 0; w /= 2) {
    for (int j = 0; j < w; ++j) acc[j] = op(acc[j], acc[j + w]);
  }
  return acc[0];
}

// acc[kept] = op(acc[kept], in...) over every element of `in`; acc pre-filled by the caller.
template <typename T, typename Op>
void ReduceInto(const T* in, const Dims& in_dims, const bool* reduced, T* acc, const Op& op) {
  struct Axis {
    int64_t n, in_stride, out_stride;
    bool red;
  };
  Axis ax[WEFT_MAX_NDIM];
  int nax = 0;
  int64_t in_stride = 1, out_stride = 1;
  // Walk from the innermost axis out, merging neighbours of one kind (extent-1 axes vanish).
  for (int a = in_dims.ndim - 1; a >= 0; --a) {
    const int64_t e = in_dims.d[a];
    if (e != 1) {
      if (nax > 0 && ax[nax - 1].red == reduced[a]) {
        ax[nax - 1].n *= e;
      } else {
        ax[nax++] = {e, in_stride, reduced[a] ? 0 : out_stride, reduced[a]};
      }
    }
    in_stride *= e;
    if (!reduced[a]) out_stride *= e;
  }
  if (nax == 0) ax[nax++] = {1, 1, 1, false};
  std::reverse(ax, ax + nax);
  const Axis& inner = ax[nax - 1];
  const int64_t total = in_dims.Size();
  if (total == 0) return;
  int64_t idx[WEFT_MAX_NDIM] = {};
  int64_t in_off = 0, out_off = 0;
  for (int64_t o = 0; o < total / inner.n; ++o) {
    if (inner.red) {
      acc[out_off] = op(acc[out_off], Fold(in + in_off, inner.n, op));
    } else {
      T* dst = acc + out_off;
      const T* src = in + in_off;
      for (int64_t k = 0; k < inner.n; ++k) dst[k] = op(dst[k], src[k]);
    }
    for (int a = nax - 2; a >= 0; --a) {
      in_off += ax[a].in_stride;
      out_off += ax[a].out_stride;
      if (++idx[a] < ax[a].n) break;
      in_off -= ax[a].in_stride * ax[a].n;
      out_off -= ax[a].out_stride * ax[a].n;
      idx[a] = 0;
    }
  }
}

}  // namespace detail

/// Number of elements folded into each output element.
inline int64_t ReducedCount(const Dims& in_dims, const bool* reduced) {
  int64_t n = 1;
  for (int a = 0; a < in_dims.ndim; ++a) n *= reduced[a] ? in_dims.d[a] : 1;
  return n;
}

/// Shape of `in_dims` with the reduced axes set to 1 (the keepdims shape).
inline Dims KeepDims(const Dims& in_dims, const bool* reduced) {
  Dims k = in_dims;
  for (int a = 0; a < k.ndim; ++a) k.d[a] = reduced[a] ? 1 : k.d[a];
  return k;
}

/// out (=|+=) scale * fold_op(in over the reduced axes), honouring req. `out` holds the kept
/// elements (KeepDims(in_dims).Size()); it may alias `in` only when nothing is reduced.
/// kIsa = false: the baseline copy only (elemwise_driver.h).
template <bool kIsa = true, typename T, typename Op>
void ReduceTo(const T* in, const Dims& in_dims, const bool* reduced, T* out, int32_t req, const Op& op,
              T scale = T(1)) {
  CheckReq(req);
  if (req == WEFT_REQ_NULL) return;
  const int64_t out_n = KeepDims(in_dims, reduced).Size();
  const auto addr = [](const T* p) { return reinterpret_cast<uintptr_t>(p); };
  const bool alias = addr(out) < addr(in + in_dims.Size()) && addr(in) < addr(out + out_n);
  if (req == WEFT_REQ_ADD || alias) {
    std::vector<T> acc(static_cast<size_t>(out_n), Op::Init());
    MaybeDispatch<kIsa>([&] { detail::ReduceInto(in, in_dims, reduced, acc.data(), op); });
    Map<kIsa>(
        out, out_n, req, [scale](T a) { return a * scale; }, acc.data());
    return;
  }
  std::fill(out, out + out_n, Op::Init());
  MaybeDispatch<kIsa>([&] { detail::ReduceInto(in, in_dims, reduced, out, op); });
  if (scale != T(1))
    Map<kIsa>(
        out, out_n, WEFT_REQ_WRITE, [scale](T a) { return a * scale; }, out);
}

}  // namespace weft::cpu::tensor
