// Binary arithmetic of the training hot path: elemwise_add/sub/mul/div (equal shapes),
// broadcast_add/sub/mul/div (numpy broadcasting: shapes right-aligned, extent 1 repeats) and add_n,
// forward and backward, float32 / float64, in every ISA variant (isa_dispatch.h). The rest of
// MXNet's binary math is elemwise_math.cc and elemwise_compare.cc, compiled once.
//
// Each op is a struct with Fwd(a, b) and the partial derivatives Da(a, b), Db(a, b). Backward
// inputs per OPS.md: out_grad, then lhs and rhs when kUsesInputs (mul, div). The broadcast
// backward sums out_grad * D over the axes an operand was repeated along (reduce_driver.h);
// when the derivative is a constant (add, sub) that is one reduction of out_grad itself.
#include <algorithm>
#include <vector>

#include "elemwise_kernels.h"

namespace weft::cpu::tensor {
namespace {

// clang-format off
struct Add { static constexpr bool kUsesInputs = false;
             template <typename T> static T Fwd(T a, T b) { return a + b; }
             template <typename T> static T Da(T, T) { return T(1); }
             template <typename T> static T Db(T, T) { return T(1); } };
struct Sub { static constexpr bool kUsesInputs = false;
             template <typename T> static T Fwd(T a, T b) { return a - b; }
             template <typename T> static T Da(T, T) { return T(1); }
             template <typename T> static T Db(T, T) { return T(-1); } };
struct Mul { static constexpr bool kUsesInputs = true;
             template <typename T> static T Fwd(T a, T b) { return a * b; }
             template <typename T> static T Da(T, T b) { return b; }
             template <typename T> static T Db(T a, T) { return a; } };
struct Div { static constexpr bool kUsesInputs = true;
             template <typename T> static T Fwd(T a, T b) { return a / b; }
             template <typename T> static T Da(T, T b) { return T(1) / b; }
             template <typename T> static T Db(T a, T b) { return -a / (b * b); } };
// clang-format on

// ---- add_n -------------------------------------------------------------------------------------

class AddNKernel {
 public:
  explicit AddNKernel(const KernelSetup& s) {
    s.ExpectCounts(-1, 1);
    if (s.inputs.empty()) Invalid(s, "needs at least one input");
    const int64_t n = s.attrs.GetInt("num_args", static_cast<int64_t>(s.inputs.size()));
    if (n != static_cast<int64_t>(s.inputs.size())) {
      Invalid(s, "num_args=" + std::to_string(n) + " but " + std::to_string(s.inputs.size()) + " inputs");
    }
    CheckSameShapes<kFloatMask>(s);
  }
  // out may alias input 0 (in-place): input 0 is read in the first pass, before any write.
  void Compute(const KernelCall& c) const {
    DispatchFloat("add_n", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = OutPtr<T>(c, 0);
      const int64_t n = c.outputs[0].size();
      const size_t k = c.inputs.size();
      if (k == 1) {
        Map(
            out, n, c.req[0], [](T a) { return a; }, InPtr<T>(c, 0));
        return;
      }
      Map(
          out, n, c.req[0], [](T a, T b) { return a + b; }, InPtr<T>(c, 0), InPtr<T>(c, 1));
      if (sdk::IsNull(c.req[0])) return;
      for (size_t i = 2; i < k; ++i)
        Map(
            out, n, WEFT_REQ_ADD, [](T a) { return a; }, InPtr<T>(c, i));
    });
  }
};

// One input (out_grad), num_args outputs that each receive it.
class AddNBackwardKernel {
 public:
  explicit AddNBackwardKernel(const KernelSetup& s) {
    s.ExpectCounts(1, -1);
    CheckSameShapes<kFloatMask>(s);
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
  AddElemwise<Add, HotFloat>(t, "elemwise_add", "_backward_elemwise_add");
  AddBroadcast<Add, HotFloat>(t, "broadcast_add", "_backward_broadcast_add");
  AddElemwise<Sub, HotFloat>(t, "elemwise_sub", "_backward_elemwise_sub");
  AddBroadcast<Sub, HotFloat>(t, "broadcast_sub", "_backward_broadcast_sub");
  AddElemwise<Mul, HotFloat>(t, "elemwise_mul", "_backward_elemwise_mul");
  AddBroadcast<Mul, HotFloat>(t, "broadcast_mul", "_backward_broadcast_mul");
  AddElemwise<Div, HotFloat>(t, "elemwise_div", "_backward_elemwise_div");
  AddBroadcast<Div, HotFloat>(t, "broadcast_div", "_backward_broadcast_div");
  t.Add<AddNKernel>("add_n", kFloatMask);
  t.Add<AddNBackwardKernel>("_backward_add_n", kFloatMask);
}

}  // namespace weft::cpu::tensor
