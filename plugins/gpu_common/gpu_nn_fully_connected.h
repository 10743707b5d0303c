// weft GPU kernel layer — the nn family's FullyConnected (cpu: nn_fully_connected.cc) and its
// backward, float32: the products through L::Gemm (cuBLAS on CUDA, the tiled GEMM of gpu_gemm.h
// elsewhere), the bias and its gradient as functors.
#pragma once

#include "gpu_gemm.h"
#include "gpu_kernel.h"
#include "weft/sdk/ops/fully_connected.hpp"

namespace weft::WEFT_GPU_NS {

/// y[i·h + j] += b[j] (FullyConnected's bias), item = element.
struct AddBiasMap {
  const float* b;
  float* y;
  int64_t h;
  WEFT_HD void operator()(int64_t i) const { y[i] += b[i % h]; }
};

/// gb[j] (=|+=) Σ_i gy[i·h + j] (FullyConnected's bias gradient), item = column.
template <class Assign>
struct ColumnSumMap {
  const float* gy;
  float* gb;
  int64_t n, h;
  WEFT_HD void operator()(int64_t j) const {
    float s = 0;
    for (int64_t i = 0; i < n; ++i) s += gy[i * h + j];
    Assign::Put(gb[j], s);
  }
};

/// y = x · Wᵀ + b, x viewed as (n, k) (flatten: first axis / the rest; else leading axes / last).
struct FcShape {
  int64_t n = 0, k = 0, h = 0;
  bool bias = true;
  /// Data and weight are inputs `xi` and `xi` + 1.
  FcShape(const KernelSetup& s, size_t xi) {
    if (s.inputs.size() < xi + 2) Invalid(s, xi == 0 ? "expects data and weight" : "expects out_grad, data and weight");
    const TensorDesc& x = s.inputs[xi];
    const TensorDesc& w = s.inputs[xi + 1];
    const auto p = s.Params<sdk::FullyConnectedParam>();
    h = p.num_hidden;
    bias = !p.no_bias;
    if (x.ndim() < 1) Invalid(s, "data must have at least one axis, got " + ShapeOf(x));
    const bool flatten = p.flatten;
    n = flatten ? x.dim(0) : x.size() / x.dim(-1);
    k = flatten ? x.size() / x.dim(0) : x.dim(-1);
    if (w.ndim() != 2 || w.dim(0) != h || w.dim(1) != k)
      Invalid(s, "weight " + ShapeOf(w) + " does not match (num_hidden, K) = (" + std::to_string(h) + ", " +
                     std::to_string(k) + ") for data " + ShapeOf(x));
  }
};

template <class L>
class FcKernel {
 public:
  explicit FcKernel(const KernelSetup& s) : d_(s, 0) {
    RequireFloat32(s);
    s.ExpectCounts(d_.bias ? 3 : 2, 1);
    if (d_.bias && s.inputs[2].size() != d_.h)
      Invalid(s, "bias " + ShapeOf(s.inputs[2]) + " must have num_hidden elements");
    if (s.outputs[0].size() != d_.n * d_.h) Invalid(s, "output " + ShapeOf(s.outputs[0]) + " must be N x num_hidden");
  }
  void Compute(const DeviceCall& c) const {
    if (c.req[0] == WEFT_REQ_NULL) return;
    float* y = L::template Ptr<float>(c.outputs[0]);
    L::Gemm(c, MakeGemm(false, true, d_.n, d_.h, d_.k, L::template Ptr<const float>(c.inputs[0]), d_.k,
                        L::template Ptr<const float>(c.inputs[1]), d_.k, c.req[0], y, d_.h));
    if (d_.bias) L::Map(c, d_.n * d_.h, AddBiasMap{L::template Ptr<const float>(c.inputs[2]), y, d_.h});
  }

 private:
  FcShape d_;
};

// Inputs out_grad (n, h), data, weight[, bias]; outputs the data, weight[, bias] gradients.
template <class L>
class FcBackwardKernel {
 public:
  explicit FcBackwardKernel(const KernelSetup& s) : d_(s, 1) {
    RequireFloat32(s);
    s.ExpectCounts(d_.bias ? 4 : 3, d_.bias ? 3 : 2);
    if (s.inputs[0].size() != d_.n * d_.h) Invalid(s, "out_grad " + ShapeOf(s.inputs[0]) + " must be N x num_hidden");
  }
  void Compute(const DeviceCall& c) const {
    const float* gy = L::template Ptr<const float>(c.inputs[0]);
    const float* x = L::template Ptr<const float>(c.inputs[1]);
    const float* w = L::template Ptr<const float>(c.inputs[2]);
    if (c.req[0] != WEFT_REQ_NULL)  // gx = gy · W
      L::Gemm(c, MakeGemm(false, false, d_.n, d_.k, d_.h, gy, d_.h, w, d_.k, c.req[0],
                          L::template Ptr<float>(c.outputs[0]), d_.k));
    if (c.req[1] != WEFT_REQ_NULL)  // gW = gyᵀ · x
      L::Gemm(c, MakeGemm(true, false, d_.h, d_.k, d_.n, gy, d_.h, x, d_.k, c.req[1],
                          L::template Ptr<float>(c.outputs[1]), d_.k));
    if (d_.bias)
      WithReq(c.req[2], [&](auto a) {
        L::Map(c, d_.h, ColumnSumMap<decltype(a)>{gy, L::template Ptr<float>(c.outputs[2]), d_.n, d_.h});
      });
  }

 private:
  FcShape d_;
};

/// Registers FullyConnected and its backward op for launcher L.
template <class L>
void RegisterFullyConnectedKernels(sdk::KernelTable& t) {
  t.Add<FcKernel<L>>("FullyConnected", kF32);
  t.Add<FcBackwardKernel<L>>("_backward_FullyConnected", kF32);
}

}  // namespace weft::WEFT_GPU_NS
