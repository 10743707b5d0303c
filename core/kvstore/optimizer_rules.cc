// weft core — the update rules of SGD, NAG, Adam and RMSProp (see weft/optimizer.h for the math):
// each update is one update operator (sgd_update, sgd_mom_update, nag_mom_update, adam_update,
// rmsprop_update, rmspropalex_update) run by the weight's device plugin, with the arguments
// MXNet 1.9's Python optimizers pass (python/mxnet/optimizer/optimizer.py).
#include <cmath>

#include "weft/imperative.h"
#include "weft/internal/sparse_update.h"
#include "weft/optimizer.h"
#include "weft/sparse.h"

namespace weft {
namespace {

std::map<std::string, std::string> With(std::map<std::string, std::string> base,
                                        const std::map<std::string, std::string>& extra) {
  for (const auto& [k, v] : extra) base[k] = v;
  return base;
}

// Runs an update operator writing the weight in place (inputs: weight, grad, then the states).
void InvokeUpdate(const std::string& op, const std::vector<NDArray>& inputs,
                  const std::map<std::string, std::string>& params, NDArray& weight) {
  if (inputs[1].storage_type() == StorageType::kRowSparse) {
    // A row_sparse gradient (a KVStore push of row_sparse values): MXNet's lazy update where the
    // op has one (sgd, sgd with momentum, adam: only the stored rows change), else its fallback,
    // the dense update of every row.
    if (IsLazyUpdate(op, params, inputs)) {
      LazyUpdate(op, params, weight, inputs[1], std::vector<NDArray>(inputs.begin() + 2, inputs.end()));
      return;
    }
    std::vector<NDArray> dense = inputs;
    dense[1] = CastStorage(inputs[1], StorageType::kDefault);
    InvokeUpdate(op, dense, params, weight);
    return;
  }
  ImperativeCall call;
  call.op = op;
  call.inputs = inputs;
  call.params = params;
  std::vector<NDArray> out{weight};
  Invoke(call, &out);
}

// MXNet's optimizers pass clip_gradient / clip_weights only when they are truthy, so 0 means
// "no clipping" there, as -1 does.
std::string ClipValue(const std::string& v) { return std::stod(v) == 0.0 ? "-1" : v; }

std::vector<NDArray> Concat(std::vector<NDArray> a, const std::vector<NDArray>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

std::map<std::string, std::string> Optimizer::UpdateParams(float lr, float wd) const {
  return {{"lr", fmt::format("{}", lr)},
          {"wd", fmt::format("{}", wd)},
          {"rescale_grad", GetParam("rescale_grad")},
          {"clip_gradient", ClipValue(GetParam("clip_gradient"))}};
}

// ---- SGD -----------------------------------------------------------------------------------

std::map<std::string, std::string> SGDOptimizer::Defaults() const {
  return With(Optimizer::Defaults(), {{"momentum", "0"}});
}
int SGDOptimizer::NumStates() const { return Param("momentum") != 0.0f ? 1 : 0; }

void SGDOptimizer::UpdateImpl(int, NDArray& weight, const NDArray& grad, std::vector<NDArray>& states, float lr,
                              float wd) {
  if (states.empty()) {
    InvokeUpdate("sgd_update", {weight, grad}, UpdateParams(lr, wd), weight);
  } else {
    InvokeUpdate("sgd_mom_update", {weight, grad, states[0]},
                 With(UpdateParams(lr, wd), {{"momentum", GetParam("momentum")}}), weight);
  }
}

// ---- NAG -----------------------------------------------------------------------------------

std::map<std::string, std::string> NAGOptimizer::Defaults() const {
  return With(Optimizer::Defaults(), {{"momentum", "0"}});
}
int NAGOptimizer::NumStates() const { return Param("momentum") != 0.0f ? 1 : 0; }

void NAGOptimizer::UpdateImpl(int, NDArray& weight, const NDArray& grad, std::vector<NDArray>& states, float lr,
                              float wd) {
  if (states.empty()) {
    InvokeUpdate("sgd_update", {weight, grad}, UpdateParams(lr, wd), weight);
  } else {
    InvokeUpdate("nag_mom_update", {weight, grad, states[0]},
                 With(UpdateParams(lr, wd), {{"momentum", GetParam("momentum")}}), weight);
  }
}

// ---- Adam ----------------------------------------------------------------------------------

std::map<std::string, std::string> AdamOptimizer::Defaults() const {
  return With(Optimizer::Defaults(), {{"lr", "0.001"}, {"beta1", "0.9"}, {"beta2", "0.999"}, {"epsilon", "1e-08"}});
}

void AdamOptimizer::UpdateImpl(int index, NDArray& weight, const NDArray& grad, std::vector<NDArray>& states, float lr,
                               float wd) {
  // MXNet folds the bias correction into the learning rate.
  const double t = UpdateCount(index);
  const double beta1 = Param("beta1"), beta2 = Param("beta2");
  const double lr_t = lr * std::sqrt(1.0 - std::pow(beta2, t)) / (1.0 - std::pow(beta1, t));
  InvokeUpdate("adam_update", Concat({weight, grad}, states),
               With(UpdateParams(static_cast<float>(lr_t), wd),
                    {{"beta1", GetParam("beta1")}, {"beta2", GetParam("beta2")}, {"epsilon", GetParam("epsilon")}}),
               weight);
}

// ---- RMSProp -------------------------------------------------------------------------------

std::map<std::string, std::string> RMSPropOptimizer::Defaults() const {
  return With(Optimizer::Defaults(), {{"lr", "0.001"},
                                      {"gamma1", "0.9"},
                                      {"gamma2", "0.9"},
                                      {"epsilon", "1e-08"},
                                      {"centered", "false"},
                                      {"clip_weights", "-1"}});
}
int RMSPropOptimizer::NumStates() const { return BoolParam("centered") ? 3 : 1; }

void RMSPropOptimizer::UpdateImpl(int, NDArray& weight, const NDArray& grad, std::vector<NDArray>& states, float lr,
                                  float wd) {
  std::map<std::string, std::string> p =
      With(UpdateParams(lr, wd), {{"gamma1", GetParam("gamma1")},
                                  {"epsilon", GetParam("epsilon")},
                                  {"clip_weights", ClipValue(GetParam("clip_weights"))}});
  if (BoolParam("centered")) {
    p["gamma2"] = GetParam("gamma2");
    InvokeUpdate("rmspropalex_update", Concat({weight, grad}, states), p, weight);
  } else {
    InvokeUpdate("rmsprop_update", {weight, grad, states[0]}, p, weight);
  }
}

}  // namespace weft
