// Pad (MXNet 1.9, alias pad) and _backward_Pad, float32 / float64: 4-D or 5-D data padded on
// its 2 or 3 spatial axes.
//
// Each output position maps to one source position per spatial axis, or to none: constant mode
// has none outside the data (the output there is constant_value), edge clamps to the border,
// reflect mirrors around the border element (pads smaller than the extent: i < 0 -> −i,
// i >= n -> 2(n−1) − i). The backward adds each output gradient into the source it was copied
// from, which is MXNet's gradient for all three modes.
#include <algorithm>
#include <string>
#include <vector>

#include "tensor_kernels.h"
#include "weft/sdk/ops/pad.hpp"

namespace weft::cpu::tensor {
namespace {

using sdk::PadMode;

class PadKernel {
 public:
  explicit PadKernel(const KernelSetup& s) : backward_(s.op_name.rfind("_backward_", 0) == 0) {
    s.ExpectCounts(1, 1);
    RequireSameDType(s);
    DispatchFloat(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    const TensorDesc& data = backward_ ? s.outputs[0] : s.inputs[0];
    const TensorDesc& padded = backward_ ? s.inputs[0] : s.outputs[0];
    const auto p = s.Params<sdk::PadParam>();
    mode_ = p.mode;
    value_ = p.constant_value;
    const std::vector<int64_t>& pw = p.pad_width;
    const int nd = data.ndim();
    if ((nd != 4 && nd != 5) || padded.ndim() != nd || pw.size() != static_cast<size_t>(2 * nd))
      Invalid(s, "needs 4-D or 5-D data " + sdk::FormatTuple(data.shape) + " with 2 pad_width entries per axis, got " +
                     sdk::FormatTuple(pw));
    planes_ = data.shape[0] * data.shape[1];
    sp_ = nd - 2;
    for (int a = 0; a < sp_; ++a) {
      const size_t i = static_cast<size_t>(a + 2);
      in_[a] = data.shape[i];
      out_[a] = padded.shape[i];
      before_[a] = pw[2 * i];
      if (out_[a] != in_[a] + pw[2 * i] + pw[2 * i + 1] || pw[2 * i] < 0 || pw[2 * i + 1] < 0)
        Invalid(s, "padded shape " + sdk::FormatTuple(padded.shape) + " does not match data " +
                       sdk::FormatTuple(data.shape) + " and pad_width " + sdk::FormatTuple(pw));
      if (mode_ != PadMode::kConstant && in_[a] == 0 && out_[a] > 0) Invalid(s, "cannot extend an empty axis");
      if (mode_ == PadMode::kReflect && (pw[2 * i] >= in_[a] || pw[2 * i + 1] >= in_[a]))
        Invalid(s, "reflect pads must be smaller than the axis extent");
    }
    if (padded.shape[0] != data.shape[0] || padded.shape[1] != data.shape[1])
      Invalid(s, "the batch and channel axes cannot be padded");
  }

  void Compute(const KernelCall& c) const {
    DispatchFloat("Pad", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = static_cast<const T*>(c.inputs[0].raw());
      T* dst = static_cast<T*>(c.outputs[0].raw());
      const int64_t in_plane = Plane(in_), out_plane = Plane(out_);
      if (!backward_) {
        sdk::WithReq(c.req[0], [&](auto assign) {
          Walk([&](int64_t p, int64_t o, int64_t i) {
            assign(dst[p * out_plane + o], i < 0 ? static_cast<T>(value_) : src[p * in_plane + i]);
          });
        });
        return;
      }
      if (sdk::IsNull(c.req[0])) return;
      if (c.req[0] != WEFT_REQ_ADD) std::fill(dst, dst + planes_ * in_plane, T(0));
      Walk([&](int64_t p, int64_t o, int64_t i) {
        if (i >= 0) dst[p * in_plane + i] += src[p * out_plane + o];
      });
    });
  }

 private:
  int64_t Plane(const int64_t* e) const {
    int64_t n = 1;
    for (int a = 0; a < sp_; ++a) n *= e[a];
    return n;
  }

  // Source index along one axis of output index o, −1 for a constant pad.
  int64_t Source(int a, int64_t o) const {
    int64_t i = o - before_[a];
    const int64_t n = in_[a];
    if (i >= 0 && i < n) return i;
    if (mode_ == PadMode::kConstant) return -1;
    if (mode_ == PadMode::kEdge) return i < 0 ? 0 : n - 1;
    return i < 0 ? -i : 2 * (n - 1) - i;
  }

  // visit(plane, output offset in the plane, source offset in the plane or −1) for every output.
  template <typename F>
  void Walk(F visit) const {
    const int64_t out_plane = Plane(out_);
    std::vector<int64_t> src(static_cast<size_t>(out_plane));
    int64_t idx[3] = {};
    for (int64_t o = 0; o < out_plane; ++o) {
      int64_t off = 0;
      for (int a = 0; a < sp_ && off >= 0; ++a) {
        const int64_t i = Source(a, idx[a]);
        off = i < 0 ? -1 : off * in_[a] + i;
      }
      src[static_cast<size_t>(o)] = off;
      for (int a = sp_ - 1; a >= 0; --a) {
        if (++idx[a] < out_[a]) break;
        idx[a] = 0;
      }
    }
    for (int64_t p = 0; p < planes_; ++p)
      for (int64_t o = 0; o < out_plane; ++o) visit(p, o, src[static_cast<size_t>(o)]);
  }

  bool backward_;
  PadMode mode_ = PadMode::kConstant;
  double value_ = 0;
  int sp_ = 0;
  int64_t planes_ = 0, in_[3] = {}, out_[3] = {}, before_[3] = {};
};

}  // namespace

void RegisterPadKernels(KernelTable& t) {
  AddAny<PadKernel>(t, "Pad", kFloatMask);
  AddAny<PadKernel>(t, "_backward_Pad", kFloatMask);
}

}  // namespace weft::cpu::tensor
