// weft GPU kernel layer — the tensor family's slices and joins (cpu: tensor_slice.cc,
// tensor_concat.cc): slice, slice_axis, Concat, SliceChannel and their backward ops, in every
// kMoveTypes dtype, as strided copies (gpu_strided.h).
#pragma once

#include <string>
#include <vector>

#include "gpu_kernel.h"
#include "gpu_strided.h"
#include "weft/sdk/ops/concat.hpp"
#include "weft/sdk/ops/slice.hpp"

namespace weft::WEFT_GPU_NS {

/// slice / slice_axis (weft/sdk/ops/slice.hpp ranges): forward gathers the box, backward scatters the
/// gradient into it (after zeroing the data gradient for req write).
template <class L>
class SliceKernel {
 public:
  explicit SliceKernel(const KernelSetup& s) : backward_(IsBackward(s)) {
    s.ExpectCounts(1, 1);
    RequireSameDType(s, kMoveTypes);
    const TensorDesc& data = backward_ ? s.outputs[0] : s.inputs[0];
    const TensorDesc& sliced = backward_ ? s.inputs[0] : s.outputs[0];
    std::vector<sdk::SliceRange> r;
    try {
      if (s.op_name.find("slice_axis") != std::string::npos) {
        int axis = 0;
        const sdk::SliceRange one = sdk::SliceAxisOpRange(s.Params<sdk::SliceAxisParam>(), data.shape, &axis);
        for (int i = 0; i < data.ndim(); ++i) r.push_back(i == axis ? one : sdk::SliceRange{0, 1, data.dim(i)});
      } else {
        r = sdk::SliceRanges(s.Params<sdk::SliceParam>(), data.shape);
      }
    } catch (const Error& e) {
      Invalid(s, e.what());
    }
    const Shape st = RowMajorStrides(data.shape);
    Shape box, step;
    int64_t base = 0;
    for (size_t a = 0; a < r.size(); ++a)
      box.push_back(r[a].len), step.push_back(r[a].step * st[a]), base += r[a].begin * st[a];
    if (sdk::detail::Elements(box) != sliced.size())
      Invalid(s, "sliced tensor " + ShapeOf(sliced) + " does not hold the slice " + sdk::FormatTuple(box));
    const Shape packed = RowMajorStrides(box);
    plan_ =
        backward_ ? MakeIndexPlan<2>(box, {step, packed}, {base, 0}) : MakeIndexPlan<2>(box, {packed, step}, {0, base});
  }
  void Compute(const DeviceCall& c) const {
    const DeviceTensor& out = c.outputs[0];
    if (backward_ && c.req[0] == WEFT_REQ_WRITE)
      L::Map(c, out.size(), FillAnyMap<ReqWrite>{L::template Ptr<void>(out), out.dtype(), IntScalar(0)});
    const int32_t req = backward_ && c.req[0] == WEFT_REQ_WRITE_INPLACE ? WEFT_REQ_WRITE : c.req[0];
    if (plan_.Size() > 0) RunCopy<L>(c, "slice", c.inputs[0].dtype(), req, plan_, c.inputs[0], out);
  }

 private:
  bool backward_;
  IndexPlan<2> plan_;
};

/// Concat / _backward_SliceChannel (join parts into the whole) and SliceChannel / _backward_Concat
/// (split): with outer = the extents before the axis, part p is `outer` blocks of len[p] elements,
/// interleaved in the whole at offset Σ len[q < p].
template <class L>
class AxisCopyKernel {
 public:
  explicit AxisCopyKernel(const KernelSetup& s) {
    join_ = s.op_name == "Concat" || s.op_name == "_backward_SliceChannel";
    const bool concat_attrs = s.op_name == "Concat" || s.op_name == "_backward_Concat";
    const char* attr = concat_attrs ? "dim" : "axis";
    int64_t n = 0, axis_value = 1;
    if (concat_attrs) {
      const auto p = s.Params<sdk::ConcatParam>();
      n = p.num_args, axis_value = p.dim;
    } else {
      const auto p = s.Params<sdk::SliceChannelParam>();
      n = p.num_outputs, axis_value = p.axis;
    }
    s.ExpectCounts(join_ ? -1 : 1, join_ ? 1 : -1);
    RequireSameDType(s, kMoveTypes);
    const TensorDesc& whole = join_ ? s.outputs[0] : s.inputs[0];
    const std::vector<TensorDesc>& parts = join_ ? s.inputs : s.outputs;
    if (parts.empty()) Invalid(s, "needs at least one part");
    if (n != static_cast<int64_t>(parts.size())) Invalid(s, "num attribute disagrees with the parts");
    const int axis = NormalizeAxis(s, axis_value, whole.ndim(), attr);
    int64_t outer = 1, total = 0;
    for (int a = 0; a < axis; ++a) outer *= whole.dim(a);
    std::vector<int64_t> len;
    for (const TensorDesc& p : parts) {
      if (outer != 0 && p.size() % outer != 0) Invalid(s, "a part does not split evenly along " + std::string(attr));
      len.push_back(outer == 0 ? 0 : p.size() / outer);
      total += len.back();
    }
    if (outer != 0 && total * outer != whole.size()) Invalid(s, "the parts do not add up to the whole");
    int64_t offset = 0;
    for (const int64_t l : len) {
      const Shape box{outer, l}, part{l, 1}, big{total, 1};
      plans_.push_back(join_ ? MakeIndexPlan<2>(box, {big, part}, {offset, 0})
                             : MakeIndexPlan<2>(box, {part, big}, {0, offset}));
      offset += l;
    }
  }
  void Compute(const DeviceCall& c) const {
    for (size_t p = 0; p < plans_.size(); ++p) {
      if (plans_[p].Size() == 0) continue;
      RunCopy<L>(c, "Concat", c.inputs[0].dtype(), join_ ? c.req[0] : c.req[p], plans_[p],
                 join_ ? c.inputs[p] : c.inputs[0], join_ ? c.outputs[0] : c.outputs[p]);
    }
  }

 private:
  bool join_ = false;
  std::vector<IndexPlan<2>> plans_;
};

/// Registers slice, slice_axis, Concat, SliceChannel and their backward ops for launcher L.
template <class L>
void RegisterTensorSliceKernels(sdk::KernelTable& t) {
  for (const char* op : {"slice", "_backward_slice", "slice_axis", "_backward_slice_axis"})
    t.Add<SliceKernel<L>>(op, kMoveTypes);
  for (const char* op : {"Concat", "_backward_Concat", "SliceChannel", "_backward_SliceChannel"})
    t.Add<AxisCopyKernel<L>>(op, kMoveTypes);
}

}  // namespace weft::WEFT_GPU_NS
