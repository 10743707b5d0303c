// Data copies: _copy, _backward_copy, Flatten, Reshape, expand_dims, BlockGrad's forward (the
// shape is the definition's business; the kernel moves elements) and zeros_like / ones_like.
#include "tensor_kernels.h"

namespace weft::cpu::tensor {
namespace {

// out (=|+=) in. In-place (the output aliasing its input) copies nothing.
class CopyKernel {
 public:
  explicit CopyKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireSameDType(s);
    if (s.inputs[0].size() != s.outputs[0].size()) {
      Invalid(s, "input has " + std::to_string(s.inputs[0].size()) + " elements, output " +
                     std::to_string(s.outputs[0].size()) + "; a copy keeps the element count");
    }
  }
  void Compute(const KernelCall& c) const {
    const Tensor& in = c.inputs[0];
    CopyOrAdd(c.outputs[0].raw(), in.raw(), in.size(), in.dtype(), c.req[0]);
  }
};

// out (=|+=) a constant of the input's dtype; the input is only a shape donor.
template <int kValue>
class FillKernel {
 public:
  explicit FillKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireSameDType(s);
  }
  void Compute(const KernelCall& c) const {
    const Tensor& out = c.outputs[0];
    FillOrAdd(out.raw(), kValue, out.size(), out.dtype(), c.req[0]);
  }
};

}  // namespace

void RegisterCopyKernels(KernelTable& t) {
  for (const char* op : {"_copy", "_backward_copy", "Flatten", "Reshape", "expand_dims", "BlockGrad"}) {
    t.Add<CopyKernel>(op, kAllMask);
  }
  t.Add<FillKernel<0>>("zeros_like", kAllMask);
  t.Add<FillKernel<1>>("ones_like", kAllMask);
}

}  // namespace weft::cpu::tensor
