// weft core — the update rules of SGD, NAG, Adam and RMSProp (see weft/optimizer.h for the math).
#include <algorithm>
#include <cmath>

#include "kvstore/host_ops.h"
#include "weft/imperative.h"
#include "weft/optimizer.h"

namespace weft {
namespace {

std::map<std::string, std::string> With(std::map<std::string, std::string> base,
                                        const std::map<std::string, std::string>& extra) {
  for (const auto& [k, v] : extra) base[k] = v;
  return base;
}

// Runs an update operator writing the weight in place.
void InvokeUpdate(const std::string& op, const std::vector<NDArray>& inputs,
                  const std::map<std::string, std::string>& params, NDArray& weight) {
  ImperativeCall call;
  call.op = op;
  call.inputs = inputs;
  call.params = params;
  std::vector<NDArray> out{weight};
  Invoke(call, &out);
}

inline float Clip(float g, float clip) { return clip >= 0 ? std::clamp(g, -clip, clip) : g; }

}  // namespace

// ---- SGD -----------------------------------------------------------------------------------

std::map<std::string, std::string> SGDOptimizer::Defaults() const {
  return With(Optimizer::Defaults(), {{"momentum", "0"}});
}
int SGDOptimizer::NumStates() const { return Param("momentum") != 0.0f ? 1 : 0; }

void SGDOptimizer::UpdateImpl(int, NDArray& weight, const NDArray& grad, std::vector<NDArray>& states, float lr,
                              float wd) {
  std::map<std::string, std::string> p{{"lr", fmt::format("{}", lr)},
                                       {"wd", fmt::format("{}", wd)},
                                       {"rescale_grad", GetParam("rescale_grad")},
                                       {"clip_gradient", GetParam("clip_gradient")}};
  if (states.empty()) {
    InvokeUpdate("sgd_update", {weight, grad}, p, weight);
  } else {
    p["momentum"] = GetParam("momentum");
    InvokeUpdate("sgd_mom_update", {weight, grad, states[0]}, p, weight);
  }
}

// ---- NAG -----------------------------------------------------------------------------------

std::map<std::string, std::string> NAGOptimizer::Defaults() const {
  return With(Optimizer::Defaults(), {{"momentum", "0"}});
}
int NAGOptimizer::NumStates() const { return Param("momentum") != 0.0f ? 1 : 0; }

void NAGOptimizer::UpdateImpl(int, NDArray& weight, const NDArray& grad, std::vector<NDArray>& states, float lr,
                              float wd) {
  const float rescale = Param("rescale_grad"), clip = Param("clip_gradient"), momentum = Param("momentum");
  kv::PushHostRule(
      weight, grad, states,
      [=](size_t n, float* w, const float* g, const std::vector<float*>& s) {
        for (size_t i = 0; i < n; ++i) {
          const float gi = Clip(rescale * g[i], clip) + wd * w[i];
          if (s.empty()) {
            w[i] -= lr * gi;
          } else {
            s[0][i] = momentum * s[0][i] + gi;
            w[i] -= lr * (gi + momentum * s[0][i]);
          }
        }
      },
      "nag_update");
}

// ---- Adam ----------------------------------------------------------------------------------

std::map<std::string, std::string> AdamOptimizer::Defaults() const {
  return With(Optimizer::Defaults(), {{"lr", "0.001"}, {"beta1", "0.9"}, {"beta2", "0.999"}, {"epsilon", "1e-08"}});
}

void AdamOptimizer::UpdateImpl(int index, NDArray& weight, const NDArray& grad, std::vector<NDArray>& states, float lr,
                               float wd) {
  const double t = UpdateCount(index);
  const double beta1 = Param("beta1"), beta2 = Param("beta2");
  const double lr_t = lr * std::sqrt(1.0 - std::pow(beta2, t)) / (1.0 - std::pow(beta1, t));
  std::map<std::string, std::string> p{{"lr", fmt::format("{}", static_cast<float>(lr_t))},
                                       {"wd", fmt::format("{}", wd)},
                                       {"beta1", GetParam("beta1")},
                                       {"beta2", GetParam("beta2")},
                                       {"epsilon", GetParam("epsilon")},
                                       {"rescale_grad", GetParam("rescale_grad")},
                                       {"clip_gradient", GetParam("clip_gradient")}};
  InvokeUpdate("adam_update", {weight, grad, states[0], states[1]}, p, weight);
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
  const float rescale = Param("rescale_grad"), clip = Param("clip_gradient"), g1 = Param("gamma1"),
              g2 = Param("gamma2"), eps = Param("epsilon"), clip_w = Param("clip_weights");
  const bool centered = BoolParam("centered");
  kv::PushHostRule(
      weight, grad, states,
      [=](size_t n, float* w, const float* g, const std::vector<float*>& s) {
        for (size_t i = 0; i < n; ++i) {
          const float gi = Clip(rescale * g[i], clip) + wd * w[i];
          float& sn = s[0][i];
          sn = (1 - g1) * gi * gi + g1 * sn;
          if (!centered) {
            w[i] -= lr * gi / std::sqrt(sn + eps);
          } else {
            float& gm = s[1][i];
            float& delta = s[2][i];
            gm = (1 - g1) * gi + g1 * gm;
            delta = g2 * delta - lr * gi / std::sqrt(sn - gm * gm + eps);
            w[i] += delta;
          }
          if (clip_w > 0) w[i] = std::clamp(w[i], -clip_w, clip_w);
        }
      },
      "rmsprop_update");
}

}  // namespace weft
