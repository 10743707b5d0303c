// vulkan plugin — element-wise and strided kernels: the unary math and scalar ops
// (shaders/elemwise_unary.comp, _backward_elemwise_unary.comp), the broadcast_* ops, reductions
// with axis, transpose, SwapAxis, Concat, SliceChannel, slice and slice_axis, forward and backward
// (shaders/broadcast_reduce.comp), Cast (shaders/Cast.comp). Semantics as the CPU plugin's
// kernels (MXNet 1.9).
#include <array>
#include <numeric>
#include <optional>

#include "vk_kernels.h"
#include "weft/sdk/ops/concat.hpp"
#include "weft/sdk/ops/elemwise_unary.hpp"
#include "weft/sdk/ops/reduce.hpp"
#include "weft/sdk/ops/slice.hpp"
#include "weft/sdk/ops/transpose.hpp"

namespace weft::vk {
namespace {

using Dims = std::vector<int64_t>;

Dims ShapeOf(const sdk::TensorDesc& t) {
  Dims d;
  for (int i = 0; i < t.ndim(); ++i) d.push_back(t.dim(i));
  return d;
}
Dims ShapeOf(const sdk::DeviceTensor& t) { return Dims(t.shape().begin(), t.shape().end()); }

Dims RowMajor(const Dims& shape) {
  Dims s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// Strides of `operand` broadcast (aligned right) to `full`: 0 along axes where it has extent 1.
Dims BroadcastStrides(const Dims& operand, const Dims& full) {
  const Dims rm = RowMajor(operand);
  Dims s(full.size(), 0);
  const size_t lead = full.size() - operand.size();
  for (size_t i = 0; i < operand.size(); ++i) s[lead + i] = operand[i] == 1 ? 0 : rm[i];
  return s;
}

// The index space of a broadcast_reduce.comp dispatch: axes, the strides of X, L, R and the
// output, and which axes are reduced. Axes of extent 1 are dropped and neighbours that walk
// memory alike merged, so most shapes fit the shader's 4 axes.
struct Strided {
  static constexpr size_t kMaxAxes = 4;
  Dims dims;
  std::array<Dims, 4> st;  // x, l, r, out
  std::vector<bool> red;

  Strided(Dims d, Dims x, Dims l, Dims r, Dims o, std::vector<bool> reduced)
      : dims(std::move(d)), st{std::move(x), std::move(l), std::move(r), std::move(o)}, red(std::move(reduced)) {
    Collapse();
  }
  void Collapse() {
    Strided c = *this;
    c.dims.clear(), c.red.clear();
    for (Dims& s : c.st) s.clear();
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] == 1) continue;
      bool merge = !c.dims.empty() && c.red.back() == red[d];
      for (size_t k = 0; k < 4 && merge; ++k) merge = c.st[k].back() == st[k][d] * dims[d];
      if (merge) {
        c.dims.back() *= dims[d];
        for (size_t k = 0; k < 4; ++k) c.st[k].back() = st[k][d];
        continue;
      }
      c.dims.push_back(dims[d]);
      c.red.push_back(red[d]);
      for (size_t k = 0; k < 4; ++k) c.st[k].push_back(st[k][d]);
    }
    *this = std::move(c);
  }
  int64_t Items() const {
    int64_t n = 1;
    for (size_t d = 0; d < dims.size(); ++d)
      if (!red[d]) n *= dims[d];
    return n;
  }
};

struct StridedPush {
  uint32_t n, nd, rmask, add;
  float scale;
  uint32_t dims[4], xs[4], ls[4], rs[4], os[4];
  uint32_t xoff, ooff;
};

// Throws UNSUPPORTED (named for the op) when the index space needs more than 4 axes.
void CheckAxes(const sdk::KernelSetup& s, const Strided& p) {
  if (p.dims.size() > Strided::kMaxAxes)
    Unsupported(s, "this layout needs " + std::to_string(p.dims.size()) +
                       " axes after merging; the Vulkan strided kernel handles up to 4");
}

// Op codes of broadcast_reduce.comp.
enum StridedOp : int32_t {
  kCopy = 0,
  kMax = 1,
  kAdd = 2,
  kSub = 3,
  kMul = 4,
  kDiv = 5,
  kMaximum = 6,
  kMinimum = 7,
  kNeg = 8,
  kMulR = 9,
  kMulL = 10,
  kDivR = 11,
  kDivRhsGrad = 12,
  kGeL = 13,
  kGeR = 14,
  kLeL = 15,
  kLeR = 16,
  kEq = 17,
};

// xoff / ooff: element offset of the first item from the start of x (l, r) / o, for strides that
// walk backwards from it.
void RunStrided(const sdk::DeviceCall& c, int32_t op, const Strided& p, Binding x, Binding l, Binding r, Binding o,
                int32_t req, float scale = 1.0f, uint32_t xoff = 0, uint32_t ooff = 0) {
  if (sdk::IsNull(req) || o.bytes == 0) return;
  if (p.dims.size() > Strided::kMaxAxes)
    throw sdk::Error(WEFT_ERR_UNSUPPORTED, "vulkan: strided kernel with more than 4 axes");
  StridedPush push{};
  push.n = static_cast<uint32_t>(p.Items());
  push.nd = static_cast<uint32_t>(p.dims.size());
  push.add = AddFlag(req);
  push.scale = scale;
  push.xoff = xoff;
  push.ooff = ooff;
  for (size_t d = 0; d < p.dims.size(); ++d) {
    push.rmask |= p.red[d] ? 1u << d : 0u;
    push.dims[d] = static_cast<uint32_t>(p.dims[d]);
    push.xs[d] = static_cast<uint32_t>(p.st[0][d]);
    push.ls[d] = static_cast<uint32_t>(p.st[1][d]);
    push.rs[d] = static_cast<uint32_t>(p.st[2][d]);
    push.os[d] = static_cast<uint32_t>(p.st[3][d]);
  }
  const Binding b[4] = {x, l, r, o};
  const int32_t spec[1] = {op};
  Dispatch(c, Launch{"broadcast_reduce", spec, Groups64(push.n)}, b, push);
}

// A binding `elements` float32 elements into t.
Binding Shifted(const sdk::DeviceTensor& t, int64_t elements, bool write) {
  const uint64_t at = static_cast<uint64_t>(elements) * 4;
  return {t.data(), t.offset() + at, t.bytes() - at, write};
}

// ---- unary math and scalar ops ---------------------------------------------------------------

// Op codes of elemwise_unary.comp / _backward_elemwise_unary.comp, by op name.
constexpr const char* kUnaryOps[] = {
    "sin",         "cos",         "exp",          "log",          "sqrt",         "square",        "abs",
    "negative",    "relu",        "sigmoid",      "tanh",         "rsqrt",        "log1p",         "expm1",
    "floor",       "round",       "sign",         "clip",         "_plus_scalar", "_minus_scalar", "_rminus_scalar",
    "_mul_scalar", "_div_scalar", "_rdiv_scalar", "_power_scalar"};
constexpr int32_t kFirstZeroGrad = 14, kClip = 17, kFirstScalar = 18;

int32_t UnaryCode(const std::string& name) {
  for (int32_t i = 0; i < static_cast<int32_t>(std::size(kUnaryOps)); ++i)
    if (name == kUnaryOps[i]) return i;
  return -1;
}

struct UnaryParams {
  int32_t op = 0;
  float s = 0, s2 = 0;
};

UnaryParams ParseUnary(const sdk::KernelSetup& s, const std::string& name) {
  UnaryParams u;
  u.op = UnaryCode(name);
  if (u.op < 0) Unsupported(s, "no Vulkan kernel for '" + name + "'");
  if (u.op == kClip) {
    const auto p = s.Params<sdk::ClipParam>();
    u.s = static_cast<float>(p.a_min);
    u.s2 = static_cast<float>(p.a_max);
  } else if (u.op >= kFirstScalar) {
    u.s = static_cast<float>(s.Params<sdk::ScalarParam>().scalar);
  }
  return u;
}

void RequireSameSizes(const sdk::KernelSetup& s) {
  for (const auto* list : {&s.inputs, &s.outputs})
    for (const sdk::TensorDesc& t : *list)
      if (t.size() != s.outputs[0].size()) Invalid(s, "inputs and output must have one size");
}

class UnaryKernel {
 public:
  explicit UnaryKernel(const sdk::KernelSetup& s) : u_(ParseUnary(s, s.op_name)) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    RequireSameSizes(s);
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    const int64_t n = c.outputs[0].size();
    struct {
      uint32_t n, add;
      float s, s2;
    } push{static_cast<uint32_t>(n), AddFlag(c.req[0]), u_.s, u_.s2};
    const Binding b[2] = {In(c.inputs[0]), Out(c.outputs[0])};
    const int32_t spec[1] = {u_.op};
    DispatchElementwise(c, "elemwise_unary", spec, b, push);
  }

 private:
  UnaryParams u_;
};

// _backward_<unary op> (inputs out_grad, data, output), _backward<scalar op> (out_grad[, data]),
// _backward_clip (out_grad, data).
std::string ForwardName(const std::string& backward) {
  std::string rest = backward.substr(std::string("_backward").size());
  return UnaryCode(rest) >= 0 ? rest : rest.substr(1);
}

class UnaryBackwardKernel {
 public:
  explicit UnaryBackwardKernel(const sdk::KernelSetup& s) : u_(ParseUnary(s, ForwardName(s.op_name))) {
    s.ExpectCounts(-1, 1);
    RequireFloat32(s);
    RequireSameSizes(s);
    if (s.inputs.empty() || s.inputs.size() > 3) Invalid(s, "expects out_grad[, data[, output]]");
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    const int64_t n = c.outputs[0].size();
    struct {
      uint32_t n, add;
      float s, s2;
    } push{static_cast<uint32_t>(n), AddFlag(c.req[0]), u_.s, u_.s2};
    const sdk::DeviceTensor& x = c.inputs.size() > 1 ? c.inputs[1] : c.inputs[0];
    const sdk::DeviceTensor& y = c.inputs.size() > 2 ? c.inputs[2] : c.inputs[0];
    const Binding b[4] = {In(c.inputs[0]), In(x), In(y), Out(c.outputs[0])};
    const int32_t spec[1] = {u_.op};
    DispatchElementwise(c, "_backward_elemwise_unary", spec, b, push);
  }

 private:
  UnaryParams u_;
};

// ---- broadcast_* ---------------------------------------------------------------------------------

int32_t BroadcastIndex(const std::string& name) {
  static const char* kOps[] = {"add", "sub", "mul", "div", "maximum", "minimum"};
  const std::string base = name.substr(name.find("broadcast_") + 10);
  for (int32_t i = 0; i < 6; ++i)
    if (base == kOps[i]) return i;
  return -1;
}

class BroadcastKernel {
 public:
  explicit BroadcastKernel(const sdk::KernelSetup& s) : op_(BroadcastIndex(s.op_name)) {
    s.ExpectCounts(2, 1);
    RequireFloat32(s);
    const Dims l = ShapeOf(s.inputs[0]), r = ShapeOf(s.inputs[1]), o = ShapeOf(s.outputs[0]);
    if (l.size() > o.size() || r.size() > o.size()) Invalid(s, "output has fewer axes than an input");
    CheckAxes(s, Plan(l, r, o));
  }
  static Strided Plan(const Dims& l, const Dims& r, const Dims& o) {
    return Strided(o, Dims(o.size(), 0), BroadcastStrides(l, o), BroadcastStrides(r, o), RowMajor(o),
                   std::vector<bool>(o.size(), false));
  }
  void Compute(const sdk::DeviceCall& c) const {
    const Strided p = Plan(ShapeOf(c.inputs[0]), ShapeOf(c.inputs[1]), ShapeOf(c.outputs[0]));
    RunStrided(c, kAdd + op_, p, In(c.inputs[0]), In(c.inputs[0]), In(c.inputs[1]), Out(c.outputs[0]), c.req[0]);
  }

 private:
  int32_t op_;
};

// _backward_broadcast_*: inputs out_grad[, lhs, rhs]; outputs the lhs and rhs gradients, each the
// out_grad term summed over the axes that input was broadcast along.
class BroadcastBackwardKernel {
 public:
  explicit BroadcastBackwardKernel(const sdk::KernelSetup& s) : op_(BroadcastIndex(s.op_name)) {
    RequireFloat32(s);
    const bool uses_inputs = op_ >= 2;
    s.ExpectCounts(uses_inputs ? 3 : 1, 2);
    const Dims g = ShapeOf(s.inputs[0]);
    for (int k = 0; k < 2; ++k) {
      if (s.outputs[static_cast<size_t>(k)].ndim() > static_cast<int>(g.size()))
        Invalid(s, "an input gradient has more axes than out_grad");
      CheckAxes(s, Plan(g, ShapeOf(s.outputs[0]), ShapeOf(s.outputs[1]), k));
    }
  }
  // The index space of out_grad; the output is input k (broadcast strides, reduced where 0).
  static Strided Plan(const Dims& g, const Dims& l, const Dims& r, int k) {
    const Dims target = BroadcastStrides(k == 0 ? l : r, g);
    std::vector<bool> red(g.size());
    for (size_t d = 0; d < g.size(); ++d) red[d] = target[d] == 0 && g[d] != 1;
    return Strided(g, RowMajor(g), BroadcastStrides(l, g), BroadcastStrides(r, g), target, red);
  }
  void Compute(const sdk::DeviceCall& c) const {
    // Terms of d lhs and d rhs per op: add, sub, mul, div, maximum, minimum.
    static constexpr int32_t kTerms[6][2] = {{kCopy, kCopy},       {kCopy, kNeg}, {kMulR, kMulL},
                                             {kDivR, kDivRhsGrad}, {kGeL, kGeR},  {kLeL, kLeR}};
    const Dims g = ShapeOf(c.inputs[0]);
    const Binding gy = In(c.inputs[0]);
    const Binding l = c.inputs.size() > 1 ? In(c.inputs[1]) : gy, r = c.inputs.size() > 2 ? In(c.inputs[2]) : gy;
    for (int k = 0; k < 2; ++k) {
      const Strided p = Plan(g, ShapeOf(c.outputs[0]), ShapeOf(c.outputs[1]), k);
      RunStrided(c, kTerms[op_][k], p, gy, l, r, Out(c.outputs[static_cast<size_t>(k)]), c.req[static_cast<size_t>(k)]);
    }
  }

 private:
  int32_t op_;
};

// ---- reductions ----------------------------------------------------------------------------------

std::vector<bool> ReducedAxes(const sdk::KernelSetup& s, size_t nd) {
  const auto p = s.Params<sdk::ReduceParam>();
  if (p.exclude) Unsupported(s, "exclude=True");
  const std::vector<int64_t>& axes = p.axis;
  std::vector<bool> red(nd, axes.empty());
  for (int64_t a : axes) {
    if (a < -static_cast<int64_t>(nd) || a >= static_cast<int64_t>(nd))
      Invalid(s, "axis " + std::to_string(a) + " out of range for " + std::to_string(nd) + " axes");
    red[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(nd) : a)] = true;
  }
  return red;
}

// Data-shaped index space; the reduced tensor has stride 0 along reduced axes.
Dims ReducedStrides(const Dims& data, const std::vector<bool>& red) {
  Dims kept = data;
  for (size_t d = 0; d < data.size(); ++d)
    if (red[d]) kept[d] = 1;
  Dims s = RowMajor(kept);
  for (size_t d = 0; d < data.size(); ++d)
    if (red[d]) s[d] = 0;
  return s;
}

int64_t ReducedCount(const Dims& data, const std::vector<bool>& red) {
  int64_t n = 1;
  for (size_t d = 0; d < data.size(); ++d)
    if (red[d]) n *= data[d];
  return n;
}

// sum / mean / max: inputs data; _backward_sum / _backward_mean: out_grad; _backward_max:
// out_grad, data, output (the gradient goes to every element equal to the maximum).
class ReduceKernel {
 public:
  explicit ReduceKernel(const sdk::KernelSetup& s) : backward_(s.op_name.starts_with("_backward_")) {
    const std::string base = backward_ ? s.op_name.substr(10) : s.op_name;
    kind_ = base == "sum" ? 0 : base == "mean" ? 1 : 2;
    RequireFloat32(s);
    s.ExpectCounts(backward_ && kind_ == 2 ? 3 : 1, 1);
    data_ = ShapeOf(backward_ ? s.outputs[0] : s.inputs[0]);
    red_ = ReducedAxes(s, data_.size());
    const int64_t kept = (backward_ ? s.inputs[0] : s.outputs[0]).size();
    const int64_t full = (backward_ ? s.outputs[0] : s.inputs[0]).size();
    if (kept * ReducedCount(data_, red_) != full) Invalid(s, "reduced tensor does not match data and axis");
    CheckAxes(s, Plan());
  }
  Strided Plan() const {
    const Dims rm = RowMajor(data_), rs = ReducedStrides(data_, red_);
    if (!backward_) return Strided(data_, rm, rm, Dims(data_.size(), 0), rs, red_);
    // Backward: data-shaped output; X = out_grad and R = the maximum broadcast back, L = data
    // (max) or out_grad again (sum, mean: it must be walked like X to stay in bounds).
    return Strided(data_, rs, kind_ == 2 ? rm : rs, rs, rm, std::vector<bool>(data_.size(), false));
  }
  void Compute(const sdk::DeviceCall& c) const {
    const int64_t count = ReducedCount(data_, red_);
    const float scale = kind_ == 1 && count > 0 ? 1.0f / static_cast<float>(count) : 1.0f;
    const Binding x = In(c.inputs[0]);
    if (!backward_) {
      RunStrided(c, kind_ == 2 ? kMax : kCopy, Plan(), x, x, x, Out(c.outputs[0]), c.req[0], scale);
      return;
    }
    if (kind_ == 2)
      RunStrided(c, kEq, Plan(), x, In(c.inputs[1]), In(c.inputs[2]), Out(c.outputs[0]), c.req[0]);
    else
      RunStrided(c, kCopy, Plan(), x, x, x, Out(c.outputs[0]), c.req[0], scale);
  }

 private:
  bool backward_;
  int kind_ = 0;
  Dims data_;
  std::vector<bool> red_;
};

// ---- transpose -----------------------------------------------------------------------------------

// transpose: output axis i is input axis axes[i]; _backward_transpose applies the inverse to the
// out_grad (its output is shaped like the forward input).
class TransposeKernel {
 public:
  explicit TransposeKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    const bool backward = s.op_name.starts_with("_backward_");
    const Dims in = ShapeOf(s.inputs[0]);
    const size_t nd = in.size();
    std::vector<int64_t> axes;
    if (s.op_name.ends_with("SwapAxis")) {  // the transpose exchanging dim1 and dim2 (its own inverse)
      for (size_t i = 0; i < nd; ++i) axes.push_back(static_cast<int64_t>(i));
      const auto p = s.Params<sdk::SwapAxisParam>();
      auto axis = [&](const char* name) {
        int64_t a = std::string_view(name) == "dim1" ? p.dim1 : p.dim2;
        if (a < -static_cast<int64_t>(nd) || a >= static_cast<int64_t>(nd))
          Invalid(s, std::string(name) + " " + std::to_string(a) + " is out of range for the data's axes");
        return static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(nd) : a);
      };
      std::swap(axes[axis("dim1")], axes[axis("dim2")]);
    } else {
      axes = s.Params<sdk::TransposeParam>().axes;
    }
    if (axes.empty())
      for (size_t i = 0; i < nd; ++i) axes.push_back(static_cast<int64_t>(nd - 1 - i));
    if (axes.size() != nd) Invalid(s, "axes must list every axis of the data once");
    std::vector<size_t> perm(nd);
    std::vector<bool> seen(nd, false);
    for (size_t i = 0; i < nd; ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + static_cast<int64_t>(nd) : axes[i];
      if (a < 0 || a >= static_cast<int64_t>(nd) || seen[static_cast<size_t>(a)])
        Invalid(s, "axes is not a permutation of the data's axes");
      seen[static_cast<size_t>(a)] = true;
      perm[i] = static_cast<size_t>(a);
    }
    if (backward) {  // out_grad axis perm[i] is input-grad axis i
      std::vector<size_t> inv(nd);
      for (size_t i = 0; i < nd; ++i) inv[perm[i]] = i;
      perm = inv;
    }
    const Dims rm = RowMajor(in);
    out_.resize(nd);
    xs_.resize(nd);
    for (size_t i = 0; i < nd; ++i) out_[i] = in[perm[i]], xs_[i] = rm[perm[i]];
    if (s.outputs[0].size() != s.inputs[0].size()) Invalid(s, "output differs from data in size");
    CheckAxes(s, Plan());
  }
  Strided Plan() const { return Strided(out_, xs_, xs_, xs_, RowMajor(out_), std::vector<bool>(out_.size(), false)); }
  void Compute(const sdk::DeviceCall& c) const {
    const Binding x = In(c.inputs[0]);
    RunStrided(c, kCopy, Plan(), x, x, x, Out(c.outputs[0]), c.req[0]);
  }

 private:
  Dims out_, xs_;
};

// ---- Concat --------------------------------------------------------------------------------------

// Concat along `dim`: input k is the block [off_k, off_k + len_k) of the output's axis; viewed as
// (outer, len_k, inner). _backward_Concat copies the blocks of out_grad to the input gradients.
// SliceChannel (split along `axis` into equal parts, squeeze_axis dropping the axis from parts of
// length 1) is _backward_Concat's copy, and _backward_SliceChannel is Concat's.
class ConcatKernel {
 public:
  explicit ConcatKernel(const sdk::KernelSetup& s)
      : backward_(s.op_name == "_backward_Concat" || s.op_name == "SliceChannel") {
    RequireFloat32(s);
    s.ExpectCounts(backward_ ? 1 : -1, backward_ ? -1 : 1);
    const auto& parts = backward_ ? s.outputs : s.inputs;
    const sdk::TensorDesc& whole = backward_ ? s.inputs[0] : s.outputs[0];
    if (parts.empty()) Invalid(s, "needs at least one part");
    const int nd = whole.ndim();
    const bool split = s.op_name.ends_with("SliceChannel");
    int64_t dim = split ? s.Params<sdk::SliceChannelParam>().axis : s.Params<sdk::ConcatParam>().dim;
    if (dim < -nd || dim >= nd) Invalid(s, "axis " + std::to_string(dim) + " out of range");
    if (dim < 0) dim += nd;
    for (int i = 0; i < nd; ++i)
      if (i < dim)
        outer_ *= whole.dim(i);
      else if (i > dim)
        inner_ *= whole.dim(i);
    for (const sdk::TensorDesc& t : parts) {
      const bool squeezed = split && t.ndim() == nd - 1;
      if (t.ndim() != nd && !squeezed) Invalid(s, "every part must have the whole tensor's number of axes");
      len_.push_back(squeezed ? 1 : t.dim(static_cast<int>(dim)));
      total_ += len_.back();
    }
    if (total_ * outer_ * inner_ != whole.size()) Invalid(s, "parts do not add up to the concatenated shape");
  }
  void Compute(const sdk::DeviceCall& c) const {
    int64_t off = 0;
    for (size_t k = 0; k < len_.size(); ++k) {
      const Dims part{outer_, len_[k], inner_};
      const Dims rm = RowMajor(part), wide{total_ * inner_, inner_, 1};
      const std::vector<bool> none(3, false);
      if (!backward_) {
        const Binding x = In(c.inputs[k]);
        if (c.inputs[k].size() > 0)
          RunStrided(c, kCopy, Strided(part, rm, rm, rm, wide, none), x, x, x,
                     Shifted(c.outputs[0], off * inner_, true), c.req[0]);
      } else if (c.outputs[k].size() > 0) {
        const Binding g = Shifted(c.inputs[0], off * inner_, false);
        RunStrided(c, kCopy, Strided(part, wide, wide, wide, rm, none), g, g, g, Out(c.outputs[k]), c.req[k]);
      }
      off += len_[k];
    }
  }

 private:
  bool backward_;
  int64_t outer_ = 1, inner_ = 1, total_ = 0;
  std::vector<int64_t> len_;
};

// ---- slice, slice_axis ---------------------------------------------------------------------------

// slice / slice_axis cut a strided box out of the data (per axis begin, step, len from
// weft/sdk/ops/slice.hpp, the rule of core's shape inference): the forward copies the box into the
// output, the backward zeroes the data gradient (req write) and copies out_grad into the box. A
// negative step is a negative stride: the data is bound from the lowest element the box touches
// and the first item's offset from there travels as xoff / ooff.
class SliceKernel {
 public:
  explicit SliceKernel(const sdk::KernelSetup& s) : backward_(s.op_name.starts_with("_backward_")) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    const sdk::TensorDesc& data = backward_ ? s.outputs[0] : s.inputs[0];
    const sdk::TensorDesc& sliced = backward_ ? s.inputs[0] : s.outputs[0];
    std::vector<sdk::SliceRange> r;
    try {
      if (s.op_name.ends_with("slice_axis")) {
        int axis = 0;
        const sdk::SliceRange one = sdk::SliceAxisOpRange(s.Params<sdk::SliceAxisParam>(), data.shape, &axis);
        for (int i = 0; i < data.ndim(); ++i) r.push_back(i == axis ? one : sdk::SliceRange{0, 1, data.dim(i)});
      } else {
        r = sdk::SliceRanges(s.Params<sdk::SliceParam>(), data.shape);
      }
    } catch (const sdk::Error& e) {
      Invalid(s, e.what());
    }
    const Dims rm = RowMajor(ShapeOf(data));
    Dims box, step;
    for (size_t a = 0; a < r.size(); ++a) {
      box.push_back(r[a].len);
      step.push_back(r[a].step * rm[a]);
      base_ += r[a].begin * rm[a];
      if (r[a].step < 0 && r[a].len > 0) first_ += (r[a].len - 1) * -step.back();
    }
    base_ -= first_;  // now the lowest element of the box; the first item is first_ above it
    const Dims packed = RowMajor(box);
    if (std::accumulate(box.begin(), box.end(), int64_t{1}, std::multiplies<>()) != sliced.size())
      Invalid(s, "the sliced tensor's size differs from the slice's box");
    const std::vector<bool> none(box.size(), false);
    plan_ = backward_ ? Strided(box, packed, packed, packed, step, none) : Strided(box, step, step, step, packed, none);
    CheckAxes(s, *plan_);
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    if (backward_) {
      ZeroOutput(c, c.outputs[0], c.req[0]);
      if (c.inputs[0].size() == 0) return;
      const Binding g = In(c.inputs[0]);
      RunStrided(c, kCopy, *plan_, g, g, g, Shifted(c.outputs[0], base_, true), c.req[0], 1.0f, 0,
                 static_cast<uint32_t>(first_));
    } else if (c.outputs[0].size() > 0) {
      const Binding x = Shifted(c.inputs[0], base_, false);
      RunStrided(c, kCopy, *plan_, x, x, x, Out(c.outputs[0]), c.req[0], 1.0f, static_cast<uint32_t>(first_));
    }
  }

 private:
  bool backward_;
  int64_t base_ = 0, first_ = 0;
  std::optional<Strided> plan_;
};

// ---- Cast ----------------------------------------------------------------------------------------

int32_t CastType(int32_t dtype) {
  return dtype == WEFT_DTYPE_FLOAT32 ? 0 : dtype == WEFT_DTYPE_FLOAT64 ? 1 : dtype == WEFT_DTYPE_INT32 ? 2 : -1;
}

// Cast and _backward_Cast between float32, float64 and int32.
class CastKernel {
 public:
  explicit CastKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(1, 1);
    in_ = CastType(s.inputs[0].dtype);
    out_ = CastType(s.outputs[0].dtype);
    if (in_ < 0 || out_ < 0)
      Unsupported(s, "from " + sdk::DTypeName(s.inputs[0].dtype) + " to " + sdk::DTypeName(s.outputs[0].dtype) +
                         " (the Vulkan kernel converts between float32, float64 and int32)");
    if (s.inputs[0].size() != s.outputs[0].size()) Invalid(s, "input and output differ in size");
    Gpu& g = static_cast<const VkKernelTable*>(s.table)->device().gpu(s.device);
    if (!g.has_float64()) Unsupported(s, g.name() + " lacks shaderFloat64, which the Vulkan Cast kernel needs");
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0]) || c.outputs[0].size() == 0) return;
    const int64_t n = c.outputs[0].size();
    struct {
      uint32_t n, add;
    } push{static_cast<uint32_t>(n), AddFlag(c.req[0])};
    const Binding b[2] = {In(c.inputs[0]), Out(c.outputs[0])};
    const int32_t spec[2] = {in_, out_};
    Dispatch(c, Launch{"Cast", spec, Groups64(n)}, b, push);
  }

 private:
  int32_t in_ = 0, out_ = 0;
};

}  // namespace

void StridedCopy(const sdk::DeviceCall& c, std::span<const int64_t> dims, const Binding& src,
                 std::span<const int64_t> src_strides, const Binding& dst, std::span<const int64_t> dst_strides,
                 int32_t req) {
  const Dims d(dims.begin(), dims.end()), ss(src_strides.begin(), src_strides.end());
  const Strided p(d, ss, ss, ss, Dims(dst_strides.begin(), dst_strides.end()), std::vector<bool>(d.size(), false));
  RunStrided(c, kCopy, p, src, src, src, dst, req);
}

void StridedSum(const sdk::DeviceCall& c, std::span<const int64_t> dims, const Binding& src,
                std::span<const int64_t> src_strides, const Binding& dst, std::span<const int64_t> dst_strides,
                std::span<const bool> reduced, int32_t req) {
  const Dims d(dims.begin(), dims.end()), ss(src_strides.begin(), src_strides.end());
  Dims ds(dst_strides.begin(), dst_strides.end());
  for (size_t i = 0; i < ds.size(); ++i)
    if (reduced[i]) ds[i] = 0;
  const Strided p(d, ss, ss, ss, ds, std::vector<bool>(reduced.begin(), reduced.end()));
  RunStrided(c, kCopy, p, src, src, src, dst, req);
}

void RegisterMathKernels(VkKernelTable& t) {
  const uint64_t f32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
  for (int32_t i = 0; i < static_cast<int32_t>(std::size(kUnaryOps)); ++i) {
    const std::string op = kUnaryOps[i];
    AddWithShaders<UnaryKernel>(t, op, f32, {"elemwise_unary"});
    if (i >= kFirstZeroGrad && i < kClip) continue;  // floor, round, sign: zero gradient, no op
    AddWithShaders<UnaryBackwardKernel>(t, i >= kFirstScalar ? "_backward" + op : "_backward_" + op, f32,
                                        {"_backward_elemwise_unary"});
  }
  for (const char* op : {"add", "sub", "mul", "div", "maximum", "minimum"}) {
    AddWithShaders<BroadcastKernel>(t, std::string("broadcast_") + op, f32, {"broadcast_reduce"});
    AddWithShaders<BroadcastBackwardKernel>(t, std::string("_backward_broadcast_") + op, f32, {"broadcast_reduce"});
  }
  for (const char* op : {"sum", "mean", "max"}) {
    AddWithShaders<ReduceKernel>(t, op, f32, {"broadcast_reduce"});
    AddWithShaders<ReduceKernel>(t, std::string("_backward_") + op, f32, {"broadcast_reduce"});
  }
  {
    ShaderScope strided(t, {"broadcast_reduce"});  // RunStrided's copies
    t.Add<TransposeKernel>("transpose", f32);
    t.Add<TransposeKernel>("_backward_transpose", f32);
    t.Add<TransposeKernel>("SwapAxis", f32);
    t.Add<TransposeKernel>("_backward_SwapAxis", f32);
    for (const char* op : {"Concat", "_backward_Concat", "SliceChannel", "_backward_SliceChannel"})
      t.Add<ConcatKernel>(op, f32);
    for (const char* op : {"slice", "_backward_slice", "slice_axis", "_backward_slice_axis"})
      t.Add<SliceKernel>(op, f32);
  }
  const uint64_t cast = f32 | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT32);
  AddWithShaders<CastKernel>(t, "Cast", cast, {"Cast"});
  AddWithShaders<CastKernel>(t, "_backward_Cast", cast, {"Cast"});
}

void DispatchScaled(const sdk::DeviceCall& call, const Binding& in, const Binding& out, int32_t req, int64_t n,
                    float scale) {
  if (sdk::IsNull(req) || n == 0) return;
  struct {
    uint32_t n, add;
    float s, s2;
  } push{static_cast<uint32_t>(n), AddFlag(req), scale, 0.0f};
  const Binding b[2] = {in, out};
  const int32_t spec[1] = {UnaryCode("_mul_scalar")};
  DispatchElementwise(call, "elemwise_unary", spec, b, push);
}

}  // namespace weft::vk
