// vulkan plugin — ops whose values are indices: one_hot, argmax and Embedding (forward and the
// weight gradient), float32 only (indices stored as float32, as the conformance cases give them).
// Semantics as the CPU plugin's index.cc (MXNet 1.9).
#include <string>

#include "vk_kernels.h"
#include "weft/sdk/ops/index.hpp"

namespace weft::vk {
namespace {

class OneHotKernel {
 public:
  explicit OneHotKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    const auto p = s.Params<sdk::OneHotParam>();
    depth_ = p.depth;
    on_ = static_cast<float>(p.on_value);
    off_ = static_cast<float>(p.off_value);
    p.CheckShapes(s.op_name, s.inputs[0].shape, s.outputs[0].shape);
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0]) || c.outputs[0].size() == 0) return;
    struct {
      uint32_t n, depth, add;
      float on, off;
    } push{U32(c.inputs[0].size()), U32(depth_), AddFlag(c.req[0]), on_, off_};
    const Binding b[2] = {In(c.inputs[0]), Out(c.outputs[0])};
    Dispatch(c, Launch{"one_hot", {}, Groups64(c.outputs[0].size())}, b, push);
  }

 private:
  int64_t depth_ = 0;
  float on_ = 1, off_ = 0;
};

class ArgmaxKernel {
 public:
  explicit ArgmaxKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    const sdk::TensorDesc& x = s.inputs[0];
    if (const std::optional<int64_t> axis = s.Params<sdk::ArgmaxParam>().axis) {
      int64_t a = *axis < 0 ? *axis + x.ndim() : *axis;
      if (a < 0 || a >= x.ndim()) Invalid(s, "axis " + std::to_string(*axis) + " is out of range");
      for (int d = 0; d < a; ++d) outer_ *= x.dim(d);
      n_ = x.dim(static_cast<int>(a));
      for (int d = static_cast<int>(a) + 1; d < x.ndim(); ++d) inner_ *= x.dim(d);
    } else {
      n_ = x.size();
    }
    if (n_ == 0 && outer_ * inner_ > 0) Invalid(s, "argmax over an empty axis");
    if (s.outputs[0].size() != outer_ * inner_) Invalid(s, "output size differs from the reduced shape's");
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0]) || c.outputs[0].size() == 0) return;
    struct {
      uint32_t outer, n, inner, add;
    } push{U32(outer_), U32(n_), U32(inner_), AddFlag(c.req[0])};
    const Binding b[2] = {In(c.inputs[0]), Out(c.outputs[0])};
    Dispatch(c, Launch{"argmax", {}, Groups64(outer_ * inner_)}, b, push);
  }

 private:
  int64_t outer_ = 1, n_ = 1, inner_ = 1;
};

// Embedding: data (indices), weight (input_dim, output_dim) -> data.shape + (output_dim,).
// _backward_Embedding: out_grad, data, weight -> zeros for data, the summed rows for weight.
class EmbeddingKernel {
 public:
  explicit EmbeddingKernel(const sdk::KernelSetup& s) : backward_(s.op_name.starts_with("_backward_")) {
    s.ExpectCounts(backward_ ? 3 : 2, backward_ ? 2 : 1);
    RequireFloat32(s);
    const sdk::TensorDesc& data = s.inputs[backward_ ? 1 : 0];
    const sdk::TensorDesc& weight = s.inputs[backward_ ? 2 : 1];
    if (weight.ndim() != 2) Invalid(s, "weight must be 2-d (input_dim, output_dim)");
    rows_ = weight.dim(0);
    dim_ = weight.dim(1);
    if (rows_ == 0) Invalid(s, "weight has no rows (input_dim = 0)");
    n_ = data.size();
    const sdk::TensorDesc& out = backward_ ? s.inputs[0] : s.outputs[0];
    if (out.size() != n_ * dim_) Invalid(s, "output must hold output_dim values per index of data");
    if (backward_ && (s.outputs[0].size() != n_ || s.outputs[1].size() != rows_ * dim_))
      Invalid(s, "gradients must have the shapes of data and weight");
  }
  void Compute(const sdk::DeviceCall& c) const {
    struct {
      uint32_t n, rows, dim, add;
    } push{U32(n_), U32(rows_), U32(dim_), 0};
    if (!backward_) {
      if (sdk::IsNull(c.req[0]) || n_ * dim_ == 0) return;
      push.add = AddFlag(c.req[0]);
      const Binding b[3] = {In(c.inputs[0]), In(c.inputs[1]), Out(c.outputs[0])};
      Dispatch(c, Launch{"Embedding", {}, Groups64(n_ * dim_)}, b, push);
      return;
    }
    ZeroOutput(c, c.outputs[0], c.req[0]);  // indices have no gradient
    if (sdk::IsNull(c.req[1]) || rows_ * dim_ == 0) return;
    push.add = AddFlag(c.req[1]);
    const Binding b[3] = {In(c.inputs[0]), In(c.inputs[1]), Out(c.outputs[1])};
    Dispatch(c, Launch{"_backward_Embedding", {}, Groups64(rows_ * dim_)}, b, push);
  }

 private:
  bool backward_;
  int64_t rows_ = 0, dim_ = 0, n_ = 0;
};

}  // namespace

void RegisterIndexKernels(VkKernelTable& t) {
  const uint64_t f32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
  AddWithShaders<OneHotKernel>(t, "one_hot", f32, {"one_hot"});
  AddWithShaders<ArgmaxKernel>(t, "argmax", f32, {"argmax"});
  AddWithShaders<EmbeddingKernel>(t, "Embedding", f32, {"Embedding"});
  AddWithShaders<EmbeddingKernel>(t, "_backward_Embedding", f32, {"_backward_Embedding"});
}

}  // namespace weft::vk
