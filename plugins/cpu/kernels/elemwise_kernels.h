// weft CPU kernels — the element-wise kernel classes every unary, scalar, binary and broadcast op
// is made of (internal to weft_cpu_kernels). An op is a small struct of static functions; a kernel
// class template runs it through the drivers of elemwise_driver.h:
//
//   unary    Fwd(x), Grad(x, y)                 UnaryKernel, UnaryBackwardKernel
//            backward inputs: out_grad, data, output (OPS.md: uses I O)
//   scalar   Fwd(x, s), Grad(x, s), kUsesData   ScalarKernel, ScalarBackwardKernel
//            backward inputs: out_grad[, data]
//   binary   Fwd(a, b), Da(a, b), Db(a, b),     ElemwiseKernel, ElemwiseBackwardKernel (equal shapes),
//            kUsesInputs                        BroadcastKernel, BroadcastBackwardKernel (NumPy rules)
//            backward inputs: out_grad[, lhs, rhs]; outputs lhs_grad, rhs_grad
//
// The second template argument, a Flavor, says how the loops are compiled: in the per-ISA variants
// of isa_dispatch.h (the ops of the training hot path) or once for the baseline ISA (the rest:
// issue 34), and which dtypes the forward kernels take (backward kernels take the floating ones:
// float32, float64, float16; float16 computed in float and rounded once, as the forward).
// Thread-safe: kernels keep only their setup.
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "elemwise_driver.h"
#include "reduce_driver.h"
#include "tensor_kernels.h"
#include "weft/sdk/ops/elemwise_unary.hpp"

namespace weft::cpu::tensor {

/// How a family of element-wise kernels is compiled: kIsa = loops in isa_dispatch.h's variants,
/// kMask = forward dtypes (a subset of float32, float64, float16, int32, int64, uint8, int8).
/// Backward kernels take the floating ones (float32, float64, float16; MXNet's cpu has float16
/// gradients of every element-wise op).
template <bool kIsaDispatch, uint64_t kDTypes>
struct Flavor {
  static constexpr bool kIsa = kIsaDispatch;
  static constexpr uint64_t kMask = kDTypes;
  static constexpr uint64_t kGradMask = kDTypes & (kFloatMask | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT16));
};
/// The training hot path: float32, in every ISA variant (issue 34: each further dtype compiled
/// per ISA cost the build three copies of every loop for no benchmarked gain).
using HotFloat = Flavor<true, kFloat32Mask>;
/// Off the hot path: baseline ISA only.
using ColdFloat = Flavor<false, kFloatMask>;
using ColdIndex = Flavor<false, kIndexMask>;
/// The hot ops' other dtypes: float64 (forward and backward), float16, int32, int64, uint8, int8
/// (forward), baseline ISA only. Registered beside HotFloat's kernel for the same op name.
using ColdWide = Flavor<false, kAllMask & ~kFloat32Mask>;
/// Every dtype, baseline ISA (comparisons).
using ColdAll = Flavor<false, kAllMask>;

/// f (taking and returning Calc<T> values) as a functor on T elements: float16 elements are
/// widened, the result rounded back once; every other type passes through unchanged (no cost).
template <typename T, typename F>
auto Lift(F f) {
  if constexpr (std::is_same_v<T, Half>) {
    return [f](auto... x) { return FloatToHalf(f(HalfToFloat(x)...)); };
  } else {
    return f;
  }
}

/// The attribute `scalar` as an operand for elements of type T: converted to T first (MXNet casts
/// the scalar to the array's dtype: 2.5 is 2 for an int32 array), then to Calc<T>.
template <typename T>
Calc<T> ScalarAs(double scalar) {
  return ToCalc(Convert<T>(scalar));
}

template <typename T>
const T* InPtr(const KernelCall& c, size_t i) {
  return static_cast<const T*>(c.inputs[i].raw());
}
template <typename T>
T* OutPtr(const KernelCall& c, size_t i) {
  return static_cast<T*>(c.outputs[i].raw());
}

/// Setup checks: `inputs` inputs and one output, all of input 0's dtype (one of kMask) and of the
/// output's element count.
template <uint64_t kMask>
void CheckElementwise(const KernelSetup& s, int inputs) {
  s.ExpectCounts(inputs, 1);
  RequireSameDType(s);
  DispatchMask<kMask>(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    if (s.inputs[i].size() != s.outputs[0].size()) {
      Invalid(s, "input " + std::to_string(i) + " has shape " + sdk::FormatTuple(s.inputs[i].shape) + ", output " +
                     sdk::FormatTuple(s.outputs[0].shape) + "; element-wise ops keep the shape");
    }
  }
}

/// Every input and output of one shape and of input 0's dtype (one of kMask).
template <uint64_t kMask>
void CheckSameShapes(const KernelSetup& s) {
  RequireSameDType(s);
  DispatchMask<kMask>(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
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

// ---- unary and scalar ----------------------------------------------------------------------------

template <typename Op, typename Fl>
class UnaryKernel {
 public:
  explicit UnaryKernel(const KernelSetup& s) { CheckElementwise<Fl::kMask>(s, 1); }
  void Compute(const KernelCall& c) const {
    DispatchMask<Fl::kMask>("unary", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Calc<T>;
      Map<Fl::kIsa>(OutPtr<T>(c, 0), c.outputs[0].size(), c.req[0], Lift<T>([](C x) { return Op::Fwd(x); }),
                    InPtr<T>(c, 0));
    });
  }
};

// Inputs: out_grad, data, output.
template <typename Op, typename Fl>
class UnaryBackwardKernel {
 public:
  explicit UnaryBackwardKernel(const KernelSetup& s) { CheckElementwise<Fl::kGradMask>(s, 3); }
  void Compute(const KernelCall& c) const {
    DispatchMask<Fl::kGradMask>("unary backward", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Calc<T>;
      Map<Fl::kIsa>(OutPtr<T>(c, 0), c.outputs[0].size(), c.req[0],
                    Lift<T>([](C g, C x, C y) { return g * Op::Grad(x, y); }), InPtr<T>(c, 0), InPtr<T>(c, 1),
                    InPtr<T>(c, 2));
    });
  }
};

template <typename Op, typename Fl>
class ScalarKernel {
 public:
  explicit ScalarKernel(const KernelSetup& s) : scalar_(s.Params<sdk::ScalarParam>().scalar) {
    CheckElementwise<Fl::kMask>(s, 1);
  }
  void Compute(const KernelCall& c) const {
    DispatchMask<Fl::kMask>("scalar op", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Calc<T>;
      const C s = ScalarAs<T>(scalar_);
      Map<Fl::kIsa>(OutPtr<T>(c, 0), c.outputs[0].size(), c.req[0], Lift<T>([s](C x) { return Op::Fwd(x, s); }),
                    InPtr<T>(c, 0));
    });
  }

 private:
  double scalar_;
};

// Inputs: out_grad[, data].
template <typename Op, typename Fl>
class ScalarBackwardKernel {
 public:
  explicit ScalarBackwardKernel(const KernelSetup& s) : scalar_(s.Params<sdk::ScalarParam>().scalar) {
    CheckElementwise<Fl::kGradMask>(s, Op::kUsesData ? 2 : 1);
  }
  void Compute(const KernelCall& c) const {
    DispatchMask<Fl::kGradMask>("scalar op backward", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Calc<T>;
      const C s = ScalarAs<T>(scalar_);
      const int64_t n = c.outputs[0].size();
      if constexpr (Op::kUsesData) {
        Map<Fl::kIsa>(OutPtr<T>(c, 0), n, c.req[0], Lift<T>([s](C g, C x) { return g * Op::Grad(x, s); }),
                      InPtr<T>(c, 0), InPtr<T>(c, 1));
      } else {
        const C d = Op::Grad(C(0), s);
        Map<Fl::kIsa>(OutPtr<T>(c, 0), n, c.req[0], Lift<T>([d](C g) { return g * d; }), InPtr<T>(c, 0));
      }
    });
  }

 private:
  double scalar_;
};

// Registration of an op's kernel class Fwd<Op, Fl> and its backward's Bwd<Op, Fl>. `source_file` is
// the caller's file, so the kernels' source_file (weft-info, OPS.md) is the file holding the op's
// functor, not this helper.
template <template <class, class> class Fwd, template <class, class> class Bwd, typename Op, typename Fl>
void AddWithBackward(KernelTable& t, const char* name, const char* backward, const char* source_file) {
  AddAny<Fwd<Op, Fl>>(t, name, Fl::kMask, source_file);
  AddAny<Bwd<Op, Fl>>(t, backward, Fl::kGradMask, source_file);
}
template <typename Op, typename Fl>
void AddUnary(KernelTable& t, const char* name, const char* backward, const char* source_file = WEFT_SDK_CALLER_FILE) {
  AddWithBackward<UnaryKernel, UnaryBackwardKernel, Op, Fl>(t, name, backward, source_file);
}
template <typename Op, typename Fl>
void AddScalar(KernelTable& t, const char* name, const char* backward, const char* source_file = WEFT_SDK_CALLER_FILE) {
  AddWithBackward<ScalarKernel, ScalarBackwardKernel, Op, Fl>(t, name, backward, source_file);
}

// ---- binary: equal shapes --------------------------------------------------------------------------

template <typename Op, typename Fl>
class ElemwiseKernel {
 public:
  explicit ElemwiseKernel(const KernelSetup& s) {
    s.ExpectCounts(2, 1);
    CheckSameShapes<Fl::kMask>(s);
  }
  void Compute(const KernelCall& c) const {
    DispatchMask<Fl::kMask>("elemwise", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Calc<T>;
      Map<Fl::kIsa>(OutPtr<T>(c, 0), c.outputs[0].size(), c.req[0], Lift<T>([](C a, C b) { return Op::Fwd(a, b); }),
                    InPtr<T>(c, 0), InPtr<T>(c, 1));
    });
  }
};

template <typename Op, typename Fl>
class ElemwiseBackwardKernel {
 public:
  explicit ElemwiseBackwardKernel(const KernelSetup& s) {
    s.ExpectCounts(Op::kUsesInputs ? 3 : 1, 2);
    CheckSameShapes<Fl::kGradMask>(s);
  }
  void Compute(const KernelCall& c) const {
    DispatchMask<Fl::kGradMask>("elemwise backward", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Calc<T>;
      const int64_t n = c.inputs[0].size();
      const T* g = InPtr<T>(c, 0);
      if constexpr (Op::kUsesInputs) {
        const T* a = InPtr<T>(c, 1);
        const T* b = InPtr<T>(c, 2);
        Map<Fl::kIsa>(OutPtr<T>(c, 0), n, c.req[0], Lift<T>([](C gv, C av, C bv) { return gv * Op::Da(av, bv); }), g, a,
                      b);
        Map<Fl::kIsa>(OutPtr<T>(c, 1), n, c.req[1], Lift<T>([](C gv, C av, C bv) { return gv * Op::Db(av, bv); }), g, a,
                      b);
      } else {
        const C da = Op::Da(C(0), C(0)), db = Op::Db(C(0), C(0));
        Map<Fl::kIsa>(OutPtr<T>(c, 0), n, c.req[0], Lift<T>([da](C gv) { return gv * da; }), g);
        Map<Fl::kIsa>(OutPtr<T>(c, 1), n, c.req[1], Lift<T>([db](C gv) { return gv * db; }), g);
      }
    });
  }
};

// ---- binary: broadcast ------------------------------------------------------------------------------

/// The broadcast output shape of lhs and rhs (NumPy rules); Invalid when they do not broadcast.
Dims BroadcastShape(const KernelSetup& s, const Dims& a, const Dims& b);
/// Flags the axes of `out` along which `target` (right-aligned) is repeated.
void RepeatedAxes(const Dims& target, const Dims& out, bool* repeated);

template <typename Op, typename Fl>
class BroadcastKernel {
 public:
  explicit BroadcastKernel(const KernelSetup& s) {
    s.ExpectCounts(2, 1);
    RequireSameDType(s);
    DispatchMask<Fl::kMask>(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    a_ = Dims(s.inputs[0]);
    b_ = Dims(s.inputs[1]);
    out_ = BroadcastShape(s, a_, b_);
    if (out_.Size() != s.outputs[0].size()) {
      Invalid(s, "output has " + std::to_string(s.outputs[0].size()) + " elements, the broadcast shape " + out_.Str() +
                     " " + std::to_string(out_.Size()));
    }
  }
  void Compute(const KernelCall& c) const {
    DispatchMask<Fl::kMask>("broadcast", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Calc<T>;
      MapBroadcast<Fl::kIsa>(OutPtr<T>(c, 0), out_, c.req[0], Lift<T>([](C a, C b) { return Op::Fwd(a, b); }),
                             BroadcastIn<T>{InPtr<T>(c, 0), a_}, BroadcastIn<T>{InPtr<T>(c, 1), b_});
    });
  }

 private:
  Dims a_, b_, out_;
};

/// grad (shape `target`, which broadcasts to `out`) (=|+=) the sum over the broadcast axes of
/// term(g, a, b) evaluated on the broadcast shape.
template <bool kIsa, typename T, typename Term>
void GradToShape(T* grad, const Dims& target, int32_t req, const Dims& out, const Term& term, BroadcastIn<T> g,
                 BroadcastIn<T> a, BroadcastIn<T> b) {
  if (target.Size() == out.Size()) {
    MapBroadcast<kIsa>(grad, out, req, term, g, a, b);
    return;
  }
  bool reduced[WEFT_MAX_NDIM] = {};
  RepeatedAxes(target, out, reduced);
  std::vector<T> full(static_cast<size_t>(out.Size()));
  MapBroadcast<kIsa>(full.data(), out, WEFT_REQ_WRITE, term, g, a, b);
  ReduceTo<kIsa>(full.data(), out, reduced, grad, req, SumOp<T>());
}

// Inputs: out_grad[, lhs, rhs]; outputs: lhs_grad (lhs shape), rhs_grad (rhs shape).
template <typename Op, typename Fl>
class BroadcastBackwardKernel {
 public:
  explicit BroadcastBackwardKernel(const KernelSetup& s) {
    s.ExpectCounts(Op::kUsesInputs ? 3 : 1, 2);
    RequireSameDType(s);
    DispatchMask<Fl::kGradMask>(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    a_ = Dims(s.outputs[0]);
    b_ = Dims(s.outputs[1]);
    out_ = BroadcastShape(s, a_, b_);
    if (Dims(s.inputs[0]).Size() != out_.Size()) Invalid(s, "output gradient does not have the broadcast shape");
    if (Op::kUsesInputs && (s.inputs[1].shape != s.outputs[0].shape || s.inputs[2].shape != s.outputs[1].shape)) {
      Invalid(s, "lhs / rhs shapes differ from their gradients'");
    }
  }
  void Compute(const KernelCall& c) const {
    DispatchMask<Fl::kGradMask>("broadcast backward", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, Half>) {
        // Summed in float and rounded once: float16 partial sums would lose the small terms.
        std::vector<std::vector<float>> in(c.inputs.size());
        for (size_t i = 0; i < in.size(); ++i) {
          in[i].resize(static_cast<size_t>(c.inputs[i].size()));
          Map<false>(in[i].data(), c.inputs[i].size(), WEFT_REQ_WRITE, HalfToFloat, InPtr<Half>(c, i));
        }
        std::vector<float> da(static_cast<size_t>(a_.Size())), db(static_cast<size_t>(b_.Size()));
        Run<float>(in[0].data(), Op::kUsesInputs ? in[1].data() : nullptr, Op::kUsesInputs ? in[2].data() : nullptr,
                   da.data(), db.data(), WEFT_REQ_WRITE, WEFT_REQ_WRITE);
        Map<false>(OutPtr<Half>(c, 0), a_.Size(), c.req[0], FloatToHalf, da.data());
        Map<false>(OutPtr<Half>(c, 1), b_.Size(), c.req[1], FloatToHalf, db.data());
      } else {
        Run<T>(InPtr<T>(c, 0), Op::kUsesInputs ? InPtr<T>(c, 1) : nullptr, Op::kUsesInputs ? InPtr<T>(c, 2) : nullptr,
               OutPtr<T>(c, 0), OutPtr<T>(c, 1), c.req[0], c.req[1]);
      }
    });
  }

 private:
  // lhs_grad (=|+=) ..., rhs_grad (=|+=) ... from out_grad g (and lhs, rhs when the op uses them).
  template <typename T>
  void Run(const T* gp, const T* ap, const T* bp, T* da, T* db, int32_t req_a, int32_t req_b) const {
    const BroadcastIn<T> g{gp, out_};
    if constexpr (Op::kUsesInputs) {
      const BroadcastIn<T> a{ap, a_}, b{bp, b_};
      // Baseline ISA only: three operands walk through run-time strides (elemwise_driver.h), a
      // loop the ISA variants hardly speed up, and their copies were the largest part of
      // broadcast_mul/div's compile time (issue 34). Off the benchmarked training path.
      GradToShape<false>(
          da, a_, req_a, out_, [](T gv, T av, T bv) { return gv * Op::Da(av, bv); }, g, a, b);
      GradToShape<false>(
          db, b_, req_b, out_, [](T gv, T av, T bv) { return gv * Op::Db(av, bv); }, g, a, b);
    } else {
      // Constant derivatives: reduce out_grad itself, scaled.
      const Dims* targets[2] = {&a_, &b_};
      T* outs[2] = {da, db};
      const int32_t reqs[2] = {req_a, req_b};
      const T scales[2] = {Op::Da(T(0), T(0)), Op::Db(T(0), T(0))};
      for (int k = 0; k < 2; ++k) {
        bool reduced[WEFT_MAX_NDIM] = {};
        RepeatedAxes(*targets[k], out_, reduced);
        ReduceTo<Fl::kIsa>(gp, out_, reduced, outs[k], reqs[k], SumOp<T>(), scales[k]);
      }
    }
  }

 private:
  Dims a_, b_, out_;
};

template <typename Op, typename Fl>
void AddElemwise(KernelTable& t, const char* name, const char* backward,
                 const char* source_file = WEFT_SDK_CALLER_FILE) {
  AddWithBackward<ElemwiseKernel, ElemwiseBackwardKernel, Op, Fl>(t, name, backward, source_file);
}
template <typename Op, typename Fl>
void AddBroadcast(KernelTable& t, const char* name, const char* backward,
                  const char* source_file = WEFT_SDK_CALLER_FILE) {
  AddWithBackward<BroadcastKernel, BroadcastBackwardKernel, Op, Fl>(t, name, backward, source_file);
}

}  // namespace weft::cpu::tensor
