// The indexing and assignment ops of defs/indexing.cc, compiled for the baseline ISA only (none is
// on the training hot path):
//   _slice_assign, _slice_assign_scalar  output = the input with the box of slice (begin, end,
//                                        step; tensor_box.h) replaced by rhs / scalar; every
//                                        data-movement dtype.
//   _set_value                           output = src everywhere.
//   gather_nd, _backward_gather_nd       indices (M, Y…) address data's first M axes; negative
//   scatter_nd, _backward_scatter_nd     positions count from the end (MXNet); a position outside
//   _scatter_set_nd                      the axis fails the call (at the next wait). Data of
//                                        every data-movement dtype (the backward ops all but
//                                        int8 / uint8), indices of any dtype (MXNet).
//   _onehot_encode                       output[i, lhs[i]] = 1, zeros elsewhere.
//   _histogram                           counts per bin (int64) and the bin edges.
// Positions may come in any index dtype (float values truncated toward zero, as MXNet).
#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor_box.h"
#include "weft/sdk/ops/indexing.hpp"

namespace weft::cpu::tensor {
namespace {

// ---- _slice_assign, _slice_assign_scalar, _set_value ------------------------------------------

class SliceAssignKernel {
 public:
  explicit SliceAssignKernel(const KernelSetup& s) : scalar_(s.op_name == "_slice_assign_scalar") {
    s.ExpectCounts(scalar_ ? 1 : 2, 1);
    const TensorDesc& lhs = s.inputs[0];
    RequireSameDType(s);
    DispatchAll(s.op_name.c_str(), lhs.dtype, [](auto) {});
    if (lhs.shape != s.outputs[0].shape) Invalid(s, "the output must have the input's shape");
    box_ = SliceBox(s, lhs);
    if (!scalar_ && s.inputs[1].size() != box_.extent.Size())
      Invalid(s, "rhs has shape " + sdk::FormatTuple(s.inputs[1].shape) + ", the slice of " +
                     sdk::FormatTuple(lhs.shape) + " is " + box_.extent.Str());
    value_ = scalar_ ? s.Params<sdk::SliceAssignScalarParam>().scalar : 0.0;
  }
  void Compute(const KernelCall& c) const {
    const Tensor& lhs = c.inputs[0];
    const Tensor& out = c.outputs[0];
    if (sdk::IsNull(c.req[0])) return;
    DispatchAll("_slice_assign", lhs.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      // Add-to adds the assigned array: build it aside, then add.
      std::vector<T> sum;
      T* dst = static_cast<T*>(out.raw());
      if (c.req[0] == WEFT_REQ_ADD) {
        sum.assign(static_cast<const T*>(lhs.raw()), static_cast<const T*>(lhs.raw()) + lhs.size());
        dst = sum.data();
      } else {
        CopyOrAdd(dst, lhs.raw(), lhs.size(), lhs.dtype(), WEFT_REQ_WRITE);
      }
      if (scalar_) {
        const T v = Convert<T>(value_);
        WalkBox(box_, [&](int64_t, int64_t off) { dst[off] = v; });
      } else {
        const T* rhs = static_cast<const T*>(c.inputs[1].raw());
        WalkBox(box_, [&](int64_t packed, int64_t off) { dst[off] = rhs[packed]; });
      }
      if (!sum.empty()) CopyOrAdd(out.raw(), sum.data(), out.size(), out.dtype(), WEFT_REQ_ADD);
    });
  }

 private:
  bool scalar_;
  Box box_;
  double value_ = 0;
};

class SetValueKernel {
 public:
  explicit SetValueKernel(const KernelSetup& s) : value_(s.Params<sdk::SetValueParam>().src) {
    s.ExpectCounts(0, 1);
    DispatchAll(s.op_name.c_str(), s.outputs[0].dtype, [](auto) {});
  }
  void Compute(const KernelCall& c) const {
    FillOrAdd(c.outputs[0].raw(), value_, c.outputs[0].size(), c.outputs[0].dtype(), c.req[0]);
  }

 private:
  double value_;
};

// ---- gather_nd, scatter_nd, _scatter_set_nd ------------------------------------------------------

// The geometry shared by the nd ops: `big` is the addressed tensor (gather's data, scatter's
// output), indices (M, N…) with N = prod(Y), each position addressing a block of `block` elements.
struct NdPlan {
  int64_t m = 0, n = 0, block = 1;
  std::vector<int64_t> extent, stride;  // of big's first M axes, in blocks

  NdPlan(const KernelSetup& s, const TensorDesc& big, const TensorDesc& indices, const TensorDesc& small) {
    if (indices.ndim() < 1) Invalid(s, "indices must have at least one axis (M, ...)");
    m = indices.shape[0];
    if (m < 1 || m > big.ndim())
      Invalid(s, "indices address " + std::to_string(m) + " axes of a tensor of " + std::to_string(big.ndim()));
    n = m == 0 ? 0 : indices.size() / m;
    const Dims b(big);
    block = b.Prod(static_cast<int>(m), b.ndim);
    extent.assign(big.shape.begin(), big.shape.begin() + m);
    stride.assign(static_cast<size_t>(m), 1);
    for (int64_t a = m - 2; a >= 0; --a) stride[static_cast<size_t>(a)] = stride[a + 1] * extent[a + 1];
    if (small.size() != n * block)
      Invalid(s, "the gathered side has " + std::to_string(small.size()) + " elements, indices " +
                     sdk::FormatTuple(indices.shape) + " and " + sdk::FormatTuple(big.shape) + " give " +
                     std::to_string(n * block));
    DispatchAll(s.op_name.c_str(), indices.dtype, [](auto) {});
  }

  // Block offsets (in elements) of big for each of the n positions; throws on one out of range.
  std::vector<int64_t> Offsets(const Tensor& indices, const char* op) const {
    std::vector<int64_t> off(static_cast<size_t>(n), 0);
    DispatchAll(op, indices.dtype(), [&](auto tag) {  // indices of any dtype (MXNet)
      using I = typename decltype(tag)::type;
      const I* idx = static_cast<const I*>(indices.raw());
      for (int64_t a = 0; a < m; ++a) {
        for (int64_t i = 0; i < n; ++i) {
          int64_t p = Convert<int64_t>(idx[a * n + i]);
          if (p < 0) p += extent[static_cast<size_t>(a)];
          if (p < 0 || p >= extent[static_cast<size_t>(a)])
            throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                             std::string(op) + ": index " + std::to_string(Convert<int64_t>(idx[a * n + i])) +
                                 " is out of range for axis " + std::to_string(a) + " of extent " +
                                 std::to_string(extent[static_cast<size_t>(a)]));
          off[static_cast<size_t>(i)] += p * stride[static_cast<size_t>(a)] * block;
        }
      }
    });
    return off;
  }
};

enum class Nd { kGather, kGatherBackward, kScatter, kScatterBackward, kScatterSet };

Nd NdKind(const std::string& op) {
  if (op == "gather_nd") return Nd::kGather;
  if (op == "_backward_gather_nd") return Nd::kGatherBackward;
  if (op == "scatter_nd") return Nd::kScatter;
  if (op == "_backward_scatter_nd") return Nd::kScatterBackward;
  return Nd::kScatterSet;
}

// Slots per kind: (big, indices, small) tensors of the setup, and whether the kernel gathers
// (big -> small) or scatters (small -> big).
class NdKernel {
 public:
  explicit NdKernel(const KernelSetup& s) : kind_(NdKind(s.op_name)), plan_(Plan(s, NdKind(s.op_name))) {}

  void Compute(const KernelCall& c) const {
    const char* op = kind_ == Nd::kGather || kind_ == Nd::kScatterBackward ? "gather_nd" : "scatter_nd";
    if (kind_ == Nd::kGatherBackward || kind_ == Nd::kScatterBackward)  // the indices' gradient
      FillOrAdd(c.outputs[1].raw(), 0.0, c.outputs[1].size(), c.outputs[1].dtype(), c.req[1]);
    const Tensor& indices = c.inputs[kind_ == Nd::kGather || kind_ == Nd::kScatter ? 1 : 2];
    const std::vector<int64_t> off = plan_.Offsets(indices, op);
    const int32_t req = c.req[0];
    if (sdk::IsNull(req)) return;
    DispatchAll(op, c.outputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = static_cast<T*>(c.outputs[0].raw());
      const int64_t block = plan_.block;
      switch (kind_) {
        case Nd::kGather:
        case Nd::kScatterBackward: {  // out (small) <- in (big) at the positions
          const T* big = static_cast<const T*>(c.inputs[0].raw());
          sdk::WithReq(req, [&](auto assign) {
            for (int64_t i = 0; i < plan_.n; ++i)
              for (int64_t k = 0; k < block; ++k) assign(out[i * block + k], big[off[i] + k]);
          });
          return;
        }
        case Nd::kGatherBackward: {  // data grad (big) = sum of out_grad (small) per position
          const T* g = static_cast<const T*>(c.inputs[0].raw());
          if (req != WEFT_REQ_ADD) std::fill(out, out + c.outputs[0].size(), T(0));
          for (int64_t i = 0; i < plan_.n; ++i)
            for (int64_t k = 0; k < block; ++k) out[off[i] + k] += g[i * block + k];
          return;
        }
        default: {  // scatter_nd onto zeros, _scatter_set_nd onto lhs; a repeated position keeps the last
          const bool onto_lhs = kind_ == Nd::kScatterSet;
          const T* small = static_cast<const T*>(c.inputs[onto_lhs ? 1 : 0].raw());
          const int64_t total = c.outputs[0].size();
          std::vector<T> result(static_cast<size_t>(total), T(0));
          if (onto_lhs) std::copy_n(static_cast<const T*>(c.inputs[0].raw()), total, result.begin());
          for (int64_t i = 0; i < plan_.n; ++i)
            for (int64_t k = 0; k < block; ++k) result[static_cast<size_t>(off[i] + k)] = small[i * block + k];
          CopyOrAdd(out, result.data(), total, c.outputs[0].dtype(), req);
        }
      }
    });
  }

 private:
  static NdPlan Plan(const KernelSetup& s, Nd kind) {
    switch (kind) {
      case Nd::kGather:  // data, indices -> output
        s.ExpectCounts(2, 1);
        return NdPlan(s, s.inputs[0], s.inputs[1], s.outputs[0]);
      case Nd::kGatherBackward:  // out_grad, data, indices -> data grad, indices grad
        s.ExpectCounts(3, 2);
        return NdPlan(s, s.outputs[0], s.inputs[2], s.inputs[0]);
      case Nd::kScatter:  // data, indices -> output
        s.ExpectCounts(2, 1);
        return NdPlan(s, s.outputs[0], s.inputs[1], s.inputs[0]);
      case Nd::kScatterBackward:  // out_grad, data, indices -> data grad, indices grad
        s.ExpectCounts(3, 2);
        return NdPlan(s, s.inputs[0], s.inputs[2], s.outputs[0]);
      default:  // lhs, rhs, indices -> output
        s.ExpectCounts(3, 1);
        return NdPlan(s, s.outputs[0], s.inputs[2], s.inputs[1]);
    }
  }

  Nd kind_;
  NdPlan plan_;
};

// ---- _onehot_encode, _histogram -----------------------------------------------------------------

class OneHotEncodeKernel {
 public:
  explicit OneHotEncodeKernel(const KernelSetup& s) {
    s.ExpectCounts(2, 1);
    DispatchIndex(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    DispatchIndex(s.op_name.c_str(), s.outputs[0].dtype, [](auto) {});
    if (s.outputs[0].ndim() != 2 || s.outputs[0].shape[0] != s.inputs[0].size())
      Invalid(s, "output must be (N, depth) for N = " + std::to_string(s.inputs[0].size()) + " indices");
    depth_ = s.outputs[0].shape[1];
  }
  void Compute(const KernelCall& c) const {
    const Tensor& out = c.outputs[0];
    DispatchIndex("_onehot_encode", c.inputs[0].dtype(), [&](auto itag) {
      using I = typename decltype(itag)::type;
      const I* idx = static_cast<const I*>(c.inputs[0].raw());
      DispatchIndex("_onehot_encode", out.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* y = static_cast<T*>(out.raw());
        sdk::WithReq(c.req[0], [&](auto assign) {
          for (int64_t i = 0; i < c.inputs[0].size(); ++i) {
            const int64_t hot = Convert<int64_t>(idx[i]);
            for (int64_t j = 0; j < depth_; ++j) assign(y[i * depth_ + j], j == hot ? T(1) : T(0));
          }
        });
      });
    });
  }

 private:
  int64_t depth_ = 0;
};

// Outputs: counts (int64), edges (data's dtype). Edges come from input 1 (bins) or from bin_cnt
// equal bins over range.
class HistogramKernel {
 public:
  explicit HistogramKernel(const KernelSetup& s) {
    s.ExpectCounts(-1, 2);
    DispatchFloat(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    if (s.outputs[0].dtype != WEFT_DTYPE_INT64) Invalid(s, "the counts must be int64");
    const auto p = s.Params<sdk::HistogramParam>();  // range checked: (min, max), min < max
    if (p.bin_cnt) {
      bins_ = *p.bin_cnt;
      lo_ = (*p.range)[0], hi_ = (*p.range)[1];
    } else if (s.inputs.size() == 2) {
      bins_ = std::max<int64_t>(s.inputs[1].size() - 1, 0);
    } else {
      Invalid(s, "needs the bins input or bin_cnt");
    }
    if (s.outputs[0].size() != bins_ || s.outputs[1].size() != bins_ + 1) Invalid(s, "outputs do not fit the bins");
  }
  void Compute(const KernelCall& c) const {
    DispatchFloat("_histogram", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = static_cast<const T*>(c.inputs[0].raw());
      std::vector<double> edges(static_cast<size_t>(bins_ + 1));
      if (c.inputs.size() == 2) {
        const T* b = static_cast<const T*>(c.inputs[1].raw());
        for (int64_t i = 0; i <= bins_; ++i) edges[i] = static_cast<double>(b[i]);
      } else {
        for (int64_t i = 0; i <= bins_; ++i) edges[i] = lo_ + (hi_ - lo_) * static_cast<double>(i) / bins_;
      }
      std::vector<int64_t> counts(static_cast<size_t>(bins_), 0);
      for (int64_t i = 0; i < c.inputs[0].size() && bins_ > 0; ++i) {
        const double v = static_cast<double>(x[i]);
        if (!(v >= edges.front() && v <= edges.back())) continue;
        // The bin whose [edge, next edge) holds v; the last edge belongs to the last bin.
        int64_t k = std::upper_bound(edges.begin(), edges.end(), v) - edges.begin() - 1;
        ++counts[static_cast<size_t>(std::min(k, bins_ - 1))];
      }
      CopyOrAdd(c.outputs[0].raw(), counts.data(), bins_, WEFT_DTYPE_INT64, c.req[0]);
      std::vector<T> e(edges.begin(), edges.end());
      CopyOrAdd(c.outputs[1].raw(), e.data(), bins_ + 1, c.outputs[1].dtype(), c.req[1]);
    });
  }

 private:
  int64_t bins_ = 0;
  double lo_ = 0, hi_ = 1;
};

}  // namespace

void RegisterAssignKernels(KernelTable& t) {
  AddAny<SliceAssignKernel>(t, "_slice_assign", kAllMask);
  AddAny<SliceAssignKernel>(t, "_slice_assign_scalar", kAllMask);
  AddAny<SetValueKernel>(t, "_set_value", kAllMask);
  for (const char* op : {"gather_nd", "scatter_nd", "_scatter_set_nd"}) AddAny<NdKernel>(t, op, kAllMask);
  // Gradients in integer dtypes too (MXNet differentiates an int32 array), but not int8 / uint8
  // (MXNet refuses those).
  for (const char* op : {"_backward_gather_nd", "_backward_scatter_nd"}) AddAny<NdKernel>(t, op, kAllButByteMask);
  AddAny<OneHotEncodeKernel>(t, "_onehot_encode", kIndexMask);
  AddAny<HistogramKernel>(t, "_histogram", kFloatMask);
}

}  // namespace weft::cpu::tensor
