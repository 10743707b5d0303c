// weft GPU kernel layer — the kernel classes (sdk/cpp/kernel.hpp DeviceKernelClass) of the GPU
// plugins, written once over a launcher L:
//   L = DeviceLaunch (gpu_launch_device.h): the CUDA and HIP plugins, work queued on the stream
//   L = HostLaunch   (gpu_launch_host.h):   the kernel layer's tests, on host memory
// Setup (attribute parsing, shape checks) runs on the host in both; Compute turns the call into
// functors of gpu_math.h and hands them to L. RegisterGpuKernels<L>(table) registers every class
// of this file under its MXNet op name, float32 (as the cpu plugin's nn kernels); the plugins
// register the whole layer through RegisterGpuLayer (gpu_register.h).
//
// Ops: add_n (the KVStore's sum; float32 and float64), Activation (and LeakyReLU's element-wise
// act_types, for LeakyKernel in gpu_nn_extra.h), softmax, log_softmax, SoftmaxOutput, FullyConnected (through L::Gemm:
// cuBLAS on CUDA, the tiled GEMM elsewhere), the optimizer updates (sgd, sgd_mom, nag_mom, adam, rmsprop, rmspropalex),
// and the 2-bit compression (_quantize_2bit, _dequantize_2bit); backward ops where MXNet has them.
#pragma once

#include <string>
#include <utility>

#include "gpu_gemm.h"
#include "gpu_math.h"
#include "weft/sdk/cpp/kernel.hpp"
#include "weft/sdk/ops/activation.hpp"
#include "weft/sdk/ops/elemwise_binary.hpp"
#include "weft/sdk/ops/fully_connected.hpp"
#include "weft/sdk/ops/gradient_compression.hpp"
#include "weft/sdk/ops/optimizer.hpp"
#include "weft/sdk/ops/softmax.hpp"

namespace weft::WEFT_GPU_NS {

/// This file, for a vendor plugin whose activations and softmax fall back to these classes.
inline constexpr const char* kGpuOpsSource = __FILE__;

using sdk::DeviceCall;
using sdk::DeviceTensor;
using sdk::Error;
using sdk::KernelSetup;
using sdk::TensorDesc;

inline constexpr uint64_t kF32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);

[[noreturn]] inline void Invalid(const KernelSetup& s, const std::string& m) {
  throw Error(WEFT_ERR_INVALID_ARGUMENT, s.op_name + ": " + m);
}
[[noreturn]] inline void Unsupported(const KernelSetup& s, const std::string& m) {
  throw Error(WEFT_ERR_UNSUPPORTED, s.op_name + ": " + m);
}
inline std::string ShapeOf(const TensorDesc& t) { return sdk::FormatTuple(t.shape); }

/// Every tensor float32 unless it is listed in `except` (dtype codes allowed instead).
inline void RequireFloat32(const KernelSetup& s) {
  auto check = [&](const std::vector<TensorDesc>& ts, const char* what) {
    for (size_t i = 0; i < ts.size(); ++i)
      if (ts[i].dtype != WEFT_DTYPE_FLOAT32)
        Unsupported(s, std::string(what) + " " + std::to_string(i) + " is " + sdk::DTypeName(ts[i].dtype) +
                           "; the GPU kernel supports float32");
  };
  check(s.inputs, "input");
  check(s.outputs, "output");
  check(s.aux, "aux state");
}

/// Every input, output and aux state has as many elements as input 0.
inline void RequireSameSize(const KernelSetup& s) {
  const int64_t n = s.inputs.at(0).size();
  auto check = [&](const std::vector<TensorDesc>& ts, const char* what) {
    for (size_t i = 0; i < ts.size(); ++i)
      if (ts[i].size() != n)
        Invalid(s, std::string(what) + " " + std::to_string(i) + " " + ShapeOf(ts[i]) + " differs from input 0 " +
                       ShapeOf(s.inputs[0]));
  };
  check(s.inputs, "input");
  check(s.outputs, "output");
  check(s.aux, "aux state");
}

/// Runs body(ReqWrite{}) or body(ReqAdd{}) as `req` says; nothing for null.
template <typename F>
void WithReq(int32_t req, F&& body) {
  switch (req) {
    case WEFT_REQ_NULL:
      return;
    case WEFT_REQ_WRITE:
    case WEFT_REQ_WRITE_INPLACE:
      body(ReqWrite{});
      return;
    case WEFT_REQ_ADD:
      body(ReqAdd{});
      return;
    default:
      throw Error(WEFT_ERR_INVALID_ARGUMENT, "unknown write request " + std::to_string(req));
  }
}

// ---- element-wise ----------------------------------------------------------------------------

template <class L>
class AddNKernel {
 public:
  explicit AddNKernel(const KernelSetup& s) {
    s.ExpectCounts(-1, 1);
    if (s.inputs.empty()) Invalid(s, "needs at least one input");
    if (s.inputs.size() > static_cast<size_t>(kMaxAddN))
      Unsupported(s, std::to_string(s.inputs.size()) + " inputs; the GPU kernel sums up to " +
                         std::to_string(kMaxAddN) + " at once");
    const int64_t n = s.Params<sdk::AddNParam>().num_args;
    if (n != static_cast<int64_t>(s.inputs.size()))
      Invalid(s, "num_args=" + std::to_string(n) + " but " + std::to_string(s.inputs.size()) + " inputs");
    for (const auto* ts : {&s.inputs, &s.outputs})
      for (const TensorDesc& t : *ts)
        if (t.dtype != s.inputs[0].dtype || (t.dtype != WEFT_DTYPE_FLOAT32 && t.dtype != WEFT_DTYPE_FLOAT64))
          Unsupported(s, "tensors must all be float32 or all float64");
    RequireSameSize(s);
  }
  void Compute(const DeviceCall& c) const {
    auto run = [&](auto zero) {
      using T = decltype(zero);
      WithReq(c.req[0], [&](auto a) {
        AddNMap<T, decltype(a)> f{};
        f.count = static_cast<int>(c.inputs.size());
        for (int k = 0; k < f.count; ++k) f.in[k] = L::template Ptr<const T>(c.inputs[static_cast<size_t>(k)]);
        f.out = L::template Ptr<T>(c.outputs[0]);
        L::Map(c, c.outputs[0].size(), f);
      });
    };
    if (c.inputs[0].dtype() == WEFT_DTYPE_FLOAT64) return run(0.0);
    run(0.0f);
  }
};

// ---- activations -----------------------------------------------------------------------------

inline Act ParseAct(const KernelSetup& s) {
  if (s.op_name.find("LeakyReLU") != std::string::npos) {
    using sdk::LeakyType;
    const LeakyType t = s.Params<sdk::LeakyReLUParam>().act_type;
    if (t == LeakyType::kPrelu || t == LeakyType::kRrelu)
      Unsupported(s,
                  "act_type prelu and rrelu have per-channel or random slopes: LeakyKernel (gpu_nn_extra.h) runs "
                  "them");
    return t == LeakyType::kLeaky  ? Act::kLeaky
           : t == LeakyType::kElu  ? Act::kElu
           : t == LeakyType::kSelu ? Act::kSelu
                                   : Act::kGelu;
  }
  static constexpr Act kActs[] = {Act::kRelu, Act::kSigmoid, Act::kTanh, Act::kSoftRelu, Act::kSoftSign};
  return kActs[static_cast<int>(s.Params<sdk::ActivationParam>().act_type)];
}

/// LeakyReLU's slope (leaky, elu); unused by the other functions.
inline float SlopeOf(const KernelSetup& s) {
  return s.op_name.find("LeakyReLU") != std::string::npos ? s.Params<sdk::LeakyReLUParam>().slope : 0.25f;
}

template <class L>
class ActivationKernel {
 public:
  explicit ActivationKernel(const KernelSetup& s) : act_(ParseAct(s)), slope_(SlopeOf(s)) {
    s.ExpectCounts(1, -1);
    if (s.outputs.empty()) Invalid(s, "expects an output");
    RequireFloat32(s);
    if (s.outputs[0].size() != s.inputs[0].size())
      Invalid(s, "output " + ShapeOf(s.outputs[0]) + " differs from data " + ShapeOf(s.inputs[0]));
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, c.inputs[0].size(),
             ActForwardMap<decltype(a)>{act_, slope_, L::template Ptr<const float>(c.inputs[0]),
                                        L::template Ptr<float>(c.outputs[0])});
    });
  }

 private:
  Act act_;
  float slope_;
};

// Inputs out_grad, data, output — or out_grad, output when the derivative needs only the output.
template <class L>
class ActivationBackwardKernel {
 public:
  explicit ActivationBackwardKernel(const KernelSetup& s) : act_(ParseAct(s)), slope_(SlopeOf(s)) {
    s.ExpectCounts(-1, 1);
    RequireFloat32(s);
    const bool output_only =
        act_ == Act::kRelu || act_ == Act::kSigmoid || act_ == Act::kTanh || act_ == Act::kSoftRelu;
    has_data_ = sdk::ActivationGradHasData(s.op_name, output_only, s.inputs.size());
    RequireSameSize(s);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, c.inputs[0].size(),
             ActBackwardMap<decltype(a)>{act_, slope_, L::template Ptr<const float>(c.inputs[0]),
                                         has_data_ ? L::template Ptr<const float>(c.inputs[1]) : nullptr,
                                         L::template Ptr<const float>(c.inputs[has_data_ ? 2 : 1]),
                                         L::template Ptr<float>(c.outputs[0])});
    });
  }

 private:
  Act act_;
  float slope_;
  bool has_data_ = true;
};

// ---- softmax ---------------------------------------------------------------------------------

inline AxisView ViewAround(const KernelSetup& s, const TensorDesc& t, int64_t axis) {
  const sdk::AxisSplit v = sdk::SplitAtAxis(s.op_name, t.shape, axis);
  return AxisView{v.outer, v.len, v.inner};
}

inline float InverseTemperature(const KernelSetup& s) { return s.Params<sdk::SoftmaxParam>().InverseTemperature(); }

template <class L, bool kLog>
class SoftmaxKernel {
 public:
  explicit SoftmaxKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    RequireSameSize(s);
    v_ = ViewAround(s, s.inputs[0], s.Params<sdk::SoftmaxParam>().axis);
    inv_t_ = InverseTemperature(s);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, v_.outer * v_.inner,
             SoftmaxRowMap<kLog, decltype(a)>{v_, inv_t_, L::template Ptr<const float>(c.inputs[0]),
                                              L::template Ptr<float>(c.outputs[0])});
    });
  }

 private:
  AxisView v_;
  float inv_t_ = 1.0f;
};

template <class L, bool kLog>
class SoftmaxBackwardKernel {
 public:
  explicit SoftmaxBackwardKernel(const KernelSetup& s) {
    s.ExpectCounts(2, 1);
    RequireFloat32(s);
    RequireSameSize(s);
    v_ = ViewAround(s, s.inputs[1], s.Params<sdk::SoftmaxParam>().axis);
    inv_t_ = InverseTemperature(s);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, v_.outer * v_.inner,
             SoftmaxBackwardRowMap<kLog, decltype(a)>{v_, inv_t_, L::template Ptr<const float>(c.inputs[0]),
                                                      L::template Ptr<const float>(c.inputs[1]),
                                                      L::template Ptr<float>(c.outputs[0])});
    });
  }

 private:
  AxisView v_;
  float inv_t_ = 1.0f;
};

/// SoftmaxOutput's views of its data (the cpu's softmax.cc, MXNet 1.9 softmax_output-inl.h):
///   multi_output  softmax over axis 1 of (N, C, rest...), one label per (n, rest) position; the
///                 gradient divided by rest (null), N·rest (batch) or the valid count (valid)
///   otherwise     forward rows: data as (N, size / N); backward rows: (M, size / M) with M the
///                 label's size (MXNet's FlatTo2D quirk, kept for equal gradients); divided by M
///                 (batch) or the valid count (valid)
struct SoftmaxOutputParams {
  AxisView fwd, bwd;
  float scale = 1;  // grad_scale, divided for null / batch as above (valid divides per call)
  float grad_scale = 1, ignore_label = -1;
  bool use_ignore = false, norm_valid = false;
  SoftmaxOutputParams(const KernelSetup& s, const TensorDesc& data, const TensorDesc& label) {
    const auto a = s.Params<sdk::SoftmaxOutputParam>();  // preserve_shape is DefaultOnly
    if (data.ndim() < 1) Invalid(s, "data must have at least one axis");
    const bool multi = a.multi_output;
    float extra_div = 1;
    if (multi) {
      if (data.ndim() < 2) Invalid(s, "multi_output needs (N, C, ...) data, got " + ShapeOf(data));
      fwd = bwd = ViewAround(s, data, 1);
      extra_div = static_cast<float>(fwd.inner);
      if (label.size() != fwd.outer * fwd.inner)
        Invalid(s, "label " + ShapeOf(label) + " must hold one class per (n, position) of data " + ShapeOf(data));
    } else {
      const int64_t n = data.ndim() == 1 ? 1 : data.dim(0), size = data.size(), m = label.size();
      fwd = AxisView{n, n == 0 ? 0 : size / n, 1};
      if (m == 0 ? size != 0 : size % m != 0)
        Invalid(s, "label " + ShapeOf(label) + " must hold one class per row of data " + ShapeOf(data));
      bwd = AxisView{m, m == 0 ? 0 : size / m, 1};
    }
    grad_scale = a.grad_scale;
    ignore_label = a.ignore_label;
    use_ignore = a.use_ignore;
    norm_valid = a.normalization == sdk::GradNormalization::kValid;
    scale = grad_scale;
    if (a.normalization == sdk::GradNormalization::kBatch && bwd.outer > 0) scale /= static_cast<float>(bwd.outer);
    if (multi) scale /= extra_div;
  }
};

template <class L>
class SoftmaxOutputKernel {
 public:
  explicit SoftmaxOutputKernel(const KernelSetup& s) : p_((s.ExpectCounts(2, 1), s), s.inputs[0], s.inputs[1]) {
    RequireFloat32(s);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, p_.fwd.outer * p_.fwd.inner,
             SoftmaxRowMap<false, decltype(a)>{p_.fwd, 1.0f, L::template Ptr<const float>(c.inputs[0]),
                                               L::template Ptr<float>(c.outputs[0])});
    });
  }

 private:
  SoftmaxOutputParams p_;
};

// Inputs out_grad (ignored: a loss), data, label, output; outputs data grad, label grad (zeros).
template <class L>
class SoftmaxOutputBackwardKernel {
 public:
  explicit SoftmaxOutputBackwardKernel(const KernelSetup& s) : p_((s.ExpectCounts(4, 2), s), s.inputs[1], s.inputs[2]) {
    RequireFloat32(s);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, p_.bwd.outer * p_.bwd.inner,
             SoftmaxOutputGradMap<decltype(a)>{
                 p_.bwd, p_.norm_valid ? p_.grad_scale : p_.scale, p_.use_ignore, p_.norm_valid, p_.ignore_label,
                 L::template Ptr<const float>(c.inputs[2]), L::template Ptr<const float>(c.inputs[3]),
                 L::template Ptr<float>(c.outputs[0])});
    });
    WithReq(c.req[1], [&](auto a) {
      if constexpr (std::is_same_v<decltype(a), ReqWrite>)
        L::Map(c, c.outputs[1].size(), FillMap{L::template Ptr<float>(c.outputs[1]), 0.0f});
    });
  }

 private:
  SoftmaxOutputParams p_;
};

// ---- FullyConnected --------------------------------------------------------------------------

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

inline GemmArgs MakeGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                         int64_t ldb, int32_t req, float* c, int64_t ldc) {
  GemmArgs g;
  g.trans_a = ta, g.trans_b = tb, g.m = m, g.n = n, g.k = k;
  g.a = a, g.lda = lda, g.b = b, g.ldb = ldb, g.c = c, g.ldc = ldc;
  g.beta = req == WEFT_REQ_ADD ? 1.0f : 0.0f;
  return g;
}

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

// ---- optimizer updates -----------------------------------------------------------------------

template <class L, Update U, int kStates>
class UpdateKernel {
 public:
  explicit UpdateKernel(const KernelSetup& s) {
    s.ExpectCounts(2, 1, kStates);
    RequireFloat32(s);
    RequireSameSize(s);
    const auto p = s.Params<sdk::UpdateParam<U>>();
    p_.lr = p.lr, p_.wd = p.wd, p_.rescale = p.rescale_grad, p_.clip = p.clip_gradient;
    if constexpr (U == Update::kSgdMom || U == Update::kNagMom) {
      h_.a = p.momentum;
    } else if constexpr (U == Update::kAdam) {
      h_.a = p.beta1, h_.b = p.beta2, h_.eps = p.epsilon;
    } else if constexpr (U == Update::kRmsProp || U == Update::kRmsPropAlex) {
      h_.a = p.gamma1, h_.b = p.gamma2, h_.eps = p.epsilon, h_.clip_weights = p.clip_weights;
    }
  }
  void Compute(const DeviceCall& c) const {
    auto state = [&](int i) { return i < kStates ? L::template Ptr<float>(c.aux[static_cast<size_t>(i)]) : nullptr; };
    auto run = [&](auto a, float* out) {
      L::Map(c, c.inputs[0].size(),
             UpdateMap<U, decltype(a)>{p_, h_, L::template Ptr<const float>(c.inputs[0]),
                                       L::template Ptr<const float>(c.inputs[1]), state(0), state(1), state(2), out});
    };
    if (c.req[0] == WEFT_REQ_NULL) {
      run(ReqWrite{}, nullptr);  // the states still advance
    } else {
      WithReq(c.req[0], [&](auto a) { run(a, L::template Ptr<float>(c.outputs[0])); });
    }
  }

 private:
  UpdateParams p_;
  UpdateExtra h_;
};

// ---- 2-bit compression -----------------------------------------------------------------------

template <class L>
class Quantize2BitKernel {
 public:
  explicit Quantize2BitKernel(const KernelSetup& s) : threshold_(sdk::TwoBitThreshold(s)) { sdk::CheckTwoBitCodec(s); }
  void Compute(const DeviceCall& c) const {
    if (c.req[0] == WEFT_REQ_ADD) throw Error(WEFT_ERR_INVALID_ARGUMENT, "_quantize_2bit: req add is not supported");
    const int64_t n = c.inputs[0].size();
    L::Map(
        c, (n + 15) / 16,
        Quantize2BitMap{L::template Ptr<const float>(c.inputs[0]), L::template Ptr<float>(c.aux[0]),
                        c.req[0] == WEFT_REQ_NULL ? nullptr : L::template Ptr<uint32_t>(c.outputs[0]), n, threshold_});
  }

 private:
  float threshold_;
};

template <class L>
class Dequantize2BitKernel {
 public:
  explicit Dequantize2BitKernel(const KernelSetup& s) : threshold_(sdk::TwoBitThreshold(s)) {
    sdk::CheckTwoBitCodec(s);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, c.outputs[0].size(),
             Dequantize2BitMap<decltype(a)>{L::template Ptr<const uint32_t>(c.inputs[0]),
                                            L::template Ptr<float>(c.outputs[0]), threshold_});
    });
  }

 private:
  float threshold_;
};

/// Registers Activation, softmax, log_softmax and their backward ops (RegisterGpuLayer, unless the
/// plugin runs them through a vendor library).
template <class L>
void RegisterActivationSoftmax(sdk::KernelTable& t) {
  sdk::KernelTable::SourceScope math(t, {kGpuMathSource});
  t.Add<ActivationKernel<L>>("Activation", kF32);
  t.Add<ActivationBackwardKernel<L>>("_backward_Activation", kF32);
  t.Add<SoftmaxKernel<L, false>>("softmax", kF32);
  t.Add<SoftmaxBackwardKernel<L, false>>("_backward_softmax", kF32);
  t.Add<SoftmaxKernel<L, true>>("log_softmax", kF32);
  t.Add<SoftmaxBackwardKernel<L, true>>("_backward_log_softmax", kF32);
}

/// Registers the other kernel classes of this file for launcher L in `t` (called by RegisterGpuLayer).
template <class L>
void RegisterGpuKernels(sdk::KernelTable& t) {
  sdk::KernelTable::SourceScope math(t, {kGpuMathSource});
  t.Add<AddNKernel<L>>("add_n", kF32 | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64));
  t.Add<SoftmaxOutputKernel<L>>("SoftmaxOutput", kF32);
  t.Add<SoftmaxOutputBackwardKernel<L>>("_backward_SoftmaxOutput", kF32);
  t.Add<FcKernel<L>>("FullyConnected", kF32);
  t.Add<FcBackwardKernel<L>>("_backward_FullyConnected", kF32);
  t.Add<UpdateKernel<L, Update::kSgd, 0>>("sgd_update", kF32);
  t.Add<UpdateKernel<L, Update::kSgdMom, 1>>("sgd_mom_update", kF32);
  t.Add<UpdateKernel<L, Update::kNagMom, 1>>("nag_mom_update", kF32);
  t.Add<UpdateKernel<L, Update::kAdam, 2>>("adam_update", kF32);
  t.Add<UpdateKernel<L, Update::kRmsProp, 1>>("rmsprop_update", kF32);
  t.Add<UpdateKernel<L, Update::kRmsPropAlex, 3>>("rmspropalex_update", kF32);
  t.Add<Quantize2BitKernel<L>>("_quantize_2bit", kF32);
  t.Add<Dequantize2BitKernel<L>>("_dequantize_2bit", WEFT_DTYPE_BIT(WEFT_DTYPE_UINT32));
}

}  // namespace weft::WEFT_GPU_NS
