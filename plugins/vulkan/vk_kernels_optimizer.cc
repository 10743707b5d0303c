// vulkan plugin — the optimizer family (docs/adding-an-op.md, "Op families"): sgd_update,
// sgd_mom_update (shaders/sgd_update.comp), adam_update, nag_mom_update, rmsprop_update and
// rmspropalex_update (shaders named by op; rmspropalex shares rmsprop_update.comp). Semantics as
// the CPU plugin's kernels (MXNet 1.9).
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "vk_kernels.h"
#include "weft/sdk/ops/optimizer.hpp"

namespace weft::vk {
namespace {

// sgd_update (inputs weight, grad) and sgd_mom_update (aux mom), MXNet's attributes.
class SgdKernel {
 public:
  explicit SgdKernel(const sdk::KernelSetup& s) : mom_(s.op_name == "sgd_mom_update") {
    s.ExpectCounts(2, 1, mom_ ? 1 : 0);
    RequireFloat32(s);
    for (const auto* list : {&s.inputs, &s.outputs, &s.aux})
      for (const sdk::TensorDesc& t : *list)
        if (t.size() != s.inputs[0].size()) Invalid(s, "weight, grad, state and output must have one size");
    const sdk::UpdateFields p = sdk::UpdateParamsOf(s);
    lr_ = p.lr, wd_ = p.wd, rescale_ = p.rescale_grad, clip_ = p.clip_gradient, momentum_ = p.momentum;
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    const int64_t n = c.outputs[0].size();
    struct {
      uint32_t n, add;
      float lr, wd, rescale, clip, momentum;
    } push{static_cast<uint32_t>(n), AddFlag(c.req[0]), lr_, wd_, rescale_, clip_, momentum_};
    const Binding b[4] = {In(c.inputs[0]), In(c.inputs[1]), mom_ ? Out(c.aux[0]) : In(c.outputs[0]), Out(c.outputs[0])};
    const int32_t spec[1] = {mom_ ? 1 : 0};
    DispatchElementwise(c, "sgd_update", spec, b, push);
  }

 private:
  bool mom_;
  float lr_ = 0, wd_ = 0, rescale_ = 1, clip_ = -1, momentum_ = 0;
};

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

}  // namespace

void RegisterOptimizerKernels(VkKernelTable& t) {
  const uint64_t f32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
  AddWithShaders<SgdKernel>(t, "sgd_update", f32, {"sgd_update"});
  AddWithShaders<SgdKernel>(t, "sgd_mom_update", f32, {"sgd_update"});
  // rmspropalex_update runs rmsprop_update.comp (UpdateKernel's shader choice).
  for (const char* op : {"adam_update", "nag_mom_update", "rmsprop_update"})
    AddWithShaders<UpdateKernel>(t, op, f32, {op});
  AddWithShaders<UpdateKernel>(t, "rmspropalex_update", f32, {"rmsprop_update"});
}

}  // namespace weft::vk
