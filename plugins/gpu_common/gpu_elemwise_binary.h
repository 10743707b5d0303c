// weft GPU kernel layer — the elemwise family's binary ops (cpu: elemwise_binary.cc,
// elemwise_broadcast.cc): elemwise_* and broadcast_* (add, sub, mul, div, maximum, minimum),
// _maximum / _minimum, add_n (the KVStore's sum of device copies) and their backward ops. The
// forward is a BroadcastMap, each operand's gradient a ReduceMap over the axes it was repeated
// along (gpu_broadcast.h, which also holds the ops' scalar math).
#pragma once

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "gpu_broadcast.h"
#include "gpu_kernel.h"
#include "gpu_strided.h"
#include "weft/sdk/ops/elemwise_binary.hpp"

namespace weft::WEFT_GPU_NS {

// ---- add_n (cpu: elemwise_binary.cc) ---------------------------------------------------------

/// add_n (the KVStore's sum of device copies): out[i] = Σ_k in[k][i], k < count (≤ kMaxAddN).
inline constexpr int kMaxAddN = 16;
template <typename T, class Assign>
struct AddNMap {
  const T* in[kMaxAddN];
  int count;
  T* out;
  WEFT_HD void operator()(int64_t i) const {
    T s = in[0][i];
    for (int k = 1; k < count; ++k) s += in[k][i];
    Assign::Put(out[i], s);
  }
};

template <class L>
class AddNKernel {
 public:
  explicit AddNKernel(const KernelSetup& s) {
    s.ExpectCounts(-1, 1);
    if (s.inputs.empty()) Invalid(s, "needs at least one input");
    if (s.inputs.size() > static_cast<size_t>(kMaxAddN))
      Unsupported(s, std::to_string(s.inputs.size()) + " inputs; the GPU kernel sums up to " +
                         std::to_string(kMaxAddN) + " at once");
    const int64_t n = s.Params<sdk::AddNParam>().num_args;
    if (n != static_cast<int64_t>(s.inputs.size()))
      Invalid(s, "num_args=" + std::to_string(n) + " but " + std::to_string(s.inputs.size()) + " inputs");
    for (const auto* ts : {&s.inputs, &s.outputs})
      for (const TensorDesc& t : *ts)
        if (t.dtype != s.inputs[0].dtype || (t.dtype != WEFT_DTYPE_FLOAT32 && t.dtype != WEFT_DTYPE_FLOAT64))
          Unsupported(s, "tensors must all be float32 or all float64");
    RequireSameSize(s);
  }
  void Compute(const DeviceCall& c) const {
    auto run = [&](auto zero) {
      using T = decltype(zero);
      WithReq(c.req[0], [&](auto a) {
        AddNMap<T, decltype(a)> f{};
        f.count = static_cast<int>(c.inputs.size());
        for (int k = 0; k < f.count; ++k) f.in[k] = L::template Ptr<const T>(c.inputs[static_cast<size_t>(k)]);
        f.out = L::template Ptr<T>(c.outputs[0]);
        L::Map(c, c.outputs[0].size(), f);
      });
    };
    if (c.inputs[0].dtype() == WEFT_DTYPE_FLOAT64) return run(0.0);
    run(0.0f);
  }
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

// ---- binary and broadcast ops -------------------------------------------------------------------

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

/// Registers the binary, broadcast and add_n ops and their backward ops for launcher L.
template <class L>
void RegisterElemwiseBinaryKernels(sdk::KernelTable& t) {
  t.Add<AddNKernel<L>>("add_n", kF32 | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64));
  t.Add<AddNBackwardKernel<L>>("_backward_add_n", kFloatTypes);
  // Names built as "prefix" + name, which OPS.md's generator (scripts/gen_ops_md.py) recognises.
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
}

}  // namespace weft::WEFT_GPU_NS
