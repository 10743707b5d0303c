// vulkan plugin — the norm family (docs/adding-an-op.md, "Op families"): BatchNorm and LRN forward
// and backward (shaders named by op). Semantics as the CPU plugin's kernels (MXNet 1.9).
#include "vk_kernels.h"
#include "weft/sdk/ops/batch_norm.hpp"
#include "weft/sdk/ops/lrn.hpp"

namespace weft::vk {
namespace {

// out (=|+=) the `out.size()` floats at `src`.
void CopyFloats(const sdk::DeviceCall& c, Binding src, const sdk::DeviceTensor& out, int32_t req) {
  if (sdk::IsNull(req) || out.size() == 0) return;
  AddInto(c, src, Out(out), out.size(), req == WEFT_REQ_ADD);
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
}

}  // namespace weft::vk
