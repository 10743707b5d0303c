// UpSampling (MXNet 1.9) and its backward: sample_type nearest in float32 / float64, bilinear in
// float32.
//
// nearest: input i (N, C_i, h_i, w_i) is repeated f_i = H / h_i times along both spatial axes of the
// (N, ·, H, W) output: output[n, c, y, x] = input[n, c, ⌊y / f_i⌋, ⌊x / f_i⌋]. multi_input_mode
// concat places the inputs one after another along channels, sum adds them. The backward gives
// each input the sum of the output gradients of its f_i × f_i block (at its channel offset).
//
// bilinear: MXNet runs a Deconvolution with one group per channel, kernel k = 2·scale − scale % 2,
// stride scale, pad p = ⌈(scale − 1) / 2⌉ and the weight input (C, 1, k, k):
//   y[n, c, i·scale − p + ky, j·scale − p + kx] += x[n, c, i, j] · w[c, 0, ky, kx]
// (positions outside the output dropped); the backward gives x the matching sums of out_grad · w
// and w the sums of out_grad · x over the batch. float32 / float64.
#include <optional>
#include <string>
#include <vector>

#include "tensor_kernels.h"
#include "weft/sdk/ops/upsampling.hpp"

namespace weft::cpu::tensor {
namespace {

class NearestUpSampling {
 public:
  explicit NearestUpSampling(const KernelSetup& s) : backward_(s.op_name.rfind("_backward_", 0) == 0) {
    const auto p = s.Params<sdk::UpSamplingParam>();
    const int64_t n = p.num_args;
    s.ExpectCounts(backward_ ? 1 : static_cast<int>(n), backward_ ? static_cast<int>(n) : 1);
    RequireSameDType(s);
    DispatchFloat(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    sum_ = p.multi_input_mode == sdk::MultiInputMode::kSum;
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

// Forward inputs data (N, C, H, W), weight (C, 1, k, k), output (N, C, H·scale, W·scale);
// backward inputs out_grad, data, weight, outputs the data and weight gradients. Each data
// element spreads over a k × k window of the output (stride scale, pad p), so the loops run over
// data elements and kernel taps directly: per channel that is the whole deconvolution, with no
// column matrix.
class BilinearUpSampling {
 public:
  explicit BilinearUpSampling(const KernelSetup& s) : backward_(s.op_name.rfind("_backward_", 0) == 0) {
    s.ExpectCounts(backward_ ? 3 : 2, backward_ ? 2 : 1);
    RequireSameDType(s);
    DispatchFloat(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    const TensorDesc& x = s.inputs[backward_ ? 1 : 0];
    const TensorDesc& w = s.inputs[backward_ ? 2 : 1];
    const TensorDesc& y = backward_ ? s.inputs[0] : s.outputs[0];
    const auto p = s.Params<sdk::UpSamplingParam>();
    scale_ = p.scale;
    k_ = p.BilinearKernel();
    pad_ = scale_ / 2;  // = ⌈(scale − 1) / 2⌉
    if (x.ndim() != 4 || scale_ < 1) Invalid(s, "data " + sdk::FormatTuple(x.shape) + " must be 4-D (N, C, H, W)");
    const std::vector<int64_t> want_w{x.shape[1], 1, k_, k_};
    const std::vector<int64_t> want_y{x.shape[0], x.shape[1], x.shape[2] * scale_, x.shape[3] * scale_};
    if (w.shape != want_w) Invalid(s, "weight " + sdk::FormatTuple(w.shape) + " must be " + sdk::FormatTuple(want_w));
    if (y.shape != want_y) Invalid(s, "output " + sdk::FormatTuple(y.shape) + " must be " + sdk::FormatTuple(want_y));
    n_ = x.shape[0], c_ = x.shape[1], h_ = x.shape[2], w_ = x.shape[3];
  }

  void Compute(const KernelCall& c) const {
    DispatchFloat("UpSampling", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (!backward_) return Forward<T>(c);
      Backward<T>(c);
    });
  }

 private:
  // visit(plane, data offset, output offset, weight offset) for every (data element, tap) pair
  // whose output position lies inside the output.
  template <typename F>
  void Walk(F visit) const {
    const int64_t oh = h_ * scale_, ow = w_ * scale_;
    for (int64_t p = 0; p < n_ * c_; ++p) {
      const int64_t ch = p % c_;
      for (int64_t i = 0; i < h_; ++i)
        for (int64_t ky = 0; ky < k_; ++ky) {
          const int64_t oy = i * scale_ - pad_ + ky;
          if (oy < 0 || oy >= oh) continue;
          for (int64_t j = 0; j < w_; ++j)
            for (int64_t kx = 0; kx < k_; ++kx) {
              const int64_t ox = j * scale_ - pad_ + kx;
              if (ox < 0 || ox >= ow) continue;
              visit(p, (p * h_ + i) * w_ + j, (p * oh + oy) * ow + ox, (ch * k_ + ky) * k_ + kx);
            }
        }
    }
  }

  template <typename T>
  void Forward(const KernelCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    const T* x = static_cast<const T*>(c.inputs[0].raw());
    const T* w = static_cast<const T*>(c.inputs[1].raw());
    T* y = static_cast<T*>(c.outputs[0].raw());
    std::vector<T> acc(static_cast<size_t>(c.outputs[0].size()), T(0));
    Walk([&](int64_t, int64_t xi, int64_t yi, int64_t wi) { acc[static_cast<size_t>(yi)] += x[xi] * w[wi]; });
    sdk::WithReq(c.req[0], [&](auto assign) {
      for (size_t e = 0; e < acc.size(); ++e) assign(y[e], acc[e]);
    });
  }

  template <typename T>
  void Backward(const KernelCall& c) const {
    const T* gy = static_cast<const T*>(c.inputs[0].raw());
    const T* x = static_cast<const T*>(c.inputs[1].raw());
    const T* w = static_cast<const T*>(c.inputs[2].raw());
    std::vector<T> gx(static_cast<size_t>(c.outputs[0].size()), T(0));
    std::vector<double> gw(static_cast<size_t>(c.outputs[1].size()), 0.0);  // sums over the batch
    Walk([&](int64_t, int64_t xi, int64_t yi, int64_t wi) {
      gx[static_cast<size_t>(xi)] += gy[yi] * w[wi];
      gw[static_cast<size_t>(wi)] += static_cast<double>(gy[yi]) * x[xi];
    });
    sdk::WithReq(c.req[0], [&](auto assign) {
      T* out = static_cast<T*>(c.outputs[0].raw());
      for (size_t e = 0; e < gx.size(); ++e) assign(out[e], gx[e]);
    });
    sdk::WithReq(c.req[1], [&](auto assign) {
      T* out = static_cast<T*>(c.outputs[1].raw());
      for (size_t e = 0; e < gw.size(); ++e) assign(out[e], static_cast<T>(gw[e]));
    });
  }

  bool backward_;
  int64_t scale_ = 1, k_ = 1, pad_ = 0, n_ = 0, c_ = 0, h_ = 0, w_ = 0;
};

// One op name, two algorithms chosen by sample_type.
class UpSamplingKernel {
 public:
  explicit UpSamplingKernel(const KernelSetup& s) {
    if (s.Params<sdk::UpSamplingParam>().sample_type == sdk::UpSampleType::kBilinear)
      bilinear_.emplace(s);
    else
      nearest_.emplace(s);
  }
  void Compute(const KernelCall& c) const {
    if (bilinear_)
      bilinear_->Compute(c);
    else
      nearest_->Compute(c);
  }

 private:
  std::optional<NearestUpSampling> nearest_;
  std::optional<BilinearUpSampling> bilinear_;
};

}  // namespace

void RegisterUpSamplingKernels(KernelTable& t) {
  AddAny<UpSamplingKernel>(t, "UpSampling", kFloatMask);
  AddAny<UpSamplingKernel>(t, "_backward_UpSampling", kFloatMask);
}

}  // namespace weft::cpu::tensor
