// weft GPU kernel layer — the elemwise family's unary ops (cpu: elemwise_unary.cc,
// elemwise_scalar.cc): unary math, clip and the scalar ops, forward and backward, float32 and
// float64. One functor serves them all, the op chosen by a run-time enum (uniform across a launch:
// a switch per element, not divergence), so every unary and scalar op is EwMap<T, Assign> for T
// in {float, double}: four kernels in all.
#pragma once

#include <math.h>
#include <stdint.h>

#include <string>

#include "gpu_kernel.h"
#include "weft/sdk/ops/elemwise_unary.hpp"

namespace weft::WEFT_GPU_NS {

// ---- float / double math by overload -----------------------------------------------------------

#define WEFT_GPU_MATH1(Name, f32, f64)                  \
  WEFT_HD inline float Name(float x) { return f32(x); } \
  WEFT_HD inline double Name(double x) { return f64(x); }
WEFT_GPU_MATH1(MSin, sinf, sin)
WEFT_GPU_MATH1(MCos, cosf, cos)
WEFT_GPU_MATH1(MExp, expf, exp)
WEFT_GPU_MATH1(MLog, logf, log)
WEFT_GPU_MATH1(MSqrt, sqrtf, sqrt)
WEFT_GPU_MATH1(MAbs, fabsf, fabs)
WEFT_GPU_MATH1(MTanh, tanhf, tanh)
WEFT_GPU_MATH1(MLog1p, log1pf, log1p)
WEFT_GPU_MATH1(MExpm1, expm1f, expm1)
WEFT_GPU_MATH1(MFloor, floorf, floor)
WEFT_GPU_MATH1(MRound, roundf, round)
#undef WEFT_GPU_MATH1
WEFT_HD inline float MPow(float x, float y) { return powf(x, y); }
WEFT_HD inline double MPow(double x, double y) { return pow(x, y); }

enum class EwOp : uint8_t {
  kSin,
  kCos,
  kExp,
  kLog,
  kSqrt,
  kSquare,
  kAbs,
  kNegative,
  kRelu,
  kSigmoid,
  kTanh,
  kRsqrt,
  kLog1p,
  kExpm1,
  kFloor,
  kRound,
  kSign,
  kClip,
  kPlusScalar,
  kMinusScalar,
  kRMinusScalar,
  kMulScalar,
  kDivScalar,
  kRDivScalar,
  kPowerScalar
};

/// The op's parameters: `s` the scalar, [lo, hi] clip's bounds.
template <typename T>
struct EwParams {
  EwOp op;
  T s, lo, hi;
};

template <typename T>
WEFT_HD T EwForward(const EwParams<T>& p, T x) {
  switch (p.op) {
    case EwOp::kSin:
      return MSin(x);
    case EwOp::kCos:
      return MCos(x);
    case EwOp::kExp:
      return MExp(x);
    case EwOp::kLog:
      return MLog(x);
    case EwOp::kSqrt:
      return MSqrt(x);
    case EwOp::kSquare:
      return x * x;
    case EwOp::kAbs:
      return MAbs(x);
    case EwOp::kNegative:
      return -x;
    case EwOp::kRelu:
      return x > T(0) ? x : T(0);
    case EwOp::kSigmoid:
      return T(1) / (T(1) + MExp(-x));
    case EwOp::kTanh:
      return MTanh(x);
    case EwOp::kRsqrt:
      return T(1) / MSqrt(x);
    case EwOp::kLog1p:
      return MLog1p(x);
    case EwOp::kExpm1:
      return MExpm1(x);
    case EwOp::kFloor:
      return MFloor(x);
    case EwOp::kRound:
      return MRound(x);
    case EwOp::kSign:
      return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
    case EwOp::kClip:
      return x < p.lo ? p.lo : (x > p.hi ? p.hi : x);
    case EwOp::kPlusScalar:
      return x + p.s;
    case EwOp::kMinusScalar:
      return x - p.s;
    case EwOp::kRMinusScalar:
      return p.s - x;
    case EwOp::kMulScalar:
      return x * p.s;
    case EwOp::kDivScalar:
      return x / p.s;
    case EwOp::kRDivScalar:
      return p.s / x;
    case EwOp::kPowerScalar:
      return MPow(x, p.s);
  }
  return T(0);
}

/// dy/dx from the input x and output y (x is 0 where the backward gets no data).
template <typename T>
WEFT_HD T EwDerivative(const EwParams<T>& p, T x, T y) {
  switch (p.op) {
    case EwOp::kSin:
      return MCos(x);
    case EwOp::kCos:
      return -MSin(x);
    case EwOp::kExp:
      return y;
    case EwOp::kLog:
      return T(1) / x;
    case EwOp::kSqrt:
      return T(0.5) / y;
    case EwOp::kSquare:
      return T(2) * x;
    case EwOp::kAbs:
      return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
    case EwOp::kNegative:
      return T(-1);
    case EwOp::kRelu:
      return x > T(0) ? T(1) : T(0);
    case EwOp::kSigmoid:
      return y * (T(1) - y);
    case EwOp::kTanh:
      return T(1) - y * y;
    case EwOp::kRsqrt:
      return T(-0.5) * y / x;
    case EwOp::kLog1p:
      return T(1) / (T(1) + x);
    case EwOp::kExpm1:
      return MExp(x);
    case EwOp::kFloor:
    case EwOp::kRound:
    case EwOp::kSign:
      return T(0);
    case EwOp::kClip:
      return x < p.lo || x > p.hi ? T(0) : T(1);
    case EwOp::kPlusScalar:
    case EwOp::kMinusScalar:
      return T(1);
    case EwOp::kRMinusScalar:
      return T(-1);
    case EwOp::kMulScalar:
      return p.s;
    case EwOp::kDivScalar:
      return T(1) / p.s;
    case EwOp::kRDivScalar:
      return -p.s / (x * x);
    case EwOp::kPowerScalar:
      return p.s * MPow(x, p.s - T(1));
  }
  return T(0);
}

/// <op>: y[i] = f(x[i]).
template <typename T, class Assign>
struct EwMap {
  EwParams<T> p;
  const T* x;
  T* y;
  WEFT_HD void operator()(int64_t i) const { Assign::Put(y[i], EwForward(p, x[i])); }
};

/// _backward_<op>: gx[i] = gy[i] · f'(x[i], y[i]); x / y null when the backward lacks them.
template <typename T, class Assign>
struct EwGradMap {
  EwParams<T> p;
  const T* gy;
  const T* x;
  const T* y;
  T* gx;
  WEFT_HD void operator()(int64_t i) const {
    const T d = EwDerivative(p, x != nullptr ? x[i] : T(0), y != nullptr ? y[i] : T(0));
    if (p.op == EwOp::kClip) {
      Assign::Put(gx[i], d == T(0) ? T(0) : gy[i]);  // MXNet's clip backward passes g unchanged
    } else {
      Assign::Put(gx[i], gy[i] * d);
    }
  }
};

// ---- kernel class ------------------------------------------------------------------------------

struct EwName {
  const char* name;
  EwOp op;
};
inline constexpr EwName kEwOps[] = {{"sin", EwOp::kSin},
                                    {"cos", EwOp::kCos},
                                    {"exp", EwOp::kExp},
                                    {"log", EwOp::kLog},
                                    {"sqrt", EwOp::kSqrt},
                                    {"square", EwOp::kSquare},
                                    {"abs", EwOp::kAbs},
                                    {"negative", EwOp::kNegative},
                                    {"relu", EwOp::kRelu},
                                    {"sigmoid", EwOp::kSigmoid},
                                    {"tanh", EwOp::kTanh},
                                    {"rsqrt", EwOp::kRsqrt},
                                    {"log1p", EwOp::kLog1p},
                                    {"expm1", EwOp::kExpm1},
                                    {"floor", EwOp::kFloor},
                                    {"round", EwOp::kRound},
                                    {"sign", EwOp::kSign},
                                    {"clip", EwOp::kClip},
                                    {"_plus_scalar", EwOp::kPlusScalar},
                                    {"_minus_scalar", EwOp::kMinusScalar},
                                    {"_rminus_scalar", EwOp::kRMinusScalar},
                                    {"_mul_scalar", EwOp::kMulScalar},
                                    {"_div_scalar", EwOp::kDivScalar},
                                    {"_rdiv_scalar", EwOp::kRDivScalar},
                                    {"_power_scalar", EwOp::kPowerScalar}};

/// The forward op's EwOp for an op name or its backward's ("_backward_sin", "_backward_mul_scalar").
inline EwOp EwOpOf(const KernelSetup& s) {
  std::string name = s.op_name;
  if (IsBackward(s)) name = name.substr(std::string("_backward").size());  // "_sin" or "_mul_scalar"
  // A backward name keeps the forward's leading '_' ("_mul_scalar") or adds one ("_sin").
  for (const EwName& e : kEwOps)
    if (name == e.name || (IsBackward(s) && name.substr(1) == e.name)) return e.op;
  Invalid(s, "not an element-wise op of the GPU layer");
}

/// Whether op's backward gets the forward's data (and, for unary math, its output).
inline bool EwGradUsesData(EwOp op) {
  return op != EwOp::kPlusScalar && op != EwOp::kMinusScalar && op != EwOp::kRMinusScalar && op != EwOp::kMulScalar &&
         op != EwOp::kDivScalar;
}
inline bool EwGradUsesOutput(EwOp op) { return op < EwOp::kClip; }

template <class L>
class EwKernel {
 public:
  explicit EwKernel(const KernelSetup& s) : op_(EwOpOf(s)), backward_(IsBackward(s)) {
    const int inputs = !backward_ ? 1 : 1 + (EwGradUsesData(op_) ? 1 : 0) + (EwGradUsesOutput(op_) ? 1 : 0);
    s.ExpectCounts(inputs, 1);
    RequireSameDType(s, kFloatTypes);
    for (const TensorDesc& t : s.inputs)
      if (t.size() != s.outputs[0].size())
        Invalid(s, "input " + ShapeOf(t) + " and output " + ShapeOf(s.outputs[0]) +
                       " differ; element-wise ops keep the shape");
    if (op_ >= EwOp::kPlusScalar) scalar_ = s.Params<sdk::ScalarParam>().scalar;
    if (op_ == EwOp::kClip) {
      const auto p = s.Params<sdk::ClipParam>();
      lo_ = p.a_min, hi_ = p.a_max;
    }
  }
  void Compute(const DeviceCall& c) const {
    WithFloatType(backward_ ? "element-wise backward" : "element-wise", c.outputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const EwParams<T> p{op_, static_cast<T>(scalar_), static_cast<T>(lo_), static_cast<T>(hi_)};
      auto in = [&](size_t i) { return L::template Ptr<const T>(c.inputs[i]); };
      T* out = L::template Ptr<T>(c.outputs[0]);
      WithReq(c.req[0], [&](auto a) {
        using A = decltype(a);
        if (!backward_) return L::Map(c, c.outputs[0].size(), EwMap<T, A>{p, in(0), out});
        const bool data = EwGradUsesData(op_), output = EwGradUsesOutput(op_);
        L::Map(c, c.outputs[0].size(),
               EwGradMap<T, A>{p, in(0), data ? in(1) : nullptr, output ? in(data ? 2 : 1) : nullptr, out});
      });
    });
  }

 private:
  EwOp op_;
  bool backward_;
  double scalar_ = 0, lo_ = 0, hi_ = 0;
};

/// Registers the unary, clip and scalar ops and their backward ops for launcher L.
template <class L>
void RegisterElemwiseUnaryKernels(sdk::KernelTable& t) {
  // Names built as "prefix" + name, which OPS.md's generator (scripts/gen_ops_md.py) recognises.
  for (const EwName& e : kEwOps) {
    t.Add<EwKernel<L>>(e.name, kFloatTypes);
    if (e.op == EwOp::kFloor || e.op == EwOp::kRound || e.op == EwOp::kSign) continue;  // zero gradient
    if (e.name[0] == '_')
      t.Add<EwKernel<L>>(std::string("_backward") + e.name, kFloatTypes);
    else
      t.Add<EwKernel<L>>(std::string("_backward_") + e.name, kFloatTypes);
  }
}

}  // namespace weft::WEFT_GPU_NS
