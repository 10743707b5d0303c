// Binary arithmetic of the training hot path on equal shapes, elemwise_add/sub/mul/div, and add_n,
// forward and backward, float32 in every ISA variant (isa_dispatch.h). broadcast_* is
// elemwise_broadcast.cc (its own file so that both halves compile in parallel), the other dtypes
// elemwise_wide.cc (baseline ISA), the rest of MXNet's binary math elemwise_math.cc and
// elemwise_compare.cc. The ops are elemwise_arith_ops.h's. add_n takes every dtype (float16 in
// float, rounded per addition; integers wrap), float32 alone per ISA.
//
// Backward inputs per OPS.md: out_grad, then lhs and rhs when kUsesInputs (mul, div).
#include <algorithm>
#include <type_traits>
#include <vector>

#include "elemwise_arith_ops.h"
#include "elemwise_kernels.h"
#include "weft/sdk/ops/elemwise_binary.hpp"

namespace weft::cpu::tensor {
namespace {

// ---- add_n -------------------------------------------------------------------------------------

class AddNKernel {
 public:
  explicit AddNKernel(const KernelSetup& s) {
    s.ExpectCounts(-1, 1);
    if (s.inputs.empty()) Invalid(s, "needs at least one input");
    const int64_t n = s.Params<sdk::AddNParam>().num_args;
    if (n != static_cast<int64_t>(s.inputs.size())) {
      Invalid(s, "num_args=" + std::to_string(n) + " but " + std::to_string(s.inputs.size()) + " inputs");
    }
    CheckSameShapes<kAllMask>(s);
  }
  // out may alias input 0 (in-place): input 0 is read in the first pass, before any write.
  void Compute(const KernelCall& c) const {
    // Every dtype (MXNet's ElementWiseSum has them all); only float32 per ISA (issue 34).
    DispatchMask<kAllMask>("add_n", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Calc<T>;
      constexpr bool kIsa = std::is_same_v<T, float>;
      T* out = OutPtr<T>(c, 0);
      const int64_t n = c.outputs[0].size();
      const size_t k = c.inputs.size();
      if (k == 1) {
        Map<kIsa>(
            out, n, c.req[0], [](T a) { return a; }, InPtr<T>(c, 0));
        return;
      }
      Map<kIsa>(out, n, c.req[0], Lift<T>([](C a, C b) { return a + b; }), InPtr<T>(c, 0), InPtr<T>(c, 1));
      if (sdk::IsNull(c.req[0])) return;
      for (size_t i = 2; i < k; ++i)
        Map<kIsa>(
            out, n, WEFT_REQ_ADD, [](T a) { return a; }, InPtr<T>(c, i));
    });
  }
};

// One input (out_grad), num_args outputs that each receive it.
class AddNBackwardKernel {
 public:
  explicit AddNBackwardKernel(const KernelSetup& s) {
    s.ExpectCounts(1, -1);
    CheckSameShapes<kAllMask>(s);
  }
  void Compute(const KernelCall& c) const {
    const Tensor& g = c.inputs[0];
    for (size_t i = 0; i < c.outputs.size(); ++i) CopyOrAdd(c.outputs[i].raw(), g.raw(), g.size(), g.dtype(), c.req[i]);
  }
};

}  // namespace

Dims BroadcastShape(const KernelSetup& s, const Dims& a, const Dims& b) {
  Dims out;
  out.ndim = std::max(a.ndim, b.ndim);
  for (int i = 0; i < out.ndim; ++i) {
    const int ia = i - (out.ndim - a.ndim), ib = i - (out.ndim - b.ndim);
    const int64_t ea = ia >= 0 ? a.d[ia] : 1, eb = ib >= 0 ? b.d[ib] : 1;
    if (ea != eb && ea != 1 && eb != 1) {
      Invalid(s, "shapes " + a.Str() + " and " + b.Str() + " do not broadcast (axis " + std::to_string(i) + ")");
    }
    out.d[i] = ea == 1 ? eb : ea;
  }
  return out;
}

void RepeatedAxes(const Dims& target, const Dims& out, bool* repeated) {
  for (int i = 0; i < out.ndim; ++i) {
    const int it = i - (out.ndim - target.ndim);
    repeated[i] = (it < 0 || target.d[it] == 1) && out.d[i] != 1;
  }
}

void RegisterBinaryKernels(KernelTable& t) {
  arith::AddElemwiseArith<HotFloat>(t);
  AddAny<AddNKernel>(t, "add_n", kAllMask);
  AddAny<AddNBackwardKernel>(t, "_backward_add_n", kAllMask);
}

}  // namespace weft::cpu::tensor
