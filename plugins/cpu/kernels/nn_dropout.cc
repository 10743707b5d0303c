// Dropout (MXNet 1.9, mode "training"): in training each element is kept with probability 1 − p
// and scaled by 1/(1 − p); the hidden output `mask` holds that factor (0 or 1/(1 − p)) per
// element and backward multiplies the out-grad by it. With is_train = 0 the op is the identity.
// The mask is a pure function of (call seed, element index) (UniformAt, nn_common.h), so a call is
// reproducible from its seed and independent of threading. With `axes` (MXNet's variational
// dropout) the mask has data's shape with those axes 1: one draw per mask element, broadcast
// along them in the forward and the backward (MXNet's BinaryBroadcastCompute of data and mask).
// A blocked data_format (the executor's blocked activations, nn_blocked_act.h): the identity
// copies the same bytes; a training pass draws the mask for NCHW positions on plain copies of data
// and the output, so it equals the plain graph's.
#include <cstdint>
#include <vector>

#include "nn_blocked_act.h"
#include "nn_common.h"
#include "weft/sdk/ops/dropout.hpp"

namespace weft::cpu {
namespace {

// Element i of data -> its mask element, for a mask of data's rank with some axes of extent 1.
class MaskIndex {
 public:
  MaskIndex() = default;
  MaskIndex(std::span<const int64_t> data, std::span<const int64_t> mask) : dims_(data.begin(), data.end()) {
    int64_t stride = 1;
    strides_.assign(dims_.size(), 0);
    for (size_t a = dims_.size(); a-- > 0;) {
      strides_[a] = mask[a] == 1 ? 0 : stride;
      stride *= mask[a];
    }
  }
  int64_t operator()(int64_t i) const {
    int64_t m = 0;
    for (size_t a = dims_.size(); a-- > 0;) {
      m += (i % dims_[a]) * strides_[a];
      i /= dims_[a];
    }
    return m;
  }

 private:
  std::vector<int64_t> dims_, strides_;
};

// Shared-mask forward: draws the mask, then broadcasts it over data (both under their reqs).
void SharedMaskForward(const KernelCall& c, const MaskIndex& at, float p, float* mask, int64_t mask_size,
                       const float* x, float* y) {
  const float keep = 1.0f - p, scale = keep > 0.0f ? 1.0f / keep : 0.0f;
  for (int64_t j = 0; j < mask_size; ++j) mask[j] = UniformAt(c.seed, static_cast<uint64_t>(j)) < keep ? scale : 0.0f;
  weft::sdk::WithReq(c.req[0], [&](auto assign) {
    for (int64_t i = 0, n = c.inputs[0].size(); i < n; ++i) assign(y[i], x[i] * mask[at(i)]);
  });
}

class DropoutForward {
 public:
  explicit DropoutForward(const KernelSetup& s) {
    s.ExpectCounts(1, -1);
    if (s.outputs.empty() || s.outputs.size() > 2) Invalid(s, "expects output and an optional mask output");
    RequireFloat32(s);
    const auto p = s.Params<weft::sdk::DropoutParam>();  // mode is DefaultOnly: Params refuses others
    p_ = p.p;
    if (s.outputs[0].size() != s.inputs[0].size())
      Invalid(s, "output must have data's shape " + ShapeString(s.inputs[0]));
    if (!p.axes.empty()) {
      const weft::sdk::Tuple mask = p.MaskShape(s.inputs[0].shape);
      if (s.outputs.size() != 2 || s.outputs[1].shape != mask)
        Invalid(s, "with axes " + weft::sdk::FormatTuple(p.axes) + " the mask output must be " +
                       weft::sdk::FormatTuple(mask));
      shared_ = MaskIndex(s.inputs[0].shape, mask);
      mask_size_ = weft::sdk::ShapeSize(mask);
    } else if (s.outputs.size() > 1 && s.outputs[1].size() != s.inputs[0].size()) {
      Invalid(s, "mask output must have data's shape " + ShapeString(s.inputs[0]));
    }
    if (p.data_format != weft::sdk::ActFormat::kPlain) {
      CheckBlockedData(s, s.inputs[0], p.data_format);
      const auto& d = s.inputs[0].shape;
      const dnnl::memory::desc plain({d[0], d[1], d[2], d[3]}, dnnl::memory::data_type::f32,
                                     dnnl::memory::format_tag::nchw);
      plain_md_ = plain;
      blocked_md_ = ActDesc(plain, p.data_format);
    }
  }
  // With axes the mask is drawn into scratch when the caller does not keep it.
  uint64_t WorkspaceBytes() const { return static_cast<uint64_t>(mask_size_) * sizeof(float); }
  void Compute(const KernelCall& c) const {
    const float* x = c.inputs[0].data<float>();
    float* y = c.outputs[0].data<float>();
    if (blocked_md_ == plain_md_ || !c.is_train || p_ == 0.0f) return Run(c, x, y);
    // Training on blocked tensors: the plain pass between relayouts (an add-to reads y first).
    const size_t n = static_cast<size_t>(c.inputs[0].size());
    std::vector<float> x_plain(n), y_plain(n);
    Relayout(blocked_md_, x, plain_md_, x_plain.data());
    if (c.req[0] == WEFT_REQ_ADD) Relayout(blocked_md_, y, plain_md_, y_plain.data());
    Run(c, x_plain.data(), y_plain.data());
    if (!weft::sdk::IsNull(c.req[0])) Relayout(plain_md_, y_plain.data(), blocked_md_, y);
  }

 private:
  // The forward on data `x` and output `y` laid out alike (NCHW in a training pass).
  void Run(const KernelCall& c, const float* x, float* y) const {
    if (mask_size_ > 0 && c.is_train && p_ != 0.0f) {
      const bool keep_mask = c.req[1] == WEFT_REQ_WRITE && c.outputs[1].raw() != nullptr;
      float* mask = keep_mask ? c.outputs[1].data<float>() : c.Workspace<float>(static_cast<size_t>(mask_size_));
      SharedMaskForward(c, shared_, p_, mask, mask_size_, x, y);
      if (!keep_mask && c.req[1] != WEFT_REQ_NULL)
        weft::sdk::StoreReq(c.req[1], c.outputs[1].data<float>(), mask, mask_size_);
      return;
    }
    float* mask = c.outputs.size() > 1 ? c.outputs[1].data<float>() : nullptr;
    int32_t mask_req = c.outputs.size() > 1 ? c.req[1] : WEFT_REQ_NULL;
    const int64_t n = c.inputs[0].size();
    if (!c.is_train || p_ == 0.0f) {
      weft::sdk::StoreReq(c.req[0], y, x, n);
      weft::sdk::FillReq(mask_req, mask, 1.0f, c.outputs.size() > 1 ? c.outputs[1].size() : 0);
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

  float p_ = 0.5f;
  MaskIndex shared_;
  int64_t mask_size_ = 0;                     // > 0 with axes
  dnnl::memory::desc plain_md_, blocked_md_;  // equal (empty) unless data_format is blocked
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
    const auto p = s.Params<weft::sdk::DropoutParam>();
    // Blocked activations are an inference executor's (its graphs have no gradient).
    if (p.data_format != weft::sdk::ActFormat::kPlain)
      Invalid(s, "has no gradient on a blocked data_format; bind the symbol before fusion (data_format plain)");
    const weft::sdk::Tuple mask = p.MaskShape(s.outputs[0].shape);
    if (s.inputs.back().shape != mask) Invalid(s, "the mask must be " + weft::sdk::FormatTuple(mask));
    if (s.inputs[0].size() != s.outputs[0].size())
      Invalid(s, "out_grad must have data's shape " + ShapeString(s.outputs[0]));
    shared_ = !p.axes.empty();
    if (shared_) at_ = MaskIndex(s.outputs[0].shape, mask);
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
      if (shared_) {
        for (int64_t i = 0, n = c.outputs[0].size(); i < n; ++i) assign(gx[i], gy[i] * mask[at_(i)]);
      } else {
        for (int64_t i = 0, n = c.outputs[0].size(); i < n; ++i) assign(gx[i], gy[i] * mask[i]);
      }
    });
  }

 private:
  bool shared_ = false;
  MaskIndex at_;
};

}  // namespace

void RegisterDropout(KernelTable& t) {
  t.Add<DropoutForward>("Dropout", kF32);
  t.Add<DropoutBackward>("_backward_Dropout", kF32);
}

}  // namespace weft::cpu
