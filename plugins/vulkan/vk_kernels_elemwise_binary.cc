// vulkan plugin — the elemwise family's ops on equal shapes (docs/adding-an-op.md, "Op families"):
// elemwise_add / _sub / _mul / _div (shaders/elemwise_binary.comp) and add_n (shaders/add_n.comp).
// Their gradients are graph ops (copies, products), not kernels of their own. Semantics as the CPU
// plugin's kernels (MXNet 1.9).
#include <string>

#include "vk_kernels.h"

namespace weft::vk {
namespace {

// elemwise_add / _sub / _mul / _div on equal shapes.
class ElemwiseKernel {
 public:
  explicit ElemwiseKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(2, 1);
    RequireFloat32(s);
    if (s.inputs[0].shape != s.inputs[1].shape || s.outputs[0].size() != s.inputs[0].size())
      Invalid(s, "inputs and output must have one shape");
    const std::string& op = s.op_name;
    op_ = op == "elemwise_add" ? 0 : op == "elemwise_sub" ? 1 : op == "elemwise_mul" ? 2 : 3;
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    const int64_t n = c.outputs[0].size();
    struct {
      uint32_t n, add;
    } push{static_cast<uint32_t>(n), AddFlag(c.req[0])};
    const Binding b[3] = {In(c.inputs[0]), In(c.inputs[1]), Out(c.outputs[0])};
    const int32_t spec[1] = {op_};
    DispatchElementwise(c, "elemwise_binary", spec, b, push);
  }

 private:
  int32_t op_ = 0;
};

// add_n: out = sum of the inputs.
class AddNKernel {
 public:
  explicit AddNKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(-1, 1);
    RequireFloat32(s);
    if (s.inputs.empty()) Invalid(s, "needs at least one input");
    for (const sdk::TensorDesc& t : s.inputs)
      if (t.size() != s.outputs[0].size()) Invalid(s, "every input must have the output's size");
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    for (size_t i = 0; i < c.inputs.size(); ++i)
      AddInto(c, In(c.inputs[i]), Out(c.outputs[0]), c.outputs[0].size(), i > 0 || c.req[0] == WEFT_REQ_ADD);
  }
};

}  // namespace

void RegisterElemwiseBinaryKernels(VkKernelTable& t) {
  const uint64_t f32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
  for (const char* op : {"elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div"})
    AddWithShaders<ElemwiseKernel>(t, op, f32, {"elemwise_binary"});
  AddWithShaders<AddNKernel>(t, "add_n", f32, {"add_n"});
}

}  // namespace weft::vk
