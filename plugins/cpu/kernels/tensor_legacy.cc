// Older MXNet ops (core/operator/defs/tensor_legacy.cc):
//   batch_take: a viewed as (rows, m), indices int32 of `rows` elements;
//       output[i] = a[i, clamp(indices[i], 0, m − 1)] (MXNet's batch_take kernel clips).
//   fill_element_0index: lhs (rows, m), mhs and rhs (rows): output = lhs with
//       output[i, rhs[i]] = mhs[i] where rhs[i] (truncated) lies in [0, m); other rows unchanged.
#include <algorithm>

#include "tensor_kernels.h"

namespace weft::cpu::tensor {
namespace {

class BatchTakeKernel {
 public:
  explicit BatchTakeKernel(const KernelSetup& s) {
    s.ExpectCounts(2, 1);
    const TensorDesc& a = s.inputs[0];
    DispatchIndex("batch_take", a.dtype, [](auto) {});
    if (s.inputs[1].dtype != WEFT_DTYPE_INT32) Invalid(s, "indices must be int32");
    if (a.ndim() == 0) Invalid(s, "a must have at least one axis");
    m_ = a.shape.back();
    rows_ = m_ == 0 ? 0 : a.size() / m_;
    if (s.inputs[1].size() != rows_ || s.outputs[0].size() != rows_ || s.outputs[0].dtype != a.dtype)
      Invalid(s, "indices and output need one element per row of a " + sdk::FormatTuple(a.shape));
    if (m_ == 0 && rows_ > 0) Invalid(s, "cannot take from an empty last axis");
  }

  void Compute(const KernelCall& c) const {
    const auto* idx = static_cast<const int32_t*>(c.inputs[1].raw());
    DispatchIndex("batch_take", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* a = static_cast<const T*>(c.inputs[0].raw());
      T* out = static_cast<T*>(c.outputs[0].raw());
      sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t i = 0; i < rows_; ++i) assign(out[i], a[i * m_ + std::clamp<int64_t>(idx[i], 0, m_ - 1)]);
      });
    });
  }

 private:
  int64_t rows_ = 0, m_ = 1;
};

class FillElementKernel {
 public:
  explicit FillElementKernel(const KernelSetup& s) {
    s.ExpectCounts(3, 1);
    RequireSameDType(s);
    DispatchFloat("fill_element_0index", s.inputs[0].dtype, [](auto) {});
    const TensorDesc& l = s.inputs[0];
    if (l.ndim() != 2) Invalid(s, "lhs " + sdk::FormatTuple(l.shape) + " must be 2-D");
    rows_ = l.shape[0];
    m_ = l.shape[1];
    if (s.inputs[1].size() != rows_ || s.inputs[2].size() != rows_ || s.outputs[0].shape != l.shape)
      Invalid(s, "mhs and rhs need one element per row of lhs " + sdk::FormatTuple(l.shape));
  }

  void Compute(const KernelCall& c) const {
    DispatchFloat("fill_element_0index", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* lhs = static_cast<const T*>(c.inputs[0].raw());
      const T* val = static_cast<const T*>(c.inputs[1].raw());
      const T* pos = static_cast<const T*>(c.inputs[2].raw());
      T* out = static_cast<T*>(c.outputs[0].raw());
      sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t i = 0; i < rows_; ++i) {
          const int64_t j = Convert<int64_t>(pos[i]);
          for (int64_t k = 0; k < m_; ++k) assign(out[i * m_ + k], k == j ? val[i] : lhs[i * m_ + k]);
        }
      });
    });
  }

 private:
  int64_t rows_ = 0, m_ = 0;
};

}  // namespace

void RegisterLegacyKernels(KernelTable& t) {
  AddAny<BatchTakeKernel>(t, "batch_take", kIndexMask);
  AddAny<FillElementKernel>(t, "fill_element_0index", kFloatMask);
}

}  // namespace weft::cpu::tensor
