// Samplers whose parameters are arrays (core/operator/defs/random_multi.cc):
//   _sample_{uniform,normal,gamma,exponential,poisson,negative_binomial,generalized_negative_binomial}:
//       parameter arrays p (and q) of n elements, output n × m (m = samples per element);
//       output[j·m + s] draws from the distribution of (p[j], q[j]).
//   _sample_multinomial: data (rows × k probabilities), output rows × m category indices (and, with
//       get_prob, their log-probabilities); _backward_sample_multinomial: out_grads (indices,
//       log-probabilities), data, outputs -> data's gradient, 1/p[c]·g summed over the draws of c.
//   _shuffle: the first-axis slices of data in a random order (Fisher–Yates, Knuth TAOCP 2
//       §3.4.2 Algorithm P, with one stream for the whole call).
// Element i of a sampler's output is a pure function of the call's seed and i (the SDK's
// random_sampler.hpp), whatever the thread count. Parameter values are not checked (as MXNet's multisample ops).
#include <string>
#include <vector>

#include "parallel.h"
#include "tensor_kernels.h"
#include "weft/sdk/cpp/random_sampler.hpp"

namespace weft::cpu::tensor {
namespace {

constexpr uint64_t kHalfFloatMask = kFloatMask | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT16);

// f(TypeTag<T>) for float16, float32 and float64.
template <typename F>
void DispatchHalfFloat(const char* op, int32_t dtype, F&& f) {
  if (dtype == WEFT_DTYPE_FLOAT16) return f(TypeTag<Half>{});
  DispatchFloat(op, dtype, f);
}

using sdk::random::Distribution;
using sdk::random::ElementStream;

Distribution DistOf(const std::string& op) {
  if (op == "_sample_uniform") return Distribution::kUniform;
  if (op == "_sample_normal") return Distribution::kNormal;
  if (op == "_sample_gamma") return Distribution::kGamma;
  if (op == "_sample_exponential") return Distribution::kExponential;
  if (op == "_sample_poisson") return Distribution::kPoisson;
  return op == "_sample_negative_binomial" ? Distribution::kNegativeBinomial
                                           : Distribution::kGeneralizedNegativeBinomial;
}

class MultiSampleKernel {
 public:
  explicit MultiSampleKernel(const KernelSetup& s) : dist_(DistOf(s.op_name)) {
    const size_t n_params = s.inputs.size();
    if (n_params < 1 || n_params > 2 || s.outputs.size() != 1) Invalid(s, "expects 1 or 2 parameter arrays, 1 output");
    for (const TensorDesc& p : s.inputs) {
      DispatchHalfFloat(s.op_name.c_str(), p.dtype, [](auto) {});
      if (p.shape != s.inputs[0].shape || p.dtype != s.inputs[0].dtype)
        Invalid(s, "the parameter arrays must have one shape and dtype");
    }
    DispatchHalfFloat(s.op_name.c_str(), s.outputs[0].dtype, [](auto) {});
    n_ = s.inputs[0].size();
    if (n_ == 0 ? s.outputs[0].size() != 0 : s.outputs[0].size() % n_ != 0)
      Invalid(s, "output " + sdk::FormatTuple(s.outputs[0].shape) + " is not the parameters' shape " +
                     sdk::FormatTuple(s.inputs[0].shape) + " followed by the sample shape");
  }

  void Compute(const KernelCall& c) const {
    const Tensor& out = c.outputs[0];
    const int64_t m = n_ == 0 ? 0 : out.size() / n_;
    DispatchHalfFloat("_sample", c.inputs[0].dtype(), [&](auto ptag) {
      using P = typename decltype(ptag)::type;
      const P* p = static_cast<const P*>(c.inputs[0].raw());
      const P* q = c.inputs.size() > 1 ? static_cast<const P*>(c.inputs[1].raw()) : nullptr;
      DispatchHalfFloat("_sample", out.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* y = static_cast<T*>(out.raw());
        sdk::WithReq(c.req[0], [&](auto assign) {
          ParallelChunks(out.size(), out.size() * 4, [&](int64_t begin, int64_t end, int) {
            for (int64_t i = begin; i < end; ++i) {
              const int64_t j = i / m;
              const sdk::random::Sampler draw{dist_, Convert<double>(p[j]), q ? Convert<double>(q[j]) : 0.0};
              assign(y[i], Convert<T>(draw.DrawReal(c.seed, static_cast<uint64_t>(i))));
            }
          });
        });
      });
    });
  }

 private:
  Distribution dist_;
  int64_t n_ = 0;
};

// The category of one draw: the first c with u < p[0] + ... + p[c]; the last category when u is
// beyond the row's sum (probabilities rounded below 1).
template <typename P>
int64_t Category(const P* row, int64_t k, double u) {
  double acc = 0;
  for (int64_t c = 0; c < k; ++c) {
    acc += Convert<double>(row[c]);
    if (u < acc) return c;
  }
  return k - 1;
}

class MultinomialKernel {
 public:
  explicit MultinomialKernel(const KernelSetup& s) : backward_(s.op_name.starts_with("_backward_")) {
    if (!backward_) {
      if (s.inputs.size() != 1 || s.outputs.empty() || s.outputs.size() > 2)
        Invalid(s, "expects data and 1 or 2 outputs");
      Setup(s, s.inputs[0], s.outputs[0]);
      DispatchMask<kIndexMask | WEFT_DTYPE_BIT(WEFT_DTYPE_UINT8)>(s.op_name.c_str(), s.outputs[0].dtype, [](auto) {});
      if (s.outputs[0].dtype == WEFT_DTYPE_FLOAT16) Unsupported(s, "float16 indices are not supported; use int32");
    } else {
      // get_prob: out_grad(indices), out_grad(log-probabilities), data, indices, log-probabilities;
      // without: out_grad(indices), data, indices (the gradient is then zero).
      get_prob_ = s.inputs.size() == 5;
      if ((s.inputs.size() != 5 && s.inputs.size() != 3) || s.outputs.size() != 1)
        Invalid(s, "expects 3 or 5 inputs and 1 output");
      Setup(s, s.inputs[get_prob_ ? 2 : 1], s.inputs[get_prob_ ? 3 : 2]);
    }
  }

  void Compute(const KernelCall& c) const { backward_ ? Backward(c) : Forward(c); }

 private:
  void Setup(const KernelSetup& s, const TensorDesc& data, const TensorDesc& out) {
    DispatchHalfFloat(s.op_name.c_str(), data.dtype, [](auto) {});
    if (data.ndim() == 0 || data.shape.back() == 0) Invalid(s, "data needs a non-empty last axis of categories");
    k_ = data.shape.back();
    rows_ = data.size() / k_;
    m_ = rows_ == 0 ? 0 : out.size() / rows_;
    if (rows_ * m_ != out.size()) Invalid(s, "output " + sdk::FormatTuple(out.shape) + " does not fit data's rows");
  }

  void Forward(const KernelCall& c) const {
    DispatchHalfFloat("_sample_multinomial", c.inputs[0].dtype(), [&](auto ptag) {
      using P = typename decltype(ptag)::type;
      const P* data = static_cast<const P*>(c.inputs[0].raw());
      std::vector<int64_t> drawn(static_cast<size_t>(rows_ * m_));
      ParallelChunks(rows_ * m_, rows_ * m_ * k_, [&](int64_t begin, int64_t end, int) {
        for (int64_t i = begin; i < end; ++i) {
          ElementStream s(c.seed, static_cast<uint64_t>(i));
          drawn[static_cast<size_t>(i)] = Category(data + (i / m_) * k_, k_, s.Uniform());
        }
      });
      DispatchMask<kIndexMask | WEFT_DTYPE_BIT(WEFT_DTYPE_UINT8)>(
          "_sample_multinomial", c.outputs[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            T* y = static_cast<T*>(c.outputs[0].raw());
            sdk::WithReq(c.req[0], [&](auto assign) {
              for (int64_t i = 0; i < rows_ * m_; ++i) assign(y[i], static_cast<T>(drawn[static_cast<size_t>(i)]));
            });
          });
      if (c.outputs.size() < 2) return;
      P* logp = static_cast<P*>(c.outputs[1].raw());
      sdk::WithReq(c.req[1], [&](auto assign) {
        for (int64_t i = 0; i < rows_ * m_; ++i)
          assign(logp[i], Convert<P>(std::log(Convert<double>(data[(i / m_) * k_ + drawn[static_cast<size_t>(i)]]))));
      });
    });
  }

  void Backward(const KernelCall& c) const {
    if (!get_prob_) {
      FillOrAdd(c.outputs[0].raw(), 0.0, c.outputs[0].size(), c.outputs[0].dtype(), c.req[0]);
      return;
    }
    DispatchHalfFloat("_backward_sample_multinomial", c.inputs[2].dtype(), [&](auto ptag) {
      using P = typename decltype(ptag)::type;
      const P* g = static_cast<const P*>(c.inputs[1].raw());
      const P* data = static_cast<const P*>(c.inputs[2].raw());
      std::vector<double> grad(static_cast<size_t>(rows_ * k_), 0.0);
      DispatchMask<kIndexMask | WEFT_DTYPE_BIT(WEFT_DTYPE_UINT8)>(
          "_backward_sample_multinomial", c.inputs[3].dtype(), [&](auto itag) {
            using I = typename decltype(itag)::type;
            const I* drawn = static_cast<const I*>(c.inputs[3].raw());
            for (int64_t i = 0; i < rows_ * m_; ++i) {
              const int64_t at = (i / m_) * k_ + Convert<int64_t>(drawn[i]);
              grad[static_cast<size_t>(at)] += Convert<double>(g[i]) / Convert<double>(data[at]);
            }
          });
      P* out = static_cast<P*>(c.outputs[0].raw());
      sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t e = 0; e < rows_ * k_; ++e) assign(out[e], Convert<P>(grad[static_cast<size_t>(e)]));
      });
    });
  }

  bool backward_, get_prob_ = false;
  int64_t k_ = 1, rows_ = 0, m_ = 0;
};

class ShuffleKernel {
 public:
  explicit ShuffleKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    const TensorDesc& d = s.inputs[0];
    if (s.outputs[0].shape != d.shape || s.outputs[0].dtype != d.dtype) Invalid(s, "output must be data's shape");
    rows_ = d.ndim() == 0 ? 1 : d.shape[0];
    width_ = rows_ == 0 ? 0 : d.size() / rows_;
  }

  void Compute(const KernelCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    std::vector<int64_t> order(static_cast<size_t>(rows_));
    for (int64_t i = 0; i < rows_; ++i) order[static_cast<size_t>(i)] = i;
    ElementStream s(c.seed, 0);
    for (int64_t i = rows_ - 1; i > 0; --i)
      std::swap(order[static_cast<size_t>(i)],
                order[static_cast<size_t>(sdk::random::Below(s, static_cast<uint64_t>(i) + 1))]);
    const Tensor& data = c.inputs[0];
    DispatchAll("_shuffle", data.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = static_cast<const T*>(data.raw());
      T* out = static_cast<T*>(c.outputs[0].raw());
      std::vector<T> copy;
      if (static_cast<const void*>(in) == static_cast<const void*>(out)) {  // in place: permute from a copy
        copy.assign(in, in + data.size());
        in = copy.data();
      }
      sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t i = 0; i < rows_; ++i)
          for (int64_t k = 0; k < width_; ++k)
            assign(out[i * width_ + k], in[order[static_cast<size_t>(i)] * width_ + k]);
      });
    });
  }

 private:
  int64_t rows_ = 1, width_ = 0;
};

}  // namespace

void RegisterRandomMultiKernels(KernelTable& t) {
  for (const char* op : {"_sample_uniform", "_sample_normal", "_sample_gamma", "_sample_exponential", "_sample_poisson",
                         "_sample_negative_binomial", "_sample_generalized_negative_binomial"})
    AddAny<MultiSampleKernel>(t, op, kHalfFloatMask);
  AddAny<MultinomialKernel>(t, "_sample_multinomial", kHalfFloatMask);
  // Keyed by its first input, the gradient of the indices (int32 by default).
  AddAny<MultinomialKernel>(t, "_backward_sample_multinomial", kAllMask);
  AddAny<ShuffleKernel>(t, "_shuffle", kAllMask);
}

}  // namespace weft::cpu::tensor
