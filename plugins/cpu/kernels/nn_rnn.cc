// RNN / _backward_RNN: MXNet's fused recurrent layer (rnn_relu, rnn_tanh, lstm, gru; stacked,
// bidirectional, dropout between layers) in float32 and float64. Layouts are sdk::RnnGeometry's
// (weft/sdk/ops/rnn.hpp): MXNet's flat parameters and the hidden `reserve` output, which keeps
// each layer's output, gate activations and cell states for the backward.
//
// Per layer and direction the input half of every gate is one GEMM over all time steps
// (T·N, I) × (I, G·H); each step then adds h_{t−1} · Whᵀ (one GEMM of N rows) and applies the
// cell. The backward walks the steps in reverse order of the forward (backpropagation through
// time), one GEMM per step for the recurrent gradient, then the input-weight gradient and the
// input's gradient as GEMMs over all steps. Dropout (p > 0, training) multiplies the input of
// layers 2..L by a mask drawn like Dropout's (UniformAt of the call seed), kept in the reserve.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "nn_common.h"
#include "tensor_util.h"
#include "weft/sdk/ops/rnn.hpp"

namespace weft::cpu {
namespace {

using tensor::DispatchFloat;
using tensor::kFloatMask;

using sdk::RnnGeometry;
using sdk::RnnMode;

template <typename T>
T Sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

// Pointers of one call (forward inputs and the reserve); cx is null but for lstm.
template <typename T>
struct RnnData {
  const T *x = nullptr, *w = nullptr, *hx = nullptr, *cx = nullptr;
  T* reserve = nullptr;
};

// The state slot (layer l, direction d) of a (L·D, N, H) array.
inline int64_t Slot(const RnnGeometry& g, int64_t l, int64_t d) { return (l * g.dirs + d) * g.n * g.h; }
// Time index of step s of direction d (the reverse direction runs from T − 1 down to 0).
inline int64_t TimeOf(const RnnGeometry& g, int64_t d, int64_t s) { return d == 0 ? s : g.t - 1 - s; }

// h_{t−1} of step s: the initial state for the first step, else the previous step's output
// (rows of D·H elements, this direction's H columns).
template <typename T>
std::pair<const T*, int64_t> PrevHidden(const RnnGeometry& g, const RnnData<T>& a, int64_t l, int64_t d, int64_t s) {
  if (s == 0) return {a.hx + Slot(g, l, d), g.h};
  const int64_t tp = TimeOf(g, d, s - 1);
  return {a.reserve + g.OutOffset(l) + tp * g.n * g.dh() + d * g.h, g.dh()};
}
template <typename T>
const T* PrevCell(const RnnGeometry& g, const RnnData<T>& a, int64_t l, int64_t d, int64_t s) {
  if (g.mode != RnnMode::kLstm) return nullptr;
  if (s == 0) return a.cx + Slot(g, l, d);
  return a.reserve + g.CellOffset(l, d) + TimeOf(g, d, s - 1) * g.n * g.h;
}

// One step of the cell for N rows: `gates` holds x·Wxᵀ (G·H per row) and receives the gate
// activations; hh = h_{t−1}·Whᵀ; `cell` receives c_t (lstm) or Wh_n·h + bh_n (gru); h_t goes to
// hout (rows of ldo elements).
template <typename T>
void CellStep(const RnnGeometry& g, T* gates, const T* hh, const T* bx, const T* bh, const T* hprev, int64_t ldh,
              const T* cprev, T* cell, T* hout, int64_t ldo) {
  const int64_t H = g.h, GH = g.gh();
  for (int64_t n = 0; n < g.n; ++n) {
    T* a = gates + n * GH;
    const T* r = hh + n * GH;
    for (int64_t j = 0; j < H; ++j) {
      auto pre = [&](int64_t k) { return a[k * H + j] + bx[k * H + j] + r[k * H + j] + bh[k * H + j]; };
      T h;
      if (g.mode == RnnMode::kLstm) {
        const T i = Sigmoid(pre(0)), f = Sigmoid(pre(1)), c = std::tanh(pre(2)), o = Sigmoid(pre(3));
        const T ct = f * cprev[n * H + j] + i * c;
        a[j] = i, a[H + j] = f, a[2 * H + j] = c, a[3 * H + j] = o;
        cell[n * H + j] = ct;
        h = o * std::tanh(ct);
      } else if (g.mode == RnnMode::kGru) {
        const T rg = Sigmoid(pre(0)), z = Sigmoid(pre(1));
        const T hn = r[2 * H + j] + bh[2 * H + j];
        const T nn = std::tanh(a[2 * H + j] + bx[2 * H + j] + rg * hn);
        a[j] = rg, a[H + j] = z, a[2 * H + j] = nn;
        cell[n * H + j] = hn;
        h = (T(1) - z) * nn + z * hprev[n * ldh + j];
      } else {
        const T v = pre(0);
        h = g.mode == RnnMode::kRnnTanh ? std::tanh(v) : std::max(v, T(0));
        a[j] = h;
      }
      hout[n * ldo + j] = h;
    }
  }
}

// Layer l, both directions, on input xin (T·N, I_l); `hh` is N·G·H scratch.
template <typename T>
void LayerForward(const RnnGeometry& g, const RnnData<T>& a, int64_t l, const T* xin, T* hh) {
  const int64_t I = g.LayerInput(l), GH = g.gh(), NH = g.n * g.h;
  T* out = a.reserve + g.OutOffset(l);
  for (int64_t d = 0; d < g.dirs; ++d) {
    const T* wx = a.w + g.WeightOffset(l, d);
    const T* wh = wx + GH * I;
    const T* bx = a.w + g.BiasOffset(l, d);
    T* gates = a.reserve + g.GatesOffset(l, d);
    T* cell = a.reserve + g.CellOffset(l, d);
    Gemm<T>(false, true, g.t * g.n, GH, I, T(1), xin, I, wx, I, T(0), gates, GH);
    for (int64_t s = 0; s < g.t; ++s) {
      const int64_t t = TimeOf(g, d, s);
      const auto [hprev, ldh] = PrevHidden(g, a, l, d, s);
      Gemm<T>(false, true, g.n, GH, g.h, T(1), hprev, ldh, wh, g.h, T(0), hh, GH);
      CellStep(g, gates + t * g.n * GH, hh, bx, bx + GH, hprev, ldh, PrevCell(g, a, l, d, s), cell + t * NH,
               out + t * g.n * g.dh() + d * g.h, g.dh());
    }
  }
}

// The input of layer l ≥ 1: the previous layer's output, masked in training when p > 0.
template <typename T>
const T* LayerInput(const RnnGeometry& g, const RnnData<T>& a, int64_t l, float p, bool train, uint64_t seed) {
  if (l == 0) return a.x;
  const T* prev = a.reserve + g.OutOffset(l - 1);
  if (!g.dropout) return prev;
  T* mask = a.reserve + g.MaskOffset(l);
  T* dropped = a.reserve + g.DroppedOffset(l);
  const float keep = 1.0f - p;
  const T scale = keep > 0.0f ? T(1) / T(keep) : T(0);
  for (int64_t i = 0, n = g.Plane(); i < n; ++i) {
    // The index is unique within the reserve, so each layer draws its own mask.
    const T m = !train ? T(1) : UniformAt(seed, static_cast<uint64_t>(g.MaskOffset(l) + i)) < keep ? scale : T(0);
    mask[i] = m;
    dropped[i] = prev[i] * m;
  }
  return dropped;
}

// Final state (or cell) of every layer and direction into `dst` (L·D, N, H) under req.
template <typename T>
void StoreFinalStates(const RnnGeometry& g, const T* reserve, bool cell, int32_t req, T* dst) {
  if (req == WEFT_REQ_NULL || dst == nullptr) return;
  sdk::WithReq(req, [&](auto assign) {
    for (int64_t l = 0; l < g.layers; ++l)
      for (int64_t d = 0; d < g.dirs; ++d) {
        const int64_t t = TimeOf(g, d, g.t - 1);
        const T* src =
            cell ? reserve + g.CellOffset(l, d) + t * g.n * g.h : reserve + g.OutOffset(l) + t * g.n * g.dh() + d * g.h;
        const int64_t ld = cell ? g.h : g.dh();
        T* o = dst + Slot(g, l, d);
        for (int64_t n = 0; n < g.n; ++n)
          for (int64_t j = 0; j < g.h; ++j) assign(o[n * g.h + j], src[n * ld + j]);
      }
  });
}

// Reads the attributes and checks the shapes of data, parameters and states.
struct RnnConfig {
  sdk::RNNParam p;
  RnnGeometry g;
  bool lstm = false;
  int num_in = 3, num_out = 3;  // forward inputs (data, parameters, state[, state_cell]) and outputs

  RnnConfig(const KernelSetup& s, const std::vector<TensorDesc>& in) {
    p = s.Params<sdk::RNNParam>();
    lstm = p.mode == RnnMode::kLstm;
    num_in = num_out = lstm ? 4 : 3;
    if (in.size() < static_cast<size_t>(num_in)) Invalid(s, "expects data, parameters and state(s)");
    g = sdk::RnnGeometryOf(s.op_name, p, in[0].shape, in[1].shape, in[2].shape);
    if (lstm && in[3].shape != in[2].shape) Invalid(s, "state_cell " + ShapeString(in[3]) + " must match state");
    RequireFloatDType(s);
  }
};

class RnnForward {
 public:
  explicit RnnForward(const KernelSetup& s) : cfg_(s, s.inputs) {
    s.ExpectCounts(cfg_.num_in, cfg_.num_out);
    if (s.outputs.back().size() != cfg_.g.ReserveSize()) Invalid(s, "reserve output has the wrong size");
    dtype_ = s.inputs[0].dtype;
  }
  // Scratch for h·Whᵀ, and a reserve for calls that do not want the reserve output.
  uint64_t WorkspaceBytes() const {
    return static_cast<uint64_t>(cfg_.g.n * cfg_.g.gh() + cfg_.g.ReserveSize()) * sdk::ElementSize(dtype_);
  }
  void Compute(const KernelCall& c) const {
    DispatchFloat("RNN", dtype_, [&](auto tag) { Run<typename decltype(tag)::type>(c); });
  }

 private:
  template <typename T>
  void Run(const KernelCall& c) const {
    const RnnGeometry& g = cfg_.g;
    T* ws = c.Workspace<T>(static_cast<size_t>(g.n * g.gh() + g.ReserveSize()));
    RnnData<T> a;
    a.x = c.inputs[0].data<T>(), a.w = c.inputs[1].data<T>(), a.hx = c.inputs[2].data<T>();
    if (cfg_.lstm) a.cx = c.inputs[3].data<T>();
    const size_t res = c.outputs.size() - 1;
    T* reserve_out = static_cast<T*>(c.outputs[res].raw());
    // The reserve is computed in place when written; otherwise (not wanted, or add-to) in scratch.
    const bool direct =
        (c.req[res] == WEFT_REQ_WRITE || c.req[res] == WEFT_REQ_WRITE_INPLACE) && reserve_out != nullptr;
    a.reserve = direct ? reserve_out : ws + g.n * g.gh();
    for (int64_t l = 0; l < g.layers; ++l) LayerForward(g, a, l, LayerInput(g, a, l, cfg_.p.p, c.is_train, c.seed), ws);
    if (c.req[0] != WEFT_REQ_NULL)
      sdk::StoreReq(c.req[0], c.outputs[0].data<T>(), a.reserve + g.OutOffset(g.layers - 1), g.Plane());
    StoreFinalStates(g, a.reserve, false, c.req[1], static_cast<T*>(c.outputs[1].raw()));
    if (cfg_.lstm) StoreFinalStates(g, a.reserve, true, c.req[2], static_cast<T*>(c.outputs[2].raw()));
    if (!direct && c.req[res] != WEFT_REQ_NULL) sdk::StoreReq(c.req[res], reserve_out, a.reserve, g.ReserveSize());
  }

  RnnConfig cfg_;
  int32_t dtype_ = WEFT_DTYPE_FLOAT32;
};

// Gradient buffers of one backward call, carved from the workspace.
template <typename T>
struct RnnGrads {
  T *dw, *dhx, *dcx;    // the parameters' and initial states' gradients (accumulated, then stored)
  T *dcur, *dnext;      // d(layer output) and d(layer input), (T·N, max(I, D·H)) each
  T *dgx, *dgh;         // pre-activation gate gradients of all steps (dgh: gru's recurrent half)
  T *dh, *dh_alt, *dc;  // d h_t carried between steps (two buffers), d c_t
  const T *dhy, *dcy;   // out-grads of the final states (null = 0)
};

// The elementwise half of one backward step: pre-activation gradients of step t into dgx (and
// dgh), dc updated to d c_{t−1}, gru's direct term z ⊙ dh into dh_direct. `dout` rows hold
// d output (D·H), this direction's columns.
template <typename T>
void CellStepBackward(const RnnGeometry& g, const T* gates, const T* cell, const T* cprev, const T* hprev, int64_t ldh,
                      const T* dout, const T* dh_next, T* dc, T* dgx, T* dgh, T* dh_direct) {
  const int64_t H = g.h, GH = g.gh();
  for (int64_t n = 0; n < g.n; ++n) {
    const T* a = gates + n * GH;
    T* gx = dgx + n * GH;
    T* gh = dgh + n * GH;
    for (int64_t j = 0; j < H; ++j) {
      const T dh = dout[n * g.dh() + j] + dh_next[n * H + j];
      if (g.mode == RnnMode::kLstm) {
        const T i = a[j], f = a[H + j], cg = a[2 * H + j], o = a[3 * H + j];
        const T tc = std::tanh(cell[n * H + j]);
        const T dct = dc[n * H + j] + dh * o * (T(1) - tc * tc);
        gx[j] = dct * cg * i * (T(1) - i);
        gx[H + j] = dct * cprev[n * H + j] * f * (T(1) - f);
        gx[2 * H + j] = dct * i * (T(1) - cg * cg);
        gx[3 * H + j] = dh * tc * o * (T(1) - o);
        dc[n * H + j] = dct * f;
      } else if (g.mode == RnnMode::kGru) {
        const T r = a[j], z = a[H + j], nn = a[2 * H + j], hn = cell[n * H + j];
        const T dpn = dh * (T(1) - z) * (T(1) - nn * nn);
        gx[j] = gh[j] = dpn * hn * r * (T(1) - r);
        gx[H + j] = gh[H + j] = dh * (hprev[n * ldh + j] - nn) * z * (T(1) - z);
        gx[2 * H + j] = dpn;
        gh[2 * H + j] = dpn * r;
        dh_direct[n * H + j] = dh * z;
      } else {
        const T h = a[j];
        gx[j] = g.mode == RnnMode::kRnnTanh ? dh * (T(1) - h * h) : (h > T(0) ? dh : T(0));
      }
    }
  }
}

// Backward of layer l, direction d: accumulates dw's blocks, writes the initial states' gradients
// and adds this direction's part of d(layer input) to b.dnext.
template <typename T>
void DirectionBackward(const RnnGeometry& g, const RnnData<T>& a, RnnGrads<T>& b, int64_t l, int64_t d, const T* xin) {
  const int64_t I = g.LayerInput(l), GH = g.gh(), NH = g.n * g.h, TN = g.t * g.n;
  const bool gru = g.mode == RnnMode::kGru;
  const T* wx = a.w + g.WeightOffset(l, d);
  const T* wh = wx + GH * I;
  T* dwx = b.dw + g.WeightOffset(l, d);
  T* dwh = dwx + GH * I;
  T* dbx = b.dw + g.BiasOffset(l, d);
  const T* gates = a.reserve + g.GatesOffset(l, d);
  const T* cell = a.reserve + g.CellOffset(l, d);
  T* dgh_all = gru ? b.dgh : b.dgx;
  T *dh = b.dh, *dh_alt = b.dh_alt;
  const int64_t slot = Slot(g, l, d);
  for (int64_t i = 0; i < NH; ++i) {
    dh[i] = b.dhy ? b.dhy[slot + i] : T(0);
    b.dc[i] = b.dcy && g.mode == RnnMode::kLstm ? b.dcy[slot + i] : T(0);
  }
  for (int64_t s = g.t - 1; s >= 0; --s) {
    const int64_t t = TimeOf(g, d, s);
    const auto [hprev, ldh] = PrevHidden(g, a, l, d, s);
    T* dgx = b.dgx + t * g.n * GH;
    T* dgh = dgh_all + t * g.n * GH;
    CellStepBackward(g, gates + t * g.n * GH, cell + t * NH, PrevCell(g, a, l, d, s), hprev, ldh,
                     b.dcur + t * g.n * g.dh() + d * g.h, dh, b.dc, dgx, dgh, dh_alt);
    // d h_{t−1} = dgh · Wh (+ z ⊙ dh for gru, already in dh_alt); dWh += dghᵀ · h_{t−1}.
    Gemm<T>(false, false, g.n, g.h, GH, T(1), dgh, GH, wh, g.h, gru ? T(1) : T(0), dh_alt, g.h);
    Gemm<T>(true, false, GH, g.h, g.n, T(1), dgh, GH, hprev, ldh, T(1), dwh, g.h);
    std::swap(dh, dh_alt);
  }
  std::copy(dh, dh + NH, b.dhx + slot);
  if (g.mode == RnnMode::kLstm) std::copy(b.dc, b.dc + NH, b.dcx + slot);
  Gemm<T>(true, false, GH, I, TN, T(1), b.dgx, GH, xin, I, T(1), dwx, I);
  for (int64_t r = 0; r < TN; ++r)
    for (int64_t k = 0; k < GH; ++k) {
      dbx[k] += b.dgx[r * GH + k];
      dbx[GH + k] += dgh_all[r * GH + k];
    }
  Gemm<T>(false, false, TN, I, GH, T(1), b.dgx, GH, wx, I, d == 0 ? T(0) : T(1), b.dnext, I);
}

class RnnBackward {
 public:
  // Inputs: out-grads of (output, state, [state_cell,] reserve), the forward inputs, the forward
  // outputs. Outputs: gradients of data, parameters, state[, state_cell].
  explicit RnnBackward(const KernelSetup& s) : cfg_(s, Forward(s)) {
    s.ExpectCounts(2 * cfg_.num_out + cfg_.num_in, cfg_.num_in);
    dtype_ = s.outputs[0].dtype;
  }
  uint64_t WorkspaceBytes() const { return static_cast<uint64_t>(WorkspaceElements()) * sdk::ElementSize(dtype_); }
  void Compute(const KernelCall& c) const {
    DispatchFloat("_backward_RNN", dtype_, [&](auto tag) { Run<typename decltype(tag)::type>(c); });
  }

 private:
  static std::vector<TensorDesc> Forward(const KernelSetup& s) {
    const bool lstm = s.attrs.GetString("mode", "") == "lstm";
    const size_t no = lstm ? 4 : 3;
    if (s.inputs.size() < no) Invalid(s, "expects the out-grads, inputs and outputs of RNN");
    return {s.inputs.begin() + static_cast<std::ptrdiff_t>(no), s.inputs.end()};
  }
  int64_t Wide() const { return g().t * g().n * std::max(g().input, g().dh()); }
  int64_t WorkspaceElements() const {
    const int64_t states = g().layers * g().dirs * g().n * g().h;
    return g().ParamSize() + 2 * states + 2 * Wide() + 2 * g().t * g().n * g().gh() + 3 * g().n * g().h;
  }
  const RnnGeometry& g() const { return cfg_.g; }

  template <typename T>
  void Run(const KernelCall& c) const {
    const RnnGeometry& G = g();
    const size_t no = static_cast<size_t>(cfg_.num_out), in0 = no, out0 = no + static_cast<size_t>(cfg_.num_in);
    RnnData<T> a;
    a.x = c.inputs[in0].data<T>(), a.w = c.inputs[in0 + 1].data<T>(), a.hx = c.inputs[in0 + 2].data<T>();
    if (cfg_.lstm) a.cx = c.inputs[in0 + 3].data<T>();
    a.reserve = c.inputs[out0 + no - 1].data<T>();
    T* ws = c.Workspace<T>(static_cast<size_t>(WorkspaceElements()));
    std::fill(ws, ws + WorkspaceElements(), T(0));
    const int64_t states = G.layers * G.dirs * G.n * G.h;
    RnnGrads<T> b;
    b.dw = ws, b.dhx = b.dw + G.ParamSize(), b.dcx = b.dhx + states, b.dcur = b.dcx + states;
    b.dnext = b.dcur + Wide(), b.dgx = b.dnext + Wide(), b.dgh = b.dgx + G.t * G.n * G.gh();
    b.dh = b.dgh + G.t * G.n * G.gh(), b.dh_alt = b.dh + G.n * G.h, b.dc = b.dh_alt + G.n * G.h;
    b.dhy = static_cast<const T*>(c.inputs[1].raw());
    b.dcy = cfg_.lstm ? static_cast<const T*>(c.inputs[2].raw()) : nullptr;
    std::copy_n(c.inputs[0].data<T>(), G.Plane(), b.dcur);
    for (int64_t l = G.layers - 1; l >= 0; --l) {
      const T* xin = l == 0 ? a.x : G.dropout ? a.reserve + G.DroppedOffset(l) : a.reserve + G.OutOffset(l - 1);
      for (int64_t d = 0; d < G.dirs; ++d) DirectionBackward(G, a, b, l, d, xin);
      if (l > 0 && G.dropout) {
        const T* mask = a.reserve + G.MaskOffset(l);
        for (int64_t i = 0; i < G.Plane(); ++i) b.dnext[i] *= mask[i];
      }
      std::swap(b.dcur, b.dnext);  // d(input of l) is d(output of l − 1)
    }
    sdk::StoreReq(c.req[0], static_cast<T*>(c.outputs[0].raw()), b.dcur, G.t * G.n * G.input);
    sdk::StoreReq(c.req[1], static_cast<T*>(c.outputs[1].raw()), b.dw, G.ParamSize());
    sdk::StoreReq(c.req[2], static_cast<T*>(c.outputs[2].raw()), b.dhx, states);
    if (cfg_.lstm) sdk::StoreReq(c.req[3], static_cast<T*>(c.outputs[3].raw()), b.dcx, states);
  }

  RnnConfig cfg_;
  int32_t dtype_ = WEFT_DTYPE_FLOAT32;
};

}  // namespace

void RegisterRNN(KernelTable& t) {
  t.Add<RnnForward>("RNN", kFloatMask);
  t.Add<RnnBackward>("_backward_RNN", kFloatMask);
}

}  // namespace weft::cpu
