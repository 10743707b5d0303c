// vulkan plugin — the elemwise family (docs/adding-an-op.md, "Op families"): the unary math and
// scalar ops (shaders/elemwise_unary.comp, _backward_elemwise_unary.comp), the broadcast_* ops
// forward and backward (shaders/broadcast_reduce.comp through vk_strided.h); elemwise_* and add_n
// are in vk_kernels_elemwise_binary.cc. Semantics as the CPU plugin's kernels (MXNet 1.9).
#include <array>
#include <string>

#include "vk_strided.h"
#include "weft/sdk/ops/elemwise_unary.hpp"

namespace weft::vk {
namespace {

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

}  // namespace

void RegisterElemwiseKernels(VkKernelTable& t) {
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
