// topk, sort and argsort (MXNet 1.9) and the backward of topk and sort. Forward data in every dtype
// MXNet 1.9's cpu takes (float32, float64, int32, int64, uint8, int8; float16 for topk only, compared
// in float; issue 28), the backward likewise; positions in any dtype the definition allows.
//
// Data is viewed as (outer, n, inner) around `axis` (None: the flattened data, n = its size);
// each (o, i) line is ordered with a stable sort (ties keep the earlier position first, which is
// what MXNet's cpu sort gives), ascending or descending. topk keeps the first k (k < 1: all)
// and returns values, positions, both, or a mask of data's shape; sort returns the values (and
// the positions as a hidden output); argsort the positions.
//
// _backward_topk / _backward_sort (inputs: the output gradients, then the outputs): the values'
// gradient is scattered to the positions the forward took; topk's indices and mask have none.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "tensor_kernels.h"
#include "weft/sdk/ops/sort.hpp"

namespace weft::cpu::tensor {
namespace {

enum class Ret { kValue, kIndices, kBoth, kMask };

class OrderKernel {
 public:
  explicit OrderKernel(const KernelSetup& s) : backward_(s.op_name.rfind("_backward_", 0) == 0) {
    const std::string op = backward_ ? s.op_name.substr(10) : s.op_name;
    std::optional<int64_t> axis;
    int64_t k = 0;
    if (op == "topk") {
      const auto p = s.Params<sdk::TopkParam>();
      static constexpr Ret kRets[] = {Ret::kBoth, Ret::kIndices, Ret::kMask, Ret::kValue};  // sdk::TopkReturn
      ret_ = kRets[static_cast<int>(p.ret_typ)];
      ascend_ = p.is_ascend, axis = p.axis, k = p.k;
    } else if (op == "sort") {
      const auto p = s.Params<sdk::SortParam>();
      ret_ = Ret::kBoth, ascend_ = p.is_ascend, axis = p.axis;
    } else {
      const auto p = s.Params<sdk::ArgsortParam>();
      ret_ = Ret::kIndices, ascend_ = p.is_ascend, axis = p.axis;
    }
    const int outs = ret_ == Ret::kBoth || ret_ == Ret::kValue ? 2 : 1;
    s.ExpectCounts(backward_ ? 2 * outs : 1, 1 * (backward_ ? 1 : outs));
    const TensorDesc& data = backward_ ? s.outputs[0] : s.inputs[0];
    // Gradients in every dtype too: MXNet's test_order runs topk's backward on int32 data.
    DispatchMask<kAllMask>(s.op_name.c_str(), data.dtype, [](auto) {});
    const Dims d(data);
    if (axis) {
      const int a = NormalizeAxis(s, *axis, d.ndim, "axis");
      outer_ = d.Prod(0, a), n_ = d.d[a], inner_ = d.Prod(a + 1, d.ndim);
    } else {
      n_ = d.Size();
    }
    k_ = k < 1 ? n_ : k;
    if (k_ > n_) Invalid(s, "k=" + std::to_string(k) + " is larger than the axis' extent " + std::to_string(n_));
    const int64_t want = ret_ == Ret::kMask ? data.size() : outer_ * k_ * inner_;
    const std::vector<TensorDesc>& results = backward_ ? s.inputs : s.outputs;
    for (int i = 0; i < outs; ++i)
      if (results[static_cast<size_t>(i)].size() != want)
        Invalid(s, "output " + std::to_string(i) + " " + sdk::FormatTuple(results[static_cast<size_t>(i)].shape) +
                       " does not hold " + std::to_string(want) + " elements");
  }

  void Compute(const KernelCall& c) const {
    if (backward_) return Backward(c);
    DispatchMask<kAllMask>("topk", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = static_cast<const T*>(c.inputs[0].raw());
      std::vector<int64_t> order(static_cast<size_t>(n_));
      for (int64_t o = 0; o < outer_; ++o)
        for (int64_t i = 0; i < inner_; ++i) {
          const T* line = x + o * n_ * inner_ + i;
          std::iota(order.begin(), order.end(), 0);
          auto before = [&](int64_t a, int64_t b) {
            const auto va = ToCalc(line[a * inner_]), vb = ToCalc(line[b * inner_]);
            return ascend_ ? va < vb : va > vb;
          };
          std::stable_sort(order.begin(), order.end(), before);
          Store(c, line, order, o, i);
        }
    });
  }

 private:
  // Writes line (o, i)'s results from its order.
  template <typename T>
  void Store(const KernelCall& c, const T* line, const std::vector<int64_t>& order, int64_t o, int64_t i) const {
    if (ret_ == Ret::kMask) {
      T* m = static_cast<T*>(c.outputs[0].raw()) + o * n_ * inner_ + i;
      sdk::WithReq(c.req[0], [&](auto assign) {
        std::vector<bool> chosen(static_cast<size_t>(n_), false);
        for (int64_t j = 0; j < k_; ++j) chosen[static_cast<size_t>(order[static_cast<size_t>(j)])] = true;
        for (int64_t j = 0; j < n_; ++j) assign(m[j * inner_], Convert<T>(chosen[static_cast<size_t>(j)] ? 1 : 0));
      });
      return;
    }
    const int64_t base = o * k_ * inner_ + i;
    size_t out = 0;
    if (ret_ != Ret::kIndices) {
      T* v = static_cast<T*>(c.outputs[0].raw()) + base;
      sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t j = 0; j < k_; ++j) assign(v[j * inner_], line[order[static_cast<size_t>(j)] * inner_]);
      });
      out = 1;
    }
    DispatchAll("topk", c.outputs[out].dtype(), [&](auto itag) {
      using I = typename decltype(itag)::type;
      I* p = static_cast<I*>(c.outputs[out].raw()) + base;
      sdk::WithReq(c.req[out], [&](auto assign) {
        for (int64_t j = 0; j < k_; ++j) assign(p[j * inner_], Convert<I>(order[static_cast<size_t>(j)]));
      });
    });
  }

  void Backward(const KernelCall& c) const {
    const Tensor& gx = c.outputs[0];
    const bool scatter = ret_ == Ret::kValue || ret_ == Ret::kBoth;
    if (!scatter) {
      FillOrAdd(gx.raw(), 0.0, gx.size(), gx.dtype(), c.req[0]);
      return;
    }
    if (sdk::IsNull(c.req[0])) return;
    if (c.req[0] != WEFT_REQ_ADD) FillOrAdd(gx.raw(), 0.0, gx.size(), gx.dtype(), WEFT_REQ_WRITE);
    // Inputs: out_grad(values), out_grad(indices), values, indices.
    DispatchMask<kAllMask>("topk", gx.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* g = static_cast<const T*>(c.inputs[0].raw());
      T* dst = static_cast<T*>(gx.raw());
      DispatchAll("topk", c.inputs[3].dtype(), [&](auto itag) {
        using I = typename decltype(itag)::type;
        const I* pos = static_cast<const I*>(c.inputs[3].raw());
        for (int64_t o = 0; o < outer_; ++o)
          for (int64_t j = 0; j < k_; ++j)
            for (int64_t i = 0; i < inner_; ++i) {
              const int64_t at = (o * k_ + j) * inner_ + i;
              const int64_t p = std::clamp<int64_t>(Convert<int64_t>(pos[at]), 0, n_ - 1);
              dst[(o * n_ + p) * inner_ + i] += g[at];
            }
      });
    });
  }

  bool backward_;
  Ret ret_ = Ret::kIndices;
  bool ascend_ = false;
  int64_t outer_ = 1, n_ = 1, inner_ = 1, k_ = 1;
};

}  // namespace

void RegisterSortKernels(KernelTable& t) {
  AddAny<OrderKernel>(t, "topk", kAllMask);
  // MXNet 1.9's cpu sort and argsort refuse float16.
  AddAny<OrderKernel>(t, "sort", kAllButHalfMask);
  AddAny<OrderKernel>(t, "argsort", kAllButHalfMask);
  // The backward's dtype is its first input's, the values' gradient: the data's dtype (ret_typ
  // value, both, sort) or the positions' (indices, mask: data's gradient is zero).
  AddAny<OrderKernel>(t, "_backward_topk", kAllMask);
  AddAny<OrderKernel>(t, "_backward_sort", kAllButHalfMask);
}

}  // namespace weft::cpu::tensor
