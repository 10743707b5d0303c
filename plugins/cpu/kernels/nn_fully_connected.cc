// FullyConnected and _backward_FullyConnected (MXNet 1.9 semantics): y = x · Wᵀ + b with
// x viewed as (N, K) — N = first axis and K = the rest when flatten=True, N = all leading axes
// and K = the last when flatten=False — W (num_hidden, K), b (num_hidden). OpenBLAS sgemm for
// training passes, and for every forward with is_train false (inference, evaluation) oneDNN with
// cached reordered weights (nn_fc_dnnl.h).
#include "nn_common.h"
#include "nn_fc_dnnl.h"
#include "weft/sdk/ops/fully_connected.hpp"

namespace weft::cpu {
namespace {

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
void AddRow(float* __restrict y, const float* __restrict b, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] += b[j];
}

class FcForward {
 public:
  explicit FcForward(const KernelSetup& s) {
    RequireFloat32(s);
    if (s.inputs.size() < 2) Invalid(s, "expects data and weight");
    d_ = ParseFc(s, s.inputs[0], s.inputs[1]);
    s.ExpectCounts(d_.bias ? 3 : 2, 1);
    if (d_.bias && s.inputs[2].size() != d_.h)
      Invalid(s, "bias " + ShapeString(s.inputs[2]) + " must have num_hidden = " + std::to_string(d_.h) + " elements");
    if (s.outputs[0].size() != d_.n * d_.h)
      Invalid(s, "output " + ShapeString(s.outputs[0]) + " must hold N x num_hidden elements");
    // Below about 2^18 multiply-adds the call costs more than the product (MLP's 64 -> 10 layer).
    if (d_.n * d_.k * d_.h >= (int64_t{1} << 18)) dnnl_ = DnnlFcForward::Make(d_.n, d_.k, d_.h, d_.bias, s.host);
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
    int32_t req = c.req[0];
    if (weft::sdk::IsNull(req)) return;
    const float* x = c.inputs[0].data<float>();
    const float* w = c.inputs[1].data<float>();
    float* y = c.outputs[0].data<float>();
    const float* b = d_.bias ? c.inputs[2].data<float>() : nullptr;
    if (UseDnnl(c)) {
      dnnl_->Forward(x, w, c.InputStamp(1), b, y);
      return;
    }
    Sgemm(false, true, d_.n, d_.h, d_.k, 1.0f, x, d_.k, w, d_.k, weft::sdk::ReqBeta(req), y, d_.h);
    if (d_.bias) {
      // After the product, while y is still in cache (measured faster than seeding y with the
      // bias and asking sgemm for beta = 1 on small layers).
      for (int64_t i = 0; i < d_.n; ++i) AddRow(y + i * d_.h, b, d_.h);
    }
  }

 private:
  FcDims d_;
  std::unique_ptr<DnnlFcForward> dnnl_;  // null: OpenBLAS only
};

// Inputs: out_grad (N, H), data, weight[, bias]; outputs: data, weight[, bias] gradients.
class FcBackward {
 public:
  explicit FcBackward(const KernelSetup& s) {
    RequireFloat32(s);
    if (s.inputs.size() < 3) Invalid(s, "expects out_grad, data and weight");
    d_ = ParseFc(s, s.inputs[1], s.inputs[2]);
    s.ExpectCounts(d_.bias ? 4 : 3, d_.bias ? 3 : 2);
    if (s.inputs[0].size() != d_.n * d_.h)
      Invalid(s, "out_grad " + ShapeString(s.inputs[0]) + " must be N x num_hidden");
  }
  void Compute(const KernelCall& c) const {
    const float* gy = c.inputs[0].data<float>();
    const float* x = c.inputs[1].data<float>();
    const float* w = c.inputs[2].data<float>();
    if (!weft::sdk::IsNull(c.req[0]))  // gx = gy · W
      Sgemm(false, false, d_.n, d_.k, d_.h, 1.0f, gy, d_.h, w, d_.k, weft::sdk::ReqBeta(c.req[0]),
            c.outputs[0].data<float>(), d_.k);
    if (!weft::sdk::IsNull(c.req[1]))  // gW = gyᵀ · x
      Sgemm(true, false, d_.h, d_.k, d_.n, 1.0f, gy, d_.h, x, d_.k, weft::sdk::ReqBeta(c.req[1]),
            c.outputs[1].data<float>(), d_.k);
    if (d_.bias) {
      float* gb = c.outputs[2].data<float>();
      weft::sdk::WithReq(c.req[2], [&](auto assign) {
        // Column sums, row by row so the inner loop runs over contiguous memory.
        if constexpr (!decltype(assign)::kAdd)
          for (int64_t j = 0; j < d_.h; ++j) gb[j] = 0.0f;
        for (int64_t i = 0; i < d_.n; ++i) {
          const float* row = gy + i * d_.h;
          for (int64_t j = 0; j < d_.h; ++j) gb[j] += row[j];
        }
      });
    }
  }

 private:
  FcDims d_;
};

}  // namespace

void RegisterFullyConnected(KernelTable& t) {
  t.Add<FcForward>("FullyConnected", kF32);
  t.Add<FcBackward>("_backward_FullyConnected", kF32);
}

}  // namespace weft::cpu
