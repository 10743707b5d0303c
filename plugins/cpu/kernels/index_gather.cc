// where, take and pick (MXNet 1.9), forward and backward: ops that choose elements by a second
// array of conditions or positions. Data in float32 / float64; where's conditions in any index
// dtype, take's and pick's positions in every dtype (float values truncated toward zero, as
// MXNet's static_cast); where's forward also selects int32 / int64 data, take's and pick's data of
// every dtype.
//
// where:  output = condition != 0 ? x : y (condition per element, or per row of x's first axis).
//         _backward_where: out_grad, condition, x, y -> zeros, out_grad where chosen x, where y.
// take:   a viewed as (outer, n, inner), output (outer, k, inner) with k = indices.size().
//         _backward_take: out_grad, a, indices -> a's gradient (summed per position), zeros.
// pick:   data viewed as (outer, n, inner), index / output (outer, inner).
//         _backward_pick: out_grad, data, index -> out_grad scattered into data's shape, zeros.
// Positions: clip clamps to [0, n−1], wrap takes them modulo n, raise (take) fails on one outside.
#include <algorithm>
#include <string>
#include <vector>

#include "tensor_kernels.h"
#include "weft/sdk/ops/index.hpp"

namespace weft::cpu::tensor {
namespace {

bool IsBackward(const KernelSetup& s) { return s.op_name.rfind("_backward_", 0) == 0; }

class WhereKernel {
 public:
  explicit WhereKernel(const KernelSetup& s) : backward_(IsBackward(s)) {
    s.ExpectCounts(backward_ ? 4 : 3, backward_ ? 3 : 1);
    const int c = backward_ ? 1 : 0;
    const TensorDesc& cond = s.inputs[c];
    const TensorDesc& x = s.inputs[c + 1];
    DispatchIndex(s.op_name.c_str(), cond.dtype, [](auto) {});
    // The forward selects any index dtype (float32/64, int32/64); gradients are float only.
    if (backward_)
      DispatchFloat(s.op_name.c_str(), x.dtype, [](auto) {});
    else
      DispatchIndex(s.op_name.c_str(), x.dtype, [](auto) {});
    if (s.inputs[c + 2].dtype != x.dtype || s.inputs[c + 2].shape != x.shape)
      Invalid(s, "x and y must have one shape and dtype");
    n_ = x.size();
    if (cond.size() == n_ && cond.shape == x.shape) {
      inner_ = 1;
    } else if (cond.ndim() == 1 && x.ndim() > 0 && cond.shape[0] == x.shape[0]) {
      inner_ = x.shape[0] == 0 ? 1 : n_ / x.shape[0];
    } else {
      Invalid(s, "condition " + sdk::FormatTuple(cond.shape) + " must have x's shape " + sdk::FormatTuple(x.shape) +
                     " or be 1-D of its first extent");
    }
  }

  void Compute(const KernelCall& c) const {
    const int ci = backward_ ? 1 : 0;
    if (backward_) FillOrAdd(c.outputs[0].raw(), 0.0, c.outputs[0].size(), c.outputs[0].dtype(), c.req[0]);
    DispatchIndex("where", c.inputs[ci].dtype(), [&](auto ctag) {
      using C = typename decltype(ctag)::type;
      const C* cond = static_cast<const C*>(c.inputs[ci].raw());
      DispatchIndex("where", c.inputs[ci + 1].dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (!backward_) {
          const T* x = static_cast<const T*>(c.inputs[1].raw());
          const T* y = static_cast<const T*>(c.inputs[2].raw());
          T* out = static_cast<T*>(c.outputs[0].raw());
          sdk::WithReq(c.req[0], [&](auto assign) {
            for (int64_t i = 0; i < n_; ++i) assign(out[i], cond[i / inner_] != C(0) ? x[i] : y[i]);
          });
          return;
        }
        const T* g = static_cast<const T*>(c.inputs[0].raw());
        for (int side = 0; side < 2; ++side) {
          T* out = static_cast<T*>(c.outputs[1 + side].raw());
          const bool want = side == 0;
          sdk::WithReq(c.req[1 + side], [&](auto assign) {
            for (int64_t i = 0; i < n_; ++i) assign(out[i], (cond[i / inner_] != C(0)) == want ? g[i] : T(0));
          });
        }
      });
    });
  }

 private:
  bool backward_;
  int64_t n_ = 0, inner_ = 1;
};

enum class Mode { kClip, kWrap, kRaise };

// take's or pick's axis and mode.
struct AxisMode {
  int64_t axis;
  Mode mode;
};

AxisMode AxisModeOf(const KernelSetup& s, bool pick) {
  if (pick) {
    const auto p = s.Params<sdk::PickParam>();
    return {*p.axis, p.mode == sdk::PickMode::kWrap ? Mode::kWrap : Mode::kClip};
  }
  const auto p = s.Params<sdk::TakeParam>();
  return {p.axis, p.mode == sdk::TakeMode::kWrap    ? Mode::kWrap
                  : p.mode == sdk::TakeMode::kRaise ? Mode::kRaise
                                                    : Mode::kClip};
}

// A position value mapped into [0, n) by mode (MXNet's take/pick kernels).
template <typename I>
int64_t Position(I v, int64_t n, Mode mode, const char* op) {
  int64_t j = Convert<int64_t>(v);
  if (mode == Mode::kWrap) {
    j %= n;
    return j < 0 ? j + n : j;
  }
  if (mode == Mode::kRaise && (j < 0 || j >= n)) {
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, std::string(op) + ": index " + std::to_string(j) +
                                                    " is out of range [0, " + std::to_string(n) +
                                                    ") of the axis (mode=raise); use mode=clip or mode=wrap "
                                                    "to map such indices, or fix the indices");
  }
  return std::clamp<int64_t>(j, 0, n - 1);
}

// take and pick share the (outer, n, inner) walk: `k` positions per outer index (take: all of
// indices with whole inner rows; pick: one per inner element).
class TakePickKernel {
 public:
  explicit TakePickKernel(const KernelSetup& s)
      : backward_(IsBackward(s)), pick_(s.op_name.find("pick") != std::string::npos), mode_(AxisModeOf(s, pick_).mode) {
    s.ExpectCounts(backward_ ? 3 : 2, backward_ ? 2 : 1);
    const TensorDesc& data = s.inputs[backward_ ? 1 : 0];
    const TensorDesc& idx = s.inputs[backward_ ? 2 : 1];
    const TensorDesc& out = backward_ ? s.inputs[0] : s.outputs[0];
    // The forward moves elements of any dtype (MXNet's take and pick); the backward sums floats.
    if (backward_) {
      DispatchFloat(s.op_name.c_str(), data.dtype, [](auto) {});
    } else {
      DispatchAll(s.op_name.c_str(), data.dtype, [](auto) {});
    }
    DispatchAll(s.op_name.c_str(), idx.dtype, [](auto) {});
    if (data.ndim() == 0) Invalid(s, "data must have at least one axis");
    const int axis = NormalizeAxis(s, AxisModeOf(s, pick_).axis, data.ndim(), "axis");
    const Dims d(data);
    outer_ = d.Prod(0, axis);
    n_ = d.d[axis];
    inner_ = d.Prod(axis + 1, d.ndim);
    k_ = pick_ ? 1 : idx.size();
    if (pick_ && idx.size() != outer_ * inner_)
      Invalid(s, "index has " + std::to_string(idx.size()) + " elements, expected " + std::to_string(outer_ * inner_));
    if (out.size() != outer_ * k_ * inner_ || out.dtype != data.dtype)
      Invalid(s, "output " + sdk::FormatTuple(out.shape) + " does not match data " + sdk::FormatTuple(data.shape) +
                     " and indices " + sdk::FormatTuple(idx.shape));
    if (n_ == 0 && out.size() > 0) Invalid(s, "cannot pick from an empty axis");
  }

  void Compute(const KernelCall& c) const {
    const Tensor& idx_t = c.inputs[backward_ ? 2 : 1];
    if (backward_) FillOrAdd(c.outputs[1].raw(), 0.0, c.outputs[1].size(), c.outputs[1].dtype(), c.req[1]);
    const int32_t req = c.req[0];
    if (sdk::IsNull(req)) return;
    const char* op = pick_ ? "pick" : "take";
    // Every position mapped first (one loop per index dtype): mode=raise checks them all before
    // anything is written, so a failed call leaves the output as it was (MXNet likewise checks
    // the whole index array first).
    std::vector<int64_t> pos(static_cast<size_t>(idx_t.size()));
    DispatchAll(op, idx_t.dtype(), [&](auto itag) {
      using I = typename decltype(itag)::type;
      const I* idx = static_cast<const I*>(idx_t.raw());
      for (size_t e = 0; e < pos.size(); ++e) pos[e] = Position(idx[e], n_, mode_, op);
    });
    // Element (o, p, i) of the small side and its source (o, position, i) in data.
    auto walk = [&](auto visit) {
      for (int64_t o = 0; o < outer_; ++o)
        for (int64_t p = 0; p < k_; ++p)
          for (int64_t i = 0; i < inner_; ++i) {
            const int64_t at = pos[static_cast<size_t>(pick_ ? o * inner_ + i : p)];
            visit((o * k_ + p) * inner_ + i, (o * n_ + at) * inner_ + i);
          }
    };
    if (!backward_) {
      DispatchAll(op, c.outputs[0].dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* a = static_cast<const T*>(c.inputs[0].raw());
        T* out = static_cast<T*>(c.outputs[0].raw());
        sdk::WithReq(req, [&](auto assign) { walk([&](int64_t dst, int64_t src) { assign(out[dst], a[src]); }); });
      });
      return;
    }
    DispatchFloat(op, c.outputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* g = static_cast<const T*>(c.inputs[0].raw());
      T* ga = static_cast<T*>(c.outputs[0].raw());
      if (req != WEFT_REQ_ADD) std::fill(ga, ga + outer_ * n_ * inner_, T(0));
      walk([&](int64_t small, int64_t big) { ga[big] += g[small]; });
    });
  }

 private:
  bool backward_, pick_;
  Mode mode_;
  int64_t outer_ = 1, n_ = 1, inner_ = 1, k_ = 1;
};

}  // namespace

void RegisterGatherKernels(KernelTable& t) {
  AddAny<WhereKernel>(t, "where", kIndexMask);
  AddAny<WhereKernel>(t, "_backward_where", kFloatMask);
  for (const char* op : {"take", "pick"}) AddAny<TakePickKernel>(t, op, kAllMask);
  for (const char* op : {"_backward_take", "_backward_pick"}) AddAny<TakePickKernel>(t, op, kFloatMask);
}

}  // namespace weft::cpu::tensor
