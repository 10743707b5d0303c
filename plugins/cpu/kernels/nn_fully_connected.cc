// FullyConnected and _backward_FullyConnected (MXNet 1.9 semantics): y = x · Wᵀ + b with
// x viewed as (N, K) — N = first axis and K = the rest when flatten=True, N = all leading axes
// and K = the last when flatten=False — W (num_hidden, K), b (num_hidden). OpenBLAS sgemm for
// training passes, and for every forward with is_train false (inference, evaluation) oneDNN with
// cached reordered weights (nn_fc_dnnl.h). float64 (MXNet's Gluon nets cast to float64) runs
// OpenBLAS dgemm.
#include "nn_common.h"
#include "nn_fc_dnnl.h"
#include "tensor_util.h"
#include "weft/sdk/ops/fully_connected.hpp"

namespace weft::cpu {
namespace {

using tensor::kFloatMask;

struct FcDims {
  int64_t n = 0, k = 0, h = 0;
  bool bias = true;
};

// Validates shapes against the attributes; `x`, `w` are the data and weight descs.
FcDims ParseFc(const KernelSetup& s, const TensorDesc& x, const TensorDesc& w) {
  FcDims d;
  const auto p = s.Params<weft::sdk::FullyConnectedParam>();
  d.h = p.num_hidden;
  d.bias = !p.no_bias;
  const bool flatten = p.flatten;
  if (x.ndim() < 1) Invalid(s, "data must have at least one axis, got " + ShapeString(x));
  if (flatten) {
    d.n = x.dim(0);
    d.k = 1;
    for (int i = 1; i < x.ndim(); ++i) d.k *= x.dim(i);
  } else {
    d.k = x.dim(-1);
    d.n = 1;
    for (int i = 0; i + 1 < x.ndim(); ++i) d.n *= x.dim(i);
  }
  if (w.ndim() != 2 || w.dim(0) != d.h || w.dim(1) != d.k)
    Invalid(s, "weight " + ShapeString(w) + " does not match (num_hidden, K) = (" + std::to_string(d.h) + ", " +
                   std::to_string(d.k) + ") for data " + ShapeString(x));
  return d;
}

// y[j] += b[j]; a separate function so the loop vectorises on its own.
template <typename T>
void AddRow(T* __restrict y, const T* __restrict b, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] += b[j];
}

class FcForward {
 public:
  explicit FcForward(const KernelSetup& s) : dtype_(RequireFloatDType(s)) {
    if (s.inputs.size() < 2) Invalid(s, "expects data and weight");
    d_ = ParseFc(s, s.inputs[0], s.inputs[1]);
    s.ExpectCounts(d_.bias ? 3 : 2, 1);
    if (d_.bias && s.inputs[2].size() != d_.h)
      Invalid(s, "bias " + ShapeString(s.inputs[2]) + " must have num_hidden = " + std::to_string(d_.h) + " elements");
    if (s.outputs[0].size() != d_.n * d_.h)
      Invalid(s, "output " + ShapeString(s.outputs[0]) + " must hold N x num_hidden elements");
    // Below about 2^18 multiply-adds the call costs more than the product (MLP's 64 -> 10 layer).
    if (dtype_ == WEFT_DTYPE_FLOAT32 && d_.n * d_.k * d_.h >= (int64_t{1} << 18))
      dnnl_ = DnnlFcForward::Make(d_.n, d_.k, d_.h, d_.bias, s.host);
  }
  // The path of a call depends only on what is fixed when the node is bound (shapes, the request)
  // and on the call's is_train, never on what earlier calls saw, so the same inputs give the same
  // bits on every call from the first (issue 32: switching to oneDNN once the weights had been
  // seen twice made run 2 of an executor differ from run 1). Training passes change the weights
  // every step and keep OpenBLAS: a reorder per step costs more than it saves.
  bool UseDnnl(const KernelCall& c) const {
    return dnnl_ != nullptr && weft::sdk::ReqBeta(c.req[0]) == 0.0f && !c.is_train;
  }
  void Compute(const KernelCall& c) const {
    if (weft::sdk::IsNull(c.req[0])) return;
    if (dtype_ == WEFT_DTYPE_FLOAT64) return Run<double>(c);
    if (UseDnnl(c)) {
      dnnl_->Forward(c.inputs[0].data<float>(), c.inputs[1].data<float>(), c.InputStamp(1),
                     d_.bias ? c.inputs[2].data<float>() : nullptr, c.outputs[0].data<float>());
      return;
    }
    Run<float>(c);
  }

 private:
  template <typename T>
  void Run(const KernelCall& c) const {
    const T* x = c.inputs[0].data<T>();
    const T* w = c.inputs[1].data<T>();
    T* y = c.outputs[0].data<T>();
    Gemm<T>(false, true, d_.n, d_.h, d_.k, T(1), x, d_.k, w, d_.k, static_cast<T>(weft::sdk::ReqBeta(c.req[0])), y,
            d_.h);
    if (d_.bias) {
      // After the product, while y is still in cache (measured faster than seeding y with the
      // bias and asking sgemm for beta = 1 on small layers).
      const T* b = c.inputs[2].data<T>();
      for (int64_t i = 0; i < d_.n; ++i) AddRow(y + i * d_.h, b, d_.h);
    }
  }

  int32_t dtype_;
  FcDims d_;
  std::unique_ptr<DnnlFcForward> dnnl_;  // null: OpenBLAS only
};

// Inputs: out_grad (N, H), data, weight[, bias]; outputs: data, weight[, bias] gradients.
class FcBackward {
 public:
  explicit FcBackward(const KernelSetup& s) : dtype_(RequireFloatDType(s)) {
    if (s.inputs.size() < 3) Invalid(s, "expects out_grad, data and weight");
    d_ = ParseFc(s, s.inputs[1], s.inputs[2]);
    s.ExpectCounts(d_.bias ? 4 : 3, d_.bias ? 3 : 2);
    if (s.inputs[0].size() != d_.n * d_.h)
      Invalid(s, "out_grad " + ShapeString(s.inputs[0]) + " must be N x num_hidden");
  }
  void Compute(const KernelCall& c) const {
    WithFloatType(dtype_, [&](auto t) { Run<decltype(t)>(c); });
  }

 private:
  template <typename T>
  void Run(const KernelCall& c) const {
    const T* gy = c.inputs[0].data<T>();
    const T* x = c.inputs[1].data<T>();
    const T* w = c.inputs[2].data<T>();
    auto beta = [&](size_t o) { return static_cast<T>(weft::sdk::ReqBeta(c.req[o])); };
    if (!weft::sdk::IsNull(c.req[0]))  // gx = gy · W
      Gemm<T>(false, false, d_.n, d_.k, d_.h, T(1), gy, d_.h, w, d_.k, beta(0), c.outputs[0].data<T>(), d_.k);
    if (!weft::sdk::IsNull(c.req[1]))  // gW = gyᵀ · x
      Gemm<T>(true, false, d_.h, d_.k, d_.n, T(1), gy, d_.h, x, d_.k, beta(1), c.outputs[1].data<T>(), d_.k);
    if (d_.bias) {
      T* gb = WantedOutput<T>(c, 2);
      weft::sdk::WithReq(c.req[2], [&](auto assign) {
        // Column sums, row by row so the inner loop runs over contiguous memory.
        if constexpr (!decltype(assign)::kAdd)
          for (int64_t j = 0; j < d_.h; ++j) gb[j] = T(0);
        for (int64_t i = 0; i < d_.n; ++i) {
          const T* row = gy + i * d_.h;
          for (int64_t j = 0; j < d_.h; ++j) gb[j] += row[j];
        }
      });
    }
  }

  int32_t dtype_;
  FcDims d_;
};

}  // namespace

void RegisterFullyConnected(KernelTable& t) {
  t.Add<FcForward>("FullyConnected", kFloatMask);
  t.Add<FcBackward>("_backward_FullyConnected", kFloatMask);
}

}  // namespace weft::cpu
