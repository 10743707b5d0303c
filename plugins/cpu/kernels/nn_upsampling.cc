// UpSampling with sample_type nearest (MXNet 1.9) and its backward, float32 / float64.
//
// Input i (N, C_i, h_i, w_i) is repeated f_i = H / h_i times along both spatial axes of the
// (N, ·, H, W) output: output[n, c, y, x] = input[n, c, ⌊y / f_i⌋, ⌊x / f_i⌋]. multi_input_mode
// concat places the inputs one after another along channels, sum adds them. The backward gives
// each input the sum of the output gradients of its f_i × f_i block (at its channel offset).
#include <string>
#include <vector>

#include "tensor_kernels.h"

namespace weft::cpu::tensor {
namespace {

class UpSamplingKernel {
 public:
  explicit UpSamplingKernel(const KernelSetup& s) : backward_(s.op_name.rfind("_backward_", 0) == 0) {
    if (s.attrs.GetString("sample_type", "nearest") != "nearest")
      Unsupported(s, "only sample_type=nearest is implemented");
    const int64_t n = s.attrs.GetInt("num_args", 1);
    s.ExpectCounts(backward_ ? 1 : static_cast<int>(n), backward_ ? static_cast<int>(n) : 1);
    RequireSameDType(s);
    DispatchFloat(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    sum_ = s.attrs.GetString("multi_input_mode", "concat") == "sum";
    const TensorDesc& big = backward_ ? s.inputs[0] : s.outputs[0];
    const std::vector<TensorDesc>& parts = backward_ ? s.outputs : s.inputs;
    if (big.ndim() != 4) Invalid(s, "output must be 4-D");
    batch_ = big.shape[0], channels_ = big.shape[1], h_ = big.shape[2], w_ = big.shape[3];
    int64_t offset = 0;
    for (const TensorDesc& p : parts) {
      if (p.ndim() != 4 || p.shape[0] != batch_ || p.shape[2] == 0 || h_ % p.shape[2] != 0 ||
          p.shape[3] * (h_ / p.shape[2]) != w_)
        Invalid(s, "input " + sdk::FormatTuple(p.shape) + " does not upsample to " + sdk::FormatTuple(big.shape));
      parts_.push_back({p.shape[1], p.shape[2], p.shape[3], h_ / p.shape[2], sum_ ? 0 : offset});
      offset += p.shape[1];
      if (sum_ && p.shape[1] != channels_) Invalid(s, "multi_input_mode=sum needs equal channels");
    }
    if (!sum_ && offset != channels_) Invalid(s, "the inputs' channels do not add up to the output's");
  }

  void Compute(const KernelCall& c) const {
    DispatchFloat("UpSampling", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (!backward_) {
        T* y = static_cast<T*>(c.outputs[0].raw());
        for (size_t i = 0; i < parts_.size(); ++i) {
          // Summed inputs after the first add to what the first wrote.
          const int32_t req = sum_ && i > 0 ? (sdk::IsNull(c.req[0]) ? WEFT_REQ_NULL : WEFT_REQ_ADD) : c.req[0];
          const T* x = static_cast<const T*>(c.inputs[i].raw());
          sdk::WithReq(req, [&](auto assign) {
            Walk(parts_[i], [&](int64_t big, int64_t small) { assign(y[big], x[small]); });
          });
        }
        return;
      }
      const T* g = static_cast<const T*>(c.inputs[0].raw());
      for (size_t i = 0; i < parts_.size(); ++i) {
        if (sdk::IsNull(c.req[i])) continue;
        const Part& p = parts_[i];
        T* gx = static_cast<T*>(c.outputs[i].raw());
        std::vector<T> acc(static_cast<size_t>(batch_ * p.c * p.h * p.w), T(0));
        Walk(p, [&](int64_t big, int64_t small) { acc[static_cast<size_t>(small)] += g[big]; });
        sdk::WithReq(c.req[i], [&](auto assign) {
          for (size_t e = 0; e < acc.size(); ++e) assign(gx[e], acc[e]);
        });
      }
    });
  }

 private:
  struct Part {
    int64_t c, h, w, factor, offset;
  };

  // visit(output offset, input offset) for every output element part p covers.
  template <typename F>
  void Walk(const Part& p, F visit) const {
    for (int64_t n = 0; n < batch_; ++n)
      for (int64_t ch = 0; ch < p.c; ++ch) {
        const int64_t out_plane = ((n * channels_) + p.offset + ch) * h_ * w_;
        const int64_t in_plane = (n * p.c + ch) * p.h * p.w;
        for (int64_t y = 0; y < h_; ++y)
          for (int64_t x = 0; x < w_; ++x)
            visit(out_plane + y * w_ + x, in_plane + (y / p.factor) * p.w + x / p.factor);
      }
  }

  bool backward_;
  bool sum_ = false;
  int64_t batch_ = 0, channels_ = 0, h_ = 0, w_ = 0;
  std::vector<Part> parts_;
};

}  // namespace

void RegisterUpSamplingKernels(KernelTable& t) {
  t.Add<UpSamplingKernel>("UpSampling", kFloatMask);
  t.Add<UpSamplingKernel>("_backward_UpSampling", kFloatMask);
}

}  // namespace weft::cpu::tensor
