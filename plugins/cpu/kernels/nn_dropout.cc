// Dropout (MXNet 1.9, mode "training"): in training each element is kept with probability 1 − p
// and scaled by 1/(1 − p); the hidden output `mask` holds that factor (0 or 1/(1 − p)) per
// element and backward multiplies the out-grad by it. With is_train = 0 the op is the identity.
// The mask is a pure function of (call seed, element index) (UniformAt, nn_common.h), so a call is
// reproducible from its seed and independent of threading.
#include <cstdint>

#include "nn_common.h"
#include "weft/sdk/ops/dropout.hpp"

namespace weft::cpu {
namespace {

class DropoutForward {
 public:
  explicit DropoutForward(const KernelSetup& s) {
    s.ExpectCounts(1, -1);
    if (s.outputs.empty() || s.outputs.size() > 2) Invalid(s, "expects output and an optional mask output");
    RequireFloat32(s);
    for (const TensorDesc& o : s.outputs)
      if (o.size() != s.inputs[0].size()) Invalid(s, "outputs must have data's shape " + ShapeString(s.inputs[0]));
    // mode and axes are DefaultOnly: Params refuses other values.
    p_ = s.Params<weft::sdk::DropoutParam>().p;
  }
  void Compute(const KernelCall& c) const {
    const float* x = c.inputs[0].data<float>();
    float* y = c.outputs[0].data<float>();
    float* mask = c.outputs.size() > 1 ? c.outputs[1].data<float>() : nullptr;
    int32_t mask_req = c.outputs.size() > 1 ? c.req[1] : WEFT_REQ_NULL;
    const int64_t n = c.inputs[0].size();
    if (!c.is_train || p_ == 0.0f) {
      weft::sdk::StoreReq(c.req[0], y, x, n);
      weft::sdk::FillReq(mask_req, mask, 1.0f, n);
      return;
    }
    const float keep = 1.0f - p_;
    const float scale = keep > 0.0f ? 1.0f / keep : 0.0f;
    // The loop is instantiated once per (output req, mask req) pair; null becomes a skip.
    const bool write_out = c.req[0] != WEFT_REQ_NULL, write_mask = mask_req != WEFT_REQ_NULL;
    weft::sdk::WithReq(write_out ? c.req[0] : WEFT_REQ_WRITE, [&](auto assign_y) {
      weft::sdk::WithReq(write_mask ? mask_req : WEFT_REQ_WRITE, [&](auto assign_m) {
        for (int64_t i = 0; i < n; ++i) {
          float m = UniformAt(c.seed, static_cast<uint64_t>(i)) < keep ? scale : 0.0f;
          float xi = x[i];
          if (write_mask) assign_m(mask[i], m);
          if (write_out) assign_y(y[i], xi * m);
        }
      });
    });
  }

 private:
  float p_ = 0.5f;
};

// _backward_Dropout: inputs are out-grads first (output's grad is input 0) and the forward outputs
// last (the mask is the final input); output data grad = out_grad · mask, or out_grad itself when
// the backward pass runs with is_train = 0 (MXNet's DropoutOp::Backward applies the mask only in
// training; executor.backward(is_train=False)).
class DropoutBackward {
 public:
  explicit DropoutBackward(const KernelSetup& s) {
    s.ExpectCounts(-1, 1);
    RequireFloat32(s);
    if (s.inputs.size() < 2) Invalid(s, "expects out_grad and the mask");
    for (const TensorDesc& t : s.inputs)
      if (t.size() != s.outputs[0].size()) Invalid(s, "inputs must have data's shape " + ShapeString(s.outputs[0]));
  }
  void Compute(const KernelCall& c) const {
    const float* gy = c.inputs[0].data<float>();
    const float* mask = c.inputs.back().data<float>();
    float* gx = c.outputs[0].data<float>();
    if (!c.is_train) {
      weft::sdk::StoreReq(c.req[0], gx, gy, c.outputs[0].size());
      return;
    }
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      for (int64_t i = 0, n = c.outputs[0].size(); i < n; ++i) assign(gx[i], gy[i] * mask[i]);
    });
  }
};

}  // namespace

void RegisterDropout(KernelTable& t) {
  t.Add<DropoutForward>("Dropout", kF32);
  t.Add<DropoutBackward>("_backward_Dropout", kF32);
}

}  // namespace weft::cpu
