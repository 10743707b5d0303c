// The optimizer update ops of MXNet 1.9 that its Python optimizers call (mxnet/optimizer/
// optimizer.py) beyond defs/optimizer.cc: multi-precision (mp_*: float16 weights with a float32
// master copy `weight32`), multi-tensor (multi_*, preloaded_multi_*: one call for num_weights
// weights, which SGD uses when MXNET_OPTIMIZER_AGGREGATION_SIZE > 1, its default 4), signsgd,
// signum, ftrl, ftml, LAMB's two phases, and LARS's multi_sum_sq / multi_lars. Formulas in OPS.md
// and plugins/cpu/kernels/optimizer_more.cc (src/operator/optimizer_op-inl.h,
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

void RegisterSingleUpdates(OpRegistry& r) {
  using sdk::UpdateRule;
  r.Register(MixedPrecision(
      Update<UpdateRule::kSgd>("mp_sgd_update", "sgd_update on weight32 (float32); weight = weight32", {"weight32"})));
  r.Register(MixedPrecision(Update<UpdateRule::kSgdMom>(
      "mp_sgd_mom_update", "sgd_mom_update on weight32 (float32); weight = weight32", {"mom", "weight32"})));
  r.Register(MixedPrecision(Update<UpdateRule::kNagMom>(
      "mp_nag_mom_update", "nag_mom_update on weight32 (float32); weight = weight32", {"mom", "weight32"})));
  r.Register(Update<UpdateRule::kSignSgd>("signsgd_update", "w = (1 − lr·wd)·w − lr·sign(g)", {}));
  r.Register(Update<UpdateRule::kSignum>("signum_update",
                                         "mom = momentum·mom − (1 − momentum)·(wd·w + clip(rescale_grad·g)); "
                                         "w = (1 − lr·wd_lh)·w + lr·sign(mom)",
                                         {"mom"}));
  r.Register(Update<UpdateRule::kFtrl>("ftrl_update",
                                       "g' = clip(rescale_grad·g); z += g' − (√(n + g'²) − √n)·w / lr; n += g'²; "
                                       "w = (sign(z)·lamda1 − z) / ((beta + √n) / lr + wd) where |z| > lamda1, else 0 "
                                       "(McMahan et al. 2013)",
                                       {"z", "n"}));
  {
    OpDef d = UpdateBase("_sparse_adagrad_update",
                         "g' = clip(rescale_grad·g); history += g'²; w −= lr·g' / √(history + epsilon) (Duchi et "
                         "al. 2011). MXNet's sparse AdaGrad: with a row_sparse gradient only its rows are updated "
                         "(the C API's lazy update); wd must be 0.",
                         {"history"});
    DeclareParams<sdk::AdaGradParam>(d);
    r.Register(std::move(d));
  }
  r.Register(Update<UpdateRule::kFtml>(
      "ftml_update",
      "g' = clip(rescale_grad·g + wd·w); v = β2·v + (1 − β2)·g'²; "
      "d' = (1 − β1ᵗ)/lr·(√(v / (1 − β2ᵗ)) + ε); z = β1·z + (1 − β1)·g' − (d' − β1·d)·w; d = d'; "
      "w = −z / d (Zheng & Kwok 2017)",
      {"d", "v", "z"}));
}

OpDef LambPhase1(std::string name, std::vector<std::string> aux) {
  OpDef d;
  d.name = std::move(name);
  d.description =
      "LAMB phase 1 (You et al. 2019): g' = clip(rescale_grad·g); mean = β1·mean + (1 − β1)·g'; var = β2·var + "
      "(1 − β2)·g'²; output = mean^ / (√var^ + ε) + wd·w with mean^ = mean / (1 − β1ᵗ), var^ = var / (1 − β2ᵗ) "
      "when bias_correction, else mean and var.";
  DeclareParams<sdk::LambPhase1Param>(d);
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
  DeclareParams<sdk::LambPhase2Param>(d);
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
template <bool kPreloaded, bool kMomentum>
OpDef MultiUpdate(std::string name, std::string rule, std::vector<std::string> states) {
  using P = sdk::MultiSgdParam<kPreloaded, kMomentum>;
  constexpr bool preloaded = kPreloaded;
  OpDef d;
  d.name = std::move(name);
  d.description = "For each of num_weights weights: " + rule +
                  ", with that weight's lr and wd; positional inputs weight0, grad0, " +
                  (states.empty() ? std::string() : states.front() + "0, ") + "weight1, ..." +
                  (preloaded ? " then the arrays lrs and wds (num_weights,)." : ".");
  static_assert(kMaxNumberedCount == 65536, "MultiSgdParam's num_weights range is kMaxNumberedCount's");
  DeclareParams<P>(d);
  d.list_inputs = [](const AttrMap& a) {
    std::vector<std::string> names;
    for (int64_t i = 0; i < sdk::ParseParams<P>(a).num_weights; ++i) {
      names.push_back("weight" + std::to_string(i));
      names.push_back("grad" + std::to_string(i));
    }
    if (preloaded) names.insert(names.end(), {"lrs", "wds"});
    return names;
  };
  d.list_outputs = Numbered("output", "num_weights");
  d.list_aux = [states](const AttrMap& a) {
    std::vector<std::string> names;
    for (int64_t i = 0; i < sdk::ParseParams<P>(a).num_weights; ++i)
      for (const std::string& s : states) names.push_back(s + std::to_string(i));
    return names;
  };
  d.mxnet_order = [k = states.size()](const AttrMap& a) {
    const size_t n = static_cast<size_t>(sdk::ParseParams<P>(a).num_weights), inputs = 2 * n + (preloaded ? 2 : 0);
    std::vector<size_t> order;
    for (size_t i = 0; i < n; ++i) {
      order.push_back(2 * i);
      order.push_back(2 * i + 1);
      for (size_t j = 0; j < k; ++j) order.push_back(inputs + i * k + j);
    }
    if (preloaded) order.insert(order.end(), {2 * n, 2 * n + 1});
    return order;
  };
  SetShapeFn(d, [k = states.size()](ShapeIO& io) {
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
    for (int i = 0; i < static_cast<int>(sdk::ParseParams<P>(a).num_weights); ++i) pairs.emplace_back(2 * i, i);
    return pairs;
  };
  return d;
}

void RegisterMultiUpdates(OpRegistry& r) {
  const std::string sgd = "sgd_update", mom = "sgd_mom_update", mp = " on weight32 (float32), weight = weight32";
  auto family = [&]<bool kPreloaded>() {
    const std::string prefix = kPreloaded ? "preloaded_multi_" : "multi_";
    r.Register(MultiUpdate<kPreloaded, false>(prefix + "sgd_update", sgd, {}));
    r.Register(MultiUpdate<kPreloaded, true>(prefix + "sgd_mom_update", mom, {"mom"}));
    // preloaded_: the arrays lrs and wds (the last two inputs) are float32.
    Float32Input lrs_wds = nullptr;
    if (kPreloaded) lrs_wds = [](size_t i, size_t inputs) { return i + 2 >= inputs; };
    r.Register(
        MixedPrecision(MultiUpdate<kPreloaded, false>(prefix + "mp_sgd_update", sgd + mp, {"weight32"}), lrs_wds));
    r.Register(MixedPrecision(
        MultiUpdate<kPreloaded, true>(prefix + "mp_sgd_mom_update", mom + mp, {"mom", "weight32"}), lrs_wds));
  };
  family.operator()<false>();
  family.operator()<true>();
}

OpDef MultiSumSq() {
  OpDef d;
  d.name = "multi_sum_sq";
  d.description = "output[i] = Σ data_i² for each of num_arrays arrays (float32, shape (num_arrays,)).";
  DeclareParams<sdk::MultiSumSqParam>(d);
  d.list_inputs = Numbered("data", "num_arrays");
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::MultiSumSqParam>(
      d, [](ShapeIO& io, const sdk::MultiSumSqParam& p) { io.AssignOut(0, Shape{p.num_arrays}); });
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
  DeclareParams<sdk::MultiLarsParam>(d);
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
