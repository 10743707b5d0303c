// weft SDK ops — the fused recurrent layer RNN (MXNet 1.9's RNNParam) and the one geometry its
// kernels and core's shape inference share: MXNet's flat parameter layout and the layout of the
// hidden `reserve` output the backward reads.
//
// Layout (MXNet's cpu RNN, src/operator/rnn-inl.h and rnn_impl.h): data (T, N, I) (time major),
// state / state_cell (L·D, N, H) with slot l·D + d for layer l and direction d (D = 2 when
// bidirectional), output (T, N, D·H) (the two directions side by side). The parameters are one
// flat vector: first every weight, for each layer l and direction d the input weight Wx
// (G·H, I_l) then the recurrent weight Wh (G·H, H), with I_0 = I and I_l = D·H above; then every
// bias in the same order, bx (G·H) then bh (G·H). G is the number of gates: 4 for lstm (i, f, g, o),
// 3 for gru (r, z, n), 1 for rnn_relu / rnn_tanh. The gru is MXNet's (and cuDNN's) linear-before-
// reset form: n = tanh(Wx_n·x + bx_n + r ⊙ (Wh_n·h + bh_n)), h' = (1 − z) ⊙ n + z ⊙ h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

enum class RnnMode { kRnnRelu, kRnnTanh, kLstm, kGru };
inline constexpr std::string_view kRnnModes[] = {"rnn_relu", "rnn_tanh", "lstm", "gru"};

/// RNN's attributes (MXNet 1.9 RNNParam). projection_size, the LSTM state clipping and
/// sequence_length are MXNet features weft refuses by name (DefaultOnly).
struct RNNParam {
  int64_t state_size = 0, num_layers = 0;
  bool bidirectional = false;
  RnnMode mode = RnnMode::kLstm;
  float p = 0.0f;
  bool state_outputs = false;
  std::optional<int64_t> projection_size;
  std::optional<double> lstm_state_clip_min, lstm_state_clip_max;
  bool lstm_state_clip_nan = false, use_sequence_length = false;

  template <class V>
  void Visit(V& v) {
    v(state_size, Attr("state_size").Min(1).MxType("int (non-negative)").Doc("hidden state size H"));
    v(num_layers, Attr("num_layers").Min(1).MxType("int (non-negative)").Doc("number of stacked layers L"));
    v(bidirectional, Attr("bidirectional").Default("False").Doc("run a second, time-reversed direction per layer"));
    v(mode, Attr("mode").Choices(kRnnModes).Doc("cell: rnn_relu, rnn_tanh, lstm or gru"));
    v(p, Attr("p").Default("0").Min(0).Max(1).Doc("dropout probability on the input of layers 2..L (training)"));
    v(state_outputs, Attr("state_outputs").Default("False").Doc("also return the final state (and cell state)"));
    v(projection_size, Attr("projection_size").Default("None").DefaultOnly().Doc("LSTM projection (not in weft)"));
    v(lstm_state_clip_min, Attr("lstm_state_clip_min").Default("None").DefaultOnly().Doc("LSTM cell clipping"));
    v(lstm_state_clip_max, Attr("lstm_state_clip_max").Default("None").DefaultOnly().Doc("LSTM cell clipping"));
    v(lstm_state_clip_nan, Attr("lstm_state_clip_nan").Default("False").DefaultOnly().Doc("LSTM NaN clipping"));
    v(use_sequence_length,
      Attr("use_sequence_length").Default("False").DefaultOnly().Doc("per-sample lengths (not in weft)"));
  }
  /// Gates per cell: 4 (lstm), 3 (gru), 1 (rnn_relu, rnn_tanh).
  int64_t Gates() const { return mode == RnnMode::kLstm ? 4 : mode == RnnMode::kGru ? 3 : 1; }
  int64_t Directions() const { return bidirectional ? 2 : 1; }
  /// Visible outputs: output, then state (and state_cell for lstm) when state_outputs.
  int64_t NumVisibleOutputs() const { return state_outputs ? (mode == RnnMode::kLstm ? 3 : 2) : 1; }
};

/// The sizes of one RNN call and the offsets of its parameters and of its reserve (all in
/// elements). Built by RnnGeometry::Make; pure arithmetic, no allocation beyond itself.
struct RnnGeometry {
  int64_t t = 0, n = 0, input = 0, h = 0, layers = 1, dirs = 1, gates = 1;
  RnnMode mode = RnnMode::kLstm;
  bool dropout = false;  // p > 0: the reserve keeps the masks of layers 2..L

  int64_t gh() const { return gates * h; }
  int64_t dh() const { return dirs * h; }
  /// Input width of layer l.
  int64_t LayerInput(int64_t l) const { return l == 0 ? input : dh(); }
  /// Elements of the flat parameter vector (MXNet's GetRnnParamSize).
  int64_t ParamSize() const {
    int64_t s = 0;
    for (int64_t l = 0; l < layers; ++l) s += dirs * gh() * (LayerInput(l) + h + 2);
    return s;
  }
  /// Offset of Wx of (layer l, direction d); Wh follows it at + gh()·LayerInput(l).
  int64_t WeightOffset(int64_t l, int64_t d) const {
    int64_t o = 0;
    for (int64_t k = 0; k < l; ++k) o += dirs * gh() * (LayerInput(k) + h);
    return o + d * gh() * (LayerInput(l) + h);
  }
  /// Offset of bx of (layer l, direction d); bh follows it at + gh().
  int64_t BiasOffset(int64_t l, int64_t d) const {
    int64_t weights = 0;
    for (int64_t k = 0; k < layers; ++k) weights += dirs * gh() * (LayerInput(k) + h);
    return weights + (l * dirs + d) * 2 * gh();
  }

  // The reserve, per layer l: the layer's output (T, N, D·H); for l ≥ 1 with dropout the mask and
  // the masked input (T, N, D·H) each; then per direction the gate activations (T, N, G·H) and,
  // lstm, the cell states (T, N, H) or, gru, Wh_n·h + bh_n (T, N, H).
  int64_t Plane() const { return t * n * dh(); }
  int64_t DirectionBlock() const { return t * n * gh() + (gates > 1 ? t * n * h : 0); }
  int64_t LayerBlock(int64_t l) const { return Plane() * (l > 0 && dropout ? 3 : 1) + dirs * DirectionBlock(); }
  int64_t LayerOffset(int64_t l) const {
    int64_t o = 0;
    for (int64_t k = 0; k < l; ++k) o += LayerBlock(k);
    return o;
  }
  /// Offsets inside the reserve of layer l's output, mask, masked input, and direction d's gates
  /// and cell (or gru hn) block.
  int64_t OutOffset(int64_t l) const { return LayerOffset(l); }
  int64_t MaskOffset(int64_t l) const { return LayerOffset(l) + Plane(); }
  int64_t DroppedOffset(int64_t l) const { return LayerOffset(l) + 2 * Plane(); }
  int64_t GatesOffset(int64_t l, int64_t d) const {
    return LayerOffset(l) + Plane() * (l > 0 && dropout ? 3 : 1) + d * DirectionBlock();
  }
  int64_t CellOffset(int64_t l, int64_t d) const { return GatesOffset(l, d) + t * n * gh(); }
  /// Elements of the reserve output.
  int64_t ReserveSize() const { return LayerOffset(layers); }

  /// The geometry of attributes `p` on data (T, N, I).
  static RnnGeometry Make(const RNNParam& p, int64_t t, int64_t n, int64_t input) {
    RnnGeometry g;
    g.t = t, g.n = n, g.input = input, g.h = p.state_size, g.layers = p.num_layers;
    g.dirs = p.Directions(), g.gates = p.Gates(), g.mode = p.mode, g.dropout = p.p > 0.0f;
    return g;
  }
};

/// The RNN geometry of op `op` with attributes `p` on data x (T, N, I), checking the parameter
/// vector's length and the state shapes (L·D, N, H). Throws WEFT_ERR_INVALID_ARGUMENT naming the
/// input at fault and the expected shape, or for data without time steps.
inline RnnGeometry RnnGeometryOf(std::string_view op, const RNNParam& p, std::span<const int64_t> x,
                                 std::span<const int64_t> params, std::span<const int64_t> state) {
  if (x.size() != 3) OpError(WEFT_ERR_INVALID_ARGUMENT, op, "data " + ShapeText(x) + " must be (T, N, input size)");
  if (x[0] < 1) OpError(WEFT_ERR_INVALID_ARGUMENT, op, "data " + ShapeText(x) + " has no time steps (T = 0)");
  const RnnGeometry g = RnnGeometry::Make(p, x[0], x[1], x[2]);
  if (ShapeSize(params) != g.ParamSize() || params.size() != 1)
    OpError(WEFT_ERR_INVALID_ARGUMENT, op,
            "parameters " + ShapeText(params) + " must be (" + std::to_string(g.ParamSize()) + ",) for data " +
                ShapeText(x) + " with these attributes");
  const Tuple want = {g.layers * g.dirs, g.n, g.h};
  if (!std::equal(state.begin(), state.end(), want.begin(), want.end()))
    OpError(WEFT_ERR_INVALID_ARGUMENT, op, "state " + ShapeText(state) + " must be " + FormatTuple(want));
  return g;
}

}  // namespace weft::sdk
