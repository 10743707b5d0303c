// slice, slice_axis and slice_like (MXNet 1.9), forward and backward, every data-movement dtype.
// slice_like's box starts at 0 with the sliced tensor's extents; its shape_like input gets a zero
// gradient.
//
// Both cut a strided box out of the input: per axis a range (begin, step, len) computed by
// sdk/cpp/slice.hpp, the rule core's shape inference uses too. The forward gathers the box into
// the contiguous output; the backward scatters the output gradient into the box of the data
// gradient and (for req write) zeroes everything outside it.
#include <vector>

#include "tensor_kernels.h"
#include "weft/sdk/cpp/slice.hpp"

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
    std::vector<sdk::SliceRange> r;
    try {
      if (like) {
        if (sliced.ndim() != data.ndim()) Invalid(s, "data and output must have the same number of axes");
        for (int64_t len : sliced.shape) r.push_back(sdk::SliceRange{0, 1, len});
      } else if (s.op_name.find("slice_axis") != std::string::npos) {
        int axis = 0;
        const sdk::SliceRange one = sdk::SliceAxisOpRange(s.attrs, data.shape, &axis);
        for (int i = 0; i < data.ndim(); ++i)
          r.push_back(i == axis ? one : sdk::SliceRange{0, 1, data.shape[static_cast<size_t>(i)]});
      } else {
        r = sdk::SliceRanges(s.attrs, data.shape);
      }
    } catch (const sdk::Error& e) {
      Invalid(s, e.what());
    }
    in_ = Dims(data);
    for (const sdk::SliceRange& x : r) out_.Push(x.len), begin_.Push(x.begin), step_.Push(x.step);
    if (Dims(sliced).Size() != out_.Size())
      Invalid(s, "sliced tensor has shape " + sdk::FormatTuple(sliced.shape) + ", the slice gives " + out_.Str());
  }

  void Compute(const KernelCall& c) const {
    if (c.outputs.size() > 1) FillOrAdd(c.outputs[1].raw(), 0.0, c.outputs[1].size(), c.outputs[1].dtype(), c.req[1]);
    if (backward_ && c.req[0] == WEFT_REQ_WRITE) {
      FillOrAdd(c.outputs[0].raw(), 0.0, c.outputs[0].size(), c.outputs[0].dtype(), WEFT_REQ_WRITE);
    }
    if (out_.Size() == 0) return;
    DispatchAll("slice", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = static_cast<const T*>(c.inputs[0].raw());
      T* dst = static_cast<T*>(c.outputs[0].raw());
      sdk::WithReq(c.req[0], [&](auto assign) { Walk(src, dst, assign); });
    });
  }

 private:
  // Visits the box: `packed` counts through the contiguous sliced tensor, `off` is the element's
  // offset in the data tensor.
  template <typename T, typename Assign>
  void Walk(const T* src, T* dst, Assign assign) const {
    const int nd = in_.ndim;
    int64_t stride[WEFT_MAX_NDIM];
    int64_t st = 1;
    for (int a = nd - 1; a >= 0; --a) stride[a] = st, st *= in_.d[a];
    if (nd == 0) {
      assign(dst[0], src[0]);
      return;
    }
    int64_t base = 0;
    for (int a = 0; a < nd; ++a) base += begin_.d[a] * stride[a];
    const int last = nd - 1;
    const int64_t n = out_.d[last], inner_step = step_.d[last] * stride[last];
    int64_t idx[WEFT_MAX_NDIM] = {};
    int64_t off = base;
    for (int64_t packed = 0, total = out_.Size(); packed < total; packed += n) {
      for (int64_t i = 0; i < n; ++i) {
        if (backward_) {
          assign(dst[off + i * inner_step], src[packed + i]);
        } else {
          assign(dst[packed + i], src[off + i * inner_step]);
        }
      }
      for (int a = last - 1; a >= 0; --a) {
        off += step_.d[a] * stride[a];
        if (++idx[a] < out_.d[a]) break;
        off -= step_.d[a] * stride[a] * out_.d[a];
        idx[a] = 0;
      }
    }
  }

  bool backward_;
  Dims in_, out_, begin_, step_;
};

}  // namespace

void RegisterSliceKernels(KernelTable& t) {
  for (const char* op :
       {"slice", "_backward_slice", "slice_axis", "_backward_slice_axis", "slice_like", "_backward_slice_like"})
    t.Add<SliceKernel>(op, kAllMask);
}

}  // namespace weft::cpu::tensor
