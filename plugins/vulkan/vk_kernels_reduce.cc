// vulkan plugin — the reduce family (docs/adding-an-op.md, "Op families"): sum, mean and max over
// `axis` with keepdims, forward and backward (shaders/broadcast_reduce.comp through vk_strided.h).
// Semantics as the CPU plugin's kernels (MXNet 1.9).
#include <string>

#include "vk_strided.h"
#include "weft/sdk/ops/reduce.hpp"

namespace weft::vk {
namespace {

std::vector<bool> ReducedAxes(const sdk::KernelSetup& s, size_t nd) {
  const auto p = s.Params<sdk::ReduceParam>();
  if (p.exclude) Unsupported(s, "exclude=True");
  const std::vector<int64_t>& axes = p.axis;
  std::vector<bool> red(nd, axes.empty());
  for (int64_t a : axes) {
    if (a < -static_cast<int64_t>(nd) || a >= static_cast<int64_t>(nd))
      Invalid(s, "axis " + std::to_string(a) + " out of range for " + std::to_string(nd) + " axes");
    red[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(nd) : a)] = true;
  }
  return red;
}

// Data-shaped index space; the reduced tensor has stride 0 along reduced axes.
Dims ReducedStrides(const Dims& data, const std::vector<bool>& red) {
  Dims kept = data;
  for (size_t d = 0; d < data.size(); ++d)
    if (red[d]) kept[d] = 1;
  Dims s = RowMajor(kept);
  for (size_t d = 0; d < data.size(); ++d)
    if (red[d]) s[d] = 0;
  return s;
}

int64_t ReducedCount(const Dims& data, const std::vector<bool>& red) {
  int64_t n = 1;
  for (size_t d = 0; d < data.size(); ++d)
    if (red[d]) n *= data[d];
  return n;
}

// sum / mean / max: inputs data; _backward_sum / _backward_mean: out_grad; _backward_max:
// out_grad, data, output (the gradient goes to every element equal to the maximum).
class ReduceKernel {
 public:
  explicit ReduceKernel(const sdk::KernelSetup& s) : backward_(s.op_name.starts_with("_backward_")) {
    const std::string base = backward_ ? s.op_name.substr(10) : s.op_name;
    kind_ = base == "sum" ? 0 : base == "mean" ? 1 : 2;
    RequireFloat32(s);
    s.ExpectCounts(backward_ && kind_ == 2 ? 3 : 1, 1);
    data_ = ShapeOf(backward_ ? s.outputs[0] : s.inputs[0]);
    red_ = ReducedAxes(s, data_.size());
    const int64_t kept = (backward_ ? s.inputs[0] : s.outputs[0]).size();
    const int64_t full = (backward_ ? s.outputs[0] : s.inputs[0]).size();
    if (kept * ReducedCount(data_, red_) != full) Invalid(s, "reduced tensor does not match data and axis");
    CheckAxes(s, Plan());
  }
  Strided Plan() const {
    const Dims rm = RowMajor(data_), rs = ReducedStrides(data_, red_);
    if (!backward_) return Strided(data_, rm, rm, Dims(data_.size(), 0), rs, red_);
    // Backward: data-shaped output; X = out_grad and R = the maximum broadcast back, L = data
    // (max) or out_grad again (sum, mean: it must be walked like X to stay in bounds).
    return Strided(data_, rs, kind_ == 2 ? rm : rs, rs, rm, std::vector<bool>(data_.size(), false));
  }
  void Compute(const sdk::DeviceCall& c) const {
    const int64_t count = ReducedCount(data_, red_);
    const float scale = kind_ == 1 && count > 0 ? 1.0f / static_cast<float>(count) : 1.0f;
    const Binding x = In(c.inputs[0]);
    if (!backward_) {
      RunStrided(c, kind_ == 2 ? kMax : kCopy, Plan(), x, x, x, Out(c.outputs[0]), c.req[0], scale);
      return;
    }
    if (kind_ == 2)
      RunStrided(c, kEq, Plan(), x, In(c.inputs[1]), In(c.inputs[2]), Out(c.outputs[0]), c.req[0]);
    else
      RunStrided(c, kCopy, Plan(), x, x, x, Out(c.outputs[0]), c.req[0], scale);
  }

 private:
  bool backward_;
  int kind_ = 0;
  Dims data_;
  std::vector<bool> red_;
};

}  // namespace

void RegisterReduceKernels(VkKernelTable& t) {
  const uint64_t f32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
  for (const char* op : {"sum", "mean", "max"}) {
    AddWithShaders<ReduceKernel>(t, op, f32, {"broadcast_reduce"});
    AddWithShaders<ReduceKernel>(t, std::string("_backward_") + op, f32, {"broadcast_reduce"});
  }
}

}  // namespace weft::vk
