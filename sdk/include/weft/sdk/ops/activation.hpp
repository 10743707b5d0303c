// weft SDK ops — the activation family: Activation and LeakyReLU (MXNet 1.9's ActivationParam
// and LeakyReLUParam).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

enum class ActType { kRelu, kSigmoid, kTanh, kSoftRelu, kSoftSign };
inline constexpr std::string_view kActTypes[] = {"relu", "sigmoid", "tanh", "softrelu", "softsign"};

/// Activation: relu, sigmoid, tanh, softrelu (log(1 + exp(x))), softsign (x / (1 + |x|)).
struct ActivationParam {
  ActType act_type = ActType::kRelu;

  template <class V>
  void Visit(V& v) {
    v(act_type, Attr("act_type").Choices(kActTypes).Doc("activation function"));
  }
  /// Whether the derivative is a function of the output alone (MXNet's ActivationGrad: all but
  /// softsign), so the backward needs no input.
  bool OutputOnlyGradient() const { return act_type != ActType::kSoftSign; }
};

enum class LeakyType { kLeaky, kElu, kPrelu, kRrelu, kSelu, kGelu };
inline constexpr std::string_view kLeakyTypes[] = {"leaky", "elu", "prelu", "rrelu", "selu", "gelu"};

/// LeakyReLU: leaky (x > 0 ? x : slope·x), elu (slope·(exp(x) − 1) below 0), prelu (learned
/// per-channel slope `gamma`), rrelu (random slope in [lower_bound, upper_bound] when training),
/// selu, gelu.
struct LeakyReLUParam {
  LeakyType act_type = LeakyType::kLeaky;
  float slope = 0.25f, lower_bound = 0.125f, upper_bound = 0.334f;

  template <class V>
  void Visit(V& v) {
    v(act_type, Attr("act_type").Default("leaky").Choices(kLeakyTypes).Doc("activation function"));
    v(slope, Attr("slope").Default("0.25").Doc("slope for leaky and elu"));
    v(lower_bound, Attr("lower_bound").Default("0.125").Doc("rrelu: lower bound of the random slope"));
    v(upper_bound, Attr("upper_bound").Default("0.334").Doc("rrelu: upper bound of the random slope"));
  }
};

/// Whether the backward of the node gets the forward's input: always but for the Activation
/// functions whose derivative is a function of the output (MXNet's ActivationGrad, OPS.md). Checks
/// the backward's input count (out_grad, data, output; or out_grad, output) and throws naming
/// `op` otherwise.
inline bool ActivationGradHasData(std::string_view op, bool output_only, size_t num_inputs) {
  if (num_inputs != 3 && !(output_only && num_inputs == 2))
    OpError(WEFT_ERR_INVALID_ARGUMENT, op,
            "expects 3 inputs (out_grad, data, output)" + std::string(output_only ? " or 2 (out_grad, output)" : "") +
                ", got " + std::to_string(num_inputs));
  return num_inputs == 3;
}

/// prelu's slopes: one per channel of data's axis 1 (axis 0 of 1-D data), or a single one. Element
/// i's slope is gamma[(i / inner) % channels].
struct PreluChannels {
  int64_t channels = 1, inner = 1;
};

/// prelu's view of data `x` and its `gamma`; throws naming `op` when gamma fits neither.
inline PreluChannels PreluChannelsOf(std::string_view op, std::span<const int64_t> x, std::span<const int64_t> gamma) {
  PreluChannels v;
  v.channels = ShapeSize(gamma);
  const int64_t c = x.size() > 1 ? x[1] : x.size() == 1 ? x[0] : 1;
  if (v.channels != 1 && v.channels != c)
    OpError(WEFT_ERR_INVALID_ARGUMENT, op,
            "gamma " + ShapeText(gamma) + " must hold one slope per channel (" + std::to_string(c) + ") of data " +
                ShapeText(x) + " or a single one");
  if (v.channels != 1 && x.size() > 1) v.inner = ShapeSize(x) / (x[0] * c);
  return v;
}

}  // namespace weft::sdk
