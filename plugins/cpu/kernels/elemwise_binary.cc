// Binary math: elemwise_add/sub/mul/div (equal shapes), broadcast_add/sub/mul/div (numpy
// broadcasting: shapes right-aligned, extent 1 repeats), broadcast_maximum/minimum and add_n, forward and backward,
// float32 / float64.
//
// Each op is a struct with Fwd(a, b) and the partial derivatives Da(a, b), Db(a, b). Backward
// inputs per OPS.md: out_grad, then lhs and rhs when kUsesInputs (mul, div). The broadcast
// backward sums out_grad * D over the axes an operand was repeated along (reduce_driver.h);
// when the derivative is a constant (add, sub) that is one reduction of out_grad itself.
#include <algorithm>
#include <vector>

#include "elemwise_driver.h"
#include "reduce_driver.h"
#include "tensor_kernels.h"

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
// MXNet's maximum/minimum backward: lhs gets the gradient where lhs >= rhs (<= for minimum), rhs
// where it is strictly larger (smaller), so ties go to lhs alone.
struct Maximum { static constexpr bool kUsesInputs = true;
                 template <typename T> static T Fwd(T a, T b) { return a > b ? a : b; }
                 template <typename T> static T Da(T a, T b) { return a >= b ? T(1) : T(0); }
                 template <typename T> static T Db(T a, T b) { return a < b ? T(1) : T(0); } };
struct Minimum { static constexpr bool kUsesInputs = true;
                 template <typename T> static T Fwd(T a, T b) { return a < b ? a : b; }
                 template <typename T> static T Da(T a, T b) { return a <= b ? T(1) : T(0); }
                 template <typename T> static T Db(T a, T b) { return a > b ? T(1) : T(0); } };
// clang-format on

template <typename T>
const T* In(const KernelCall& c, size_t i) {
  return static_cast<const T*>(c.inputs[i].raw());
}
template <typename T>
T* Out(const KernelCall& c, size_t i) {
  return static_cast<T*>(c.outputs[i].raw());
}

void CheckFloat(const KernelSetup& s) {
  RequireSameDType(s);
  DispatchFloat(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
}

// Every input and output of one shape.
void CheckSameShapes(const KernelSetup& s) {
  CheckFloat(s);
  const TensorDesc& ref = s.outputs.empty() ? s.inputs[0] : s.outputs[0];
  auto check = [&](const std::vector<TensorDesc>& ts, const char* what) {
    for (size_t i = 0; i < ts.size(); ++i) {
      if (ts[i].shape != ref.shape) {
        Invalid(s, std::string(what) + " " + std::to_string(i) + " has shape " + sdk::FormatTuple(ts[i].shape) +
                       ", expected " + sdk::FormatTuple(ref.shape) + " (element-wise ops need equal shapes)");
      }
    }
  };
  check(s.inputs, "input");
  check(s.outputs, "output");
}

// ---- elemwise_* --------------------------------------------------------------------------------

template <typename Op>
class ElemwiseKernel {
 public:
  explicit ElemwiseKernel(const KernelSetup& s) {
    s.ExpectCounts(2, 1);
    CheckSameShapes(s);
  }
  void Compute(const KernelCall& c) const {
    DispatchFloat("elemwise", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Map(
          Out<T>(c, 0), c.outputs[0].size(), c.req[0], [](T a, T b) { return Op::Fwd(a, b); }, In<T>(c, 0),
          In<T>(c, 1));
    });
  }
};

template <typename Op>
class ElemwiseBackwardKernel {
 public:
  explicit ElemwiseBackwardKernel(const KernelSetup& s) {
    s.ExpectCounts(Op::kUsesInputs ? 3 : 1, 2);
    CheckSameShapes(s);
  }
  void Compute(const KernelCall& c) const {
    DispatchFloat("elemwise backward", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int64_t n = c.inputs[0].size();
      const T* g = In<T>(c, 0);
      if constexpr (Op::kUsesInputs) {
        const T* a = In<T>(c, 1);
        const T* b = In<T>(c, 2);
        Map(
            Out<T>(c, 0), n, c.req[0], [](T gv, T av, T bv) { return gv * Op::Da(av, bv); }, g, a, b);
        Map(
            Out<T>(c, 1), n, c.req[1], [](T gv, T av, T bv) { return gv * Op::Db(av, bv); }, g, a, b);
      } else {
        const T da = Op::Da(T(0), T(0)), db = Op::Db(T(0), T(0));
        Map(
            Out<T>(c, 0), n, c.req[0], [da](T gv) { return gv * da; }, g);
        Map(
            Out<T>(c, 1), n, c.req[1], [db](T gv) { return gv * db; }, g);
      }
    });
  }
};

// ---- broadcast_* -------------------------------------------------------------------------------

// The broadcast output shape of lhs and rhs (numpy rules); Invalid when they do not broadcast.
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

template <typename Op>
class BroadcastKernel {
 public:
  explicit BroadcastKernel(const KernelSetup& s) {
    s.ExpectCounts(2, 1);
    CheckFloat(s);
    a_ = Dims(s.inputs[0]);
    b_ = Dims(s.inputs[1]);
    const Dims out = BroadcastShape(s, a_, b_);
    if (out.Size() != s.outputs[0].size()) {
      Invalid(s, "output has " + std::to_string(s.outputs[0].size()) + " elements, the broadcast shape " + out.Str() +
                     " " + std::to_string(out.Size()));
    }
    out_ = out;
  }
  void Compute(const KernelCall& c) const {
    DispatchFloat("broadcast", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      MapBroadcast(
          Out<T>(c, 0), out_, c.req[0], [](T a, T b) { return Op::Fwd(a, b); }, BroadcastIn<T>{In<T>(c, 0), a_},
          BroadcastIn<T>{In<T>(c, 1), b_});
    });
  }

 private:
  Dims a_, b_, out_;
};

// Flags the axes of `out` along which `target` (right-aligned) is repeated.
void RepeatedAxes(const Dims& target, const Dims& out, bool* repeated) {
  for (int i = 0; i < out.ndim; ++i) {
    const int it = i - (out.ndim - target.ndim);
    repeated[i] = (it < 0 || target.d[it] == 1) && out.d[i] != 1;
  }
}

// grad (shape `target`, which broadcasts to `out`) (=|+=) the sum over the broadcast axes of
// term(g, a, b) evaluated on the broadcast shape.
template <typename T, typename Term>
void GradToShape(T* grad, const Dims& target, int32_t req, const Dims& out, const Term& term, BroadcastIn<T> g,
                 BroadcastIn<T> a, BroadcastIn<T> b) {
  if (target.Size() == out.Size()) {
    MapBroadcast(grad, out, req, term, g, a, b);
    return;
  }
  bool reduced[WEFT_MAX_NDIM] = {};
  RepeatedAxes(target, out, reduced);
  std::vector<T> full(static_cast<size_t>(out.Size()));
  MapBroadcast(full.data(), out, WEFT_REQ_WRITE, term, g, a, b);
  ReduceTo(full.data(), out, reduced, grad, req, SumOp<T>());
}

// Inputs: out_grad[, lhs, rhs]; outputs: lhs_grad (lhs shape), rhs_grad (rhs shape).
template <typename Op>
class BroadcastBackwardKernel {
 public:
  explicit BroadcastBackwardKernel(const KernelSetup& s) {
    s.ExpectCounts(Op::kUsesInputs ? 3 : 1, 2);
    CheckFloat(s);
    a_ = Dims(s.outputs[0]);
    b_ = Dims(s.outputs[1]);
    out_ = BroadcastShape(s, a_, b_);
    if (Dims(s.inputs[0]).Size() != out_.Size()) Invalid(s, "output gradient does not have the broadcast shape");
    if (Op::kUsesInputs && (s.inputs[1].shape != s.outputs[0].shape || s.inputs[2].shape != s.outputs[1].shape)) {
      Invalid(s, "lhs / rhs shapes differ from their gradients'");
    }
  }
  void Compute(const KernelCall& c) const {
    DispatchFloat("broadcast backward", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const BroadcastIn<T> g{In<T>(c, 0), out_};
      if constexpr (Op::kUsesInputs) {
        const BroadcastIn<T> a{In<T>(c, 1), a_}, b{In<T>(c, 2), b_};
        GradToShape(
            Out<T>(c, 0), a_, c.req[0], out_, [](T gv, T av, T bv) { return gv * Op::Da(av, bv); }, g, a, b);
        GradToShape(
            Out<T>(c, 1), b_, c.req[1], out_, [](T gv, T av, T bv) { return gv * Op::Db(av, bv); }, g, a, b);
      } else {
        // Constant derivatives: reduce out_grad itself, scaled.
        const T* gp = In<T>(c, 0);
        const Dims* targets[2] = {&a_, &b_};
        const T scales[2] = {Op::Da(T(0), T(0)), Op::Db(T(0), T(0))};
        for (int k = 0; k < 2; ++k) {
          bool reduced[WEFT_MAX_NDIM] = {};
          RepeatedAxes(*targets[k], out_, reduced);
          ReduceTo(gp, out_, reduced, Out<T>(c, static_cast<size_t>(k)), c.req[static_cast<size_t>(k)], SumOp<T>(),
                   scales[k]);
        }
      }
    });
  }

 private:
  Dims a_, b_, out_;
};

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
    CheckSameShapes(s);
  }
  // out may alias input 0 (in-place): input 0 is read in the first pass, before any write.
  void Compute(const KernelCall& c) const {
    DispatchFloat("add_n", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = Out<T>(c, 0);
      const int64_t n = c.outputs[0].size();
      const size_t k = c.inputs.size();
      if (k == 1) {
        Map(
            out, n, c.req[0], [](T a) { return a; }, In<T>(c, 0));
        return;
      }
      Map(
          out, n, c.req[0], [](T a, T b) { return a + b; }, In<T>(c, 0), In<T>(c, 1));
      if (sdk::IsNull(c.req[0])) return;
      for (size_t i = 2; i < k; ++i)
        Map(
            out, n, WEFT_REQ_ADD, [](T a) { return a; }, In<T>(c, i));
    });
  }
};

// One input (out_grad), num_args outputs that each receive it.
class AddNBackwardKernel {
 public:
  explicit AddNBackwardKernel(const KernelSetup& s) {
    s.ExpectCounts(1, -1);
    CheckSameShapes(s);
  }
  void Compute(const KernelCall& c) const {
    const Tensor& g = c.inputs[0];
    for (size_t i = 0; i < c.outputs.size(); ++i) CopyOrAdd(c.outputs[i].raw(), g.raw(), g.size(), g.dtype(), c.req[i]);
  }
};

template <typename Op>
void AddBroadcast(KernelTable& t, const std::string& name) {
  t.Add<BroadcastKernel<Op>>("broadcast_" + name, kFloatMask);
  t.Add<BroadcastBackwardKernel<Op>>("_backward_broadcast_" + name, kFloatMask);
}

template <typename Op>
void AddBinary(KernelTable& t, const std::string& name) {
  t.Add<ElemwiseKernel<Op>>("elemwise_" + name, kFloatMask);
  t.Add<ElemwiseBackwardKernel<Op>>("_backward_elemwise_" + name, kFloatMask);
  AddBroadcast<Op>(t, name);
}

}  // namespace

void RegisterBinaryKernels(KernelTable& t) {
  AddBinary<Add>(t, "add");
  AddBinary<Sub>(t, "sub");
  AddBinary<Mul>(t, "mul");
  AddBinary<Div>(t, "div");
  AddBroadcast<Maximum>(t, "maximum");
  AddBroadcast<Minimum>(t, "minimum");
  t.Add<AddNKernel>("add_n", kFloatMask);
  t.Add<AddNBackwardKernel>("_backward_add_n", kFloatMask);
}

}  // namespace weft::cpu::tensor
