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
#include <string>
#include <tuple>
#include <vector>

#include "nn_conv.h"

namespace weft::cpu {
namespace {

// The convolution behind a Deconvolution with data x and output y (checks weight and bias).
ConvGeom ParseDeconv(const KernelSetup& s, const TensorDesc& x, const TensorDesc& w, const TensorDesc* b,
                     const TensorDesc& y) {
  std::string layout = s.attrs.GetString("layout", "");
  if (!layout.empty() && layout != "NCHW" && layout != "NCW")
    Unsupported(s, "layout " + layout + " is not implemented on cpu (NCW and NCHW are)");
  std::vector<int64_t> kernel = s.attrs.GetTuple("kernel");
  ConvGeom g;
  g.spatial = static_cast<int>(kernel.size());
  if (g.spatial != 1 && g.spatial != 2)
    Unsupported(s, "only 1-D and 2-D deconvolution on cpu, kernel " + weft::sdk::FormatTuple(kernel));
  if (x.ndim() != g.spatial + 2 || y.ndim() != g.spatial + 2)
    Invalid(s, "data " + ShapeString(x) + " and output " + ShapeString(y) + " must have " +
                   std::to_string(g.spatial + 2) + " axes for kernel " + weft::sdk::FormatTuple(kernel));
  auto pair = [&](const char* name, int64_t dflt) {
    std::vector<int64_t> v = s.attrs.GetTuple(name, {});
    if (v.empty()) v.assign(static_cast<size_t>(g.spatial), dflt);
    if (v.size() != static_cast<size_t>(g.spatial))
      Invalid(s, std::string(name) + " " + weft::sdk::FormatTuple(v) + " must have as many entries as kernel");
    return g.spatial == 2 ? std::pair{v[0], v[1]} : std::pair{dflt, v[0]};
  };
  std::tie(g.kh, g.kw) = pair("kernel", 1);
  std::tie(g.sh, g.sw) = pair("stride", 1);
  std::tie(g.dh, g.dw) = pair("dilate", 1);
  g.groups = s.attrs.GetInt("num_group", 1);
  g.n = x.dim(0);
  g.f = x.dim(1);  // the convolution's filters are the deconvolution's input channels
  g.c = s.attrs.GetInt("num_filter");
  g.h = g.spatial == 2 ? y.dim(2) : 1;
  g.w = y.dim(-1);
  g.oh = g.spatial == 2 ? x.dim(2) : 1;
  g.ow = x.dim(-1);
  g.bias = false;
  if (g.groups < 1 || g.c % g.groups != 0 || g.f % g.groups != 0)
    Invalid(s, "num_group " + std::to_string(g.groups) + " must divide num_filter and the data's channels");
  // pad (and adj, which only lengthens the output's end) follow from the two shapes: MXNet derives
  // them from target_shape the same way, so the shapes are the single source of truth here.
  const int64_t eh = g.dh * (g.kh - 1) + 1, ew = g.dw * (g.kw - 1) + 1;
  const int64_t full_h = g.sh * (g.oh - 1) + eh, full_w = g.sw * (g.ow - 1) + ew;
  std::vector<int64_t> target = s.attrs.GetTuple("target_shape", {});
  bool use_target = std::any_of(target.begin(), target.end(), [](int64_t t) { return t != 0; });
  if (use_target) {
    g.ph = (full_h - g.h + 1) / 2;
    g.pw = (full_w - g.w + 1) / 2;
  } else {
    std::tie(g.ph, g.pw) = pair("pad", 0);
    if (g.spatial == 1) g.ph = 0;
  }
  const auto [ah, aw] = use_target ? std::pair{(full_h - g.h) % 2, (full_w - g.w) % 2} : pair("adj", 0);
  if (g.h != full_h - 2 * g.ph + (g.spatial == 2 ? ah : 0) || g.w != full_w - 2 * g.pw + aw)
    Invalid(s, "output " + ShapeString(y) + " does not match data " + ShapeString(x) +
                   " deconvolved with these attributes");
  std::vector<int64_t> ws = {g.f, g.c / g.groups};
  for (int64_t k : kernel) ws.push_back(k);
  if (w.shape != ws)
    Invalid(s, "weight " + ShapeString(w) + " must be " + weft::sdk::FormatTuple(ws) + " for data " + ShapeString(x));
  if (b != nullptr && b->size() != g.c) Invalid(s, "bias must have num_filter = " + std::to_string(g.c) + " elements");
  if (y.dim(0) != g.n || y.dim(1) != g.c) Invalid(s, "output " + ShapeString(y) + " must have num_filter channels");
  return g;
}

class DeconvForward {
 public:
  explicit DeconvForward(const KernelSetup& s) {
    RequireFloat32(s);
    bias_ = !s.attrs.GetBool("no_bias", true);
    s.ExpectCounts(bias_ ? 3 : 2, 1);
    g_ = ParseDeconv(s, s.inputs[0], s.inputs[1], bias_ ? &s.inputs[2] : nullptr, s.outputs[0]);
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
    bias_ = !s.attrs.GetBool("no_bias", true);
    s.ExpectCounts(bias_ ? 4 : 3, bias_ ? 3 : 2);
    g_ = ParseDeconv(s, s.inputs[1], s.inputs[2], bias_ ? &s.inputs[3] : nullptr, s.inputs[0]);
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
