// Convolution and _backward_Convolution (MXNet 1.9 attributes; 1-D NCW and 2-D NCHW). The
// algorithm is chosen once per node and pass, from bench/kernels measurements on LeNet shapes
// (1 thread): the forward uses oneDNN (38 vs 26 GFLOP/s on conv1, 62 vs 54 on conv2); the
// backward uses im2col + sgemm for layers with fewer than 4 input channels per group that oneDNN
// would run on plain layouts (its plain-layout backward is weak there: 21 vs 27 GFLOP/s) and
// oneDNN otherwise (conv2: 56 vs 54; LeNet conv1, blocked weight gradient: 1.8 vs 3.5 ms per
// batch of 100). im2col is also the fallback where oneDNN has no implementation.
// WEFT_CPU_CONV_ALGO=im2col or =dnnl (host config / environment) forces one for both passes.
#include <cstdlib>
#include <string>

#include "nn_conv.h"

namespace weft::cpu {

ConvGeom ParseConv(const KernelSetup& s, const TensorDesc& x, const TensorDesc& w, const TensorDesc* b,
                   const TensorDesc& y) {
  ConvGeom g;
  std::string layout = s.attrs.GetString("layout", "");
  if (!layout.empty() && layout != "NCHW" && layout != "NCW")
    Unsupported(s, "layout " + layout + " is not implemented on cpu (NCW and NCHW are)");
  std::vector<int64_t> kernel = s.attrs.GetTuple("kernel");
  g.spatial = static_cast<int>(kernel.size());
  if (g.spatial != 1 && g.spatial != 2)
    Unsupported(s, "only 1-D and 2-D convolution on cpu, kernel " + weft::sdk::FormatTuple(kernel));
  if (x.ndim() != g.spatial + 2)
    Invalid(s, "data " + ShapeString(x) + " must have " + std::to_string(g.spatial + 2) + " axes for kernel " +
                   weft::sdk::FormatTuple(kernel));
  auto tuple = [&](const char* name, int64_t dflt) {
    std::vector<int64_t> v = s.attrs.GetTuple(name, {});
    if (v.empty()) v.assign(static_cast<size_t>(g.spatial), dflt);
    if (v.size() != static_cast<size_t>(g.spatial))
      Invalid(s, std::string(name) + " " + weft::sdk::FormatTuple(v) + " must have as many entries as kernel");
    return g.spatial == 2 ? std::pair{v[0], v[1]} : std::pair{dflt, v[0]};
  };
  std::tie(g.kh, g.kw) = tuple("kernel", 1);
  std::tie(g.sh, g.sw) = tuple("stride", 1);
  std::tie(g.dh, g.dw) = tuple("dilate", 1);
  std::tie(g.ph, g.pw) = tuple("pad", 0);
  g.n = x.dim(0);
  g.c = x.dim(1);
  g.h = g.spatial == 2 ? x.dim(2) : 1;
  g.w = x.dim(-1);
  g.f = s.attrs.GetInt("num_filter");
  g.groups = s.attrs.GetInt("num_group", 1);
  g.bias = !s.attrs.GetBool("no_bias", false);
  if (g.kh < 1 || g.kw < 1 || g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1 || g.ph < 0 || g.pw < 0)
    Invalid(s, "kernel, stride and dilate must be positive and pad non-negative");
  if (g.groups < 1 || g.c % g.groups != 0 || g.f % g.groups != 0)
    Invalid(s, "num_group " + std::to_string(g.groups) + " must divide channels " + std::to_string(g.c) +
                   " and num_filter " + std::to_string(g.f));
  int64_t eh = g.dh * (g.kh - 1) + 1, ew = g.dw * (g.kw - 1) + 1;
  if (eh > g.h + 2 * g.ph || ew > g.w + 2 * g.pw)
    Invalid(s,
            "kernel " + weft::sdk::FormatTuple(kernel) + " (dilated) is larger than the padded data " + ShapeString(x));
  g.oh = (g.h + 2 * g.ph - eh) / g.sh + 1;
  g.ow = (g.w + 2 * g.pw - ew) / g.sw + 1;
  std::vector<int64_t> ws = {g.f, g.cg()};
  for (int64_t k : kernel) ws.push_back(k);
  if (w.shape != ws)
    Invalid(s, "weight " + ShapeString(w) + " must be " + weft::sdk::FormatTuple(ws) + " for data " + ShapeString(x));
  if (g.bias && (b == nullptr || b->size() != g.f))
    Invalid(s, "bias must have num_filter = " + std::to_string(g.f) + " elements");
  std::vector<int64_t> ys = {g.n, g.f};
  if (g.spatial == 2) ys.push_back(g.oh);
  ys.push_back(g.ow);
  if (y.shape != ys) Invalid(s, "output " + ShapeString(y) + " must be " + weft::sdk::FormatTuple(ys));
  return g;
}

namespace {

std::string ConvAlgoSetting(const weft_host_api* h) {
  char buf[32] = {0};
  if (h && h->config_get) {
    int64_t n = h->config_get(h->host_ctx, "WEFT_CPU_CONV_ALGO", buf, sizeof(buf));
    return n > 0 && static_cast<size_t>(n) < sizeof(buf) ? std::string(buf) : std::string();
  }
  const char* e = std::getenv("WEFT_CPU_CONV_ALGO");
  return e ? e : "";
}

std::unique_ptr<ConvAlgo> ChooseAlgo(const KernelSetup& s, const ConvGeom& g, bool backward) {
  std::string want = ConvAlgoSetting(s.host);
  if (!want.empty() && want != "im2col" && want != "dnnl")
    Invalid(s, "WEFT_CPU_CONV_ALGO='" + want + "' is not one of im2col, dnnl");
  if (want.empty() && backward && g.cg() < 4 && !DnnlBlockedConv(g)) want = "im2col";
  if (want == "im2col") return MakeIm2colConv(g);
  std::unique_ptr<ConvAlgo> a = g.n > 0 ? MakeDnnlConv(g, s.host) : nullptr;
  if (a == nullptr && want == "dnnl") Unsupported(s, "oneDNN has no convolution for this geometry");
  return a ? std::move(a) : MakeIm2colConv(g);
}

class ConvForward {
 public:
  explicit ConvForward(const KernelSetup& s) {
    RequireFloat32(s);
    if (s.inputs.size() < 2 || s.outputs.size() != 1) Invalid(s, "expects data, weight[, bias] and one output");
    g_ = ParseConv(s, s.inputs[0], s.inputs[1], s.inputs.size() > 2 ? &s.inputs[2] : nullptr, s.outputs[0]);
    s.ExpectCounts(g_.bias ? 3 : 2, 1);
    algo_ = ChooseAlgo(s, g_, false);
  }
  uint64_t WorkspaceBytes() const { return algo_->ForwardWorkspace(); }
  void Compute(const KernelCall& c) const {
    if (weft::sdk::IsNull(c.req[0])) return;
    PrepareMathThread();
    algo_->Forward(c.inputs[0].data<float>(), c.inputs[1].data<float>(), g_.bias ? c.inputs[2].data<float>() : nullptr,
                   c.outputs[0].data<float>(), c.req[0], c.Workspace<char>(algo_->ForwardWorkspace()));
  }

 private:
  ConvGeom g_;
  std::unique_ptr<ConvAlgo> algo_;
};

// Inputs: out_grad, data, weight[, bias]; outputs: data, weight[, bias] gradients.
class ConvBackward {
 public:
  explicit ConvBackward(const KernelSetup& s) {
    RequireFloat32(s);
    if (s.inputs.size() < 3) Invalid(s, "expects out_grad, data, weight[, bias]");
    g_ = ParseConv(s, s.inputs[1], s.inputs[2], s.inputs.size() > 3 ? &s.inputs[3] : nullptr, s.inputs[0]);
    s.ExpectCounts(g_.bias ? 4 : 3, g_.bias ? 3 : 2);
    algo_ = ChooseAlgo(s, g_, true);
  }
  uint64_t WorkspaceBytes() const { return algo_->BackwardWorkspace(); }
  void Compute(const KernelCall& c) const {
    PrepareMathThread();
    algo_->Backward(c.inputs[0].data<float>(), c.inputs[1].data<float>(), c.inputs[2].data<float>(),
                    c.outputs[0].data<float>(), c.req[0], c.outputs[1].data<float>(), c.req[1],
                    g_.bias ? c.outputs[2].data<float>() : nullptr, g_.bias ? c.req[2] : WEFT_REQ_NULL,
                    c.Workspace<char>(algo_->BackwardWorkspace()));
  }

 private:
  ConvGeom g_;
  std::unique_ptr<ConvAlgo> algo_;
};

}  // namespace

void RegisterConvolution(KernelTable& t) {
  t.Add<ConvForward>("Convolution", kF32);
  t.Add<ConvBackward>("_backward_Convolution", kF32);
}

}  // namespace weft::cpu
