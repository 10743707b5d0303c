// weft GPU kernel layer — the broadcast and reduction walks that the binary ops
// (gpu_elemwise_binary.h), their gradients and the reductions (gpu_reduce.h) share: BroadcastMap
// evaluates a term per element of a broadcast IndexPlan, ReduceMap folds it over the reduced axes
// of a ReducePlan (gpu_strided.h), in one pass or two (ReduceParts).
//
// Compile time: one functor serves every op, the term and the binary op chosen by run-time enums
// (the branch is uniform across a launch, so it costs a switch per element, not divergence), so
// the walks instantiate per element type and write request only. That is why the binary ops'
// scalar math (BinOp: add, sub, mul, div, maximum, minimum and their partial derivatives) is here
// with the walk that evaluates it; their kernel classes and names are in gpu_elemwise_binary.h.
// Formulas are the cpu plugin's (elemwise_binary.cc, reduce_kernels.cc).
#pragma once

#include <math.h>
#include <stdint.h>

#include "gpu_elem.h"
#include "gpu_strided.h"

namespace weft::WEFT_GPU_NS {

enum class BinOp : uint8_t { kAdd, kSub, kMul, kDiv, kMaximum, kMinimum };

template <typename T>
WEFT_HD T BinForward(BinOp op, T a, T b) {
  switch (op) {
    case BinOp::kAdd:
      return a + b;
    case BinOp::kSub:
      return a - b;
    case BinOp::kMul:
      return a * b;
    case BinOp::kDiv:
      return a / b;
    case BinOp::kMaximum:
      return a > b ? a : b;
    case BinOp::kMinimum:
      return a < b ? a : b;
  }
  return T(0);
}
/// ∂/∂a; ties of maximum / minimum go to lhs alone (MXNet).
template <typename T>
WEFT_HD T BinDa(BinOp op, T a, T b) {
  switch (op) {
    case BinOp::kAdd:
    case BinOp::kSub:
      return T(1);
    case BinOp::kMul:
      return b;
    case BinOp::kDiv:
      return T(1) / b;
    case BinOp::kMaximum:
      return a >= b ? T(1) : T(0);
    case BinOp::kMinimum:
      return a <= b ? T(1) : T(0);
  }
  return T(0);
}
template <typename T>
WEFT_HD T BinDb(BinOp op, T a, T b) {
  switch (op) {
    case BinOp::kAdd:
      return T(1);
    case BinOp::kSub:
      return T(-1);
    case BinOp::kMul:
      return a;
    case BinOp::kDiv:
      return -a / (b * b);
    case BinOp::kMaximum:
      return a < b ? T(1) : T(0);
    case BinOp::kMinimum:
      return a > b ? T(1) : T(0);
  }
  return T(0);
}

/// What a broadcast map or a reduction evaluates per element of its walk, from operands u, v, w.
enum class Term : uint8_t {
  kIdentity,  // u                                 (reductions; copies of gradients)
  kBinary,    // op(u, v)                          (elemwise_*, broadcast_*)
  kGradA,     // u · ∂op/∂a(v, w)                  (lhs gradient: u = out_grad, v = lhs, w = rhs)
  kGradB,     // u · ∂op/∂b(v, w)
  kMaxGrad,   // v == w ? u : 0                    (_backward_max: u = out_grad, v = data, w = max)
};

template <typename T>
WEFT_HD T EvalTerm(Term t, BinOp op, T u, T v, T w) {
  switch (t) {
    case Term::kIdentity:
      return u;
    case Term::kBinary:
      return BinForward(op, u, v);
    case Term::kGradA:
      return u * BinDa(op, v, w);
    case Term::kGradB:
      return u * BinDb(op, v, w);
    case Term::kMaxGrad:
      return v == w ? u : T(0);
  }
  return T(0);
}

/// out[i] = scale · term(in0, in1, in2 at the plan's offsets of item i); unused operands null.
template <typename T, class Assign>
struct BroadcastMap {
  Term term;
  BinOp op;
  T scale;
  IndexPlan<3> p;
  const T* in0;
  const T* in1;
  const T* in2;
  T* out;
  WEFT_HD void operator()(int64_t i) const {
    int64_t o[3];
    p.Offsets(i, o);
    const T u = in0[o[0]], v = in1 != nullptr ? in1[o[1]] : T(0), w = in2 != nullptr ? in2[o[2]] : T(0);
    const T r = EvalTerm(term, op, u, v, w);
    Assign::Put(out[i], scale == T(1) ? r : r * scale);
  }
};

/// The fold of a reduction: sum, or max with NaN winning (once NaN, the result stays NaN).
template <typename T>
WEFT_HD T FoldInit(bool max) {
  return max ? -static_cast<T>(INFINITY) : T(0);
}
template <typename T>
WEFT_HD T Fold(bool max, T acc, T v) {
  return !max ? acc + v : IsNan(v) ? v : (v > acc ? v : acc);
}

/// out[i] = scale · fold over the reduced axes of term(...). With parts > 1 this is the first pass
/// of a two-pass reduction: item i folds part i % parts (consecutive reduced elements) of output
/// i / parts into out[i] (a partials buffer; scale 1, write), and ReducePartsMap folds the parts.
/// The reduced elements are walked by IndexPlan::Next (additions, no division per element).
template <typename T, class Assign>
struct ReduceMap {
  Term term;
  BinOp op;
  bool max;
  T scale;
  ReducePlan<3> p;
  const T* in0;
  const T* in1;
  const T* in2;
  T* out;
  int64_t parts = 1;
  WEFT_HD void operator()(int64_t i) const {
    const int64_t k = i / parts, part = i - k * parts, len = (p.red_count + parts - 1) / parts;
    const int64_t r0 = part * len, r1 = r0 + len < p.red_count ? r0 + len : p.red_count;
    int64_t base[3], o[3], idx[WEFT_MAX_NDIM];
    p.kept.Offsets(k, base);
    T acc = FoldInit<T>(max);
    if (r0 < r1) p.red.Start(r0, idx, o);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t a = base[0] + o[0], b = base[1] + o[1], c = base[2] + o[2];
      acc = Fold(max, acc, EvalTerm(term, op, in0[a], in1 != nullptr ? in1[b] : T(0), in2 != nullptr ? in2[c] : T(0)));
      p.red.Next(idx, o);
    }
    Assign::Put(out[i], scale == T(1) ? acc : acc * scale);
  }
};

/// Second pass of a two-pass reduction: out[k] = scale · fold of partials[k·parts .. k·parts + parts).
template <typename T, class Assign>
struct ReducePartsMap {
  bool max;
  T scale;
  int64_t parts;
  const T* partials;
  T* out;
  WEFT_HD void operator()(int64_t k) const {
    T acc = FoldInit<T>(max);
    for (int64_t j = 0; j < parts; ++j) acc = Fold(max, acc, partials[k * parts + j]);
    Assign::Put(out[k], scale == T(1) ? acc : acc * scale);
  }
};

/// How many parts each output of a reduction is split into: enough work items to fill a GPU
/// (~64K) when there are few outputs, at least kMinPart elements per part; 1 = one pass.
inline int64_t ReduceParts(int64_t outputs, int64_t red_count) {
  constexpr int64_t kMinPart = 256, kItems = 65536;
  if (outputs <= 0 || red_count < 2 * kMinPart || outputs >= kItems / 2) return 1;
  const int64_t by_size = red_count / kMinPart, by_items = kItems / outputs;
  return by_size < by_items ? by_size : by_items;
}

}  // namespace weft::WEFT_GPU_NS
