// vulkan plugin — the nn family (docs/adding-an-op.md, "Op families"; Convolution, Deconvolution
// and Pooling in vk_kernels_nn_conv.cc): FullyConnected (tiled GEMM), Activation and LeakyReLU
// (every act_type), Dropout.
// Semantics as the CPU plugin's kernels (MXNet 1.9).
#include <cstring>
#include <optional>

#include "vk_kernels.h"
#include "weft/sdk/ops/activation.hpp"
#include "weft/sdk/ops/dropout.hpp"
#include "weft/sdk/ops/fully_connected.hpp"

namespace weft::vk {

std::string ShapeText(const sdk::TensorDesc& t) {
  std::string s = "(";
  for (int i = 0; i < t.ndim(); ++i) s += (i ? ", " : "") + std::to_string(t.dim(i));
  return s + (t.ndim() == 1 ? ",)" : ")");
}

namespace {

struct FcDims {
  uint32_t n = 0, k = 0, h = 0;
  bool bias = true;
};

FcDims ParseFc(const sdk::KernelSetup& s, const sdk::TensorDesc& x, const sdk::TensorDesc& w) {
  FcDims d;
  const auto p = s.Params<sdk::FullyConnectedParam>();
  const int64_t h = p.num_hidden;
  d.bias = !p.no_bias;
  const bool flatten = p.flatten;
  if (x.ndim() < 1) Invalid(s, "data must have at least one axis, got " + ShapeText(x));
  int64_t n = 1, k = 1;
  if (flatten) {
    n = x.dim(0);
    for (int i = 1; i < x.ndim(); ++i) k *= x.dim(i);
  } else {
    k = x.dim(-1);
    for (int i = 0; i + 1 < x.ndim(); ++i) n *= x.dim(i);
  }
  if (w.ndim() != 2 || w.dim(0) != h || w.dim(1) != k)
    Invalid(s, "weight " + ShapeText(w) + " does not match (num_hidden, K) = (" + std::to_string(h) + ", " +
                   std::to_string(k) + ") for data " + ShapeText(x));
  d.n = static_cast<uint32_t>(n);
  d.k = static_cast<uint32_t>(k);
  d.h = static_cast<uint32_t>(h);
  return d;
}

// FullyConnected: y = x Wᵀ + b.
class FcForward {
 public:
  explicit FcForward(const sdk::KernelSetup& s) {
    RequireFloat32(s);
    if (s.inputs.size() < 2) Invalid(s, "expects data and weight");
    d_ = ParseFc(s, s.inputs[0], s.inputs[1]);
    s.ExpectCounts(d_.bias ? 3 : 2, 1);
    if (d_.bias && s.inputs[2].size() != d_.h) Invalid(s, "bias must have num_hidden elements");
  }
  void Compute(const sdk::DeviceCall& c) const {
    GemmArgs g{d_.n, d_.h, d_.k};
    g.tb = true;
    Gemm(c, g, c.inputs[0], c.inputs[1], c.outputs[0], c.req[0], d_.bias ? &c.inputs[2] : nullptr);
  }

 private:
  FcDims d_;
};

// _backward_FullyConnected: inputs out_grad (N, H), data, weight[, bias]; outputs gx, gW[, gb].
class FcBackward {
 public:
  explicit FcBackward(const sdk::KernelSetup& s) {
    RequireFloat32(s);
    if (s.inputs.size() < 3) Invalid(s, "expects out_grad, data and weight");
    d_ = ParseFc(s, s.inputs[1], s.inputs[2]);
    s.ExpectCounts(d_.bias ? 4 : 3, d_.bias ? 3 : 2);
  }
  void Compute(const sdk::DeviceCall& c) const {
    GemmArgs gx{d_.n, d_.k, d_.h};  // gx = gy · W
    Gemm(c, gx, c.inputs[0], c.inputs[2], c.outputs[0], c.req[0], nullptr);
    GemmArgs gw{d_.h, d_.k, d_.n};  // gW = gyᵀ · x
    gw.ta = true;
    Gemm(c, gw, c.inputs[0], c.inputs[1], c.outputs[1], c.req[1], nullptr);
    if (d_.bias && !sdk::IsNull(c.req[2])) {
      struct {
        uint32_t rows, cols, add;
      } push{d_.n, d_.h, AddFlag(c.req[2])};
      const Binding b[2] = {In(c.inputs[0]), Out(c.outputs[2])};
      Dispatch(c, Launch{"reduce_rows", {}, (d_.h + 63) / 64}, b, push);
    }
  }

 private:
  FcDims d_;
};

// act_func.glsl's code for the op's act_type. LeakyReLU's prelu and rrelu (per-channel and random
// slopes) are LeakyKernel's (LeakyReLU.comp), not element-wise: kPrelu / kRrelu.
constexpr int32_t kPrelu = 9, kRrelu = 10;
int32_t ParseAct(const sdk::KernelSetup& s) {
  if (s.op_name.ends_with("LeakyReLU")) {
    // sdk::LeakyType's order: leaky, elu, prelu, rrelu, selu, gelu.
    static constexpr int32_t kLeaky[] = {5, 6, kPrelu, kRrelu, 7, 8};
    return kLeaky[static_cast<int>(s.Params<sdk::LeakyReLUParam>().act_type)];
  }
  return static_cast<int32_t>(s.Params<sdk::ActivationParam>().act_type);  // relu .. softsign: 0 .. 4
}

float ParseSlope(const sdk::KernelSetup& s) {
  return s.op_name.ends_with("LeakyReLU") ? s.Params<sdk::LeakyReLUParam>().slope : 0.25f;
}

// Activation and LeakyReLU's element-wise act_types.
class ActivationKernel {
 public:
  explicit ActivationKernel(const sdk::KernelSetup& s) : act_(ParseAct(s)), slope_(ParseSlope(s)) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    if (s.outputs[0].size() != s.inputs[0].size()) Invalid(s, "output differs from data in size");
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    const int64_t n = c.outputs[0].size();
    struct {
      uint32_t n, add;
      float slope;
    } push{static_cast<uint32_t>(n), AddFlag(c.req[0]), slope_};
    const Binding b[2] = {In(c.inputs[0]), Out(c.outputs[0])};
    const int32_t spec[1] = {act_};
    DispatchElementwise(c, "Activation", spec, b, push);
  }

 private:
  int32_t act_;
  float slope_;
};

// _backward_Activation: inputs out_grad, [data,] output (data only for softsign);
// _backward_LeakyReLU: out_grad, data, output.
class ActivationBackwardKernel {
 public:
  explicit ActivationBackwardKernel(const sdk::KernelSetup& s) : act_(ParseAct(s)), slope_(ParseSlope(s)) {
    s.ExpectCounts(-1, 1);
    RequireFloat32(s);
    sdk::ActivationGradHasData(s.op_name, act_ < 4, s.inputs.size());  // relu .. softrelu: the output suffices
    for (const sdk::TensorDesc& t : s.inputs)
      if (t.size() != s.outputs[0].size()) Invalid(s, "inputs and output must have one size");
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    const int64_t n = c.outputs[0].size();
    const sdk::DeviceTensor& y = c.inputs.back();
    const sdk::DeviceTensor& x = c.inputs.size() == 3 ? c.inputs[1] : y;
    struct {
      uint32_t n, add;
      float slope;
    } push{static_cast<uint32_t>(n), AddFlag(c.req[0]), slope_};
    const Binding b[4] = {In(c.inputs[0]), In(x), In(y), Out(c.outputs[0])};
    const int32_t spec[1] = {act_};
    DispatchElementwise(c, "_backward_Activation", spec, b, push);
  }

 private:
  int32_t act_;
  float slope_;
};

// prelu's slope of element i is gamma[(i / inner) % channels]: one per channel of axis 1, or a
// single one (as the cpu plugin's PreluView).
struct ChannelView {
  uint32_t channels = 1, inner = 1;
};

ChannelView PreluView(const sdk::KernelSetup& s, const sdk::TensorDesc& x, const sdk::TensorDesc& gamma) {
  const sdk::PreluChannels p = sdk::PreluChannelsOf(s.op_name, x.shape, gamma.shape);
  return {static_cast<uint32_t>(p.channels), static_cast<uint32_t>(p.inner)};
}

// LeakyReLU: prelu (inputs data, gamma) and rrelu (outputs output, mask; random slopes in
// training, (lower_bound + upper_bound) / 2 otherwise) through LeakyReLU.comp; the element-wise
// act_types through ActivationKernel.
class LeakyKernel {
 public:
  explicit LeakyKernel(const sdk::KernelSetup& s) : act_(ParseAct(s)) {
    if (act_ != kPrelu && act_ != kRrelu) {
      elementwise_.emplace(s);
      return;
    }
    RequireFloat32(s);
    if (act_ == kPrelu) {
      s.ExpectCounts(2, 1);
      view_ = PreluView(s, s.inputs[0], s.inputs[1]);
    } else {
      s.ExpectCounts(1, 2);
      const auto p = s.Params<sdk::LeakyReLUParam>();
      lower_ = p.lower_bound, upper_ = p.upper_bound;
    }
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (elementwise_) return elementwise_->Compute(c);
    const int64_t n = c.inputs[0].size();
    const int32_t req_m = act_ == kRrelu ? c.req[1] : WEFT_REQ_NULL;
    if ((sdk::IsNull(c.req[0]) && sdk::IsNull(req_m)) || n == 0) return;
    struct {
      uint32_t n, write_y, add_y, channels, inner, train, write_m, add_m, seed_lo, seed_hi;
      float lower, upper;
    } push{static_cast<uint32_t>(n),
           !sdk::IsNull(c.req[0]),
           AddFlag(c.req[0]),
           view_.channels,
           view_.inner,
           c.is_train,
           !sdk::IsNull(req_m),
           AddFlag(req_m),
           static_cast<uint32_t>(c.seed),
           static_cast<uint32_t>(c.seed >> 32),
           lower_,
           upper_};
    const Binding x = In(c.inputs[0]), y = Out(c.outputs[0]);
    const Binding b[4] = {x, act_ == kPrelu ? In(c.inputs[1]) : x, y, act_ == kRrelu ? Out(c.outputs[1]) : y};
    const int32_t spec[1] = {act_ == kPrelu ? 0 : 1};
    Dispatch(c, Launch{"LeakyReLU", spec, Groups64(n)}, b, push);
  }

 private:
  int32_t act_;
  std::optional<ActivationKernel> elementwise_;
  ChannelView view_;
  float lower_ = 0.125f, upper_ = 0.334f;
};

// _backward_LeakyReLU: prelu inputs out_grad, data, gamma, output -> data and gamma gradients
// (gamma's: x · out_grad summed per channel over the elements not above zero, as a product in the
// workspace summed by broadcast_reduce.comp); rrelu inputs out_grad, out_grad of the mask, data,
// output, mask -> data gradient; the element-wise act_types as _backward_Activation.
class LeakyBackwardKernel {
 public:
  explicit LeakyBackwardKernel(const sdk::KernelSetup& s) : act_(ParseAct(s)) {
    if (act_ != kPrelu && act_ != kRrelu) {
      elementwise_.emplace(s);
      return;
    }
    RequireFloat32(s);
    if (act_ == kPrelu) {
      s.ExpectCounts(4, 2);
      view_ = PreluView(s, s.inputs[1], s.inputs[2]);
      n_ = static_cast<uint64_t>(s.inputs[1].size());
    } else {
      s.ExpectCounts(5, 1);
    }
  }
  uint64_t WorkspaceBytes() const { return act_ == kPrelu ? 4 * n_ : 0; }
  void Compute(const sdk::DeviceCall& c) const {
    if (elementwise_) return elementwise_->Compute(c);
    const int64_t n = c.outputs[0].size();
    const bool gamma_grad = act_ == kPrelu && !sdk::IsNull(c.req[1]);
    if ((sdk::IsNull(c.req[0]) && !gamma_grad) || n == 0) return;
    struct {
      uint32_t n, write_x, add_x, channels, inner, write_t;
    } push{
        static_cast<uint32_t>(n), !sdk::IsNull(c.req[0]), AddFlag(c.req[0]), view_.channels, view_.inner, gamma_grad};
    const Binding gx = Out(c.outputs[0]);
    const Binding t = gamma_grad ? Workspace(c, true) : gx;
    const Binding b[5] = {In(c.inputs[0]), In(c.inputs[act_ == kPrelu ? 1 : 3]), In(c.inputs[act_ == kPrelu ? 2 : 4]),
                          gx, t};
    const int32_t spec[1] = {act_ == kPrelu ? 0 : 1};
    Dispatch(c, Launch{"_backward_LeakyReLU", spec, Groups64(n)}, b, push);
    if (!gamma_grad) return;
    Binding tr = t;
    tr.write = false;
    const int64_t inner = view_.inner, ch = view_.channels, outer = n / (inner * ch);
    const int64_t dims[3] = {outer, ch, inner}, src[3] = {ch * inner, inner, 1}, dst[3] = {0, 1, 0};
    const bool reduced[3] = {true, false, true};
    StridedSum(c, dims, tr, src, Out(c.outputs[1]), dst, reduced, c.req[1]);
  }

 private:
  int32_t act_;
  std::optional<ActivationBackwardKernel> elementwise_;
  ChannelView view_;
  uint64_t n_ = 0;
};

// ---- Dropout -----------------------------------------------------------------------------------

class DropoutKernel {
 public:
  explicit DropoutKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(1, -1);
    if (s.outputs.empty() || s.outputs.size() > 2) Invalid(s, "expects output and an optional mask output");
    RequireFloat32(s);
    for (const sdk::TensorDesc& o : s.outputs)
      if (o.size() != s.inputs[0].size()) Invalid(s, "outputs must have data's shape");
    const auto dp = s.Params<sdk::DropoutParam>();  // mode is DefaultOnly
    dp.RequireNoAxes(s.op_name, "vulkan");
    p_ = dp.p;
    if (!(p_ >= 0.0f && p_ <= 1.0f)) Invalid(s, "p must lie in [0, 1], got " + std::to_string(p_));
  }
  void Compute(const sdk::DeviceCall& c) const {
    const int64_t n = c.inputs[0].size();
    const bool has_mask = c.outputs.size() > 1;
    const int32_t mreq = has_mask ? c.req[1] : WEFT_REQ_NULL;
    if (n == 0 || (sdk::IsNull(c.req[0]) && sdk::IsNull(mreq))) return;
    const float keep = 1.0f - p_;
    struct {
      uint32_t n, train, write_y, add_y, write_m, add_m, seed_lo, seed_hi;
      float keep, scale;
    } push{static_cast<uint32_t>(n),
           c.is_train && p_ > 0.0f,
           !sdk::IsNull(c.req[0]),
           AddFlag(c.req[0]),
           !sdk::IsNull(mreq),
           AddFlag(mreq),
           static_cast<uint32_t>(c.seed),
           static_cast<uint32_t>(c.seed >> 32),
           keep,
           keep > 0.0f ? 1.0f / keep : 0.0f};
    const Binding b[3] = {In(c.inputs[0]), Out(c.outputs[0]), has_mask ? Out(c.outputs[1]) : Out(c.outputs[0])};
    Dispatch(c, Launch{"Dropout", {}, Groups64(n)}, b, push);
  }

 private:
  float p_ = 0.5f;
};

// _backward_Dropout: out_grad first, the mask last; data grad = out_grad · mask
// (elemwise_binary.comp's product).
class DropoutBackwardKernel {
 public:
  explicit DropoutBackwardKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(-1, 1);
    RequireFloat32(s);
    s.Params<sdk::DropoutParam>().RequireNoAxes(s.op_name, "vulkan");
    if (s.inputs.size() < 2) Invalid(s, "expects out_grad and the mask");
    for (const sdk::TensorDesc& t : s.inputs)
      if (t.size() != s.outputs[0].size()) Invalid(s, "inputs must have data's shape");
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0]) || c.outputs[0].size() == 0) return;
    const int64_t n = c.outputs[0].size();
    // The mask applies only in training (cpu: nn_dropout.cc); otherwise the gradient passes.
    if (!c.is_train) return DispatchScaled(c, In(c.inputs[0]), Out(c.outputs[0]), c.req[0], n, 1.0f);
    struct {
      uint32_t n, add;
    } push{static_cast<uint32_t>(n), AddFlag(c.req[0])};
    const Binding b[3] = {In(c.inputs[0]), In(c.inputs.back()), Out(c.outputs[0])};
    const int32_t spec[1] = {2};
    Dispatch(c, Launch{"elemwise_binary", spec, Groups64(n)}, b, push);
  }
};

}  // namespace

void RegisterNnKernels(VkKernelTable& t) {
  const uint64_t f32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
  AddWithShaders<FcForward>(t, "FullyConnected", f32, {"gemm", "gemm4"});
  AddWithShaders<FcBackward>(t, "_backward_FullyConnected", f32, {"gemm", "gemm4", "reduce_rows"});
  AddWithShaders<ActivationKernel>(t, "Activation", f32, {"Activation"});
  AddWithShaders<ActivationBackwardKernel>(t, "_backward_Activation", f32, {"_backward_Activation"});
  AddWithShaders<LeakyKernel>(t, "LeakyReLU", f32, {"LeakyReLU"});
  AddWithShaders<LeakyBackwardKernel>(t, "_backward_LeakyReLU", f32, {"_backward_LeakyReLU"});
  AddWithShaders<DropoutKernel>(t, "Dropout", f32, {"Dropout"});
  AddWithShaders<DropoutBackwardKernel>(t, "_backward_Dropout", f32, {"elemwise_binary"});
}

}  // namespace weft::vk
