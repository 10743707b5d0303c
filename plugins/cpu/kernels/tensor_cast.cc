// Cast and _backward_Cast: element conversion between float32, float64, float16, uint8, int8,
// int32 and int64 (Convert in tensor_util.h: float to integer truncates toward zero and
// saturates, NaN becomes 0; float64 to float16 rounds through float32). The output's dtype is
// the target; the backward casts the gradient back to the input's dtype the same way.
#include "tensor_kernels.h"

namespace weft::cpu::tensor {
namespace {

class CastKernel {
 public:
  explicit CastKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    if (s.inputs[0].size() != s.outputs[0].size()) {
      Invalid(s, "input has " + std::to_string(s.inputs[0].size()) + " elements, output " +
                     std::to_string(s.outputs[0].size()));
    }
    DispatchAll(s.op_name.c_str(), s.outputs[0].dtype, [](auto) {});  // rejects other targets now
  }
  void Compute(const KernelCall& c) const {
    const Tensor& in = c.inputs[0];
    const Tensor& out = c.outputs[0];
    if (in.dtype() == out.dtype()) {
      CopyOrAdd(out.raw(), in.raw(), in.size(), in.dtype(), c.req[0]);
      return;
    }
    const int64_t n = in.size();
    DispatchAll("Cast", in.dtype(), [&](auto from_tag) {
      using From = typename decltype(from_tag)::type;
      DispatchAll("Cast", out.dtype(), [&](auto to_tag) {
        using To = typename decltype(to_tag)::type;
        const From* x = static_cast<const From*>(in.raw());
        To* y = static_cast<To*>(out.raw());
        sdk::WithReq(c.req[0], [&](auto assign) {
          for (int64_t i = 0; i < n; ++i) assign(y[i], Convert<To>(x[i]));
        });
      });
    });
  }
};

}  // namespace

void RegisterCastKernels(KernelTable& t) {
  AddAny<CastKernel>(t, "Cast", kAllMask);
  AddAny<CastKernel>(t, "_backward_Cast", kAllMask);
  // amp_cast: the definition keeps integer inputs' dtype, so the kernel copies those.
  AddAny<CastKernel>(t, "amp_cast", kAllMask);
  AddAny<CastKernel>(t, "_backward_amp_cast", kAllMask);
}

}  // namespace weft::cpu::tensor
