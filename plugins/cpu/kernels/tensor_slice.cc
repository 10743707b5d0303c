// slice, slice_axis and slice_like (MXNet 1.9), forward and backward, every data-movement dtype.
// slice_like's box starts at 0 with the sliced tensor's extents; its shape_like input gets a zero
// gradient.
//
// Both cut a strided box out of the input: per axis a range (begin, step, len) computed by
// weft/sdk/ops/slice.hpp, the rule core's shape inference uses too. The forward gathers the box into
// the contiguous output; the backward scatters the output gradient into the box of the data
// gradient and (for req write) zeroes everything outside it.
#include <vector>

#include "tensor_box.h"

namespace weft::cpu::tensor {
namespace {

class SliceKernel {
 public:
  explicit SliceKernel(const KernelSetup& s) : backward_(s.op_name.rfind("_backward_", 0) == 0) {
    const bool like = s.op_name.find("slice_like") != std::string::npos;
    s.ExpectCounts(like && !backward_ ? 2 : 1, like && backward_ ? 2 : 1);
    const TensorDesc& data = backward_ ? s.outputs[0] : s.inputs[0];
    const TensorDesc& sliced = backward_ ? s.inputs[0] : s.outputs[0];
    if (data.dtype != sliced.dtype) Invalid(s, "data and output dtypes differ");
    DispatchAll(s.op_name.c_str(), data.dtype, [](auto) {});
    if (like) {
      if (sliced.ndim() != data.ndim()) Invalid(s, "data and output must have the same number of axes");
      std::vector<sdk::SliceRange> r;
      for (int64_t len : sliced.shape) r.push_back(sdk::SliceRange{0, 1, len});
      box_ = MakeBox(Dims(data), r);
    } else if (s.op_name.find("slice_axis") != std::string::npos) {
      std::vector<sdk::SliceRange> r;
      try {
        int axis = 0;
        const sdk::SliceRange one = sdk::SliceAxisOpRange(s.Params<sdk::SliceAxisParam>(), data.shape, &axis);
        for (int i = 0; i < data.ndim(); ++i)
          r.push_back(i == axis ? one : sdk::SliceRange{0, 1, data.shape[static_cast<size_t>(i)]});
      } catch (const sdk::Error& e) {
        Invalid(s, e.what());
      }
      box_ = MakeBox(Dims(data), r);
    } else {
      box_ = SliceBox(s, data);
    }
    if (Dims(sliced).Size() != box_.extent.Size())
      Invalid(s,
              "sliced tensor has shape " + sdk::FormatTuple(sliced.shape) + ", the slice gives " + box_.extent.Str());
  }

  void Compute(const KernelCall& c) const {
    if (c.outputs.size() > 1) FillOrAdd(c.outputs[1].raw(), 0.0, c.outputs[1].size(), c.outputs[1].dtype(), c.req[1]);
    if (backward_ && c.req[0] == WEFT_REQ_WRITE) {
      FillOrAdd(c.outputs[0].raw(), 0.0, c.outputs[0].size(), c.outputs[0].dtype(), WEFT_REQ_WRITE);
    }
    DispatchAll("slice", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = static_cast<const T*>(c.inputs[0].raw());
      T* dst = static_cast<T*>(c.outputs[0].raw());
      sdk::WithReq(c.req[0], [&](auto assign) {
        // The forward gathers the box into the contiguous output, the backward scatters back.
        if (backward_) {
          WalkBox(box_, [&](int64_t packed, int64_t off) { assign(dst[off], src[packed]); });
        } else {
          WalkBox(box_, [&](int64_t packed, int64_t off) { assign(dst[packed], src[off]); });
        }
      });
    });
  }

 private:
  bool backward_;
  Box box_;
};

}  // namespace

void RegisterSliceKernels(KernelTable& t) {
  for (const char* op :
       {"slice", "_backward_slice", "slice_axis", "_backward_slice_axis", "slice_like", "_backward_slice_like"})
    AddAny<SliceKernel>(t, op, kAllMask);
}

}  // namespace weft::cpu::tensor
