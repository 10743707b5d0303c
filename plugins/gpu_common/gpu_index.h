// weft GPU kernel layer — the index family (cpu: index.cc, index_gather.cc): one_hot, argmax,
// Embedding and its backward. Indices are float32 / float64 / int32 / int64 (kIndexTypes), read
// through the run-time-dtype Scalar of gpu_elem.h, so each op needs one instantiation per write
// request (and weight dtype), not one per dtype pair.
#pragma once

#include <optional>
#include <string>

#include "gpu_kernel.h"
#include "weft/sdk/ops/index.hpp"

namespace weft::WEFT_GPU_NS {

/// one_hot: item = one index; its row of `depth` values on / off.
template <class Assign>
struct OneHotMap {
  const void* idx;
  int32_t idx_dtype;
  void* out;
  int32_t out_dtype;
  int64_t depth;
  Scalar on, off;
  WEFT_HD void operator()(int64_t i) const {
    const int64_t hot = LoadIndex(idx, idx_dtype, i);
    for (int64_t j = 0; j < depth; ++j) StoreScalar<Assign>(out, out_dtype, i * depth + j, j == hot ? on : off);
  }
};

/// argmax along an axis viewed as (outer, n, inner): item = one (outer, inner) position; the first
/// maximum wins, a NaN counts as the largest.
template <typename X, class Assign>
struct ArgmaxMap {
  const X* x;
  void* out;
  int32_t out_dtype;
  int64_t n, inner;
  WEFT_HD void operator()(int64_t item) const {
    const int64_t o = item / inner, j = item - o * inner;
    const X* base = x + o * n * inner + j;
    X best = base[0];
    int64_t at = 0;
    for (int64_t k = 1; k < n; ++k) {
      const X v = base[k * inner];
      if (v > best || (IsNan(v) && !IsNan(best))) best = v, at = k;
    }
    StoreScalar<Assign>(out, out_dtype, item, IntScalar(at));
  }
};

/// Embedding's row of index i: truncated and clipped to [0, rows − 1] (MXNet's forward).
WEFT_HD inline int64_t EmbeddingRow(const void* idx, int32_t dtype, int64_t i, int64_t rows) {
  const int64_t r = LoadIndex(idx, dtype, i);
  return r < 0 ? 0 : (r > rows - 1 ? rows - 1 : r);
}

/// Embedding: y[i, j] = w[row(i), j]; item = output element.
template <typename T, class Assign>
struct EmbeddingMap {
  const void* idx;
  int32_t idx_dtype;
  const T* w;
  T* y;
  int64_t rows, dim;
  WEFT_HD void operator()(int64_t e) const {
    const int64_t i = e / dim, j = e - i * dim;
    Assign::Put(y[e], w[EmbeddingRow(idx, idx_dtype, i, rows) * dim + j]);
  }
};

/// _backward_Embedding's weight gradient: item = weight element (r, j), summing the out_grad
/// rows of every index that maps to r, in index order (no atomics; O(n) per item).
template <typename T, class Assign>
struct EmbeddingGradMap {
  const void* idx;
  int32_t idx_dtype;
  const T* g;
  T* gw;
  int64_t n, rows, dim;
  WEFT_HD void operator()(int64_t e) const {
    const int64_t r = e / dim, j = e - r * dim;
    T acc = T(0);
    for (int64_t i = 0; i < n; ++i)
      if (EmbeddingRow(idx, idx_dtype, i, rows) == r) acc += g[i * dim + j];
    Assign::Put(gw[e], acc);
  }
};

template <class L>
class OneHotKernel {
 public:
  explicit OneHotKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    p_ = s.Params<sdk::OneHotParam>();
    if (!InMask(s.inputs[0].dtype, kIndexTypes) || !InMask(s.outputs[0].dtype, kMoveTypes))
      Unsupported(s, "indices of dtype " + std::string(sdk::DTypeName(s.inputs[0].dtype)) + " to " +
                         sdk::DTypeName(s.outputs[0].dtype) + " are not implemented on GPUs");
    p_.CheckShapes(s.op_name, s.inputs[0].shape, s.outputs[0].shape);
  }
  void Compute(const DeviceCall& c) const {
    const DeviceTensor& in = c.inputs[0];
    const DeviceTensor& out = c.outputs[0];
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, in.size(),
             OneHotMap<decltype(a)>{L::template Ptr<const void>(in), in.dtype(), L::template Ptr<void>(out),
                                    out.dtype(), p_.depth, FloatScalar(p_.on_value), FloatScalar(p_.off_value)});
    });
  }

 private:
  sdk::OneHotParam p_;
};

template <class L>
class ArgmaxKernel {
 public:
  explicit ArgmaxKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    if (!InMask(s.inputs[0].dtype, kIndexTypes) || !InMask(s.outputs[0].dtype, kIndexTypes))
      Unsupported(s, "dtypes other than float32, float64, int32, int64 are not implemented on GPUs");
    const TensorDesc& x = s.inputs[0];
    if (const std::optional<int64_t> axis = s.Params<sdk::ArgmaxParam>().axis) {
      const int a = NormalizeAxis(s, *axis, x.ndim(), "axis");
      for (int d = 0; d < x.ndim(); ++d) (d < a ? outer_ : d == a ? n_ : inner_) *= x.dim(d);
    } else {
      n_ = x.size();
    }
    if (n_ == 0 && outer_ * inner_ > 0) Invalid(s, "argmax over an empty axis");
    if (s.outputs[0].size() != outer_ * inner_) Invalid(s, "output " + ShapeOf(s.outputs[0]) + " has the wrong size");
  }
  void Compute(const DeviceCall& c) const {
    const DeviceTensor& out = c.outputs[0];
    auto run = [&](auto xtag) {
      using X = typename decltype(xtag)::type;
      WithReq(c.req[0], [&](auto a) {
        L::Map(c, outer_ * inner_,
               ArgmaxMap<X, decltype(a)>{L::template Ptr<const X>(c.inputs[0]), L::template Ptr<void>(out), out.dtype(),
                                         n_, inner_});
      });
    };
    switch (c.inputs[0].dtype()) {
      case WEFT_DTYPE_INT32:
        return run(TypeTag<int32_t>{});
      case WEFT_DTYPE_INT64:
        return run(TypeTag<int64_t>{});
      default:
        return WithFloatType("argmax", c.inputs[0].dtype(), run);
    }
  }

 private:
  int64_t outer_ = 1, n_ = 1, inner_ = 1;
};

/// Embedding (inputs data = indices of any kIndexTypes dtype, weight (input_dim, output_dim)) and
/// _backward_Embedding (inputs out_grad, data, weight; outputs zeros for data, the weight gradient).
template <class L>
class EmbeddingKernel {
 public:
  explicit EmbeddingKernel(const KernelSetup& s) : backward_(IsBackward(s)) {
    s.ExpectCounts(backward_ ? 3 : 2, backward_ ? 2 : 1);
    const TensorDesc& data = s.inputs[backward_ ? 1 : 0];
    const TensorDesc& weight = s.inputs[backward_ ? 2 : 1];
    const TensorDesc& out = backward_ ? s.inputs[0] : s.outputs[0];
    if (!InMask(data.dtype, kIndexTypes) || !InMask(weight.dtype, kFloatTypes))
      Unsupported(s, "indices " + std::string(sdk::DTypeName(data.dtype)) + " with weights " +
                         sdk::DTypeName(weight.dtype) + " are not implemented on GPUs");
    if (weight.ndim() != 2) Invalid(s, "weight must be 2-d (input_dim, output_dim), got " + ShapeOf(weight));
    rows_ = weight.dim(0), dim_ = weight.dim(1);
    if (out.dtype != weight.dtype) Invalid(s, "output and weight dtypes differ");
    if (out.size() != data.size() * dim_)
      Invalid(s, "output " + ShapeOf(out) + " must hold output_dim values per index");
    if (backward_ && (s.outputs[1].shape != weight.shape || s.outputs[0].shape != data.shape))
      Invalid(s, "gradients must have the shapes of data and weight");
  }
  void Compute(const DeviceCall& c) const {
    const DeviceTensor& data = c.inputs[backward_ ? 1 : 0];
    if (backward_)
      WithReq(c.req[0], [&](auto a) {
        L::Map(c, data.size(),
               FillAnyMap<decltype(a)>{L::template Ptr<void>(c.outputs[0]), c.outputs[0].dtype(), IntScalar(0)});
      });
    WithFloatType("Embedding", c.inputs[backward_ ? 2 : 1].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const void* idx = L::template Ptr<const void>(data);
      WithReq(c.req[backward_ ? 1 : 0], [&](auto a) {
        using A = decltype(a);
        if (!backward_)
          L::Map(c, c.outputs[0].size(),
                 EmbeddingMap<T, A>{idx, data.dtype(), L::template Ptr<const T>(c.inputs[1]),
                                    L::template Ptr<T>(c.outputs[0]), rows_, dim_});
        else
          L::Map(c, rows_ * dim_,
                 EmbeddingGradMap<T, A>{idx, data.dtype(), L::template Ptr<const T>(c.inputs[0]),
                                        L::template Ptr<T>(c.outputs[1]), data.size(), rows_, dim_});
      });
    });
  }

 private:
  bool backward_;
  int64_t rows_ = 0, dim_ = 0;
};

/// Registers one_hot, argmax, Embedding and Embedding's backward for launcher L.
template <class L>
void RegisterIndexKernels(sdk::KernelTable& t) {
  t.Add<OneHotKernel<L>>("one_hot", kIndexTypes);
  t.Add<ArgmaxKernel<L>>("argmax", kIndexTypes);
  t.Add<EmbeddingKernel<L>>("Embedding", kIndexTypes);
  t.Add<EmbeddingKernel<L>>("_backward_Embedding", kFloatTypes);
}

}  // namespace weft::WEFT_GPU_NS
