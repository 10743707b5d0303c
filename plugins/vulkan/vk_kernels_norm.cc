// vulkan plugin — BatchNorm, LRN, Dropout, softmax / log_softmax and the adam, nag and rmsprop
// updates (shaders named by op). Semantics as the CPU plugin's kernels (MXNet 1.9).
#include "vk_kernels.h"
#include "weft/sdk/ops/batch_norm.hpp"
#include "weft/sdk/ops/dropout.hpp"
#include "weft/sdk/ops/lrn.hpp"
#include "weft/sdk/ops/optimizer.hpp"
#include "weft/sdk/ops/softmax.hpp"

namespace weft::vk {
namespace {

// out (=|+=) `n` floats of `src` (add_n.comp with one input).
void CopyFloats(const sdk::DeviceCall& c, Binding src, const sdk::DeviceTensor& out, int32_t req) {
  if (sdk::IsNull(req) || out.size() == 0) return;
  struct {
    uint32_t n, add;
  } push{static_cast<uint32_t>(out.size()), AddFlag(req)};
  const Binding b[2] = {src, Out(out)};
  Dispatch(c, Launch{"add_n", {}, Groups64(out.size())}, b, push);
}

// ---- BatchNorm ---------------------------------------------------------------------------------

struct BnShape {
  uint32_t outer = 1, c = 1, inner = 1;
  float eps = 1e-3f, momentum = 0.9f;
  bool fix_gamma = true, use_global = false;
};

// The push constants of a BatchNorm node, its shapes checked; `data`: where data is among the
// inputs.
BnShape ParseBatchNorm(const sdk::KernelSetup& s, bool backward, size_t* data) {
  const sdk::BatchNormGeometry g = sdk::CheckBatchNormSetup(s, backward);
  RequireFloat32(s);
  if (data != nullptr) *data = g.data;
  return {static_cast<uint32_t>(g.outer),
          static_cast<uint32_t>(g.c),
          static_cast<uint32_t>(g.inner),
          g.eps,
          g.momentum,
          g.fix_gamma,
          g.use_global};
}

// Inputs data, gamma, beta; outputs output[, mean, inv_std]; aux moving_mean, moving_var.
class BatchNormKernel {
 public:
  explicit BatchNormKernel(const sdk::KernelSetup& s) { p_ = ParseBatchNorm(s, false, nullptr); }
  uint64_t WorkspaceBytes() const { return uint64_t{2} * p_.c * sizeof(float); }
  void Compute(const sdk::DeviceCall& c) const {
    if (p_.c == 0) return;
    struct {
      uint32_t outer, c, inner, batch, fix_gamma, add;
      float eps, momentum;
    } push{p_.outer,          p_.c,   p_.inner,   c.is_train && !p_.use_global, p_.fix_gamma,
           AddFlag(c.req[0]), p_.eps, p_.momentum};
    const bool batch = push.batch != 0;
    const Binding stats[7] = {In(c.inputs[0]),
                              In(c.inputs[1]),
                              In(c.inputs[2]),
                              batch ? Out(c.aux[0]) : In(c.aux[0]),
                              batch ? Out(c.aux[1]) : In(c.aux[1]),
                              Workspace(c, true),
                              In(c.outputs[0])};
    const int32_t stage0[1] = {0}, stage1[1] = {1};
    Dispatch(c, Launch{"BatchNorm", stage0, p_.c}, stats, push);
    if (!sdk::IsNull(c.req[0]) && c.outputs[0].size() > 0) {
      const Binding norm[7] = {In(c.inputs[0]), In(c.inputs[1]),     In(c.inputs[2]),  In(c.aux[0]),
                               In(c.aux[1]),    Workspace(c, false), Out(c.outputs[0])};
      Dispatch(c, Launch{"BatchNorm", stage1, Groups64(c.outputs[0].size())}, norm, push);
    }
    for (size_t k = 1; k < c.outputs.size(); ++k) {
      Binding part = Workspace(c, false);
      part.offset += (k - 1) * p_.c * sizeof(float);
      part.bytes = p_.c * sizeof(float);
      CopyFloats(c, part, c.outputs[k], c.req[k]);
    }
  }

 private:
  BnShape p_;
};

// _backward_BatchNorm inputs: out-grads (1, or 3 with the hidden outputs'), data, gamma, beta,
// output, mean, inv_std, moving_mean, moving_var. Outputs: data, gamma, beta gradients.
class BatchNormBackwardKernel {
 public:
  explicit BatchNormBackwardKernel(const sdk::KernelSetup& s) { p_ = ParseBatchNorm(s, true, &g_); }
  uint64_t WorkspaceBytes() const { return uint64_t{4} * p_.c * sizeof(float); }
  void Compute(const sdk::DeviceCall& c) const {
    if (p_.c == 0) return;
    struct {
      uint32_t outer, c, inner, use_global, fix_gamma, add, which;
      float eps;
    } push{p_.outer, p_.c, p_.inner, p_.use_global, p_.fix_gamma, 0, 0, p_.eps};
    auto in = [&](size_t i) { return In(c.inputs[i]); };
    auto bindings = [&](Binding ws, Binding out) {
      return std::array<Binding, 9>{in(0), in(g_), in(g_ + 1), in(g_ + 4), in(g_ + 5), in(g_ + 6), in(g_ + 7), ws, out};
    };
    const int32_t stage[3] = {0, 1, 2};
    Dispatch(c, Launch{"_backward_BatchNorm", std::span(stage, 1), p_.c},
             bindings(Workspace(c, true), In(c.outputs[0])), push);
    if (!sdk::IsNull(c.req[0]) && c.outputs[0].size() > 0) {
      push.add = AddFlag(c.req[0]);
      Dispatch(c, Launch{"_backward_BatchNorm", std::span(stage + 1, 1), Groups64(c.outputs[0].size())},
               bindings(Workspace(c, false), Out(c.outputs[0])), push);
    }
    for (uint32_t k = 1; k < 3; ++k) {
      if (sdk::IsNull(c.req[k])) continue;
      push.add = AddFlag(c.req[k]);
      push.which = k - 1;
      Dispatch(c, Launch{"_backward_BatchNorm", std::span(stage + 2, 1), (p_.c + 63) / 64},
               bindings(Workspace(c, false), Out(c.outputs[k])), push);
    }
  }

 private:
  BnShape p_;
  size_t g_ = 1;
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

// ---- softmax / log_softmax -----------------------------------------------------------------------

struct AxisView {
  uint32_t rows = 1, len = 1, inner = 1;
  float inv_t = 1.0f;
};

AxisView ParseSoftmax(const sdk::KernelSetup& s, const sdk::TensorDesc& t) {
  const auto p = s.Params<sdk::SoftmaxParam>();  // use_length is DefaultOnly
  const sdk::AxisSplit split = sdk::SplitAtAxis(s.op_name, t.shape, p.axis);
  AxisView v;
  v.len = static_cast<uint32_t>(split.len);
  v.inner = static_cast<uint32_t>(split.inner);
  v.rows = static_cast<uint32_t>(split.outer * split.inner);
  v.inv_t = p.InverseTemperature();
  return v;
}

// softmax / log_softmax (input data) and their backward ops (inputs out_grad, output).
class SoftmaxKernel {
 public:
  explicit SoftmaxKernel(const sdk::KernelSetup& s)
      : backward_(s.op_name.starts_with("_backward_")), log_(s.op_name.find("log_softmax") != std::string::npos) {
    s.ExpectCounts(backward_ ? 2 : 1, 1);
    RequireFloat32(s);
    for (const sdk::TensorDesc& t : s.inputs)
      if (t.size() != s.outputs[0].size()) Invalid(s, "inputs and output must have one shape");
    v_ = ParseSoftmax(s, s.inputs[backward_ ? 1 : 0]);
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0]) || c.outputs[0].size() == 0) return;
    const int32_t spec[1] = {log_ ? 1 : 0};
    struct {
      uint32_t rows, len, inner, add;
      float inv_t;
    } push{v_.rows, v_.len, v_.inner, AddFlag(c.req[0]), v_.inv_t};
    if (!backward_) {
      const Binding b[2] = {In(c.inputs[0]), Out(c.outputs[0])};
      Dispatch(c, Launch{"softmax", spec, Groups64(v_.rows)}, b, push);
    } else {
      const Binding b[3] = {In(c.inputs[0]), In(c.inputs[1]), Out(c.outputs[0])};
      Dispatch(c, Launch{"_backward_softmax", spec, Groups64(v_.rows)}, b, push);
    }
  }

 private:
  bool backward_, log_;
  AxisView v_;
};

// ---- adam, nag, rmsprop ----------------------------------------------------------------------------

// Inputs weight, grad; aux the rule's states; output the new weight. States advance even when
// the output's req is null (MXNet updates them in place).
class UpdateKernel {
 public:
  explicit UpdateKernel(const sdk::KernelSetup& s) : op_(s.op_name) {
    states_ = op_ == "adam_update" ? 2 : op_ == "rmspropalex_update" ? 3 : 1;
    s.ExpectCounts(2, 1, states_);
    RequireFloat32(s);
    for (const auto* list : {&s.inputs, &s.outputs, &s.aux})
      for (const sdk::TensorDesc& t : *list)
        if (t.size() != s.inputs[0].size()) Invalid(s, "weight, grad, states and output must have one size");
    const sdk::UpdateFields p = sdk::UpdateParamsOf(s);
    common_ = {p.lr, p.wd, p.rescale_grad, p.clip_gradient};
    if (op_ == "adam_update")
      extra_ = {p.beta1, p.beta2, p.epsilon, 0};
    else if (op_ == "nag_mom_update")
      extra_ = {p.momentum, 0, 0, 0};
    else
      extra_ = {p.gamma1, p.gamma2, p.epsilon, p.clip_weights};
  }
  void Compute(const sdk::DeviceCall& c) const {
    const int64_t n = c.inputs[0].size();
    if (n == 0) return;
    struct {
      uint32_t n, write, add;
      float common[4], extra[4];
    } push{static_cast<uint32_t>(n), !sdk::IsNull(c.req[0]), AddFlag(c.req[0]), {}, {}};
    std::copy(common_.begin(), common_.end(), push.common);
    std::copy(extra_.begin(), extra_.end(), push.extra);
    std::vector<Binding> b = {In(c.inputs[0]), In(c.inputs[1])};
    for (const sdk::DeviceTensor& t : c.aux) b.push_back(Out(t));
    const int32_t alex[1] = {op_ == "rmspropalex_update" ? 1 : 0};
    std::span<const int32_t> spec;
    const char* shader = op_.c_str();
    if (op_.starts_with("rmsprop")) {
      shader = "rmsprop_update";
      spec = alex;
      while (b.size() < 5) b.push_back(Out(c.aux[0]));  // rmsprop: the unused gs, delta slots
    }
    b.push_back(Out(c.outputs[0]));
    Dispatch(c, Launch{shader, spec, Groups64(n)}, b, push);
  }

 private:
  std::string op_;
  int states_ = 1;
  std::array<float, 4> common_{}, extra_{};
};

// LRN on (N, C, ...) data: y and the hidden tmp_norm; _backward_LRN: inputs out_grad(output),
// out_grad(tmp_norm) (unused), data, output, tmp_norm; output the data gradient.
struct LrnParams {
  uint32_t total = 0, c = 0, inner = 0, half = 0;
  float alpha = 1e-4f, beta = 0.75f, knorm = 2.0f, nsize = 1;
};

LrnParams ParseLrn(const sdk::KernelSetup& s, const sdk::TensorDesc& x) {
  const sdk::LrnGeometry g = sdk::LRNGeometry(s.op_name, s.Params<sdk::LRNParam>(), x.shape);
  LrnParams p;
  p.total = static_cast<uint32_t>(x.size());
  p.c = static_cast<uint32_t>(g.c);
  p.inner = static_cast<uint32_t>(g.inner);
  p.half = static_cast<uint32_t>(g.half);
  p.nsize = static_cast<float>(g.nsize);
  p.alpha = g.alpha, p.beta = g.beta, p.knorm = g.knorm;
  return p;
}

class LrnKernel {
 public:
  explicit LrnKernel(const sdk::KernelSetup& s) {
    RequireFloat32(s);
    s.ExpectCounts(1, -1);
    if (s.outputs.empty() || s.outputs.size() > 2) Invalid(s, "expects output and the hidden tmp_norm");
    for (const sdk::TensorDesc& o : s.outputs)
      if (o.size() != s.inputs[0].size()) Invalid(s, "outputs must have data's shape");
    p_ = ParseLrn(s, s.inputs[0]);
  }
  void Compute(const sdk::DeviceCall& c) const {
    const bool norm = c.outputs.size() > 1 && !sdk::IsNull(c.req[1]);
    if ((sdk::IsNull(c.req[0]) && !norm) || p_.total == 0) return;
    if (sdk::IsNull(c.req[0]))
      throw sdk::Error(WEFT_ERR_UNSUPPORTED,
                       "LRN on vulkan: tmp_norm without the output (req null) is not implemented");
    struct {
      uint32_t total, c, inner, half, add_y, add_n;
      float scale, beta, knorm;
    } push{p_.total, p_.c,    p_.inner, p_.half, AddFlag(c.req[0]), norm ? AddFlag(c.req[1]) : 0u, p_.alpha / p_.nsize,
           p_.beta,  p_.knorm};
    const Binding y = Out(c.outputs[0]);
    const Binding b[3] = {In(c.inputs[0]), y, norm ? Out(c.outputs[1]) : y};
    const int32_t spec[1] = {norm ? 1 : 0};
    Dispatch(c, Launch{"LRN", spec, Groups64(p_.total)}, b, push);
  }

 private:
  LrnParams p_;
};

class LrnBackwardKernel {
 public:
  explicit LrnBackwardKernel(const sdk::KernelSetup& s) {
    RequireFloat32(s);
    s.ExpectCounts(5, 1);
    for (const sdk::TensorDesc& t : s.inputs)
      if (t.size() != s.outputs[0].size()) Invalid(s, "inputs must have data's shape");
    p_ = ParseLrn(s, s.inputs[2]);
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0]) || p_.total == 0) return;
    struct {
      uint32_t total, c, inner, half, add;
      float k, beta;
    } push{p_.total, p_.c, p_.inner, p_.half, AddFlag(c.req[0]), -2.0f * p_.alpha * p_.beta / p_.nsize, p_.beta};
    const Binding b[4] = {In(c.inputs[0]), In(c.inputs[2]), In(c.inputs[4]), Out(c.outputs[0])};
    Dispatch(c, Launch{"_backward_LRN", {}, Groups64(p_.total)}, b, push);
  }

 private:
  LrnParams p_;
};

}  // namespace

void RegisterNormKernels(VkKernelTable& t) {
  const uint64_t f32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
  AddWithShaders<BatchNormKernel>(t, "BatchNorm", f32, {"BatchNorm"});
  AddWithShaders<BatchNormBackwardKernel>(t, "_backward_BatchNorm", f32, {"_backward_BatchNorm"});
  AddWithShaders<LrnKernel>(t, "LRN", f32, {"LRN"});
  AddWithShaders<LrnBackwardKernel>(t, "_backward_LRN", f32, {"_backward_LRN"});
  AddWithShaders<DropoutKernel>(t, "Dropout", f32, {"Dropout"});
  AddWithShaders<DropoutBackwardKernel>(t, "_backward_Dropout", f32, {"elemwise_binary"});
  for (const char* op : {"softmax", "log_softmax"}) {
    AddWithShaders<SoftmaxKernel>(t, op, f32, {"softmax"});
    AddWithShaders<SoftmaxKernel>(t, std::string("_backward_") + op, f32, {"_backward_softmax"});
  }
  // rmspropalex_update runs rmsprop_update.comp (UpdateKernel's shader choice).
  for (const char* op : {"adam_update", "nag_mom_update", "rmsprop_update"})
    AddWithShaders<UpdateKernel>(t, op, f32, {op});
  AddWithShaders<UpdateKernel>(t, "rmspropalex_update", f32, {"rmsprop_update"});
}

}  // namespace weft::vk
