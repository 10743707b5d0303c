// weft GPU kernel layer — kernel classes of the tensor ops over a launcher L (see gpu_ops.h):
// element-wise unary / clip / scalar ops, elemwise_* and broadcast_* (+ maximum, minimum), add_n's
// backward, sum / mean / max, copies (_copy, Flatten, Reshape, expand_dims, BlockGrad), zeros_like,
// ones_like, Cast, transpose, SwapAxis, slice, slice_axis, Concat, SliceChannel, dot, batch_dot,
// one_hot, argmax, Embedding — forward and backward where MXNet has them.
//
// dtypes are the cpu plugin's for each op (plugins/cpu/kernels/tensor_kernels.h), so a GPU claims
// what the cpu reference can check: math in float32 / float64, data movement and Cast in every
// kMoveDTypes dtype, indices in float32 / float64 / int32 / int64. Setup (host)
// parses attributes as the cpu kernels do and builds the index plans of gpu_tensor_math.h.
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpu_gemm.h"
#include "gpu_ops.h"
#include "gpu_tensor_math.h"
#include "weft/sdk/ops/concat.hpp"
#include "weft/sdk/ops/dot.hpp"
#include "weft/sdk/ops/elemwise_unary.hpp"
#include "weft/sdk/ops/index.hpp"
#include "weft/sdk/ops/loss.hpp"
#include "weft/sdk/ops/reduce.hpp"
#include "weft/sdk/ops/slice.hpp"
#include "weft/sdk/ops/transpose.hpp"

namespace weft::WEFT_GPU_NS {

/// This file, for the kernels defined here and registered elsewhere (gpu_register.h).
inline constexpr const char* kGpuTensorOpsSource = __FILE__;

inline constexpr uint64_t kFloatTypes = kF32 | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64);
inline constexpr uint64_t kIndexTypes =
    kFloatTypes | WEFT_DTYPE_BIT(WEFT_DTYPE_INT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT64);
inline constexpr uint64_t kMoveTypes = kIndexTypes | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT16) |
                                       WEFT_DTYPE_BIT(WEFT_DTYPE_UINT8) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT8);

using Shape = std::vector<int64_t>;

template <typename T>
struct TypeTag {
  using type = T;
};

/// f(TypeTag<T>) for the element type of `dtype`, any of kMoveTypes (data movement); other dtypes
/// throw WEFT_ERR_UNSUPPORTED naming `op`.
template <typename F>
void WithMoveType(const std::string& op, int32_t dtype, F&& f) {
  switch (dtype) {
    case WEFT_DTYPE_FLOAT32:
      return f(TypeTag<float>{});
    case WEFT_DTYPE_FLOAT64:
      return f(TypeTag<double>{});
    case WEFT_DTYPE_FLOAT16:
      return f(TypeTag<Half>{});
    case WEFT_DTYPE_UINT8:
      return f(TypeTag<uint8_t>{});
    case WEFT_DTYPE_INT8:
      return f(TypeTag<int8_t>{});
    case WEFT_DTYPE_INT32:
      return f(TypeTag<int32_t>{});
    case WEFT_DTYPE_INT64:
      return f(TypeTag<int64_t>{});
    default:
      throw Error(WEFT_ERR_UNSUPPORTED, op + ": dtype " + sdk::DTypeName(dtype) + " is not implemented on GPUs");
  }
}

/// float32 / float64 only (math).
template <typename F>
void WithFloatType(const std::string& op, int32_t dtype, F&& f) {
  switch (dtype) {
    case WEFT_DTYPE_FLOAT32:
      return f(TypeTag<float>{});
    case WEFT_DTYPE_FLOAT64:
      return f(TypeTag<double>{});
    default:
      throw Error(WEFT_ERR_UNSUPPORTED,
                  op + ": dtype " + sdk::DTypeName(dtype) + " is not implemented on GPUs (float32 and float64 are)");
  }
}

inline bool InMask(int32_t dtype, uint64_t mask) {
  return dtype >= 0 && dtype < 64 && (mask & WEFT_DTYPE_BIT(dtype)) != 0;
}

/// Every input and output of input 0's dtype, which `mask` must hold.
inline void RequireSameDType(const KernelSetup& s, uint64_t mask) {
  const int32_t d = s.inputs.empty() ? s.outputs.at(0).dtype : s.inputs[0].dtype;
  if (!InMask(d, mask)) Unsupported(s, std::string("dtype ") + sdk::DTypeName(d) + " is not implemented on GPUs");
  for (const auto* ts : {&s.inputs, &s.outputs})
    for (const TensorDesc& t : *ts)
      if (t.dtype != d)
        Invalid(s, std::string("tensors of dtypes ") + sdk::DTypeName(t.dtype) + " and " + sdk::DTypeName(d) +
                       "; all must match");
}

inline bool IsBackward(const KernelSetup& s) { return s.op_name.rfind("_backward_", 0) == 0; }

inline int NormalizeAxis(const KernelSetup& s, int64_t axis, int ndim, const char* attr) {
  if (axis < -ndim || axis >= ndim)
    Invalid(s, std::string(attr) + "=" + std::to_string(axis) + " is out of range for " + std::to_string(ndim) +
                   " dimensions");
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

// ---- plans (host) ----------------------------------------------------------------------------

inline Shape RowMajorStrides(const Shape& shape) {
  Shape st(shape.size());
  int64_t s = 1;
  for (size_t a = shape.size(); a-- > 0;) st[a] = s, s *= shape[a];
  return st;
}

/// Strides of an operand of shape `s`, right-aligned against `out` (0 where it repeats).
inline Shape BroadcastStrides(const Shape& s, const Shape& out) {
  const Shape own = RowMajorStrides(s);
  Shape st(out.size(), 0);
  for (size_t a = 0; a < out.size(); ++a) {
    const ptrdiff_t sa = static_cast<ptrdiff_t>(a) - static_cast<ptrdiff_t>(out.size() - s.size());
    if (sa >= 0 && s[static_cast<size_t>(sa)] != 1) st[a] = own[static_cast<size_t>(sa)];
  }
  return st;
}

/// The plan walking `shape` with each operand's strides: extent-1 axes dropped, neighbours every
/// operand walks as one run merged.
template <int K>
IndexPlan<K> MakeIndexPlan(const Shape& shape, const std::array<Shape, K>& strides,
                           const std::array<int64_t, K>& base = {}) {
  IndexPlan<K> p;
  p.ndim = 0;
  for (int k = 0; k < K; ++k) p.base[k] = base[static_cast<size_t>(k)];
  for (size_t a = 0; a < shape.size(); ++a) {
    if (shape[a] == 1) continue;
    bool merge = p.ndim > 0 && shape[a] != 0 && p.shape[p.ndim - 1] != 0;
    for (int k = 0; k < K && merge; ++k)
      merge = p.stride[k][p.ndim - 1] == strides[static_cast<size_t>(k)][a] * shape[a];
    if (merge) {
      p.shape[p.ndim - 1] *= shape[a];
      for (int k = 0; k < K; ++k) p.stride[k][p.ndim - 1] = strides[static_cast<size_t>(k)][a];
    } else {
      if (p.ndim == WEFT_MAX_NDIM) throw Error(WEFT_ERR_UNSUPPORTED, "more than WEFT_MAX_NDIM axes");
      p.shape[p.ndim] = shape[a];
      for (int k = 0; k < K; ++k) p.stride[k][p.ndim] = strides[static_cast<size_t>(k)][a];
      ++p.ndim;
    }
  }
  if (p.ndim == 0) {
    p.ndim = 1;
    p.shape[0] = 1;
    for (int k = 0; k < K; ++k) p.stride[k][0] = 0;
  }
  return p;
}

/// Kept axes of `shape` (not flagged) as the work items, flagged axes as each item's loop.
template <int K>
ReducePlan<K> MakeReducePlan(const Shape& shape, const std::vector<bool>& reduced,
                             const std::array<Shape, K>& strides) {
  Shape ks, rs;
  std::array<Shape, K> kst, rst;
  for (size_t a = 0; a < shape.size(); ++a) {
    (reduced[a] ? rs : ks).push_back(shape[a]);
    for (size_t k = 0; k < K; ++k) (reduced[a] ? rst : kst)[k].push_back(strides[k][a]);
  }
  ReducePlan<K> p;
  p.kept = MakeIndexPlan<K>(ks, kst);
  p.red = MakeIndexPlan<K>(rs, rst);
  p.red_count = p.red.Size();
  return p;
}

// ---- element-wise unary, clip, scalar --------------------------------------------------------

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

// ---- binary, broadcast, add_n's backward -----------------------------------------------------

struct BinName {
  const char* name;
  BinOp op;
};
inline constexpr BinName kBinOps[] = {{"add", BinOp::kAdd}, {"sub", BinOp::kSub},         {"mul", BinOp::kMul},
                                      {"div", BinOp::kDiv}, {"maximum", BinOp::kMaximum}, {"minimum", BinOp::kMinimum}};

inline BinOp BinOpOf(const KernelSetup& s) {
  const std::string& n = s.op_name;
  for (const BinName& b : kBinOps) {
    const std::string suffix = std::string("_") + b.name;
    if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) return b.op;
  }
  Invalid(s, "not a binary op of the GPU layer");
}

inline bool BinGradUsesInputs(BinOp op) { return op != BinOp::kAdd && op != BinOp::kSub; }

/// numpy broadcast of two shapes; Invalid when they do not broadcast.
inline Shape BroadcastShape(const KernelSetup& s, const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const ptrdiff_t ia = static_cast<ptrdiff_t>(i + a.size()) - static_cast<ptrdiff_t>(out.size());
    const ptrdiff_t ib = static_cast<ptrdiff_t>(i + b.size()) - static_cast<ptrdiff_t>(out.size());
    const int64_t ea = ia >= 0 ? a[static_cast<size_t>(ia)] : 1, eb = ib >= 0 ? b[static_cast<size_t>(ib)] : 1;
    if (ea != eb && ea != 1 && eb != 1)
      Invalid(s, "shapes " + sdk::FormatTuple(a) + " and " + sdk::FormatTuple(b) + " do not broadcast");
    out[i] = ea == 1 ? eb : ea;
  }
  return out;
}

/// elemwise_<op>, _maximum, _minimum (equal shapes) and broadcast_<op>: out = op(lhs, rhs).
template <class L>
class BinaryKernel {
 public:
  explicit BinaryKernel(const KernelSetup& s) : op_(BinOpOf(s)) {
    s.ExpectCounts(2, 1);
    RequireSameDType(s, kFloatTypes);
    const Shape& a = s.inputs[0].shape;
    const Shape& b = s.inputs[1].shape;
    if (s.op_name.rfind("broadcast_", 0) != 0 && (a != b || s.outputs[0].shape != a))
      Invalid(s, "shapes " + ShapeOf(s.inputs[0]) + ", " + ShapeOf(s.inputs[1]) + " -> " + ShapeOf(s.outputs[0]) +
                     " differ (element-wise ops need equal shapes)");
    const Shape out = BroadcastShape(s, a, b);
    if (sdk::detail::Elements(out) != s.outputs[0].size())
      Invalid(s, "output " + ShapeOf(s.outputs[0]) + " is not the broadcast shape " + sdk::FormatTuple(out));
    plan_ = MakeIndexPlan<3>(out, {BroadcastStrides(a, out), BroadcastStrides(b, out), Shape(out.size(), 0)});
  }
  void Compute(const DeviceCall& c) const {
    WithFloatType("binary op", c.outputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      WithReq(c.req[0], [&](auto a) {
        L::Map(c, c.outputs[0].size(),
               BroadcastMap<T, decltype(a)>{Term::kBinary, op_, T(1), plan_, L::template Ptr<const T>(c.inputs[0]),
                                            L::template Ptr<const T>(c.inputs[1]), nullptr,
                                            L::template Ptr<T>(c.outputs[0])});
      });
    });
  }

 private:
  BinOp op_;
  IndexPlan<3> plan_;
};

/// _backward_elemwise_<op> / _backward_broadcast_<op>: inputs out_grad[, lhs, rhs]; outputs the
/// lhs and rhs gradients, each summed over the axes its operand was repeated along.
template <class L>
class BinaryBackwardKernel {
 public:
  explicit BinaryBackwardKernel(const KernelSetup& s) : op_(BinOpOf(s)) {
    s.ExpectCounts(BinGradUsesInputs(op_) ? 3 : 1, 2);
    RequireSameDType(s, kFloatTypes);
    const Shape& a = s.outputs[0].shape;
    const Shape& b = s.outputs[1].shape;
    const Shape out = BroadcastShape(s, a, b);
    if (sdk::detail::Elements(out) != s.inputs[0].size())
      Invalid(s, "output gradient " + ShapeOf(s.inputs[0]) + " is not the broadcast shape " + sdk::FormatTuple(out));
    if (BinGradUsesInputs(op_) && (s.inputs[1].shape != a || s.inputs[2].shape != b))
      Invalid(s, "lhs / rhs shapes differ from their gradients'");
    const std::array<Shape, 3> strides = {RowMajorStrides(out), BroadcastStrides(a, out), BroadcastStrides(b, out)};
    for (int k = 0; k < 2; ++k) {
      const Shape& target = k == 0 ? a : b;
      std::vector<bool> reduced(out.size());
      for (size_t i = 0; i < out.size(); ++i) {
        const ptrdiff_t it = static_cast<ptrdiff_t>(i + target.size()) - static_cast<ptrdiff_t>(out.size());
        reduced[i] = (it < 0 || target[static_cast<size_t>(it)] == 1) && out[i] != 1;
      }
      plans_[k] = MakeReducePlan<3>(out, reduced, strides);
    }
  }
  void Compute(const DeviceCall& c) const {
    WithFloatType("binary op backward", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const bool uses = BinGradUsesInputs(op_);
      const T* g = L::template Ptr<const T>(c.inputs[0]);
      const T* a = uses ? L::template Ptr<const T>(c.inputs[1]) : nullptr;
      const T* b = uses ? L::template Ptr<const T>(c.inputs[2]) : nullptr;
      for (size_t k = 0; k < 2; ++k)
        WithReq(c.req[k], [&](auto as) {
          L::Map(c, c.outputs[k].size(),
                 ReduceMap<T, decltype(as)>{k == 0 ? Term::kGradA : Term::kGradB, op_, false, T(1), plans_[k], g, a, b,
                                            L::template Ptr<T>(c.outputs[k])});
        });
    });
  }

 private:
  BinOp op_;
  std::array<ReducePlan<3>, 2> plans_;
};

// ---- reductions ------------------------------------------------------------------------------

/// sum / mean / max over `axis` (() = all; exclude inverts; keepdims only shapes the output) and
/// their backward ops: sum / mean broadcast out_grad back (mean divided by the count), max routes
/// it to every element equal to the maximum (inputs out_grad, data, output).
template <class L>
class ReduceKernel {
 public:
  explicit ReduceKernel(const KernelSetup& s) : backward_(IsBackward(s)) {
    const std::string& n = s.op_name;
    max_ = n.find("max") != std::string::npos;
    const bool mean = n.find("mean") != std::string::npos;
    s.ExpectCounts(backward_ && max_ ? 3 : 1, 1);
    RequireSameDType(s, kFloatTypes);
    const Shape& data = (backward_ ? s.outputs[0] : s.inputs[0]).shape;
    const auto p = s.Params<sdk::ReduceParam>();
    const std::vector<int64_t>& axes = p.axis;
    const bool exclude = p.exclude;
    std::vector<bool> named(data.size(), false), reduced(data.size());
    for (int64_t a : axes) {
      const int ax = NormalizeAxis(s, a, static_cast<int>(data.size()), "axis");
      if (named[static_cast<size_t>(ax)]) Invalid(s, "axis " + sdk::FormatTuple(axes) + " names an axis twice");
      named[static_cast<size_t>(ax)] = true;
    }
    Shape kept = data;
    int64_t count = 1;
    for (size_t a = 0; a < data.size(); ++a) {
      reduced[a] = axes.empty() ? !exclude : named[a] != exclude;
      if (reduced[a]) count *= data[a], kept[a] = 1;
    }
    const TensorDesc& small = backward_ ? s.inputs[0] : s.outputs[0];
    if (small.size() != sdk::detail::Elements(kept))
      Invalid(s, "reducing " + sdk::FormatTuple(data) + " gives " + sdk::FormatTuple(kept) + ", not " + ShapeOf(small));
    if (max_ && count == 0 && sdk::detail::Elements(kept) > 0) Invalid(s, "max over an empty axis");
    count_ = count;
    const Shape zeros(data.size(), 0);
    if (!backward_) {
      reduce_ = MakeReducePlan<3>(data, reduced, {RowMajorStrides(data), zeros, zeros});
      parts_ = ReduceParts(small.size(), reduce_.red_count);
      if (parts_ > 1)
        partials_bytes_ = static_cast<uint64_t>(small.size() * parts_) * sdk::ElementSize(s.inputs[0].dtype);
      if (small.size() == 1 && count > 0)  // every element of the (contiguous) input: a vendor reduction?
        WithFloatType("reduction", s.inputs[0].dtype, [&](auto tag) {
          vendor_bytes_ = L::template FullReduceBytes<typename decltype(tag)::type>(count, max_);
        });
    } else {
      const Shape ks = BroadcastStrides(kept, data);
      map_ = MakeIndexPlan<3>(data, {ks, RowMajorStrides(data), ks});
    }
    mean_ = mean;
  }
  uint64_t WorkspaceBytes() const { return partials_bytes_ > vendor_bytes_ ? partials_bytes_ : vendor_bytes_; }
  void Compute(const DeviceCall& c) const {
    WithFloatType("reduction", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      // The cpu's mean scale: 1 / count in the element type.
      const T scale = !mean_ ? T(1) : count_ == 0 ? T(0) : T(1) / static_cast<T>(count_);
      auto in = [&](size_t i) { return L::template Ptr<const T>(c.inputs[i]); };
      T* out = L::template Ptr<T>(c.outputs[0]);
      WithReq(c.req[0], [&](auto a) {
        using A = decltype(a);
        if (!backward_ && vendor_bytes_ > 0 &&
            L::template FullReduce<T, A>(c, in(0), count_, max_, scale, out, L::template Ptr<void>(c.workspace),
                                         vendor_bytes_)) {
          return;                               // rocPRIM on HIP
        } else if (!backward_ && parts_ > 1) {  // few outputs: the reduced range split over many items
          T* partials = L::template Ptr<T>(c.workspace);
          ReduceMap<T, ReqWrite> first{Term::kIdentity, BinOp::kAdd, max_,    T(1),    reduce_,
                                       in(0),           nullptr,     nullptr, partials};
          first.parts = parts_;
          L::Map(c, c.outputs[0].size() * parts_, first);
          L::Map(c, c.outputs[0].size(), ReducePartsMap<T, A>{max_, scale, parts_, partials, out});
        } else if (!backward_) {
          L::Map(c, c.outputs[0].size(),
                 ReduceMap<T, A>{Term::kIdentity, BinOp::kAdd, max_, scale, reduce_, in(0), nullptr, nullptr, out});
        } else if (max_) {
          L::Map(c, c.outputs[0].size(),
                 BroadcastMap<T, A>{Term::kMaxGrad, BinOp::kAdd, T(1), map_, in(0), in(1), in(2), out});
        } else {
          L::Map(c, c.outputs[0].size(),
                 BroadcastMap<T, A>{Term::kIdentity, BinOp::kAdd, scale, map_, in(0), nullptr, nullptr, out});
        }
      });
    });
  }

 private:
  bool backward_, max_ = false, mean_ = false;
  int64_t count_ = 1;
  int64_t parts_ = 1;  // > 1: two passes through a partials workspace (ReduceParts)
  uint64_t partials_bytes_ = 0;
  uint64_t vendor_bytes_ = 0;  // > 0: L's vendor reduction over all elements (FullReduce)
  ReducePlan<3> reduce_;
  IndexPlan<3> map_;
};

// ---- data movement ---------------------------------------------------------------------------

/// Runs StridedCopyMap over `plan` (element type of `dtype`) with req.
template <class L>
void RunCopy(const DeviceCall& c, const char* op, int32_t dtype, int32_t req, const IndexPlan<2>& plan,
             const DeviceTensor& in, const DeviceTensor& out) {
  WithMoveType(op, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    WithReq(req, [&](auto a) {
      L::Map(c, plan.Size(),
             StridedCopyMap<T, decltype(a)>{plan, L::template Ptr<const T>(in), L::template Ptr<T>(out)});
    });
  });
}

/// A contiguous copy of n elements.
inline IndexPlan<2> LinearPlan(int64_t n) { return MakeIndexPlan<2>(Shape{n}, {Shape{1}, Shape{1}}); }

/// _copy, _backward_copy, Flatten, Reshape, expand_dims, BlockGrad, LinearRegressionOutput /
/// MakeLoss forward: out (=|+=) in, the element count kept.
template <class L>
class CopyKernel {
 public:
  explicit CopyKernel(const KernelSetup& s) {
    if (s.inputs.empty() || s.outputs.size() != 1) Invalid(s, "expects data and one output");
    if (s.op_name == "LinearRegressionOutput") {
      s.ExpectCounts(2, 1);
      if (s.inputs[1].size() != s.inputs[0].size())
        Invalid(s, "label " + ShapeOf(s.inputs[1]) + " must have as many elements as data " + ShapeOf(s.inputs[0]));
      RequireFloat32(s);
    } else {
      s.ExpectCounts(1, 1);
    }
    RequireSameDType(s, kMoveTypes);
    if (s.inputs[0].size() != s.outputs[0].size())
      Invalid(s, "input " + ShapeOf(s.inputs[0]) + " and output " + ShapeOf(s.outputs[0]) + " differ in size");
    plan_ = LinearPlan(s.inputs[0].size());
  }
  void Compute(const DeviceCall& c) const {
    RunCopy<L>(c, "copy", c.inputs[0].dtype(), c.req[0], plan_, c.inputs[0], c.outputs[0]);
  }

 private:
  IndexPlan<2> plan_;
};

/// zeros_like / ones_like (kValue), _backward_MakeLoss (grad_scale, / N for batch).
template <class L, int kValue>
class FillKernel {
 public:
  explicit FillKernel(const KernelSetup& s) : value_(kValue) {
    s.ExpectCounts(1, 1);
    if (s.op_name == "_backward_MakeLoss") {
      RequireFloat32(s);
      const auto p = s.Params<sdk::MakeLossParam>();
      if (p.normalization == sdk::GradNormalization::kValid)
        Unsupported(
            s, "normalization='valid' needs the data, which MakeLoss's backward does not receive; use null or batch");
      float v = p.grad_scale;
      const TensorDesc& g = s.outputs[0];
      if (p.normalization == sdk::GradNormalization::kBatch && g.ndim() > 0 && g.dim(0) > 0)
        v /= static_cast<float>(g.dim(0));
      value_ = v;
    } else {
      RequireSameDType(s, kMoveTypes);
    }
  }
  void Compute(const DeviceCall& c) const {
    const DeviceTensor& out = c.outputs[0];
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, out.size(), FillAnyMap<decltype(a)>{L::template Ptr<void>(out), out.dtype(), FloatScalar(value_)});
    });
  }

 private:
  double value_;
};

/// Cast / _backward_Cast between any two kMoveTypes dtypes (the output's is the target).
template <class L>
class CastKernel {
 public:
  explicit CastKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    if (!InMask(s.inputs[0].dtype, kMoveTypes) || !InMask(s.outputs[0].dtype, kMoveTypes))
      Unsupported(s, std::string("Cast from ") + sdk::DTypeName(s.inputs[0].dtype) + " to " +
                         sdk::DTypeName(s.outputs[0].dtype) + " is not implemented on GPUs");
    if (s.inputs[0].size() != s.outputs[0].size()) Invalid(s, "input and output differ in size");
  }
  void Compute(const DeviceCall& c) const {
    const DeviceTensor& in = c.inputs[0];
    const DeviceTensor& out = c.outputs[0];
    WithReq(c.req[0], [&](auto a) {
      L::Map(
          c, in.size(),
          CastMap<decltype(a)>{L::template Ptr<const void>(in), in.dtype(), L::template Ptr<void>(out), out.dtype()});
    });
  }
};

/// transpose (axes; () reverses) and SwapAxis (dim1, dim2), forward and backward (the inverse).
template <class L>
class TransposeKernel {
 public:
  explicit TransposeKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireSameDType(s, kMoveTypes);
    const bool backward = IsBackward(s);
    const TensorDesc& fwd_in = backward ? s.outputs[0] : s.inputs[0];
    const TensorDesc& fwd_out = backward ? s.inputs[0] : s.outputs[0];
    const int n = fwd_in.ndim();
    std::vector<int> perm(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) perm[static_cast<size_t>(k)] = k;
    const bool swap = s.op_name.find("SwapAxis") != std::string::npos;
    const std::vector<int64_t> axes = swap ? std::vector<int64_t>{} : s.Params<sdk::TransposeParam>().axes;
    if (swap) {
      const auto p = s.Params<sdk::SwapAxisParam>();
      std::swap(perm[static_cast<size_t>(NormalizeAxis(s, p.dim1, n, "dim1"))],
                perm[static_cast<size_t>(NormalizeAxis(s, p.dim2, n, "dim2"))]);
    } else if (axes.empty()) {
      for (int k = 0; k < n; ++k) perm[static_cast<size_t>(k)] = n - 1 - k;
    } else {
      if (static_cast<int>(axes.size()) != n)
        Invalid(s, "axes " + sdk::FormatTuple(axes) + " must name each axis once");
      std::vector<bool> seen(static_cast<size_t>(n), false);
      for (int k = 0; k < n; ++k) {
        const int a = NormalizeAxis(s, axes[static_cast<size_t>(k)], n, "axes");
        if (seen[static_cast<size_t>(a)]) Invalid(s, "axes " + sdk::FormatTuple(axes) + " repeats an axis");
        seen[static_cast<size_t>(a)] = true;
        perm[static_cast<size_t>(k)] = a;
      }
    }
    bool ok = fwd_out.ndim() == n;
    for (int k = 0; ok && k < n; ++k) ok = fwd_out.dim(k) == fwd_in.dim(perm[static_cast<size_t>(k)]);
    if (!ok) Invalid(s, "output shape does not match the input shape permuted by axes");
    std::vector<int> q = perm;  // output axis k reads input axis q[k]
    if (backward)
      for (int k = 0; k < n; ++k) q[static_cast<size_t>(perm[static_cast<size_t>(k)])] = k;
    const Shape in_st = RowMajorStrides(s.inputs[0].shape);
    Shape from(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) from[static_cast<size_t>(k)] = in_st[static_cast<size_t>(q[static_cast<size_t>(k)])];
    plan_ = MakeIndexPlan<2>(s.outputs[0].shape, {RowMajorStrides(s.outputs[0].shape), from});
  }
  void Compute(const DeviceCall& c) const {
    RunCopy<L>(c, "transpose", c.inputs[0].dtype(), c.req[0], plan_, c.inputs[0], c.outputs[0]);
  }

 private:
  IndexPlan<2> plan_;
};

/// slice / slice_axis (weft/sdk/ops/slice.hpp ranges): forward gathers the box, backward scatters the
/// gradient into it (after zeroing the data gradient for req write).
template <class L>
class SliceKernel {
 public:
  explicit SliceKernel(const KernelSetup& s) : backward_(IsBackward(s)) {
    s.ExpectCounts(1, 1);
    RequireSameDType(s, kMoveTypes);
    const TensorDesc& data = backward_ ? s.outputs[0] : s.inputs[0];
    const TensorDesc& sliced = backward_ ? s.inputs[0] : s.outputs[0];
    std::vector<sdk::SliceRange> r;
    try {
      if (s.op_name.find("slice_axis") != std::string::npos) {
        int axis = 0;
        const sdk::SliceRange one = sdk::SliceAxisOpRange(s.Params<sdk::SliceAxisParam>(), data.shape, &axis);
        for (int i = 0; i < data.ndim(); ++i) r.push_back(i == axis ? one : sdk::SliceRange{0, 1, data.dim(i)});
      } else {
        r = sdk::SliceRanges(s.Params<sdk::SliceParam>(), data.shape);
      }
    } catch (const Error& e) {
      Invalid(s, e.what());
    }
    const Shape st = RowMajorStrides(data.shape);
    Shape box, step;
    int64_t base = 0;
    for (size_t a = 0; a < r.size(); ++a)
      box.push_back(r[a].len), step.push_back(r[a].step * st[a]), base += r[a].begin * st[a];
    if (sdk::detail::Elements(box) != sliced.size())
      Invalid(s, "sliced tensor " + ShapeOf(sliced) + " does not hold the slice " + sdk::FormatTuple(box));
    const Shape packed = RowMajorStrides(box);
    plan_ =
        backward_ ? MakeIndexPlan<2>(box, {step, packed}, {base, 0}) : MakeIndexPlan<2>(box, {packed, step}, {0, base});
  }
  void Compute(const DeviceCall& c) const {
    const DeviceTensor& out = c.outputs[0];
    if (backward_ && c.req[0] == WEFT_REQ_WRITE)
      L::Map(c, out.size(), FillAnyMap<ReqWrite>{L::template Ptr<void>(out), out.dtype(), IntScalar(0)});
    const int32_t req = backward_ && c.req[0] == WEFT_REQ_WRITE_INPLACE ? WEFT_REQ_WRITE : c.req[0];
    if (plan_.Size() > 0) RunCopy<L>(c, "slice", c.inputs[0].dtype(), req, plan_, c.inputs[0], out);
  }

 private:
  bool backward_;
  IndexPlan<2> plan_;
};

/// Concat / _backward_SliceChannel (join parts into the whole) and SliceChannel / _backward_Concat
/// (split): with outer = the extents before the axis, part p is `outer` blocks of len[p] elements,
/// interleaved in the whole at offset Σ len[q < p].
template <class L>
class AxisCopyKernel {
 public:
  explicit AxisCopyKernel(const KernelSetup& s) {
    join_ = s.op_name == "Concat" || s.op_name == "_backward_SliceChannel";
    const bool concat_attrs = s.op_name == "Concat" || s.op_name == "_backward_Concat";
    const char* attr = concat_attrs ? "dim" : "axis";
    int64_t n = 0, axis_value = 1;
    if (concat_attrs) {
      const auto p = s.Params<sdk::ConcatParam>();
      n = p.num_args, axis_value = p.dim;
    } else {
      const auto p = s.Params<sdk::SliceChannelParam>();
      n = p.num_outputs, axis_value = p.axis;
    }
    s.ExpectCounts(join_ ? -1 : 1, join_ ? 1 : -1);
    RequireSameDType(s, kMoveTypes);
    const TensorDesc& whole = join_ ? s.outputs[0] : s.inputs[0];
    const std::vector<TensorDesc>& parts = join_ ? s.inputs : s.outputs;
    if (parts.empty()) Invalid(s, "needs at least one part");
    if (n != static_cast<int64_t>(parts.size())) Invalid(s, "num attribute disagrees with the parts");
    const int axis = NormalizeAxis(s, axis_value, whole.ndim(), attr);
    int64_t outer = 1, total = 0;
    for (int a = 0; a < axis; ++a) outer *= whole.dim(a);
    std::vector<int64_t> len;
    for (const TensorDesc& p : parts) {
      if (outer != 0 && p.size() % outer != 0) Invalid(s, "a part does not split evenly along " + std::string(attr));
      len.push_back(outer == 0 ? 0 : p.size() / outer);
      total += len.back();
    }
    if (outer != 0 && total * outer != whole.size()) Invalid(s, "the parts do not add up to the whole");
    int64_t offset = 0;
    for (const int64_t l : len) {
      const Shape box{outer, l}, part{l, 1}, big{total, 1};
      plans_.push_back(join_ ? MakeIndexPlan<2>(box, {big, part}, {offset, 0})
                             : MakeIndexPlan<2>(box, {part, big}, {0, offset}));
      offset += l;
    }
  }
  void Compute(const DeviceCall& c) const {
    for (size_t p = 0; p < plans_.size(); ++p) {
      if (plans_[p].Size() == 0) continue;
      RunCopy<L>(c, "Concat", c.inputs[0].dtype(), join_ ? c.req[0] : c.req[p], plans_[p],
                 join_ ? c.inputs[p] : c.inputs[0], join_ ? c.outputs[0] : c.outputs[p]);
    }
  }

 private:
  bool join_ = false;
  std::vector<IndexPlan<2>> plans_;
};

/// _backward_add_n: every output (=|+=) out_grad.
template <class L>
class AddNBackwardKernel {
 public:
  explicit AddNBackwardKernel(const KernelSetup& s) {
    s.ExpectCounts(1, -1);
    RequireSameDType(s, kFloatTypes);
    RequireSameSize(s);
    plan_ = LinearPlan(s.inputs[0].size());
  }
  void Compute(const DeviceCall& c) const {
    for (size_t i = 0; i < c.outputs.size(); ++i)
      RunCopy<L>(c, "_backward_add_n", c.inputs[0].dtype(), c.req[i], plan_, c.inputs[0], c.outputs[i]);
  }

 private:
  IndexPlan<2> plan_;
};

// ---- dot, batch_dot --------------------------------------------------------------------------

/// One (batched) product: batch × [op(A) (m × k)] [op(B) (k × n)] (the cpu's tensor_dot.cc rules:
/// dot flattens n-d operands around the contracted axis, batch_dot takes the last two axes).
struct DotGeometry {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  bool ta = false, tb = false;
  int64_t lda() const { return ta ? m : k; }
  int64_t ldb() const { return tb ? k : n; }
};

inline DotGeometry ParseDot(const KernelSetup& s, const TensorDesc& lhs, const TensorDesc& rhs, bool batched) {
  DotGeometry g;
  const auto p = s.Params<sdk::DotParam>();
  g.ta = p.transpose_a;
  g.tb = p.transpose_b;
  const std::string shapes = " (lhs " + ShapeOf(lhs) + ", rhs " + ShapeOf(rhs) + ")";
  int64_t k2 = 0;
  if (batched) {
    if (lhs.ndim() < 3 || lhs.ndim() != rhs.ndim()) Invalid(s, "needs operands of equal rank >= 3" + shapes);
    for (int a = 0; a < lhs.ndim() - 2; ++a) {
      if (lhs.dim(a) != rhs.dim(a)) Invalid(s, "batch extents differ" + shapes);
      g.batch *= lhs.dim(a);
    }
    g.m = lhs.dim(g.ta ? -1 : -2), g.k = lhs.dim(g.ta ? -2 : -1);
    k2 = rhs.dim(g.tb ? -1 : -2), g.n = rhs.dim(g.tb ? -2 : -1);
  } else {
    if (lhs.ndim() < 1 || rhs.ndim() < 1) Invalid(s, "needs operands of rank >= 1" + shapes);
    const int ca = g.ta ? 0 : lhs.ndim() - 1, cb = g.tb ? rhs.ndim() - 1 : 0;
    g.k = lhs.dim(ca), k2 = rhs.dim(cb), g.m = 1, g.n = 1;
    for (int a = 0; a < lhs.ndim(); ++a) g.m *= a == ca ? 1 : lhs.dim(a);
    for (int a = 0; a < rhs.ndim(); ++a) g.n *= a == cb ? 1 : rhs.dim(a);
  }
  if (g.k != k2) Invalid(s, "inner extents differ: " + std::to_string(g.k) + " vs " + std::to_string(k2) + shapes);
  return g;
}

/// dot / batch_dot and their backward ops (inputs out_grad, lhs, rhs; outputs their gradients):
/// float32 through L::Gemm, batched (cuBLAS strided-batched on CUDA, the tiled kernel elsewhere);
/// float64 through GemmMap (a plain kernel, no vendor call: correct, not fast).
template <class L>
class DotKernel {
 public:
  explicit DotKernel(const KernelSetup& s) : backward_(IsBackward(s)) {
    s.ExpectCounts(backward_ ? 3 : 2, backward_ ? 2 : 1);
    RequireSameDType(s, kFloatTypes);
    const size_t first = backward_ ? 1 : 0;
    g_ = ParseDot(s, s.inputs[first], s.inputs[first + 1], s.op_name.find("batch_dot") != std::string::npos);
    const TensorDesc& c = backward_ ? s.inputs[0] : s.outputs[0];
    if (c.size() != g_.batch * g_.m * g_.n)
      Invalid(s, "the product has " + std::to_string(g_.batch * g_.m * g_.n) + " elements, not " + ShapeOf(c));
  }
  void Compute(const DeviceCall& c) const {
    WithFloatType("dot", c.inputs[0].dtype(), [&](auto tag) { Run<typename decltype(tag)::type>(c); });
  }

 private:
  // float32: L::Gemm (cuBLAS / the tiled kernel); float64: GemmMap, one item per element of C.
  template <typename T>
  void Run(const DeviceCall& c) const {
    const int64_t sa = g_.m * g_.k, sb = g_.k * g_.n, sc = g_.m * g_.n;
    auto gemm = [&](bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, int64_t sta, const T* b,
                    int64_t ldb, int64_t stb, int32_t req, T* out, int64_t ldc, int64_t stc) {
      if (req == WEFT_REQ_NULL) return;
      if constexpr (std::is_same_v<T, float>) {
        GemmArgs g = MakeGemm(ta, tb, m, n, k, a, lda, b, ldb, req, out, ldc);
        g.batch = g_.batch, g.stride_a = sta, g.stride_b = stb, g.stride_c = stc;
        L::Gemm(c, g);
      } else {
        WithReq(req, [&](auto as) {
          L::Map(c, g_.batch * m * n,
                 GemmMap<T, decltype(as)>{ta, tb, m, n, k, lda, ldb, ldc, sta, stb, stc, a, b, out});
        });
      }
    };
    auto in = [&](size_t i) { return L::template Ptr<const T>(c.inputs[i]); };
    auto out = [&](size_t i) { return L::template Ptr<T>(c.outputs[i]); };
    const DotGeometry& g = g_;
    if (!backward_) {
      gemm(g.ta, g.tb, g.m, g.n, g.k, in(0), g.lda(), sa, in(1), g.ldb(), sb, c.req[0], out(0), g.n, sc);
      return;
    }
    const T* dc = in(0);
    const T* a = in(1);
    const T* b = in(2);
    if (!g.ta)  // dA (m × k) = dC · op(B)ᵀ
      gemm(false, !g.tb, g.m, g.k, g.n, dc, g.n, sc, b, g.ldb(), sb, c.req[0], out(0), g.k, sa);
    else  // dA (k × m) = op(B) · dCᵀ
      gemm(g.tb, true, g.k, g.m, g.n, b, g.ldb(), sb, dc, g.n, sc, c.req[0], out(0), g.m, sa);
    if (!g.tb)  // dB (k × n) = op(A)ᵀ · dC
      gemm(!g.ta, false, g.k, g.n, g.m, a, g.lda(), sa, dc, g.n, sc, c.req[1], out(1), g.n, sb);
    else  // dB (n × k) = dCᵀ · op(A)
      gemm(true, g.ta, g.n, g.k, g.m, dc, g.n, sc, a, g.lda(), sa, c.req[1], out(1), g.k, sb);
  }

  bool backward_;
  DotGeometry g_;
};

// ---- one_hot, argmax, Embedding --------------------------------------------------------------

template <class L>
class OneHotKernel {
 public:
  explicit OneHotKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    p_ = s.Params<sdk::OneHotParam>();
    if (!InMask(s.inputs[0].dtype, kIndexTypes) || !InMask(s.outputs[0].dtype, kMoveTypes))
      Unsupported(s, "indices of dtype " + std::string(sdk::DTypeName(s.inputs[0].dtype)) + " to " +
                         sdk::DTypeName(s.outputs[0].dtype) + " are not implemented on GPUs");
    p_.CheckShapes(s.op_name, s.inputs[0].shape, s.outputs[0].shape);
  }
  void Compute(const DeviceCall& c) const {
    const DeviceTensor& in = c.inputs[0];
    const DeviceTensor& out = c.outputs[0];
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, in.size(),
             OneHotMap<decltype(a)>{L::template Ptr<const void>(in), in.dtype(), L::template Ptr<void>(out),
                                    out.dtype(), p_.depth, FloatScalar(p_.on_value), FloatScalar(p_.off_value)});
    });
  }

 private:
  sdk::OneHotParam p_;
};

template <class L>
class ArgmaxKernel {
 public:
  explicit ArgmaxKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    if (!InMask(s.inputs[0].dtype, kIndexTypes) || !InMask(s.outputs[0].dtype, kIndexTypes))
      Unsupported(s, "dtypes other than float32, float64, int32, int64 are not implemented on GPUs");
    const TensorDesc& x = s.inputs[0];
    if (const std::optional<int64_t> axis = s.Params<sdk::ArgmaxParam>().axis) {
      const int a = NormalizeAxis(s, *axis, x.ndim(), "axis");
      for (int d = 0; d < x.ndim(); ++d) (d < a ? outer_ : d == a ? n_ : inner_) *= x.dim(d);
    } else {
      n_ = x.size();
    }
    if (n_ == 0 && outer_ * inner_ > 0) Invalid(s, "argmax over an empty axis");
    if (s.outputs[0].size() != outer_ * inner_) Invalid(s, "output " + ShapeOf(s.outputs[0]) + " has the wrong size");
  }
  void Compute(const DeviceCall& c) const {
    const DeviceTensor& out = c.outputs[0];
    auto run = [&](auto xtag) {
      using X = typename decltype(xtag)::type;
      WithReq(c.req[0], [&](auto a) {
        L::Map(c, outer_ * inner_,
               ArgmaxMap<X, decltype(a)>{L::template Ptr<const X>(c.inputs[0]), L::template Ptr<void>(out), out.dtype(),
                                         n_, inner_});
      });
    };
    switch (c.inputs[0].dtype()) {
      case WEFT_DTYPE_INT32:
        return run(TypeTag<int32_t>{});
      case WEFT_DTYPE_INT64:
        return run(TypeTag<int64_t>{});
      default:
        return WithFloatType("argmax", c.inputs[0].dtype(), run);
    }
  }

 private:
  int64_t outer_ = 1, n_ = 1, inner_ = 1;
};

/// Embedding (inputs data = indices of any kIndexTypes dtype, weight (input_dim, output_dim)) and
/// _backward_Embedding (inputs out_grad, data, weight; outputs zeros for data, the weight gradient).
template <class L>
class EmbeddingKernel {
 public:
  explicit EmbeddingKernel(const KernelSetup& s) : backward_(IsBackward(s)) {
    s.ExpectCounts(backward_ ? 3 : 2, backward_ ? 2 : 1);
    const TensorDesc& data = s.inputs[backward_ ? 1 : 0];
    const TensorDesc& weight = s.inputs[backward_ ? 2 : 1];
    const TensorDesc& out = backward_ ? s.inputs[0] : s.outputs[0];
    if (!InMask(data.dtype, kIndexTypes) || !InMask(weight.dtype, kFloatTypes))
      Unsupported(s, "indices " + std::string(sdk::DTypeName(data.dtype)) + " with weights " +
                         sdk::DTypeName(weight.dtype) + " are not implemented on GPUs");
    if (weight.ndim() != 2) Invalid(s, "weight must be 2-d (input_dim, output_dim), got " + ShapeOf(weight));
    rows_ = weight.dim(0), dim_ = weight.dim(1);
    if (out.dtype != weight.dtype) Invalid(s, "output and weight dtypes differ");
    if (out.size() != data.size() * dim_)
      Invalid(s, "output " + ShapeOf(out) + " must hold output_dim values per index");
    if (backward_ && (s.outputs[1].shape != weight.shape || s.outputs[0].shape != data.shape))
      Invalid(s, "gradients must have the shapes of data and weight");
  }
  void Compute(const DeviceCall& c) const {
    const DeviceTensor& data = c.inputs[backward_ ? 1 : 0];
    if (backward_)
      WithReq(c.req[0], [&](auto a) {
        L::Map(c, data.size(),
               FillAnyMap<decltype(a)>{L::template Ptr<void>(c.outputs[0]), c.outputs[0].dtype(), IntScalar(0)});
      });
    WithFloatType("Embedding", c.inputs[backward_ ? 2 : 1].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const void* idx = L::template Ptr<const void>(data);
      WithReq(c.req[backward_ ? 1 : 0], [&](auto a) {
        using A = decltype(a);
        if (!backward_)
          L::Map(c, c.outputs[0].size(),
                 EmbeddingMap<T, A>{idx, data.dtype(), L::template Ptr<const T>(c.inputs[1]),
                                    L::template Ptr<T>(c.outputs[0]), rows_, dim_});
        else
          L::Map(c, rows_ * dim_,
                 EmbeddingGradMap<T, A>{idx, data.dtype(), L::template Ptr<const T>(c.inputs[0]),
                                        L::template Ptr<T>(c.outputs[1]), data.size(), rows_, dim_});
      });
    });
  }

 private:
  bool backward_;
  int64_t rows_ = 0, dim_ = 0;
};

/// Registers every tensor op of this file for launcher L (called by RegisterGpuLayer).
template <class L>
void RegisterTensorKernels(sdk::KernelTable& t) {
  sdk::KernelTable::SourceScope math(t, {kGpuTensorMathSource});
  // Names built as "prefix" + name, which OPS.md's generator (scripts/gen_ops_md.py) recognises.
  for (const EwName& e : kEwOps) {
    t.Add<EwKernel<L>>(e.name, kFloatTypes);
    if (e.op == EwOp::kFloor || e.op == EwOp::kRound || e.op == EwOp::kSign) continue;  // zero gradient
    if (e.name[0] == '_')
      t.Add<EwKernel<L>>(std::string("_backward") + e.name, kFloatTypes);
    else
      t.Add<EwKernel<L>>(std::string("_backward_") + e.name, kFloatTypes);
  }
  for (const BinName& b : kBinOps) {
    if (b.op != BinOp::kMaximum && b.op != BinOp::kMinimum) {
      t.Add<BinaryKernel<L>>(std::string("elemwise_") + b.name, kFloatTypes);
      t.Add<BinaryBackwardKernel<L>>(std::string("_backward_elemwise_") + b.name, kFloatTypes);
    }
    t.Add<BinaryKernel<L>>(std::string("broadcast_") + b.name, kFloatTypes);
    t.Add<BinaryBackwardKernel<L>>(std::string("_backward_broadcast_") + b.name, kFloatTypes);
  }
  // MXNet's _maximum / _minimum: broadcast_maximum / broadcast_minimum on equal shapes.
  for (const char* op : {"_maximum", "_minimum"}) t.Add<BinaryKernel<L>>(op, kFloatTypes);
  for (const char* op : {"_backward_maximum", "_backward_minimum"}) t.Add<BinaryBackwardKernel<L>>(op, kFloatTypes);
  t.Add<AddNBackwardKernel<L>>("_backward_add_n", kFloatTypes);
  for (const char* op : {"sum", "mean", "max", "_backward_sum", "_backward_mean", "_backward_max"})
    t.Add<ReduceKernel<L>>(op, kFloatTypes);
  for (const char* op : {"_copy", "_backward_copy", "Flatten", "Reshape", "expand_dims", "BlockGrad"})
    t.Add<CopyKernel<L>>(op, kMoveTypes);
  t.Add<FillKernel<L, 0>>("zeros_like", kMoveTypes);
  t.Add<FillKernel<L, 1>>("ones_like", kMoveTypes);
  t.Add<CastKernel<L>>("Cast", kMoveTypes);
  t.Add<CastKernel<L>>("_backward_Cast", kMoveTypes);
  for (const char* op : {"transpose", "_backward_transpose", "SwapAxis", "_backward_SwapAxis"})
    t.Add<TransposeKernel<L>>(op, kMoveTypes);
  for (const char* op : {"slice", "_backward_slice", "slice_axis", "_backward_slice_axis"})
    t.Add<SliceKernel<L>>(op, kMoveTypes);
  for (const char* op : {"Concat", "_backward_Concat", "SliceChannel", "_backward_SliceChannel"})
    t.Add<AxisCopyKernel<L>>(op, kMoveTypes);
  for (const char* op : {"dot", "_backward_dot", "batch_dot", "_backward_batch_dot"})
    t.Add<DotKernel<L>>(op, kFloatTypes);
  t.Add<OneHotKernel<L>>("one_hot", kIndexTypes);
  t.Add<ArgmaxKernel<L>>("argmax", kIndexTypes);
  t.Add<EmbeddingKernel<L>>("Embedding", kIndexTypes);
  t.Add<EmbeddingKernel<L>>("_backward_Embedding", kFloatTypes);
}

}  // namespace weft::WEFT_GPU_NS
