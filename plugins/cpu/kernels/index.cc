// one_hot, argmax and Embedding: ops whose values are indices.
//
// one_hot (MXNet): output[..., j] = on_value where j == int(indices[...]), off_value elsewhere;
// an index outside [0, depth) gives a row of off_value. Indices of a float dtype are truncated
// toward zero. The output dtype is the output tensor's (the definition maps the `dtype` attribute).
//
// argmax (MXNet): the index of the largest value along `axis` (None: over the flattened array),
// the first one on ties, a NaN counting as the largest; stored in the output's dtype (MXNet keeps
// the input's). keepdims only changes the output shape. argmin likewise with the smallest (a NaN
// still wins); argmax_channel is argmax along the last axis.
#include <algorithm>
#include <vector>

#include "tensor_kernels.h"
#include "weft/sdk/ops/index.hpp"

namespace weft::cpu::tensor {
namespace {

class OneHotKernel {
 public:
  explicit OneHotKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    p_ = s.Params<sdk::OneHotParam>();
    DispatchIndex(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    DispatchAll(s.op_name.c_str(), s.outputs[0].dtype, [](auto) {});
    p_.CheckShapes(s.op_name, s.inputs[0].shape, s.outputs[0].shape);
  }

  void Compute(const KernelCall& c) const {
    const Tensor& in = c.inputs[0];
    const Tensor& out = c.outputs[0];
    const int64_t n = in.size();
    DispatchIndex("one_hot", in.dtype(), [&](auto itag) {
      using I = typename decltype(itag)::type;
      const I* idx = static_cast<const I*>(in.raw());
      DispatchAll("one_hot", out.dtype(), [&](auto otag) {
        using T = typename decltype(otag)::type;
        const T on = Convert<T>(p_.on_value), off = Convert<T>(p_.off_value);
        const int64_t depth = p_.depth;
        T* y = static_cast<T*>(out.raw());
        sdk::WithReq(c.req[0], [&](auto assign) {
          for (int64_t i = 0; i < n; ++i) {
            const int64_t hot = Convert<int64_t>(idx[i]);
            T* row = y + i * depth;
            for (int64_t j = 0; j < depth; ++j) assign(row[j], j == hot ? on : off);
          }
        });
      });
    });
  }

 private:
  sdk::OneHotParam p_;
};

class ArgmaxKernel {
 public:
  explicit ArgmaxKernel(const KernelSetup& s) : min_(s.op_name == "argmin") {
    s.ExpectCounts(1, 1);
    DispatchIndex(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    DispatchIndex(s.op_name.c_str(), s.outputs[0].dtype, [](auto) {});
    const TensorDesc& x = s.inputs[0];
    const std::optional<int64_t> axis =
        s.op_name == "argmax_channel" ? std::optional<int64_t>(-1) : s.Params<sdk::ArgmaxParam>().axis;
    if (axis) {
      const int a = NormalizeAxis(s, *axis, x.ndim(), "axis");
      for (int d = 0; d < a; ++d) outer_ *= x.shape[static_cast<size_t>(d)];
      n_ = x.shape[static_cast<size_t>(a)];
      for (int d = a + 1; d < x.ndim(); ++d) inner_ *= x.shape[static_cast<size_t>(d)];
    } else {
      n_ = x.size();
    }
    if (n_ == 0 && outer_ * inner_ > 0) Invalid(s, "argmax over an empty axis");
    if (s.outputs[0].size() != outer_ * inner_) {
      Invalid(s, "output has " + std::to_string(s.outputs[0].size()) + " elements, expected " +
                     std::to_string(outer_ * inner_));
    }
  }

  void Compute(const KernelCall& c) const {
    const Tensor& in = c.inputs[0];
    const Tensor& out = c.outputs[0];
    DispatchIndex("argmax", in.dtype(), [&](auto xtag) {
      using X = typename decltype(xtag)::type;
      DispatchIndex("argmax", out.dtype(), [&](auto ytag) {
        using Y = typename decltype(ytag)::type;
        const X* x = static_cast<const X*>(in.raw());
        Y* y = static_cast<Y*>(out.raw());
        // Walk the reduced axis outermost so the inner loop runs over contiguous memory.
        std::vector<X> best(static_cast<size_t>(inner_));
        std::vector<int64_t> at(static_cast<size_t>(inner_));
        sdk::WithReq(c.req[0], [&](auto assign) {
          for (int64_t o = 0; o < outer_; ++o) {
            const X* base = x + o * n_ * inner_;
            for (int64_t j = 0; j < inner_; ++j) best[j] = base[j], at[j] = 0;
            for (int64_t k = 1; k < n_; ++k) {
              const X* row = base + k * inner_;
              for (int64_t j = 0; j < inner_; ++j) {
                // Strictly greater (less) keeps the first extremum; NaN wins once and stays.
                const bool better = min_ ? row[j] < best[j] : row[j] > best[j];
                if (better || (IsNan(row[j]) && !IsNan(best[j]))) best[j] = row[j], at[j] = k;
              }
            }
            for (int64_t j = 0; j < inner_; ++j) assign(y[o * inner_ + j], static_cast<Y>(at[j]));
          }
        });
      });
    });
  }

 private:
  bool min_;
  int64_t outer_ = 1, n_ = 1, inner_ = 1;
};

// Embedding: inputs data (indices, any index dtype), weight (input_dim, output_dim); output
// data.shape + (output_dim,). _backward_Embedding: inputs out_grad, data, weight; outputs the data
// gradient (zeros: indices have none) and the weight gradient (out_grad rows summed per index).
// Indices are truncated toward zero and clipped to [0, input_dim − 1], as MXNet's forward.
class EmbeddingKernel {
 public:
  explicit EmbeddingKernel(const KernelSetup& s) : backward_(s.op_name.rfind("_backward_", 0) == 0) {
    s.ExpectCounts(backward_ ? 3 : 2, backward_ ? 2 : 1);
    const TensorDesc& data = s.inputs[backward_ ? 1 : 0];
    const TensorDesc& weight = s.inputs[backward_ ? 2 : 1];
    DispatchIndex(s.op_name.c_str(), data.dtype, [](auto) {});
    DispatchFloat(s.op_name.c_str(), weight.dtype, [](auto) {});
    if (weight.ndim() != 2)
      Invalid(s, "weight must be 2-d (input_dim, output_dim), got " + sdk::FormatTuple(weight.shape));
    rows_ = weight.shape[0];
    dim_ = weight.shape[1];
    const TensorDesc& out = backward_ ? s.inputs[0] : s.outputs[0];
    if (out.dtype != weight.dtype) Invalid(s, "output and weight dtypes differ");
    if (out.size() != data.size() * dim_)
      Invalid(s, "output " + sdk::FormatTuple(out.shape) + " must hold output_dim = " + std::to_string(dim_) +
                     " values per index of data " + sdk::FormatTuple(data.shape));
    if (backward_ && (s.outputs[1].shape != weight.shape || s.outputs[0].shape != data.shape))
      Invalid(s, "gradients must have the shapes of data and weight");
  }

  void Compute(const KernelCall& c) const {
    const Tensor& data = c.inputs[backward_ ? 1 : 0];
    const int64_t n = data.size();
    if (backward_) FillOrAdd(c.outputs[0].raw(), 0.0, n, c.outputs[0].dtype(), c.req[0]);
    const int32_t req = c.req[backward_ ? 1 : 0];
    if (sdk::IsNull(req)) return;
    DispatchIndex("Embedding", data.dtype(), [&](auto itag) {
      using I = typename decltype(itag)::type;
      const I* idx = static_cast<const I*>(data.raw());
      DispatchFloat("Embedding", c.inputs[backward_ ? 2 : 1].dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto row = [&](int64_t i) { return std::min(std::max<int64_t>(Convert<int64_t>(idx[i]), 0), rows_ - 1); };
        if (!backward_) {
          const T* w = static_cast<const T*>(c.inputs[1].raw());
          T* y = static_cast<T*>(c.outputs[0].raw());
          sdk::WithReq(req, [&](auto assign) {
            for (int64_t i = 0; i < n; ++i)
              for (int64_t j = 0; j < dim_; ++j) assign(y[i * dim_ + j], w[row(i) * dim_ + j]);
          });
          return;
        }
        const T* g = static_cast<const T*>(c.inputs[0].raw());
        T* gw = static_cast<T*>(c.outputs[1].raw());
        if (req != WEFT_REQ_ADD) std::fill(gw, gw + rows_ * dim_, T(0));
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < dim_; ++j) gw[row(i) * dim_ + j] += g[i * dim_ + j];
      });
    });
  }

 private:
  bool backward_;
  int64_t rows_ = 0, dim_ = 0;
};

}  // namespace

void RegisterIndexKernels(KernelTable& t) {
  AddAny<EmbeddingKernel>(t, "Embedding", kIndexMask);
  AddAny<EmbeddingKernel>(t, "_backward_Embedding", kFloatMask);
  AddAny<OneHotKernel>(t, "one_hot", kIndexMask);
  for (const char* op : {"argmax", "argmin", "argmax_channel"}) AddAny<ArgmaxKernel>(t, op, kIndexMask);
}

}  // namespace weft::cpu::tensor
