// weft GPU kernel layer — the reduce family (cpu: reduce_kernels.cc): sum, mean, max and their
// backward ops, float32 and float64, as ReduceMap / BroadcastMap walks (gpu_broadcast.h). A
// reduction to few outputs runs in two passes through a partials workspace (ReduceParts), or
// through the launcher's vendor reduction (rocPRIM on HIP) when it folds every element.
#pragma once

#include <string>
#include <vector>

#include "gpu_broadcast.h"
#include "gpu_kernel.h"
#include "gpu_strided.h"
#include "weft/sdk/ops/reduce.hpp"

namespace weft::WEFT_GPU_NS {

/// sum / mean / max over `axis` (() = all; exclude inverts; keepdims only shapes the output) and
/// their backward ops: sum / mean broadcast out_grad back (mean divided by the count), max routes
/// it to every element equal to the maximum (inputs out_grad, data, output).
template <class L>
class ReduceKernel {
 public:
  explicit ReduceKernel(const KernelSetup& s) : backward_(IsBackward(s)) {
    const std::string& n = s.op_name;
    max_ = n.find("max") != std::string::npos;
    const bool mean = n.find("mean") != std::string::npos;
    s.ExpectCounts(backward_ && max_ ? 3 : 1, 1);
    RequireSameDType(s, kFloatTypes);
    const Shape& data = (backward_ ? s.outputs[0] : s.inputs[0]).shape;
    const auto p = s.Params<sdk::ReduceParam>();
    const std::vector<int64_t>& axes = p.axis;
    const bool exclude = p.exclude;
    std::vector<bool> named(data.size(), false), reduced(data.size());
    for (int64_t a : axes) {
      const int ax = NormalizeAxis(s, a, static_cast<int>(data.size()), "axis");
      if (named[static_cast<size_t>(ax)]) Invalid(s, "axis " + sdk::FormatTuple(axes) + " names an axis twice");
      named[static_cast<size_t>(ax)] = true;
    }
    Shape kept = data;
    int64_t count = 1;
    for (size_t a = 0; a < data.size(); ++a) {
      reduced[a] = axes.empty() ? !exclude : named[a] != exclude;
      if (reduced[a]) count *= data[a], kept[a] = 1;
    }
    const TensorDesc& small = backward_ ? s.inputs[0] : s.outputs[0];
    if (small.size() != sdk::detail::Elements(kept))
      Invalid(s, "reducing " + sdk::FormatTuple(data) + " gives " + sdk::FormatTuple(kept) + ", not " + ShapeOf(small));
    if (max_ && count == 0 && sdk::detail::Elements(kept) > 0) Invalid(s, "max over an empty axis");
    count_ = count;
    const Shape zeros(data.size(), 0);
    if (!backward_) {
      reduce_ = MakeReducePlan<3>(data, reduced, {RowMajorStrides(data), zeros, zeros});
      parts_ = ReduceParts(small.size(), reduce_.red_count);
      if (parts_ > 1)
        partials_bytes_ = static_cast<uint64_t>(small.size() * parts_) * sdk::ElementSize(s.inputs[0].dtype);
      if (small.size() == 1 && count > 0)  // every element of the (contiguous) input: a vendor reduction?
        WithFloatType("reduction", s.inputs[0].dtype, [&](auto tag) {
          vendor_bytes_ = L::template FullReduceBytes<typename decltype(tag)::type>(count, max_);
        });
    } else {
      const Shape ks = BroadcastStrides(kept, data);
      map_ = MakeIndexPlan<3>(data, {ks, RowMajorStrides(data), ks});
    }
    mean_ = mean;
  }
  uint64_t WorkspaceBytes() const { return partials_bytes_ > vendor_bytes_ ? partials_bytes_ : vendor_bytes_; }
  void Compute(const DeviceCall& c) const {
    WithFloatType("reduction", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      // The cpu's mean scale: 1 / count in the element type.
      const T scale = !mean_ ? T(1) : count_ == 0 ? T(0) : T(1) / static_cast<T>(count_);
      auto in = [&](size_t i) { return L::template Ptr<const T>(c.inputs[i]); };
      T* out = L::template Ptr<T>(c.outputs[0]);
      WithReq(c.req[0], [&](auto a) {
        using A = decltype(a);
        if (!backward_ && vendor_bytes_ > 0 &&
            L::template FullReduce<T, A>(c, in(0), count_, max_, scale, out, L::template Ptr<void>(c.workspace),
                                         vendor_bytes_)) {
          return;                               // rocPRIM on HIP
        } else if (!backward_ && parts_ > 1) {  // few outputs: the reduced range split over many items
          T* partials = L::template Ptr<T>(c.workspace);
          ReduceMap<T, ReqWrite> first{Term::kIdentity, BinOp::kAdd, max_,    T(1),    reduce_,
                                       in(0),           nullptr,     nullptr, partials};
          first.parts = parts_;
          L::Map(c, c.outputs[0].size() * parts_, first);
          L::Map(c, c.outputs[0].size(), ReducePartsMap<T, A>{max_, scale, parts_, partials, out});
        } else if (!backward_) {
          L::Map(c, c.outputs[0].size(),
                 ReduceMap<T, A>{Term::kIdentity, BinOp::kAdd, max_, scale, reduce_, in(0), nullptr, nullptr, out});
        } else if (max_) {
          L::Map(c, c.outputs[0].size(),
                 BroadcastMap<T, A>{Term::kMaxGrad, BinOp::kAdd, T(1), map_, in(0), in(1), in(2), out});
        } else {
          L::Map(c, c.outputs[0].size(),
                 BroadcastMap<T, A>{Term::kIdentity, BinOp::kAdd, scale, map_, in(0), nullptr, nullptr, out});
        }
      });
    });
  }

 private:
  bool backward_, max_ = false, mean_ = false;
  int64_t count_ = 1;
  int64_t parts_ = 1;  // > 1: two passes through a partials workspace (ReduceParts)
  uint64_t partials_bytes_ = 0;
  uint64_t vendor_bytes_ = 0;  // > 0: L's vendor reduction over all elements (FullReduce)
  ReducePlan<3> reduce_;
  IndexPlan<3> map_;
};

/// Registers sum, mean, max and their backward ops for launcher L.
template <class L>
void RegisterReduceKernels(sdk::KernelTable& t) {
  for (const char* op : {"sum", "mean", "max", "_backward_sum", "_backward_mean", "_backward_max"})
    t.Add<ReduceKernel<L>>(op, kFloatTypes);
}

}  // namespace weft::WEFT_GPU_NS
