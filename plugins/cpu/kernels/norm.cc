// LayerNorm, InstanceNorm and L2Normalization (MXNet 1.9) and their backward ops, float32 /
// float64.
//
// All three normalise groups of elements: data is viewed as (outer, n, inner) and each (o, i)
// is one group of n elements at stride inner. LayerNorm over axis a: n = the axis' extent,
// gamma/beta indexed by the position in the group. InstanceNorm: (N·C, spatial, 1), gamma/beta
// indexed by the channel o mod C. L2Normalization: instance (N, rest, 1), channel (N, C,
// spatial), spatial (N·C, spatial, 1). The group statistics (hidden outputs) are stored at
// o·inner + i, which is their MXNet shape in row-major order. Statistics accumulate in double.
//
// Backward (inputs: the output gradients of every output, then data[, gamma, beta]): the
// statistics are recomputed from data; the statistics' own output gradients are ignored, as in
// MXNet. With x̂ = (x − mean)·rstd and dy = out_grad·gamma:
//   data: rstd·(dy − mean(dy) − x̂·mean(dy·x̂)); gamma: Σ out_grad·x̂; beta: Σ out_grad.
//   L2: data: (out_grad − y·Σ(out_grad·y)) / norm with y = x / norm.
#include <cmath>
#include <string>
#include <vector>

#include "tensor_kernels.h"
#include "weft/sdk/ops/normalization.hpp"

namespace weft::cpu::tensor {
namespace {

enum class NormKind { kLayer, kInstance, kL2 };

class GroupNormKernel {
 public:
  explicit GroupNormKernel(const KernelSetup& s) : backward_(s.op_name.rfind("_backward_", 0) == 0) {
    const std::string op = backward_ ? s.op_name.substr(10) : s.op_name;
    kind_ = op == "LayerNorm" ? NormKind::kLayer : op == "InstanceNorm" ? NormKind::kInstance : NormKind::kL2;
    const int n_in = kind_ == NormKind::kL2 ? 1 : 3, n_out = kind_ == NormKind::kL2 ? 2 : 3;
    s.ExpectCounts(backward_ ? n_out + n_in : n_in, backward_ ? n_in : n_out);
    RequireSameDType(s);
    DispatchFloat(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    const TensorDesc& data = backward_ ? s.inputs[static_cast<size_t>(n_out)] : s.inputs[0];
    const Dims d(data);
    if (kind_ == NormKind::kLayer) {
      const auto p = s.Params<sdk::LayerNormParam>();
      eps_ = p.eps;
      const int a = NormalizeAxis(s, p.axis, d.ndim, "axis");
      outer_ = d.Prod(0, a), n_ = d.d[a], inner_ = d.Prod(a + 1, d.ndim);
    } else if (kind_ == NormKind::kInstance) {
      eps_ = s.Params<sdk::InstanceNormParam>().eps;
      if (d.ndim < 3) Invalid(s, "data must have at least 3 axes");
      channels_ = d.d[1], outer_ = d.d[0] * d.d[1], n_ = d.Prod(2, d.ndim);
    } else {
      using sdk::L2NormMode;
      const auto p = s.Params<sdk::L2NormalizationParam>();
      eps_ = p.eps;
      if (d.ndim < (p.mode == L2NormMode::kInstance ? 2 : 3))
        Invalid(s, "data has too few axes for mode " + std::string(sdk::kL2NormModes[static_cast<int>(p.mode)]));
      if (p.mode == L2NormMode::kInstance) {
        outer_ = d.d[0], n_ = d.Prod(1, d.ndim);
      } else if (p.mode == L2NormMode::kChannel) {
        outer_ = d.d[0], n_ = d.d[1], inner_ = d.Prod(2, d.ndim);
      } else {
        outer_ = d.d[0] * d.d[1], n_ = d.Prod(2, d.ndim);
      }
    }
    if (kind_ != NormKind::kL2) {
      const int64_t params = kind_ == NormKind::kLayer ? n_ : channels_;
      for (size_t i = 1; i < 3; ++i)
        if (s.inputs[backward_ ? static_cast<size_t>(n_out) + i : i].size() != params)
          Invalid(s, "gamma and beta must have " + std::to_string(params) + " elements");
    }
    const TensorDesc& stat = backward_ ? s.inputs[1] : s.outputs[1];
    if (stat.size() != outer_ * inner_ || data.size() != outer_ * n_ * inner_)
      Invalid(s, "statistics " + sdk::FormatTuple(stat.shape) + " do not match data " + sdk::FormatTuple(data.shape));
  }

  void Compute(const KernelCall& c) const {
    DispatchFloat("group normalisation", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (backward_) {
        Backward<T>(c);
      } else {
        Forward<T>(c);
      }
    });
  }

 private:
  struct Stats {
    double mean, rstd;  // L2: mean 0, rstd = 1 / norm
  };

  template <typename T>
  Stats GroupStats(const T* x) const {
    double sum = 0, sq = 0;
    for (int64_t k = 0; k < n_; ++k) sum += x[k * inner_];
    if (kind_ == NormKind::kL2) {
      for (int64_t k = 0; k < n_; ++k) sq += static_cast<double>(x[k * inner_]) * x[k * inner_];
      return {0.0, 1.0 / std::sqrt(sq + eps_)};
    }
    const double mean = n_ > 0 ? sum / static_cast<double>(n_) : 0.0;
    for (int64_t k = 0; k < n_; ++k) {
      const double v = x[k * inner_] - mean;
      sq += v * v;
    }
    return {mean, 1.0 / std::sqrt((n_ > 0 ? sq / static_cast<double>(n_) : 0.0) + eps_)};
  }

  // gamma/beta index of element k of group o.
  int64_t Param(int64_t o, int64_t k) const { return kind_ == NormKind::kLayer ? k : o % channels_; }

  template <typename F>
  void Groups(F f) const {
    for (int64_t o = 0; o < outer_; ++o)
      for (int64_t i = 0; i < inner_; ++i) f(o, o * n_ * inner_ + i, o * inner_ + i);
  }

  template <typename T>
  void Forward(const KernelCall& c) const {
    const T* x = static_cast<const T*>(c.inputs[0].raw());
    const bool l2 = kind_ == NormKind::kL2;
    const T* gamma = l2 ? nullptr : static_cast<const T*>(c.inputs[1].raw());
    const T* beta = l2 ? nullptr : static_cast<const T*>(c.inputs[2].raw());
    T* y = static_cast<T*>(c.outputs[0].raw());
    Groups([&](int64_t o, int64_t base, int64_t at) {
      const Stats st = GroupStats(x + base);
      sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t k = 0; k < n_; ++k) {
          const int64_t e = base + k * inner_;
          const double v = (x[e] - st.mean) * st.rstd;
          assign(y[e], static_cast<T>(l2 ? v : v * gamma[Param(o, k)] + beta[Param(o, k)]));
        }
      });
      // Hidden statistics: L2 norm; LayerNorm mean, std; InstanceNorm mean, var.
      const double std = 1.0 / st.rstd;
      const double stats[2] = {l2 ? std : st.mean, kind_ == NormKind::kInstance ? std * std - eps_ : std};
      for (size_t s = 1; s < c.outputs.size(); ++s) {
        T* out = static_cast<T*>(c.outputs[s].raw());
        sdk::WithReq(c.req[s], [&](auto assign) { assign(out[at], static_cast<T>(stats[s - 1])); });
      }
    });
  }

  template <typename T>
  void Backward(const KernelCall& c) const {
    const bool l2 = kind_ == NormKind::kL2;
    const size_t first = l2 ? 2 : 3;  // data's position among the backward inputs
    const T* g = static_cast<const T*>(c.inputs[0].raw());
    const T* x = static_cast<const T*>(c.inputs[first].raw());
    const T* gamma = l2 ? nullptr : static_cast<const T*>(c.inputs[first + 1].raw());
    T* gx = static_cast<T*>(c.outputs[0].raw());
    // gamma / beta gradients accumulate over groups in double, then one req-aware store.
    const int64_t params = l2 ? 0 : c.outputs[1].size();
    std::vector<double> ggamma(static_cast<size_t>(params)), gbeta(static_cast<size_t>(params));
    Groups([&](int64_t o, int64_t base, int64_t) {
      const Stats st = GroupStats(x + base);
      double sum_dy = 0, sum_dy_xhat = 0;
      for (int64_t k = 0; k < n_; ++k) {
        const int64_t e = base + k * inner_;
        const double xhat = (x[e] - st.mean) * st.rstd;
        const double dy = l2 ? g[e] : static_cast<double>(g[e]) * gamma[Param(o, k)];
        sum_dy += dy;
        sum_dy_xhat += dy * xhat;
        if (!l2) {
          ggamma[static_cast<size_t>(Param(o, k))] += g[e] * xhat;
          gbeta[static_cast<size_t>(Param(o, k))] += g[e];
        }
      }
      const double inv_n = n_ > 0 ? 1.0 / static_cast<double>(n_) : 0.0;
      sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t k = 0; k < n_; ++k) {
          const int64_t e = base + k * inner_;
          const double xhat = (x[e] - st.mean) * st.rstd;
          const double dy = l2 ? g[e] : static_cast<double>(g[e]) * gamma[Param(o, k)];
          const double v =
              l2 ? (dy - xhat * sum_dy_xhat) * st.rstd : (dy - sum_dy * inv_n - xhat * sum_dy_xhat * inv_n) * st.rstd;
          assign(gx[e], static_cast<T>(v));
        }
      });
    });
    for (size_t s = 1; s < c.outputs.size(); ++s) {
      const std::vector<double>& src = s == 1 ? ggamma : gbeta;
      T* out = static_cast<T*>(c.outputs[s].raw());
      sdk::WithReq(c.req[s], [&](auto assign) {
        for (int64_t p = 0; p < params; ++p) assign(out[p], static_cast<T>(src[static_cast<size_t>(p)]));
      });
    }
  }

  bool backward_;
  NormKind kind_ = NormKind::kLayer;
  double eps_ = 1e-5;
  int64_t outer_ = 1, n_ = 1, inner_ = 1, channels_ = 1;
};

}  // namespace

void RegisterNormKernels(KernelTable& t) {
  for (const char* op : {"LayerNorm", "InstanceNorm", "L2Normalization"}) {
    t.Add<GroupNormKernel>(op, kFloatMask);
    t.Add<GroupNormKernel>(std::string("_backward_") + op, kFloatMask);
  }
}

}  // namespace weft::cpu::tensor
