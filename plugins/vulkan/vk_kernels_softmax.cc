// vulkan plugin — the softmax family (docs/adding-an-op.md, "Op families"): softmax and
// log_softmax forward and backward (shaders/softmax.comp, _backward_softmax.comp), SoftmaxOutput
// forward and its own gradient (shaders/SoftmaxOutput.comp, _backward_SoftmaxOutput.comp).
// Semantics as the CPU plugin's kernels (MXNet 1.9).
#include <string>

#include "vk_kernels.h"
#include "weft/sdk/ops/softmax.hpp"

namespace weft::vk {
namespace {

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

// ---- SoftmaxOutput -------------------------------------------------------------------------------

struct SoftmaxOutputParams {
  uint32_t n = 0, c = 0, norm = 0, use_ignore = 0;
  float grad_scale = 1.0f, ignore_label = -1.0f;
};

SoftmaxOutputParams ParseSoftmaxOutput(const sdk::KernelSetup& s, const sdk::TensorDesc& data,
                                       const sdk::TensorDesc& label) {
  SoftmaxOutputParams p;
  const auto a = s.Params<sdk::SoftmaxOutputParam>();
  if (a.multi_output) Unsupported(s, "multi_output=True");
  // The shaders take one label per softmax row: forward and backward rows the same, contiguous.
  const sdk::SoftmaxOutputLayout l = sdk::LayOutSoftmaxOutput(s.op_name, data.shape, label.shape, a);
  if (l.prob_label) Unsupported(s, "a probability label (of the output's shape " + ShapeText(label) + ")");
  if (l.fwd.inner != 1 || l.bwd.outer != l.fwd.outer)
    Invalid(s, "label " + ShapeText(label) + " must hold one class per row of " + ShapeText(data));
  const int64_t n = l.fwd.outer, c = l.fwd.len;
  p.n = static_cast<uint32_t>(n);
  p.c = static_cast<uint32_t>(c);
  p.grad_scale = a.grad_scale;
  p.ignore_label = a.ignore_label;
  p.use_ignore = a.use_ignore ? 1 : 0;
  p.norm = static_cast<uint32_t>(a.normalization);  // SoftmaxOutput.comp: 0 null, 1 batch, 2 valid
  return p;
}

class SoftmaxOutputForward {
 public:
  explicit SoftmaxOutputForward(const sdk::KernelSetup& s) {
    s.ExpectCounts(2, 1);
    RequireFloat32(s);
    p_ = ParseSoftmaxOutput(s, s.inputs[0], s.inputs[1]);
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    struct {
      uint32_t rows, cols, add;
    } push{p_.n, p_.c, AddFlag(c.req[0])};
    const Binding b[2] = {In(c.inputs[0]), Out(c.outputs[0])};
    Dispatch(c, Launch{"SoftmaxOutput", {}, (p_.n + 63) / 64}, b, push);
  }

 private:
  SoftmaxOutputParams p_;
};

// Inputs out_grad (ignored), data, label, output; outputs data grad, label grad (0).
class SoftmaxOutputBackward {
 public:
  explicit SoftmaxOutputBackward(const sdk::KernelSetup& s) {
    s.ExpectCounts(4, 2);
    RequireFloat32(s);
    p_ = ParseSoftmaxOutput(s, s.inputs[1], s.inputs[2]);
  }
  // One word: the shader's bad-label report.
  uint64_t WorkspaceBytes() const { return 4; }
  void Compute(const sdk::DeviceCall& c) const {
    if (!sdk::IsNull(c.req[0]) && p_.n * p_.c > 0) {
      struct {
        uint32_t rows, cols, add, use_ignore, norm;
        float grad_scale, ignore_label;
      } push{p_.n, p_.c, AddFlag(c.req[0]), p_.use_ignore, p_.norm, p_.grad_scale, p_.ignore_label};
      const Binding bad = Workspace(c, true);
      ZeroFill(c, bad, 4);
      const Binding b[4] = {In(c.inputs[2]), In(c.inputs[3]), Out(c.outputs[0]), bad};
      Dispatch(c, Launch{"_backward_SoftmaxOutput", {}, (p_.n * p_.c + 63) / 64}, b, push);
      ReportBadLabel(c, bad);
    }
    ZeroOutput(c, c.outputs[1], c.req[1]);
  }

 private:
  // Copies the report word to staging; once the batch has run, a non-zero word becomes the
  // stream's sticky error (Gpu::Retire keeps what the host work throws), as the cpu kernel's
  // error for the same labels.
  void ReportBadLabel(const sdk::DeviceCall& c, const Binding& bad) const {
    VulkanDevice& dev = static_cast<const VkKernelTable*>(c.table)->device();
    const uint32_t classes = p_.c;
    dev.OnStream(c.device, c.stream, [&](Gpu& g, StreamState& s) {
      auto [src, at] = g.Locate(bad.ptr, bad.offset, 4, "SoftmaxOutput report");
      RawBuffer st = g.TakeStaging(4);
      g.KeepStaging(s, st);
      const VkBuffer r[1] = {src->buffer}, w[1] = {st.buffer};
      g.Record(s, r, w, [&](VkCommandBuffer cb) {
        VkBufferCopy region{at, 0, 4};
        g.api().vkCmdCopyBuffer(cb, src->buffer, st.buffer, 1, &region);
      });
      const void* word = st.mapped;
      const std::string dev_name = g.name();
      g.After(
          s,
          [word, classes, dev_name] {
            uint32_t row = 0;
            std::memcpy(&row, word, 4);
            if (row != 0)
              throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "SoftmaxOutput on " + dev_name + ": the label of row " +
                                                              std::to_string(row - 1) + " is outside [0, " +
                                                              std::to_string(classes) +
                                                              ") (set use_ignore/ignore_label to skip it)");
          },
          false);
    });
  }

 private:
  SoftmaxOutputParams p_;
};

}  // namespace

void RegisterSoftmaxKernels(VkKernelTable& t) {
  const uint64_t f32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
  for (const char* op : {"softmax", "log_softmax"}) {
    AddWithShaders<SoftmaxKernel>(t, op, f32, {"softmax"});
    AddWithShaders<SoftmaxKernel>(t, std::string("_backward_") + op, f32, {"_backward_softmax"});
  }
  AddWithShaders<SoftmaxOutputForward>(t, "SoftmaxOutput", f32, {"SoftmaxOutput"});
  AddWithShaders<SoftmaxOutputBackward>(t, "_backward_SoftmaxOutput", f32, {"_backward_SoftmaxOutput"});
}

}  // namespace weft::vk
