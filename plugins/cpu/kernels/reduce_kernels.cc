// sum / mean / max / min / prod / nansum / nanprod / norm / _square_sum over axis tuples (MXNet: axis=() or None
// reduces everything, negative axes count from the end, exclude=True reduces the axes not named; keepdims only changes
// the output shape) and their backward ops, float32 / float64; max and min also reduce int32 and int64 arrays (forward
// only: MXNet's frontend takes indices.max() of sparse parts). Only float32 sum, mean, max and min (the training
// path's) run in isa_dispatch.h's per-ISA variants; float64 and the other reductions have one baseline copy (issue 34:
// their ISA copies made this file one of the build's slowest).
//
// _backward_sum broadcasts the output gradient back over the reduced axes, _backward_mean also
// divides by the count, _backward_max / _backward_min route it to every element equal to the
// extremum (MXNet's rule: tied extrema all receive the full gradient), _backward_prod multiplies
// by output / x (MXNet's formula: a zero x gives inf or NaN there, as in MXNet), _backward_nansum
// passes it where x is not NaN. norm (ord 1 or 2) sums |x| or x² (then the square root);
// _backward_norm gives out_grad·sign(x) or out_grad·x / norm. _square_sum sums x² (MXNet's fused op
// for row_sparse weights) and _backward_square_sum gives 2·x·out_grad.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "elemwise_driver.h"
#include "reduce_driver.h"
#include "tensor_kernels.h"
#include "weft/sdk/ops/reduce.hpp"

namespace weft::cpu::tensor {
namespace {

constexpr uint64_t kIntegerMask = WEFT_DTYPE_BIT(WEFT_DTYPE_INT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT64);

// Min: identity +inf (max for integers); a NaN wins, as in MaxOp.
template <typename T>
struct MinOp {
  static T Init() {
    if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::max();
  }
  T operator()(T a, T b) const {
    const T m = b < a ? b : a;
    return IsNan(b) ? b : m;
  }
};

// Product: identity 1.
template <typename T>
struct ProdOp {
  static T Init() { return T(1); }
  T operator()(T a, T b) const { return a * b; }
};

// Sum that counts NaN as 0 (MXNet's nansum). Partial sums are never NaN, so folding them with
// the same operator is exact.
template <typename T>
struct NanSumOp {
  static T Init() { return T(0); }
  T operator()(T a, T b) const { return a + (IsNan(b) ? T(0) : b); }
};

// Product that counts NaN as 1 (MXNet's nanprod).
template <typename T>
struct NanProdOp {
  static T Init() { return T(1); }
  T operator()(T a, T b) const { return a * (IsNan(b) ? T(1) : b); }
};

enum class Reduce { kSum, kMean, kMax, kMin, kProd, kNanSum, kNanProd, kNorm, kSquareSum };

Reduce KindOf(const std::string& op) {
  const std::string base = op.rfind("_backward_", 0) == 0 ? op.substr(10) : op;
  if (base == "sum") return Reduce::kSum;
  if (base == "mean") return Reduce::kMean;
  if (base == "min") return Reduce::kMin;
  if (base == "prod") return Reduce::kProd;
  if (base == "nansum") return Reduce::kNanSum;
  if (base == "nanprod") return Reduce::kNanProd;
  if (base == "norm") return Reduce::kNorm;
  if (base == "_square_sum" || base == "square_sum") return Reduce::kSquareSum;  // backward: MXNet's name
  return Reduce::kMax;
}

// Backward inputs after out_grad: x (and the output) for the kinds whose gradient needs them.
int BackwardInputs(Reduce k) {
  if (k == Reduce::kSum || k == Reduce::kMean) return 1;
  return k == Reduce::kNanSum || k == Reduce::kSquareSum ? 2 : 3;
}

class ReduceKernel {
 public:
  explicit ReduceKernel(const KernelSetup& s) : kind_(KindOf(s.op_name)) {
    backward_ = s.op_name.rfind("_backward_", 0) == 0;
    if (!backward_) {
      s.ExpectCounts(1, 1);
    } else {
      s.ExpectCounts(BackwardInputs(kind_), 1);  // out_grad[, data[, output]] -> data_grad
    }
    RequireSameDType(s);
    integer_ = s.inputs[0].dtype == WEFT_DTYPE_INT32 || s.inputs[0].dtype == WEFT_DTYPE_INT64;
    if (!integer_) DispatchFloat(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    if (integer_ && (backward_ || (kind_ != Reduce::kMax && kind_ != Reduce::kMin)))
      Unsupported(s, "int32 and int64 arrays have max and min only");
    // The forward's input shape is the backward's output shape.
    data_ = Dims(backward_ ? s.outputs[0] : s.inputs[0]);
    // norm has its own attributes (no exclude).
    const std::vector<int64_t> axes =
        kind_ == Reduce::kNorm ? s.Params<sdk::NormParam>().axis : s.Params<sdk::ReduceParam>().axis;
    const bool exclude = kind_ != Reduce::kNorm && s.Params<sdk::ReduceParam>().exclude;
    bool named[WEFT_MAX_NDIM] = {};
    for (int64_t a : axes) {
      const int ax = NormalizeAxis(s, a, data_.ndim, "axis");
      if (named[ax]) Invalid(s, "axis " + sdk::FormatTuple(axes) + " names axis " + std::to_string(ax) + " twice");
      named[ax] = true;
    }
    for (int a = 0; a < data_.ndim; ++a) reduced_[a] = axes.empty() ? !exclude : named[a] != exclude;
    kept_ = KeepDims(data_, reduced_);
    count_ = ReducedCount(data_, reduced_);
    const TensorDesc& small = backward_ ? s.inputs[0] : s.outputs[0];
    if (small.size() != kept_.Size()) {
      Invalid(s, "reducing " + data_.Str() + " gives " + std::to_string(kept_.Size()) + " elements, the " +
                     (backward_ ? "output gradient" : "output") + " has " + std::to_string(small.size()));
    }
    if ((kind_ == Reduce::kMax || kind_ == Reduce::kMin) && count_ == 0 && kept_.Size() > 0)
      Invalid(s, "max/min over an empty axis");
    if (kind_ == Reduce::kNorm) {
      ord_ = s.Params<sdk::NormParam>().ord;  // 1 or 2
    }
  }

  void Compute(const KernelCall& c) const {
    if (integer_) {
      DispatchMask<kIntegerMask>("reduce", c.inputs[0].dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* in0 = static_cast<const T*>(c.inputs[0].raw());
        T* out = static_cast<T*>(c.outputs[0].raw());
        if (kind_ == Reduce::kMax) return ReduceTo<false>(in0, data_, reduced_, out, c.req[0], MaxOp<T>());
        ReduceTo<false>(in0, data_, reduced_, out, c.req[0], MinOp<T>());
      });
      return;
    }
    DispatchFloat("reduce", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      constexpr bool kIsa = std::is_same_v<T, float>;
      const T* in0 = static_cast<const T*>(c.inputs[0].raw());
      T* out = static_cast<T*>(c.outputs[0].raw());
      if (backward_) {
        Backward<kIsa, T>(c, in0, out);
        return;
      }
      const T scale = kind_ == Reduce::kMean ? (count_ == 0 ? T(0) : T(1) / static_cast<T>(count_)) : T(1);
      switch (kind_) {
        case Reduce::kMax:
          return ReduceTo<kIsa>(in0, data_, reduced_, out, c.req[0], MaxOp<T>());
        case Reduce::kMin:
          return ReduceTo<kIsa>(in0, data_, reduced_, out, c.req[0], MinOp<T>());
        case Reduce::kProd:
          return ReduceTo<false>(in0, data_, reduced_, out, c.req[0], ProdOp<T>());
        case Reduce::kNanSum:
          return ReduceTo<false>(in0, data_, reduced_, out, c.req[0], NanSumOp<T>());
        case Reduce::kNanProd:
          return ReduceTo<false>(in0, data_, reduced_, out, c.req[0], NanProdOp<T>());
        case Reduce::kNorm:
        case Reduce::kSquareSum:
          return Norm(in0, out, c.req[0]);
        default:
          return ReduceTo<kIsa>(in0, data_, reduced_, out, c.req[0], SumOp<T>(), scale);
      }
    });
  }

 private:
  // Σ|x| or sqrt(Σx²) (norm), or Σx² (_square_sum), through a temporary of the mapped elements;
  // baseline ISA.
  template <typename T>
  void Norm(const T* x, T* out, int32_t req) const {
    if (sdk::IsNull(req)) return;
    const int64_t n = data_.Size(), m = kept_.Size();
    std::vector<T> mapped(static_cast<size_t>(n)), acc(static_cast<size_t>(m));
    if (ord_ == 1) {
      Map<false>(
          mapped.data(), n, WEFT_REQ_WRITE, [](T v) { return v < T(0) ? -v : v; }, x);
    } else {
      Map<false>(
          mapped.data(), n, WEFT_REQ_WRITE, [](T v) { return v * v; }, x);
    }
    ReduceTo<false>(mapped.data(), data_, reduced_, acc.data(), WEFT_REQ_WRITE, SumOp<T>());
    if (ord_ == 2 && kind_ == Reduce::kNorm) {
      Map<false>(
          out, m, req, [](T v) { return std::sqrt(v); }, acc.data());
    } else {
      Map<false>(
          out, m, req, [](T v) { return v; }, acc.data());
    }
  }

  // kIsa: sum and mean's gradient (a broadcast) per ISA; the others' one loop in the baseline copy.
  template <bool kIsa, typename T>
  void Backward(const KernelCall& c, const T* g, T* out) const {
    const int32_t req = c.req[0];
    if (kind_ == Reduce::kSum || kind_ == Reduce::kMean) {
      const T scale = kind_ == Reduce::kMean ? (count_ == 0 ? T(0) : T(1) / static_cast<T>(count_)) : T(1);
      MapBroadcast<kIsa>(
          out, data_, req, [scale](T gv) { return gv * scale; }, BroadcastIn<T>{g, kept_});
      return;
    }
    // One three-input loop for every kind, compiled once, keeps the build small; the kind is fixed
    // per call, so its branch is predictable. nansum has no output input.
    const T* x = static_cast<const T*>(c.inputs[1].raw());
    const bool two_inputs = kind_ == Reduce::kNanSum || kind_ == Reduce::kSquareSum;
    const T* y = two_inputs ? g : static_cast<const T*>(c.inputs[2].raw());
    const Reduce kind = kind_;
    const bool l1 = ord_ == 1;
    MapBroadcast<false>(
        out, data_, req,
        [kind, l1](T gv, T xv, T yv) {
          switch (kind) {
            case Reduce::kNanSum:
              return IsNan(xv) ? T(0) : gv;
            case Reduce::kSquareSum:
              return T(2) * xv * gv;
            case Reduce::kProd:
              return gv * (yv / xv);
            case Reduce::kNanProd:
              return IsNan(xv) ? T(0) : gv * (yv / xv);
            case Reduce::kNorm:
              if (l1) return xv > T(0) ? gv : xv < T(0) ? -gv : T(0);
              return gv * (xv / yv);
            default:  // max, min: every element equal to the extremum
              return xv == yv ? gv : T(0);
          }
        },
        BroadcastIn<T>{g, kept_}, BroadcastIn<T>{x, data_}, BroadcastIn<T>{y, kept_});
  }

  Reduce kind_;
  bool backward_ = false, integer_ = false;
  Dims data_, kept_;
  bool reduced_[WEFT_MAX_NDIM] = {};
  int64_t count_ = 1;
  int64_t ord_ = 2;
};

}  // namespace

void RegisterReduceKernels(KernelTable& t) {
  for (const char* op : {"sum", "mean", "max", "min", "prod", "nansum", "nanprod", "norm"}) {
    const bool extremum = std::string(op) == "max" || std::string(op) == "min";
    AddAny<ReduceKernel>(t, op, extremum ? kFloatMask | kIntegerMask : kFloatMask);
    AddAny<ReduceKernel>(t, std::string("_backward_") + op, kFloatMask);
  }
  // MXNet names _square_sum's backward _backward_square_sum (one underscore).
  AddAny<ReduceKernel>(t, "_square_sum", kFloatMask);
  AddAny<ReduceKernel>(t, "_backward_square_sum", kFloatMask);
}

}  // namespace weft::cpu::tensor
