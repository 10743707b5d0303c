#include "autograd/higher_order.h"

#include <functional>
#include <map>
#include <set>

#include "autograd/backward.h"
#include "operator/gradient.h"
#include "operator/infer.h"
#include "weft/imperative.h"
#include "weft/sdk/operator.h"

namespace weft::autograd_detail {
namespace {

NDArray Mul(const NDArray& a, const NDArray& b) { return InvokeOne("elemwise_mul", {a, b}); }
NDArray Scale(const NDArray& a, double s) { return InvokeOne("_mul_scalar", {a}, {{"scalar", fmt::format("{}", s)}}); }

// The values a unary rule reads (each with its graph entry, so that recording links them).
struct Unary {
  NDArray g, dy, x, y;  // x or y is none when the backward does not read it
};

// dy·f''·g for the unary ops, attributed to x or to y (the total derivative is the same either
// way, since y = f(x) is part of the graph). Returns {to x, to y}.
using UnaryRule = std::function<std::pair<NDArray, NDArray>(const Unary&)>;

const std::map<std::string, UnaryRule>& UnaryRules() {
  static const std::map<std::string, UnaryRule> rules = [] {
    std::map<std::string, UnaryRule> r;
    auto gdy = [](const Unary& u) { return Mul(u.g, u.dy); };
    r["exp"] = [=](const Unary& u) { return std::pair{NDArray(), gdy(u)}; };  // d(dy·y)/dy
    r["sin"] = [=](const Unary& u) { return std::pair{Scale(Mul(gdy(u), u.y), -1), NDArray()}; };
    r["cos"] = [=](const Unary& u) { return std::pair{Scale(Mul(gdy(u), u.y), -1), NDArray()}; };
    r["log"] = [=](const Unary& u) {
      return std::pair{Scale(InvokeOne("elemwise_div", {gdy(u), Mul(u.x, u.x)}), -1), NDArray()};
    };
    r["sqrt"] = [=](const Unary& u) {  // d(dy/(2y))/dy
      return std::pair{NDArray(), Scale(InvokeOne("elemwise_div", {gdy(u), Mul(u.y, u.y)}), -0.5)};
    };
    r["square"] = [=](const Unary& u) { return std::pair{Scale(gdy(u), 2), NDArray()}; };
    r["sigmoid"] = [=](const Unary& u) {  // d(dy·y(1−y))/dy = dy(1 − 2y)
      return std::pair{NDArray(), Mul(gdy(u), InvokeOne("_rminus_scalar", {Scale(u.y, 2)}, {{"scalar", "1"}}))};
    };
    r["tanh"] = [=](const Unary& u) { return std::pair{NDArray(), Mul(gdy(u), Scale(u.y, -2))}; };
    r["rsqrt"] = [=](const Unary& u) {  // d(dy·(−y³/2))/dy = −1.5·dy·y²
      return std::pair{NDArray(), Scale(Mul(gdy(u), Mul(u.y, u.y)), -1.5)};
    };
    r["log1p"] = [=](const Unary& u) {  // f'' = −1/(1 + x)²
      const NDArray one_x = InvokeOne("_plus_scalar", {u.x}, {{"scalar", "1"}});
      return std::pair{Scale(InvokeOne("elemwise_div", {gdy(u), Mul(one_x, one_x)}), -1), NDArray()};
    };
    r["expm1"] = [=](const Unary& u) { return std::pair{NDArray(), gdy(u)}; };  // d(dy·(y + 1))/dy
    r["relu"] = [](const Unary&) { return std::pair{NDArray(), NDArray()}; };   // f'' = 0 (almost everywhere)
    r["abs"] = r["relu"];
    r["negative"] = r["relu"];
    return r;
  }();
  return rules;
}

// The unary rule for node `n`'s forward op, or null.
const UnaryRule* FindUnaryRule(const Node& n) {
  std::string op = n.def->name;
  if (op == "Activation") {
    op = n.attrs.GetString("act_type", "");
    if (op != "relu" && op != "sigmoid" && op != "tanh") return nullptr;
  }
  const auto& rules = UnaryRules();
  auto it = rules.find(op);
  return it == rules.end() ? nullptr : &it->second;
}

bool IsAffine(const Node& n) { return !n.def->is_loss && BackwardUses(*n.def, n.attrs) == 0; }

// Position of (source, index) among the backward node's inputs, or -1.
int Slot(const Node& n, BackwardSource source, int index) {
  const auto& ins = n.backward->inputs;
  for (size_t j = 0; j < ins.size(); ++j)
    if (ins[j].source == source && ins[j].index == index) return static_cast<int>(j);
  return -1;
}

NDArray ZerosLike(const Shape& shape, DType dtype, const Context& ctx) {
  NDArray z(shape, ctx, false, dtype);
  z = 0.0f;
  return z;
}

// X(g) − X(0) for every output of the forward op X; g has X's input shapes (the backward node's
// output shapes).
std::vector<NDArray> AffineRule(const Node& n, const std::vector<NDArray>& og) {
  const size_t na = n.backward->num_outputs;
  const std::vector<std::string> out_names = OpOutputNames(*n.def, n.attrs);
  auto run = [&](bool zero) {
    ImperativeCall call;
    call.op = n.def->name;
    call.params = n.attrs.values();
    for (size_t i = 0; i < na; ++i) {
      const NDArray& g = og[i];
      call.inputs.push_back(zero || g.is_none() ? ZerosLike(n.out_shapes[i], n.out_dtypes[i], n.ctx) : g);
    }
    std::vector<NDArray> outs(out_names.size());
    Invoke(call, &outs);
    return outs;
  };
  const std::vector<NDArray> at_g = run(false), at_0 = run(true);
  std::vector<NDArray> d(at_g.size());
  for (size_t k = 0; k < d.size(); ++k) d[k] = InvokeOne("elemwise_sub", {at_g[k], at_0[k]});
  return d;
}

}  // namespace

void CheckHigherOrder(const Node& n) {
  if (IsAffine(n) || FindUnaryRule(n) != nullptr || n.def->name == "elemwise_mul") return;
  Fail(
      "Backward: {} was recorded by a backward with create_graph, and weft has no gradient for it: second-order "
      "gradients exist for element-wise sin, cos, exp, expm1, log, log1p, sqrt, rsqrt, square, sigmoid, tanh, relu, "
      "abs, negative, Activation (relu, sigmoid, tanh), elemwise_mul, and for ops whose backward reads only the head "
      "gradients (add, sub, scalar ops, Reshape, transpose, sum, slice, Concat, ...)",
      n.Describe());
}

std::vector<NDArray> HigherOrderBackward(const Node& n, const std::vector<NDArray>& og, const std::vector<bool>& need,
                                         bool is_train) {
  CheckHigherOrder(n);
  std::vector<NDArray> result(n.inputs.size());
  auto value = [&](BackwardSource s, int i) {
    const int j = Slot(n, s, i);
    return j < 0 ? NDArray() : KeptInput(n, static_cast<size_t>(j));
  };
  auto put = [&](BackwardSource s, int i, const NDArray& g) {
    const int j = Slot(n, s, i);
    if (j >= 0 && need[static_cast<size_t>(j)] && !g.is_none()) result[static_cast<size_t>(j)] = g;
  };
  if (IsAffine(n)) {
    // The forward op's inputs are the backward's outputs: X's "inputs" here are shaped like og.
    // X(g) has X's output shapes, which are the shapes of the backward's out_grad inputs.
    const std::vector<NDArray> d = AffineRule(n, og);
    for (size_t k = 0; k < d.size(); ++k) put(BackwardSource::kOutGrad, static_cast<int>(k), d[k]);
    return result;
  }
  if (n.def->name == "elemwise_mul") {
    const NDArray dy = value(BackwardSource::kOutGrad, 0), a = value(BackwardSource::kInput, 0),
                  b = value(BackwardSource::kInput, 1);
    const NDArray& ga = og[0];
    const NDArray& gb = og.size() > 1 ? og[1] : NDArray();
    std::vector<NDArray> to_dy;
    if (!ga.is_none()) to_dy.push_back(Mul(ga, b));
    if (!gb.is_none()) to_dy.push_back(Mul(gb, a));
    put(BackwardSource::kOutGrad, 0, SumArrays(to_dy));
    if (!gb.is_none()) put(BackwardSource::kInput, 0, Mul(gb, dy));
    if (!ga.is_none()) put(BackwardSource::kInput, 1, Mul(ga, dy));
    return result;
  }
  Unary u{og[0], value(BackwardSource::kOutGrad, 0), value(BackwardSource::kInput, 0),
          value(BackwardSource::kOutput, 0)};
  if (u.g.is_none()) return result;
  // With respect to dy: the backward kernel itself, run on g (element-wise: the Jacobian is diagonal).
  if (need[static_cast<size_t>(Slot(n, BackwardSource::kOutGrad, 0))]) {
    std::vector<NDArray> bw_in;
    for (size_t j = 0; j < n.inputs.size(); ++j)
      bw_in.push_back(n.backward->inputs[j].source == BackwardSource::kOutGrad ? u.g : KeptInput(n, j));
    std::vector<NDArray> out{NDArray(n.out_shapes[0], n.ctx, true, n.out_dtypes[0])};
    RunBackwardOp(*n.def, n.attrs, *n.backward, bw_in, {n.out_shapes[0]}, {n.out_dtypes[0]}, out, {WEFT_REQ_WRITE},
                  is_train);
    put(BackwardSource::kOutGrad, 0, out[0]);
  }
  const auto [to_x, to_y] = (*FindUnaryRule(n))(u);
  put(BackwardSource::kInput, 0, to_x);
  put(BackwardSource::kOutput, 0, to_y);
  return result;
}

}  // namespace weft::autograd_detail
