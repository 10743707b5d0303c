// The optimizer update ops of MXNet 1.9 that its Python optimizers call (mxnet/optimizer/
// optimizer.py) beyond defs/optimizer.cc: multi-precision (mp_*: float16 weights with a float32
// master copy `weight32`), multi-tensor (multi_*, preloaded_multi_*: one call for num_weights
// weights, which SGD uses when MXNET_OPTIMIZER_AGGREGATION_SIZE > 1, its default 4), signsgd,
// signum, ftrl, ftml, LAMB's two phases, and LARS's multi_sum_sq / multi_lars. Formulas in OPS.md
// and plugins/cpu/kernels/nn_optimizer_more.cc (src/operator/optimizer_op-inl.h,
// contrib/multi_sum_sq-inl.h, contrib/multi_lars-inl.h).
//
// States are aux states (updated in place), as in defs/optimizer.cc. The multi-tensor ops take
// MXNet's interleaved positional order (weight0, grad0, mom0, weight1, ...): OpDef::mxnet_order
// places the states among the aux states.
#include "operator/defs/builtin.h"
#include "operator/defs/optimizer_defs.h"

namespace weft::opdef {
namespace {

// mp_*: every state float32; the inputs that `float32_input(i, inputs)` names float32 too
// (preloaded lrs and wds; LAMB phase 2's g, r1, r2), as the output when `float32_output` (LAMB
// phase 1's g); the other inputs (weights, grads) and outputs in the weight's dtype, which MXNet
// requires them to share.
using Float32Input = std::function<bool(size_t input, size_t inputs)>;

OpDef MixedPrecision(OpDef d, Float32Input float32_input = nullptr, bool float32_output = false) {
  d.infer_type = [float32_input, float32_output](const AttrMap&, std::vector<int>& in, std::vector<int>& out,
                                                 std::vector<int>& aux) {
    const char* op = "multi-precision update";
    const int f32 = static_cast<int>(DType::kFloat32);
    auto is_f32 = [&](size_t i) { return float32_input && float32_input(i, in.size()); };
    for (int& a : aux) AssignType(op, "aux state", "state", a, f32);
    for (size_t i = 0; i < in.size(); ++i)
      if (is_f32(i)) AssignType(op, "input", std::to_string(i), in[i], f32);
    if (float32_output)
      for (int& o : out) AssignType(op, "output", "output", o, f32);
    const int w = in[0] >= 0 ? in[0] : (float32_output ? -1 : out[0]);
    if (w < 0) return;
    for (size_t i = 0; i < in.size(); ++i)
      if (!is_f32(i)) AssignType(op, "input (a weight or grad: the weight's dtype)", std::to_string(i), in[i], w);
    if (!float32_output)
      for (int& o : out) AssignType(op, "output", "output", o, w);
  };
  return d;
}

AttrSpec Beta1(const char* value) { return Opt("beta1", "float", value, "decay of the first moment"); }
AttrSpec Beta2() { return Opt("beta2", "float", "0.999", "decay of the second moment"); }

void RegisterSingleUpdates(OpRegistry& r) {
  r.Register(MixedPrecision(Update("mp_sgd_update", "sgd_update on weight32 (float32); weight = weight32", {},
                                   {"weight32"}, {LazyUpdate()})));
  r.Register(MixedPrecision(Update("mp_sgd_mom_update", "sgd_mom_update on weight32 (float32); weight = weight32",
                                   {Momentum()}, {"mom", "weight32"}, {LazyUpdate()})));
  r.Register(MixedPrecision(Update("mp_nag_mom_update", "nag_mom_update on weight32 (float32); weight = weight32",
                                   {Momentum()}, {"mom", "weight32"}, {})));
  r.Register(Update("signsgd_update", "w = (1 − lr·wd)·w − lr·sign(g)", {}, {}, {}));
  r.Register(Update("signum_update",
                    "mom = momentum·mom − (1 − momentum)·(wd·w + clip(rescale_grad·g)); "
                    "w = (1 − lr·wd_lh)·w + lr·sign(mom)",
                    {Momentum()}, {"mom"},
                    {Opt("wd_lh", "float", "0", "weight decay applied to the weight directly (decoupled)")}));
  r.Register(Update("ftrl_update",
                    "g' = clip(rescale_grad·g); z += g' − (√(n + g'²) − √n)·w / lr; n += g'²; "
                    "w = (sign(z)·lamda1 − z) / ((beta + √n) / lr + wd) where |z| > lamda1, else 0 "
                    "(McMahan et al. 2013)",
                    {Opt("lamda1", "float", "0.01", "L1 regularisation"), Opt("beta", "float", "1", "FTRL beta")},
                    {"z", "n"}, {}));
  {
    OpDef d = Update("ftml_update",
                     "g' = clip(rescale_grad·g + wd·w); v = β2·v + (1 − β2)·g'²; "
                     "d' = (1 − β1ᵗ)/lr·(√(v / (1 − β2ᵗ)) + ε); z = β1·z + (1 − β1)·g' − (d' − β1·d)·w; d = d'; "
                     "w = −z / d (Zheng & Kwok 2017)",
                     {Beta1("0.6"), Beta2(), Opt("epsilon", "float", "1e-08", "added for numerical stability"),
                      Req("t", "int", "number of updates so far, this one included")},
                     {"d", "v", "z"}, {});
    // MXNet names this op's clipping attribute clip_grad.
    for (AttrSpec& a : d.attrs)
      if (a.name == "clip_gradient") a.name = "clip_grad";
    r.Register(std::move(d));
  }
}

OpDef LambPhase1(std::string name, std::vector<std::string> aux) {
  OpDef d;
  d.name = std::move(name);
  d.description =
      "LAMB phase 1 (You et al. 2019): g' = clip(rescale_grad·g); mean = β1·mean + (1 − β1)·g'; var = β2·var + "
      "(1 − β2)·g'²; output = mean^ / (√var^ + ε) + wd·w with mean^ = mean / (1 − β1ᵗ), var^ = var / (1 − β2ᵗ) "
      "when bias_correction, else mean and var.";
  d.attrs = {Beta1("0.9"),
             Beta2(),
             Opt("epsilon", "float", "1e-06", "added for numerical stability"),
             Req("t", "int", "number of updates so far, this one included"),
             Opt("bias_correction", "bool", "True", "divide the moments by 1 − βᵗ"),
             Req("wd", "float", "weight decay"),
             Opt("rescale_grad", "float", "1", "multiplies the gradient first"),
             Opt("clip_gradient", "float", "-1", "clips the rescaled gradient to ±value; < 0 = no clipping")};
  d.list_inputs = Fixed({"weight", "grad"});
  d.list_outputs = Fixed({"output"});
  d.list_aux = Fixed(std::move(aux));
  SetShapeFn(d, SameShapeAll);
  return d;
}

// LAMB phase 2: weight, g, r1 = ‖weight‖, r2 = ‖g‖ (shape (1,)).
OpDef LambPhase2(std::string name, std::vector<std::string> aux) {
  OpDef d;
  d.name = std::move(name);
  d.description =
      "LAMB phase 2: r1 = max(r1, lower_bound) when lower_bound ≥ 0, min(r1, upper_bound) when upper_bound ≥ 0; "
      "w −= lr·(r1 / r2)·g, or lr·g when r1 or r2 is 0.";
  d.attrs = {Req("lr", "float", "learning rate"), Opt("lower_bound", "float", "-1", "lower bound of r1; < 0 = none"),
             Opt("upper_bound", "float", "-1", "upper bound of r1; < 0 = none")};
  d.list_inputs = Fixed({"weight", "g", "r1", "r2"});
  d.list_outputs = Fixed({"output"});
  if (!aux.empty()) d.list_aux = Fixed(std::move(aux));
  SetShapeFn(d, [](ShapeIO& io) {
    for (size_t i : {0, 1})
      if (io.in(i)) io.AssignOut(0, *io.in(i));
    if (!io.out(0)) return;
    io.AssignIn(0, *io.out(0));
    io.AssignIn(1, *io.out(0));
    for (size_t a = 0; a < io.num_aux(); ++a) io.AssignAux(a, *io.out(0));
    io.AssignIn(2, Shape{1});
    io.AssignIn(3, Shape{1});
  });
  d.inplace = InplacePairs({{0, 0}});
  return d;
}

// The multi-tensor SGD family: num_weights groups of (weight, grad, states...) in MXNet's order;
// `preloaded` adds the arrays lrs and wds after them (else lrs and wds are attributes).
OpDef MultiUpdate(std::string name, std::string rule, std::vector<std::string> states, bool preloaded, bool momentum) {
  OpDef d;
  d.name = std::move(name);
  d.description = "For each of num_weights weights: " + rule +
                  ", with that weight's lr and wd; positional inputs weight0, grad0, " +
                  (states.empty() ? std::string() : states.front() + "0, ") + "weight1, ..." +
                  (preloaded ? " then the arrays lrs and wds (num_weights,)." : ".");
  if (!preloaded) {
    d.attrs = {Req("lrs", "string", "learning rate per weight, e.g. (0.1, 0.1)"),
               Req("wds", "string", "weight decay per weight")};
  }
  if (momentum) d.attrs.push_back(Momentum());
  d.attrs.push_back(Opt("rescale_grad", "float", "1", "multiplies the gradient first"));
  d.attrs.push_back(Opt("clip_gradient", "float", "-1", "clips the rescaled gradient to ±value; < 0 = no clipping"));
  d.attrs.push_back(Opt("num_weights", "int", "1", "number of weights updated"));
  d.validate = [preloaded](const AttrMap& a) {
    const int64_t n = a.GetInt("num_weights");
    WEFT_CHECK(n >= 1 && n <= kMaxNumberedCount, "num_weights must be in 1..{}, got {}", kMaxNumberedCount, n);
    if (preloaded) return;
    for (const char* key : {"lrs", "wds"}) {
      const size_t got = ParseFloatTuple(a.GetString(key), key).size();
      WEFT_CHECK(got == static_cast<size_t>(n), "{} has {} values, num_weights is {}", key, got, n);
    }
  };
  d.list_inputs = [preloaded](const AttrMap& a) {
    std::vector<std::string> names;
    for (int64_t i = 0; i < a.GetInt("num_weights"); ++i) {
      names.push_back("weight" + std::to_string(i));
      names.push_back("grad" + std::to_string(i));
    }
    if (preloaded) names.insert(names.end(), {"lrs", "wds"});
    return names;
  };
  d.list_outputs = Numbered("output", "num_weights");
  d.list_aux = [states](const AttrMap& a) {
    std::vector<std::string> names;
    for (int64_t i = 0; i < a.GetInt("num_weights"); ++i)
      for (const std::string& s : states) names.push_back(s + std::to_string(i));
    return names;
  };
  d.mxnet_order = [preloaded, k = states.size()](const AttrMap& a) {
    const size_t n = static_cast<size_t>(a.GetInt("num_weights")), inputs = 2 * n + (preloaded ? 2 : 0);
    std::vector<size_t> order;
    for (size_t i = 0; i < n; ++i) {
      order.push_back(2 * i);
      order.push_back(2 * i + 1);
      for (size_t j = 0; j < k; ++j) order.push_back(inputs + i * k + j);
    }
    if (preloaded) order.insert(order.end(), {2 * n, 2 * n + 1});
    return order;
  };
  SetShapeFn(d, [preloaded, k = states.size()](ShapeIO& io) {
    const size_t n = io.num_out();
    for (size_t i = 0; i < n; ++i) {
      for (size_t slot : {2 * i, 2 * i + 1})
        if (io.in(slot)) io.AssignOut(i, *io.in(slot));
      for (size_t j = 0; j < k; ++j)
        if (io.aux(i * k + j)) io.AssignOut(i, *io.aux(i * k + j));
      if (!io.out(i)) continue;
      io.AssignIn(2 * i, *io.out(i));
      io.AssignIn(2 * i + 1, *io.out(i));
      for (size_t j = 0; j < k; ++j) io.AssignAux(i * k + j, *io.out(i));
    }
    if (preloaded) {
      io.AssignIn(2 * n, Shape{static_cast<int64_t>(n)});
      io.AssignIn(2 * n + 1, Shape{static_cast<int64_t>(n)});
    }
  });
  d.inplace = [](const AttrMap& a) {
    std::vector<std::pair<int, int>> pairs;
    for (int i = 0; i < static_cast<int>(a.GetInt("num_weights")); ++i) pairs.emplace_back(2 * i, i);
    return pairs;
  };
  return d;
}

void RegisterMultiUpdates(OpRegistry& r) {
  const std::string sgd = "sgd_update", mom = "sgd_mom_update", mp = " on weight32 (float32), weight = weight32";
  for (bool preloaded : {false, true}) {
    const std::string prefix = preloaded ? "preloaded_multi_" : "multi_";
    r.Register(MultiUpdate(prefix + "sgd_update", sgd, {}, preloaded, false));
    r.Register(MultiUpdate(prefix + "sgd_mom_update", mom, {"mom"}, preloaded, true));
    // preloaded_: the arrays lrs and wds (the last two inputs) are float32.
    Float32Input lrs_wds = nullptr;
    if (preloaded) lrs_wds = [](size_t i, size_t inputs) { return i + 2 >= inputs; };
    r.Register(
        MixedPrecision(MultiUpdate(prefix + "mp_sgd_update", sgd + mp, {"weight32"}, preloaded, false), lrs_wds));
    r.Register(MixedPrecision(MultiUpdate(prefix + "mp_sgd_mom_update", mom + mp, {"mom", "weight32"}, preloaded, true),
                              lrs_wds));
  }
}

OpDef MultiSumSq() {
  OpDef d;
  d.name = "multi_sum_sq";
  d.description = "output[i] = Σ data_i² for each of num_arrays arrays (float32, shape (num_arrays,)).";
  d.attrs = {Req("num_arrays", "int", "number of arrays")};
  d.list_inputs = Numbered("data", "num_arrays");
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, [](ShapeIO& io) { io.AssignOut(0, Shape{io.attrs().GetInt("num_arrays")}); });
  d.infer_type = [](const AttrMap&, std::vector<int>&, std::vector<int>& out, std::vector<int>&) {
    AssignType("multi_sum_sq", "output", "output", out[0], static_cast<int>(DType::kFloat32));
  };
  return d;
}

OpDef MultiLars() {
  OpDef d;
  d.name = "multi_lars";
  d.description =
      "LARS learning rates (You et al. 2017): output[i] = lrs[i]·eta·‖w‖ / (‖g‖·rescale_grad + wds[i]·‖w‖ + eps) "
      "with ‖w‖ = √weights_sum_sq[i], ‖g‖ = √grads_sum_sq[i], when both norms are positive; else lrs[i].";
  d.attrs = {Req("eta", "float", "LARS coefficient"), Req("eps", "float", "added to the denominator"),
             Opt("rescale_grad", "float", "1", "multiplies the gradient norm")};
  d.list_inputs = Fixed({"lrs", "weights_sum_sq", "grads_sum_sq", "wds"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, SameShapeAll);
  return d;
}

}  // namespace

void RegisterOptimizerMoreOps(OpRegistry& r) {
  RegisterSingleUpdates(r);
  r.Register(LambPhase1("lamb_update_phase1", {"mean", "var"}));
  r.Register(LambPhase2("lamb_update_phase2", {}));
  // MXNet's mp_lamb_update_phase1 returns g in float32, which phase 2 takes with r1 and r2.
  r.Register(MixedPrecision(LambPhase1("mp_lamb_update_phase1", {"mean", "var", "weight32"}), nullptr, true));
  r.Register(
      MixedPrecision(LambPhase2("mp_lamb_update_phase2", {"weight32"}), [](size_t i, size_t) { return i >= 1; }));
  RegisterMultiUpdates(r);
  r.Register(MultiSumSq());
  r.Register(MultiLars());
}

}  // namespace weft::opdef
