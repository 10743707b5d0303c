// Optimizer updates with MXNet 1.9's formulas (src/operator/optimizer_op-inl.h). The output is
// the new weight (usually in place over input 0); state tensors are aux states and are updated.
//   sgd_update:     w' = (1 − lr·wd)·w − lr·clip(rescale·g)
//   sgd_mom_update: mom = momentum·mom − lr·wd·w − lr·clip(rescale·g); w' = w + mom
//   adam_update:    g' = clip(rescale·g + wd·w); mean = β1·mean + (1−β1)·g';
//                   var = β2·var + (1−β2)·g'²; w' = w − lr·mean/(√var + ε)
// clip(x) = min(max(x, −c), c) when clip_gradient = c ≥ 0, else x. Note that adam clips after
// adding the weight decay, as MXNet does.
#include <algorithm>
#include <cmath>

#include "nn_common.h"

namespace weft::cpu {
namespace {

struct Common {
  float lr = 0, wd = 0, rescale = 1, clip = -1;
  explicit Common(const KernelSetup& s)
      : lr(static_cast<float>(s.attrs.GetFloat("lr"))),
        wd(static_cast<float>(s.attrs.GetFloat("wd", 0.0))),
        rescale(static_cast<float>(s.attrs.GetFloat("rescale_grad", 1.0))),
        clip(static_cast<float>(s.attrs.GetFloat("clip_gradient", -1.0))) {}
  float Clip(float g) const { return clip >= 0.0f ? std::min(std::max(g, -clip), clip) : g; }
};

void CheckSameSize(const KernelSetup& s) {
  int64_t n = s.inputs[0].size();
  auto check = [&](const TensorDesc& t, const std::string& what) {
    if (t.size() != n) Invalid(s, what + " " + ShapeString(t) + " differs from weight " + ShapeString(s.inputs[0]));
  };
  for (size_t i = 1; i < s.inputs.size(); ++i) check(s.inputs[i], "input " + std::to_string(i));
  for (size_t i = 0; i < s.outputs.size(); ++i) check(s.outputs[i], "output " + std::to_string(i));
  for (size_t i = 0; i < s.aux.size(); ++i) check(s.aux[i], "state " + std::to_string(i));
}

class SgdKernel {
 public:
  explicit SgdKernel(const KernelSetup& s) : p_(s) {
    s.ExpectCounts(2, 1, 0);
    RequireFloat32(s);
    CheckSameSize(s);
  }
  void Compute(const KernelCall& c) const {
    const float* w = c.inputs[0].data<float>();
    const float* g = c.inputs[1].data<float>();
    float* out = c.outputs[0].data<float>();
    const float decay = 1.0f - p_.lr * p_.wd;
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      for (int64_t i = 0, n = c.inputs[0].size(); i < n; ++i)
        assign(out[i], decay * w[i] - p_.lr * p_.Clip(p_.rescale * g[i]));
    });
  }

 private:
  Common p_;
};

class SgdMomKernel {
 public:
  explicit SgdMomKernel(const KernelSetup& s)
      : p_(s), momentum_(static_cast<float>(s.attrs.GetFloat("momentum", 0.0))) {
    s.ExpectCounts(2, 1, 1);
    RequireFloat32(s);
    CheckSameSize(s);
  }
  void Compute(const KernelCall& c) const {
    const float* w = c.inputs[0].data<float>();
    const float* g = c.inputs[1].data<float>();
    float* mom = c.aux[0].data<float>();
    float* out = c.outputs[0].data<float>();
    // The state advances even when req is null: the update happened, only the weight is unused.
    weft::sdk::WithReq(c.req[0] == WEFT_REQ_NULL ? WEFT_REQ_WRITE : c.req[0], [&](auto assign) {
      const bool write_out = c.req[0] != WEFT_REQ_NULL;
      for (int64_t i = 0, n = c.inputs[0].size(); i < n; ++i) {
        float m = momentum_ * mom[i] - p_.lr * p_.wd * w[i] - p_.lr * p_.Clip(p_.rescale * g[i]);
        float wi = w[i];
        mom[i] = m;
        if (write_out) assign(out[i], wi + m);
      }
    });
  }

 private:
  Common p_;
  float momentum_;
};

class AdamKernel {
 public:
  explicit AdamKernel(const KernelSetup& s)
      : p_(s),
        beta1_(static_cast<float>(s.attrs.GetFloat("beta1", 0.9))),
        beta2_(static_cast<float>(s.attrs.GetFloat("beta2", 0.999))),
        eps_(static_cast<float>(s.attrs.GetFloat("epsilon", 1e-8))) {
    s.ExpectCounts(2, 1, 2);
    RequireFloat32(s);
    CheckSameSize(s);
  }
  void Compute(const KernelCall& c) const {
    const float* w = c.inputs[0].data<float>();
    const float* g = c.inputs[1].data<float>();
    float* mean = c.aux[0].data<float>();
    float* var = c.aux[1].data<float>();
    float* out = c.outputs[0].data<float>();
    weft::sdk::WithReq(c.req[0] == WEFT_REQ_NULL ? WEFT_REQ_WRITE : c.req[0], [&](auto assign) {
      const bool write_out = c.req[0] != WEFT_REQ_NULL;
      for (int64_t i = 0, n = c.inputs[0].size(); i < n; ++i) {
        float gi = p_.Clip(p_.rescale * g[i] + p_.wd * w[i]);
        float m = beta1_ * mean[i] + (1.0f - beta1_) * gi;
        float v = beta2_ * var[i] + (1.0f - beta2_) * gi * gi;
        float wi = w[i];
        mean[i] = m;
        var[i] = v;
        if (write_out) assign(out[i], wi - p_.lr * m / (std::sqrt(v) + eps_));
      }
    });
  }

 private:
  Common p_;
  float beta1_, beta2_, eps_;
};

}  // namespace

void RegisterOptimizer(KernelTable& t) {
  t.Add<SgdKernel>("sgd_update", kF32);
  t.Add<SgdMomKernel>("sgd_mom_update", kF32);
  t.Add<AdamKernel>("adam_update", kF32);
}

}  // namespace weft::cpu
