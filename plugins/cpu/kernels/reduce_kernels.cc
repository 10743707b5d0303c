// sum / mean / max over axis tuples (MXNet: axis=() reduces everything, negative axes count from
// the end, exclude=True reduces the axes not named; keepdims only changes the output shape) and
// their backward ops, float32 / float64.
//
// _backward_sum broadcasts the output gradient back over the reduced axes, _backward_mean also
// divides by the count, _backward_max routes it to every element equal to the maximum (MXNet's
// rule: tied maxima all receive the full gradient).
#include <vector>

#include "elemwise_driver.h"
#include "reduce_driver.h"
#include "tensor_kernels.h"

namespace weft::cpu::tensor {
namespace {

enum class Reduce { kSum, kMean, kMax };

Reduce KindOf(const std::string& op) {
  if (op.find("sum") != std::string::npos) return Reduce::kSum;
  if (op.find("mean") != std::string::npos) return Reduce::kMean;
  return Reduce::kMax;
}

class ReduceKernel {
 public:
  explicit ReduceKernel(const KernelSetup& s) : kind_(KindOf(s.op_name)) {
    backward_ = s.op_name.rfind("_backward_", 0) == 0;
    if (!backward_) {
      s.ExpectCounts(1, 1);
    } else {
      s.ExpectCounts(kind_ == Reduce::kMax ? 3 : 1, 1);  // out_grad[, data, output] -> data_grad
    }
    RequireSameDType(s);
    DispatchFloat(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    // The forward's input shape is the backward's output shape.
    data_ = Dims(backward_ ? s.outputs[0] : s.inputs[0]);
    std::vector<int64_t> axes = s.attrs.GetTuple("axis", {});
    const bool exclude = s.attrs.GetBool("exclude", false);
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
    if (kind_ == Reduce::kMax && count_ == 0 && kept_.Size() > 0) Invalid(s, "max over an empty axis");
  }

  void Compute(const KernelCall& c) const {
    DispatchFloat("reduce", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in0 = static_cast<const T*>(c.inputs[0].raw());
      T* out = static_cast<T*>(c.outputs[0].raw());
      const T scale = kind_ == Reduce::kMean ? (count_ == 0 ? T(0) : T(1) / static_cast<T>(count_)) : T(1);
      if (!backward_) {
        if (kind_ == Reduce::kMax) {
          ReduceTo(in0, data_, reduced_, out, c.req[0], MaxOp<T>());
        } else {
          ReduceTo(in0, data_, reduced_, out, c.req[0], SumOp<T>(), scale);
        }
      } else if (kind_ == Reduce::kMax) {
        const T* x = static_cast<const T*>(c.inputs[1].raw());
        const T* y = static_cast<const T*>(c.inputs[2].raw());
        MapBroadcast(
            out, data_, c.req[0], [](T g, T xv, T yv) { return xv == yv ? g : T(0); }, BroadcastIn<T>{in0, kept_},
            BroadcastIn<T>{x, data_}, BroadcastIn<T>{y, kept_});
      } else {
        MapBroadcast(
            out, data_, c.req[0], [scale](T g) { return g * scale; }, BroadcastIn<T>{in0, kept_});
      }
    });
  }

 private:
  Reduce kind_;
  bool backward_ = false;
  Dims data_, kept_;
  bool reduced_[WEFT_MAX_NDIM] = {};
  int64_t count_ = 1;
};

}  // namespace

void RegisterReduceKernels(KernelTable& t) {
  for (const char* op : {"sum", "mean", "max", "_backward_sum", "_backward_mean", "_backward_max"}) {
    t.Add<ReduceKernel>(op, kFloatMask);
  }
}

}  // namespace weft::cpu::tensor
