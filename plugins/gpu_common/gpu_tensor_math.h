// weft GPU kernel layer — the math and index mappings of the tensor ops (element-wise unary and
// scalar ops, binary and broadcast ops, reductions, copies / transposes / slices / concat, Cast,
// one_hot, argmax, Embedding), written once as functors (see gpu_math.h for the pattern).
//
// Compile time: one functor serves a whole family, the op chosen by a run-time enum (the branch is
// uniform across a launch, so it costs a switch per element, not divergence), so each family
// instantiates per element type and write request only: e.g. every unary and scalar op is
// EwMap<T, Assign> for T in {float, double}, four kernels in all.
//
// Index mappings: an IndexPlan walks an iteration shape (row-major, at most WEFT_MAX_NDIM axes)
// and gives each operand's element offset (its own strides; 0 repeats an operand, negative steps
// walk backwards). Broadcasting, transposes, slices and concat are all plans built on the host
// (gpu_tensor_ops.h). A ReducePlan splits the shape into kept axes (one work item per kept
// element, written contiguously) and reduced axes (looped by the item), so reductions need no
// atomics and sum in a fixed order. Formulas are the cpu plugin's (plugins/cpu/kernels/*).
#pragma once

#include <math.h>
#include <stdint.h>

#include "gpu_elem.h"
#include "gpu_port.h"
#include "weft/sdk/operator.h"

namespace weft::WEFT_GPU_NS {

/// This file, for the kernels whose math it holds (weft_kernel_def.math_files).
inline constexpr const char* kGpuTensorMathSource = __FILE__;

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

template <typename T>
WEFT_HD bool IsNan(T v) {
  return v != v;
}

// ---- index plans -------------------------------------------------------------------------------

/// A row-major walk over `shape` giving K operands' offsets: off[k] = base[k] + Σ idx[a]·stride[k][a].
template <int K>
struct IndexPlan {
  int ndim = 1;
  int64_t shape[WEFT_MAX_NDIM] = {1};
  int64_t stride[K][WEFT_MAX_NDIM] = {};
  int64_t base[K] = {};
  int64_t Size() const {
    int64_t n = 1;
    for (int a = 0; a < ndim; ++a) n *= shape[a];
    return n;
  }
  /// Offsets of item i (0 <= i < Size()), base included.
  WEFT_HD void Offsets(int64_t i, int64_t (&off)[K]) const {
    for (int k = 0; k < K; ++k) off[k] = base[k];
    for (int a = ndim - 1; a >= 0; --a) {
      const int64_t q = i / shape[a], r = i - q * shape[a];
      for (int k = 0; k < K; ++k) off[k] += r * stride[k][a];
      i = q;
    }
  }
  /// Item i's offsets and its index digits `idx`, the start of a walk by Next.
  WEFT_HD void Start(int64_t i, int64_t (&idx)[WEFT_MAX_NDIM], int64_t (&off)[K]) const {
    for (int k = 0; k < K; ++k) off[k] = base[k];
    for (int a = ndim - 1; a >= 0; --a) {
      const int64_t q = i / shape[a];
      idx[a] = i - q * shape[a];
      for (int k = 0; k < K; ++k) off[k] += idx[a] * stride[k][a];
      i = q;
    }
  }
  /// Steps (idx, off) to the next item in row-major order: additions only (no division per item).
  WEFT_HD void Next(int64_t (&idx)[WEFT_MAX_NDIM], int64_t (&off)[K]) const {
    for (int a = ndim - 1; a >= 0; --a) {
      for (int k = 0; k < K; ++k) off[k] += stride[k][a];
      if (++idx[a] < shape[a]) return;
      for (int k = 0; k < K; ++k) off[k] -= shape[a] * stride[k][a];
      idx[a] = 0;
    }
  }
};

/// Kept axes (work items, output written at the item's index) and reduced axes (looped).
template <int K>
struct ReducePlan {
  IndexPlan<K> kept, red;
  int64_t red_count = 1;
};

// ---- element-wise unary, clip and scalar ops (cpu: elemwise_unary.cc) --------------------------

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

// ---- binary and broadcast ops, reductions (cpu: elemwise_binary.cc, reduce_kernels.cc) ----------

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

// ---- data movement (cpu: tensor_copy / transpose / slice / concat / cast.cc) -------------------

/// out[o0] (=|+=) in[o1] at the plan's offsets of item i: copies, transposes, slices (gather and
/// scatter), concat parts. T is the element type (one of kMoveDTypes').
template <typename T, class Assign>
struct StridedCopyMap {
  IndexPlan<2> p;
  const T* in;
  T* out;
  WEFT_HD void operator()(int64_t i) const {
    int64_t o[2];
    p.Offsets(i, o);
    Assign::Put(out[o[0]], in[o[1]]);
  }
};

/// Cast: out[i] = convert(in[i]) between any two kMoveDTypes (run-time dtypes).
template <class Assign>
struct CastMap {
  const void* in;
  int32_t in_dtype;
  void* out;
  int32_t out_dtype;
  WEFT_HD void operator()(int64_t i) const { StoreScalar<Assign>(out, out_dtype, i, LoadScalar(in, in_dtype, i)); }
};

/// zeros_like / ones_like and friends: out[i] (=|+=) value, any kMoveDTypes dtype.
template <class Assign>
struct FillAnyMap {
  void* out;
  int32_t dtype;
  Scalar value;
  WEFT_HD void operator()(int64_t i) const { StoreScalar<Assign>(out, dtype, i, value); }
};

// ---- GEMM for float64 (cpu: tensor_dot.cc) ----------------------------------------------------

/// Row-major batched C = op(A)·op(B) (Assign: write or add) for dtypes the tiled float GEMM does
/// not serve: item = one element (z, r, col) of C, the k loop inside it.
template <typename T, class Assign>
struct GemmMap {
  bool ta, tb;
  int64_t m, n, k, lda, ldb, ldc, sa, sb, sc;
  const T* a;
  const T* b;
  T* c;
  WEFT_HD void operator()(int64_t e) const {
    const int64_t z = e / (m * n), rem = e - z * m * n, r = rem / n, col = rem - r * n;
    const T* az = a + z * sa;
    const T* bz = b + z * sb;
    T acc = T(0);
    for (int64_t kk = 0; kk < k; ++kk)
      acc += (ta ? az[kk * lda + r] : az[r * lda + kk]) * (tb ? bz[col * ldb + kk] : bz[kk * ldb + col]);
    Assign::Put(c[z * sc + r * ldc + col], acc);
  }
};

// ---- index ops (cpu: index.cc) ----------------------------------------------------------

/// one_hot: item = one index; its row of `depth` values on / off.
template <class Assign>
struct OneHotMap {
  const void* idx;
  int32_t idx_dtype;
  void* out;
  int32_t out_dtype;
  int64_t depth;
  Scalar on, off;
  WEFT_HD void operator()(int64_t i) const {
    const int64_t hot = LoadIndex(idx, idx_dtype, i);
    for (int64_t j = 0; j < depth; ++j) StoreScalar<Assign>(out, out_dtype, i * depth + j, j == hot ? on : off);
  }
};

/// argmax along an axis viewed as (outer, n, inner): item = one (outer, inner) position; the first
/// maximum wins, a NaN counts as the largest.
template <typename X, class Assign>
struct ArgmaxMap {
  const X* x;
  void* out;
  int32_t out_dtype;
  int64_t n, inner;
  WEFT_HD void operator()(int64_t item) const {
    const int64_t o = item / inner, j = item - o * inner;
    const X* base = x + o * n * inner + j;
    X best = base[0];
    int64_t at = 0;
    for (int64_t k = 1; k < n; ++k) {
      const X v = base[k * inner];
      if (v > best || (IsNan(v) && !IsNan(best))) best = v, at = k;
    }
    StoreScalar<Assign>(out, out_dtype, item, IntScalar(at));
  }
};

/// Embedding's row of index i: truncated and clipped to [0, rows − 1] (MXNet's forward).
WEFT_HD inline int64_t EmbeddingRow(const void* idx, int32_t dtype, int64_t i, int64_t rows) {
  const int64_t r = LoadIndex(idx, dtype, i);
  return r < 0 ? 0 : (r > rows - 1 ? rows - 1 : r);
}

/// Embedding: y[i, j] = w[row(i), j]; item = output element.
template <typename T, class Assign>
struct EmbeddingMap {
  const void* idx;
  int32_t idx_dtype;
  const T* w;
  T* y;
  int64_t rows, dim;
  WEFT_HD void operator()(int64_t e) const {
    const int64_t i = e / dim, j = e - i * dim;
    Assign::Put(y[e], w[EmbeddingRow(idx, idx_dtype, i, rows) * dim + j]);
  }
};

/// _backward_Embedding's weight gradient: item = weight element (r, j), summing the out_grad
/// rows of every index that maps to r, in index order (no atomics; O(n) per item).
template <typename T, class Assign>
struct EmbeddingGradMap {
  const void* idx;
  int32_t idx_dtype;
  const T* g;
  T* gw;
  int64_t n, rows, dim;
  WEFT_HD void operator()(int64_t e) const {
    const int64_t r = e / dim, j = e - r * dim;
    T acc = T(0);
    for (int64_t i = 0; i < n; ++i)
      if (EmbeddingRow(idx, idx_dtype, i, rows) == r) acc += g[i * dim + j];
    Assign::Put(gw[e], acc);
  }
};

}  // namespace weft::WEFT_GPU_NS
