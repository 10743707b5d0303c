// weft GPU kernel layer — the nn family's Dropout (cpu: nn_dropout.cc) and its backward, float32.
// Mode training: mask = UniformAt(seed, i) < 1 − p ? 1/(1 − p) : 0 — the cpu's counter-based
// stream, so every launcher draws the cpu's mask bit for bit; identity (mask 1) outside training
// or for p = 0.
#pragma once

#include "gpu_kernel.h"
#include "weft/sdk/ops/dropout.hpp"

namespace weft::WEFT_GPU_NS {

struct DropoutParams {
  uint64_t seed = 0;
  float keep = 1, scale = 1;
  bool train = false;
  WEFT_HD float Mask(int64_t i) const {
    return !train ? 1.0f : (UniformAt(seed, static_cast<uint64_t>(i)) < keep ? scale : 0.0f);
  }
};

/// y[i] = x[i] · mask(i) (mask_out null), or mask[i] = mask(i) (x null).
template <class Assign>
struct DropoutMap {
  DropoutParams p;
  const float* x;
  float* out;
  WEFT_HD void operator()(int64_t i) const {
    const float m = p.Mask(i);
    Assign::Put(out[i], x != nullptr ? (p.train ? x[i] * m : x[i]) : m);
  }
};

/// gx = gy · mask (the backward's last input).
template <class Assign>
struct ProductMap {
  const float* a;
  const float* b;
  float* out;
  WEFT_HD void operator()(int64_t i) const { Assign::Put(out[i], b ? a[i] * b[i] : a[i]); }  // b null: a
};

template <class L>
class DropoutKernel {
 public:
  explicit DropoutKernel(const KernelSetup& s) : backward_(IsBackward(s)) {
    RequireFloat32(s);
    s.Params<sdk::DropoutParam>().RequireNoAxes(s.op_name, "the GPU layer");
    if (backward_) {
      s.ExpectCounts(-1, 1);
      if (s.inputs.size() < 2) Invalid(s, "expects out_grad and the mask");
    } else {
      s.ExpectCounts(1, -1);
      if (s.outputs.empty() || s.outputs.size() > 2) Invalid(s, "expects output and an optional mask output");
      p_ = s.Params<sdk::DropoutParam>().p;  // mode is DefaultOnly: Params refuses others
    }
    RequireSameSize(s);
  }
  void Compute(const DeviceCall& c) const {
    const int64_t n = c.outputs[0].size();
    if (backward_) {
      // The mask applies only in training (cpu: nn_dropout.cc); otherwise out_grad · 1.
      WithReq(c.req[0], [&](auto a) {
        L::Map(c, n,
               ProductMap<decltype(a)>{L::template Ptr<const float>(c.inputs[0]),
                                       c.is_train ? L::template Ptr<const float>(c.inputs.back()) : nullptr,
                                       L::template Ptr<float>(c.outputs[0])});
      });
      return;
    }
    DropoutParams d;
    d.seed = c.seed;
    d.train = c.is_train && p_ != 0.0f;
    d.keep = 1.0f - p_;
    d.scale = d.keep > 0.0f ? 1.0f / d.keep : 0.0f;
    WithReq(c.req[0], [&](auto a) {
      L::Map(
          c, n,
          DropoutMap<decltype(a)>{d, L::template Ptr<const float>(c.inputs[0]), L::template Ptr<float>(c.outputs[0])});
    });
    if (c.outputs.size() > 1)
      WithReq(c.req[1], [&](auto a) {
        L::Map(c, n, DropoutMap<decltype(a)>{d, nullptr, L::template Ptr<float>(c.outputs[1])});
      });
  }

 private:
  bool backward_;
  float p_ = 0.5f;
};

/// Registers Dropout and its backward op for launcher L.
template <class L>
void RegisterDropoutKernels(sdk::KernelTable& t) {
  t.Add<DropoutKernel<L>>("Dropout", kF32);
  t.Add<DropoutKernel<L>>("_backward_Dropout", kF32);
}

}  // namespace weft::WEFT_GPU_NS
