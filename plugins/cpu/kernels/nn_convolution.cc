// Convolution and _backward_Convolution (MXNet 1.9 attributes; 1-D NCW, 2-D NCHW and 3-D NCDHW,
// float32 and float64; float64 always runs im2col + dgemm: oneDNN has no f64 convolution). The
// algorithm is chosen once per node and pass, from bench/kernels measurements on LeNet shapes
// (1 thread): the forward uses oneDNN (38 vs 26 GFLOP/s on conv1, 62 vs 54 on conv2); the
// backward uses im2col + sgemm for layers with fewer than 4 input channels per group that oneDNN
// would run on plain layouts (its plain-layout backward is weak there: 21 vs 27 GFLOP/s) or
// where oneDNN lacks AVX-512 (ChooseAlgo), and oneDNN otherwise (conv2: 56 vs 54; LeNet conv1 with
// AVX-512, blocked weight gradient: 1.8 vs 3.5 ms per batch of 100). im2col is also the fallback
// where oneDNN has no implementation.
// WEFT_CPU_CONV_ALGO=im2col or =dnnl (host config / environment) forces one for both passes;
// WEFT_CPU_CONV_WINOGRAD=0 keeps oneDNN's 3x3 layers on its direct kernels (nn_conv_dnnl.cc).
#include <cstdlib>
#include <string>

#include "nn_conv.h"
#include "tensor_util.h"

namespace weft::cpu {

namespace {

using tensor::kFloatMask;
using tensor::TypeTag;

// A setting from the host config, else the environment; empty when unset.
std::string ConvSetting(const weft_host_api* h, const char* key) {
  char buf[32] = {0};
  if (h && h->config_get) {
    int64_t n = h->config_get(h->host_ctx, key, buf, sizeof(buf));
    return n > 0 && static_cast<size_t>(n) < sizeof(buf) ? std::string(buf) : std::string();
  }
  const char* e = std::getenv(key);
  return e ? e : "";
}

// The geometry of a Convolution node whose data, weight[, bias] are inputs `first`... and whose
// output (the forward's; out_grad for the backward) is `y`.
ConvGeom Geometry(const KernelSetup& s, size_t first, const TensorDesc& y) {
  const bool has_bias = s.inputs.size() > first + 2;
  return weft::sdk::ConvolutionGeometry(
      s.op_name, s.Params<weft::sdk::ConvolutionParam>(), s.inputs[first].shape, s.inputs[first + 1].shape,
      has_bias ? std::span<const int64_t>(s.inputs[first + 2].shape) : std::span<const int64_t>(), has_bias, y.shape,
      3);
}

std::unique_ptr<ConvAlgo> ChooseAlgo(const KernelSetup& s, const ConvGeom& g, bool backward) {
  std::string want = ConvSetting(s.host, "WEFT_CPU_CONV_ALGO");
  if (!want.empty() && want != "im2col" && want != "dnnl")
    Invalid(s, "WEFT_CPU_CONV_ALGO='" + want + "' is not one of im2col, dnnl");
  const bool winograd = ConvWinogradSetting(s);
  // oneDNN's blocked weight gradient for few input channels is fast only with AVX-512: LeNet's
  // conv1 (1 -> 20, 5x5, batch 100, 1 thread) took 0.8 ms there against 6.4 ms with AVX2 (its
  // jit:avx2 kernel), where im2col's whole backward takes 2.4 ms.
  if (want.empty() && backward && g.cg() < 4 && (!DnnlBlockedConv(g) || !DnnlRunsAvx512())) want = "im2col";
  if (want == "im2col") return MakeIm2colConv(g);
  std::unique_ptr<ConvAlgo> a = g.n > 0 ? MakeDnnlConv(g, s.host, winograd) : nullptr;
  if (a == nullptr && want == "dnnl") Unsupported(s, "oneDNN has no convolution for this geometry");
  return a ? std::move(a) : MakeIm2colConv(g);
}

// The algorithm of one node and pass: float32 (oneDNN or im2col, ChooseAlgo) or float64 (im2col).
struct ConvAlgos {
  std::unique_ptr<ConvAlgoT<float>> f32;
  std::unique_ptr<ConvAlgoT<double>> f64;

  ConvAlgos(const KernelSetup& s, const ConvGeom& g, bool backward) {
    if (RequireFloatDType(s) == WEFT_DTYPE_FLOAT64)
      f64 = MakeIm2colConv<double>(g);
    else
      f32 = ChooseAlgo(s, g, backward);
  }
  uint64_t Workspace(bool backward) const {
    return f64 ? (backward ? f64->BackwardWorkspace() : f64->ForwardWorkspace())
               : (backward ? f32->BackwardWorkspace() : f32->ForwardWorkspace());
  }
  // f(algo, TypeTag<T>) with the algorithm of this node's dtype.
  template <typename F>
  void With(F&& f) const {
    if (f64)
      f(*f64, TypeTag<double>{});
    else
      f(*f32, TypeTag<float>{});
  }
};

template <typename T>
const T* Ptr(const Tensor& t) {
  return t.data<T>();
}

class ConvForward {
 public:
  explicit ConvForward(const KernelSetup& s) : g_(Checked(s)), algos_(s, g_, false) {
    s.ExpectCounts(g_.bias ? 3 : 2, 1);
  }
  uint64_t WorkspaceBytes() const { return algos_.Workspace(false); }
  void Compute(const KernelCall& c) const {
    if (weft::sdk::IsNull(c.req[0])) return;
    PrepareMathThread();
    algos_.With([&](const auto& algo, auto tag) {
      using T = typename decltype(tag)::type;
      const T *x = Ptr<T>(c.inputs[0]), *w = Ptr<T>(c.inputs[1]), *b = g_.bias ? Ptr<T>(c.inputs[2]) : nullptr;
      char* ws = c.Workspace<char>(algo.ForwardWorkspace());
      // Training passes change the weights every step: a kept copy would cost a reorder anyway.
      if (c.is_train)
        algo.Forward(x, w, b, c.outputs[0].data<T>(), c.req[0], ws);
      else
        algo.ForwardConstWeights(x, w, c.InputStamp(1), b, c.outputs[0].data<T>(), c.req[0], ws);
    });
  }

 private:
  static ConvGeom Checked(const KernelSetup& s) {
    if (s.inputs.size() < 2 || s.outputs.size() != 1) Invalid(s, "expects data, weight[, bias] and one output");
    return Geometry(s, 0, s.outputs[0]);
  }
  ConvGeom g_;
  ConvAlgos algos_;
};

// Inputs: out_grad, data, weight[, bias]; outputs: data, weight[, bias] gradients.
class ConvBackward {
 public:
  explicit ConvBackward(const KernelSetup& s) : g_(Checked(s)), algos_(s, g_, true) {
    s.ExpectCounts(g_.bias ? 4 : 3, g_.bias ? 3 : 2);
  }
  uint64_t WorkspaceBytes() const { return algos_.Workspace(true); }
  void Compute(const KernelCall& c) const {
    PrepareMathThread();
    algos_.With([&](const auto& algo, auto tag) {
      using T = typename decltype(tag)::type;
      algo.Backward(Ptr<T>(c.inputs[0]), Ptr<T>(c.inputs[1]), Ptr<T>(c.inputs[2]), WantedOutput<T>(c, 0), c.req[0],
                    WantedOutput<T>(c, 1), c.req[1], g_.bias ? WantedOutput<T>(c, 2) : nullptr,
                    g_.bias ? c.req[2] : WEFT_REQ_NULL, c.Workspace<char>(algo.BackwardWorkspace()));
    });
  }

 private:
  static ConvGeom Checked(const KernelSetup& s) {
    if (s.inputs.size() < 3) Invalid(s, "expects out_grad, data, weight[, bias]");
    return Geometry(s, 1, s.inputs[0]);
  }
  ConvGeom g_;
  ConvAlgos algos_;
};

}  // namespace

void RegisterConvolution(KernelTable& t) {
  t.Add<ConvForward>("Convolution", kFloatMask);
  t.Add<ConvBackward>("_backward_Convolution", kFloatMask);
}

bool ConvWinogradSetting(const KernelSetup& s) {
  const std::string wino = ConvSetting(s.host, "WEFT_CPU_CONV_WINOGRAD");
  if (!wino.empty() && wino != "0" && wino != "1")
    Invalid(s, "WEFT_CPU_CONV_WINOGRAD='" + wino + "' is not 0 (direct kernels only) or 1 (Winograd where it runs)");
  return wino != "0";
}

}  // namespace weft::cpu
