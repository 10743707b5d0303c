// Deconvolution and _backward_Deconvolution (MXNet 1.9; 1-D NCW and 2-D NCHW, groups, dilation,
// pad, adj, target_shape). A deconvolution is the data-gradient of the convolution that maps its
// output back to its input, so both passes run on that convolution's im2col algorithm:
//   forward          y  = conv_backward_data(x, W)         (+ bias per output channel)
//   backward data    gx = conv_forward(gy, W)
//   backward weight  gW = conv_backward_weight(gy_conv = x, x_conv = gy)
// The convolution's geometry: input = the deconvolution's output (num_filter channels), filters =
// the deconvolution's input channels, weight (C, num_filter / num_group, k...) as MXNet stores it.
#include <algorithm>
#include <memory>
#include <span>

#include "nn_conv.h"

namespace weft::cpu {
namespace {

// The convolution behind a Deconvolution node (weft/sdk/ops/convolution.hpp) whose data,
// weight[, bias] are inputs `first`... and whose output (out_grad for the backward) is `y`.
ConvGeom Geometry(const KernelSetup& s, const weft::sdk::DeconvolutionParam& p, size_t first, const TensorDesc& y) {
  const bool has_bias = !p.no_bias;
  return weft::sdk::DeconvolutionGeometry(
      s.op_name, p, s.inputs[first].shape, s.inputs[first + 1].shape,
      has_bias ? std::span<const int64_t>(s.inputs[first + 2].shape) : std::span<const int64_t>(), has_bias, y.shape);
}

class DeconvForward {
 public:
  explicit DeconvForward(const KernelSetup& s) {
    RequireFloat32(s);
    const auto p = s.Params<weft::sdk::DeconvolutionParam>();
    bias_ = !p.no_bias;
    s.ExpectCounts(bias_ ? 3 : 2, 1);
    g_ = Geometry(s, p, 0, s.outputs[0]);
    algo_ = MakeIm2colConv(g_);
  }
  uint64_t WorkspaceBytes() const { return algo_->BackwardWorkspace(); }
  void Compute(const KernelCall& c) const {
    const int32_t req = c.req[0];
    if (weft::sdk::IsNull(req)) return;
    float* y = c.outputs[0].data<float>();
    algo_->Backward(c.inputs[0].data<float>(), nullptr, c.inputs[1].data<float>(), y, req, nullptr, WEFT_REQ_NULL,
                    nullptr, WEFT_REQ_NULL, c.Workspace<char>(algo_->BackwardWorkspace()));
    if (!bias_) return;
    const float* b = c.inputs[2].data<float>();
    const int64_t plane = g_.in_plane();
    for (int64_t n = 0; n < g_.n; ++n)
      for (int64_t f = 0; f < g_.c; ++f) {
        float* p = y + (n * g_.c + f) * plane;
        for (int64_t i = 0; i < plane; ++i) p[i] += b[f];
      }
  }

 private:
  ConvGeom g_;
  bool bias_ = false;
  std::unique_ptr<ConvAlgo> algo_;
};

// Inputs: out_grad, data, weight[, bias]; outputs: data, weight[, bias] gradients.
class DeconvBackward {
 public:
  explicit DeconvBackward(const KernelSetup& s) {
    RequireFloat32(s);
    const auto p = s.Params<weft::sdk::DeconvolutionParam>();
    bias_ = !p.no_bias;
    s.ExpectCounts(bias_ ? 4 : 3, bias_ ? 3 : 2);
    g_ = Geometry(s, p, 1, s.inputs[0]);
    algo_ = MakeIm2colConv(g_);
  }
  uint64_t WorkspaceBytes() const { return std::max(algo_->ForwardWorkspace(), algo_->BackwardWorkspace()); }
  void Compute(const KernelCall& c) const {
    const float* gy = c.inputs[0].data<float>();
    const float* x = c.inputs[1].data<float>();
    const float* w = c.inputs[2].data<float>();
    void* ws = c.Workspace<char>(WorkspaceBytes());
    if (!weft::sdk::IsNull(c.req[0])) algo_->Forward(gy, w, nullptr, c.outputs[0].data<float>(), c.req[0], ws);
    algo_->Backward(x, gy, w, nullptr, WEFT_REQ_NULL, c.outputs[1].data<float>(), c.req[1], nullptr, WEFT_REQ_NULL, ws);
    if (!bias_) return;
    const int64_t plane = g_.in_plane();
    weft::sdk::WithReq(c.req[2], [&](auto assign) {
      float* gb = c.outputs[2].data<float>();
      for (int64_t f = 0; f < g_.c; ++f) {
        double sum = 0;
        for (int64_t n = 0; n < g_.n; ++n) {
          const float* p = gy + (n * g_.c + f) * plane;
          for (int64_t i = 0; i < plane; ++i) sum += p[i];
        }
        assign(gb[f], static_cast<float>(sum));
      }
    });
  }

 private:
  ConvGeom g_;
  bool bias_ = false;
  std::unique_ptr<ConvAlgo> algo_;
};

}  // namespace

void RegisterDeconvolution(KernelTable& t) {
  t.Add<DeconvForward>("Deconvolution", kF32);
  t.Add<DeconvBackward>("_backward_Deconvolution", kF32);
}

}  // namespace weft::cpu
