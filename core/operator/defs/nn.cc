// The nn family (docs/adding-an-op.md, "Op families"): FullyConnected, Convolution, Deconvolution,
// Pooling, Activation, LeakyReLU, Dropout, RNN (normalisation layers are in defs/norm.cc). Shape rules are MXNet 1.9's
// (src/operator/nn/*.cc), checked against MXNet 1.9.1.
#include <algorithm>
#include <cmath>

#include "operator/defs/builtin.h"
#include "operator/op_util.h"
#include "weft/sdk/ops/activation.hpp"
#include "weft/sdk/ops/convolution.hpp"
#include "weft/sdk/ops/dropout.hpp"
#include "weft/sdk/ops/fully_connected.hpp"
#include "weft/sdk/ops/pooling.hpp"
#include "weft/sdk/ops/rnn.hpp"

namespace weft::opdef {
namespace {

// Inputs of a layer with an optional bias.
std::vector<std::string> DataWeightBias(bool no_bias) {
  return no_bias ? std::vector<std::string>{"data", "weight"} : std::vector<std::string>{"data", "weight", "bias"};
}

// ---- FullyConnected -------------------------------------------------------------------------------

OpDef FullyConnected() {
  OpDef d;
  d.name = "FullyConnected";
  d.description = "out = data · weightᵀ + bias; weight is (num_hidden, K).";
  DeclareParams<sdk::FullyConnectedParam>(d);
  d.list_inputs = [](const AttrMap& a) {
    return DataWeightBias(sdk::ParseParams<sdk::FullyConnectedParam>(a).no_bias);
  };
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::FullyConnectedParam>(d, [](ShapeIO& io, const sdk::FullyConnectedParam& p) {
    const int64_t nh = p.num_hidden;
    const bool flatten = p.flatten;
    if (!io.in(0) || io.in(0)->ndim() == 0) return;  // MXNet needs data to infer anything
    Shape data = *io.in(0);
    const size_t nd = data.ndim();
    const int64_t k = flatten ? ProdOrUnknown(data, 1, nd) : data[nd - 1];
    io.AssignIn(1, Shape{nh, k});
    if (io.num_in() == 3) {
      // MXNet also accepts a (num_hidden, 1) bias.
      if (io.in(2) && io.in(2)->ndim() == 2) {
        io.AssignIn(2, Shape{nh, 1});
      } else {
        io.AssignIn(2, Shape{nh});
      }
    }
    Shape out = flatten ? Shape{data[0], nh} : data;
    if (!flatten) out[nd - 1] = nh;
    io.AssignOut(0, out);
    // The batch size flows back from the output.
    if (io.out(0)->ndim() > 0 && (*io.out(0))[0] >= 0) {
      data[0] = (*io.out(0))[0];
      io.AssignIn(0, data);
    }
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_FullyConnected";
  d.backward_uses = kUsesInputs;
  return d;
}

// ---- Convolution ----------------------------------------------------------------------------------

void ConvShape(ShapeIO& io, const sdk::ConvolutionParam& p);

// Input 'data' must have 2 + the kernel's axes; its channels must divide by num_group.
void CheckConvData(ShapeIO& io, const Shape& data, size_t ns, int64_t ng) {
  if (data.ndim() != ns + 2) {
    io.Fail(fmt::format("input 'data' must be {}-d ({}) for a {}-d kernel, got shape {}", ns + 2,
                        sdk::ConvLayoutFor(ns), ns, data.ToString()));
  }
  if (data[1] >= 0 && data[1] % ng != 0)
    io.Fail(fmt::format("input channels ({}) must divide by num_group ({})", data[1], ng));
}

OpDef Convolution() {
  OpDef d;
  d.name = "Convolution";
  d.description =
      "N-d convolution (1-3 spatial axes); weight is (num_filter, C / num_group, k...). Kernels run "
      "channels-first layouts; channels-last ones (NWC, NHWC, NDHWC) infer shapes only.";
  DeclareParams<sdk::ConvolutionParam>(d);
  d.list_inputs = [](const AttrMap& a) { return DataWeightBias(sdk::ParseParams<sdk::ConvolutionParam>(a).no_bias); };
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::ConvolutionParam>(d, [](ShapeIO& io, const sdk::ConvolutionParam& p) { ConvShape(io, p); });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_Convolution";
  d.backward_uses = kUsesInputs;
  d.resources = kResourceTempSpace;
  return d;
}

// ---- _sg_conv (the executor's fused inference convolution) ----------------------------------------

std::vector<std::string> SgConvInputs(const AttrMap& a) {
  const auto p = sdk::ParseParams<sdk::SgConvParam>(a);
  std::vector<std::string> in = DataWeightBias(p.conv.no_bias);
  if (p.with_bn) in.insert(in.end(), {"gamma", "beta"});
  if (p.with_dw) {
    in.emplace_back("dw_weight");
    if (!p.dw_no_bias) in.emplace_back("dw_bias");
    if (p.dw_with_bn) in.insert(in.end(), {"dw_gamma", "dw_beta"});
  }
  if (p.with_sum) in.emplace_back("sum");
  return in;
}

// The shapes of a with_dw `_sg_conv`: a 1x1 convolution to num_filter channels, then the
// depthwise 3x3 one (pad 1, dw_stride) over them; data comes first (the executor makes these
// nodes from inferred graphs).
void SgConvDwShape(ShapeIO& io, const sdk::SgConvParam& p) {
  if (!io.in(0)) return;
  const Shape& data = *io.in(0);
  CheckConvData(io, data, 2, 1);
  const int64_t f = p.conv.num_filter;
  const Shape ch{f};
  io.AssignIn(1, Shape{f, data[1], 1, 1});
  size_t next = p.conv.no_bias ? 2 : 3, aux = 0;
  if (!p.conv.no_bias) io.AssignIn(2, ch);
  auto bn = [&] {
    io.AssignIn(next++, ch);
    io.AssignIn(next++, ch);
    io.AssignAux(aux++, ch);
    io.AssignAux(aux++, ch);
  };
  if (p.with_bn) bn();
  io.AssignIn(next++, Shape{f, 1, 3, 3});
  if (!p.dw_no_bias) io.AssignIn(next++, ch);
  if (p.dw_with_bn) bn();
  Shape out = data;
  out[1] = f;
  for (size_t i = 2; i < 4; ++i) out[i] = data[i] < 0 ? -1 : sdk::ConvOutExtent(data[i], 3, p.dw_stride, 1, 1);
  io.AssignOut(0, out);
}

OpDef SgConv() {
  OpDef d;
  d.name = "_sg_conv";
  d.description =
      "Fused inference convolution made by the executor's graph fusion (WEFT_GRAPH_FUSION): "
      "act2(act(BatchNorm(Convolution(data, weight, bias))) + sum), each stage optional; BatchNorm "
      "as BatchNorm with its moving statistics (aux states) and attributes.";
  d.list_inputs = SgConvInputs;
  d.list_outputs = Fixed({"output"});
  DeclareParams<sdk::SgConvParam>(d);
  d.list_aux = [](const AttrMap& a) {
    const auto p = sdk::ParseParams<sdk::SgConvParam>(a);
    std::vector<std::string> aux;
    if (p.with_bn) aux.insert(aux.end(), {"moving_mean", "moving_var"});
    if (p.with_dw && p.dw_with_bn) aux.insert(aux.end(), {"dw_moving_mean", "dw_moving_var"});
    return aux;
  };
  SetShapeFn<sdk::SgConvParam>(d, [](ShapeIO& io, const sdk::SgConvParam& p) {
    if (p.with_dw) return SgConvDwShape(io, p);
    ConvShape(io, p.conv);
    const Shape ch{p.conv.num_filter};
    size_t next = p.conv.no_bias ? 2 : 3;
    if (p.with_bn) {
      io.AssignIn(next++, ch);
      io.AssignIn(next++, ch);
      io.AssignAux(0, ch);
      io.AssignAux(1, ch);
    }
    if (p.with_sum && io.out(0)) io.AssignIn(next, *io.out(0));
  });
  // No gradient: the fusion runs only for binds without gradients.
  d.no_gradient_is_error = true;
  d.inplace = [](const AttrMap& a) {
    // The sum's memory may become the output: oneDNN's sum post-op adds to what dst holds.
    const size_t n = SgConvInputs(a).size();
    return sdk::ParseParams<sdk::SgConvParam>(a).with_sum
               ? std::vector<std::pair<int, int>>{{static_cast<int>(n - 1), 0}}
               : std::vector<std::pair<int, int>>{};
  };
  d.resources = kResourceTempSpace;
  return d;
}

// Convolution's shape rules (MXNet 1.9's ConvolutionShape), for it and _sg_conv.
void ConvShape(ShapeIO& io, const sdk::ConvolutionParam& p) {
  const size_t ns = p.kernel.size();
  if (!io.in(0)) return;
  // Channels-last layouts (MXNet's NWC, NHWC, NDHWC: data (N, spatial..., C), weight
  // (F, k..., C / num_group), output (N, spatial..., F)) are inferred in channels-first order.
  const bool last = sdk::IsChannelsLast(p.layout);
  auto first = [last](Shape s) {
    if (last && s.ndim() > 2) std::rotate(s.dims().begin() + 1, s.dims().end() - 1, s.dims().end());
    return s;
  };
  auto back = [last](Shape s) {
    if (last && s.ndim() > 2) std::rotate(s.dims().begin() + 1, s.dims().begin() + 2, s.dims().end());
    return s;
  };
  Shape data = first(*io.in(0));
  CheckConvData(io, data, ns, p.num_group);
  const int64_t c = data[1];
  Shape w = UnknownShape(ns + 2);
  w[0] = p.num_filter;
  w[1] = c >= 0 ? c / p.num_group : -1;
  for (size_t i = 0; i < ns; ++i) w[2 + i] = p.kernel[i];
  io.AssignIn(1, back(w));
  if (!p.no_bias && io.num_in() >= 3) io.AssignIn(2, Shape{p.num_filter});

  Shape out = UnknownShape(ns + 2);
  out[0] = data[0];
  out[1] = p.num_filter;
  for (size_t i = 0; i < ns; ++i) {
    const int64_t x = data[2 + i];
    if (x < 0) continue;
    if (!sdk::ConvKernelFits(x, p.kernel[i], p.dilate[i], p.pad[i])) {
      io.Fail(fmt::format("kernel {} (dilated {}) exceeds input 'data' {} padded by {} on axis {}",
                          sdk::FormatTuple(p.kernel), p.dilate[i] * (p.kernel[i] - 1) + 1, data.ToString(), p.pad[i],
                          2 + i));
    }
    out[2 + i] = sdk::ConvOutExtent(x, p.kernel[i], p.stride[i], p.dilate[i], p.pad[i]);
  }
  io.AssignOut(0, back(out));
  // MXNet (2-d only) fills the batch size, and height/width where the stride is 1, back from
  // a known output.
  if (ns == 2) {
    const Shape o = first(*io.out(0));
    data[0] = o[0];
    for (size_t i = 0; i < ns; ++i) {
      const int64_t dk = p.dilate[i] * (p.kernel[i] - 1) + 1;
      if (o[2 + i] >= 0 && p.stride[i] == 1) data[2 + i] = o[2 + i] + dk - 1 - 2 * p.pad[i];
    }
    io.AssignIn(0, back(data));
  }
}

// ---- Deconvolution --------------------------------------------------------------------------------

OpDef Deconvolution() {
  OpDef d;
  d.name = "Deconvolution";
  d.description =
      "Transposed convolution (the gradient of Convolution with respect to its data), 1-3 spatial axes, "
      "channels first; weight is (C, num_filter / num_group, k...); output extent "
      "stride·(in − 1) + dilate·(k − 1) + 1 − 2·pad + adj, or target_shape when given.";
  DeclareParams<sdk::DeconvolutionParam>(d);
  d.list_inputs = [](const AttrMap& a) { return DataWeightBias(sdk::ParseParams<sdk::DeconvolutionParam>(a).no_bias); };
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::DeconvolutionParam>(d, [](ShapeIO& io, const sdk::DeconvolutionParam& p) {
    const size_t ns = p.kernel.size();
    if (!io.in(0)) return;
    const Shape& data = *io.in(0);
    CheckConvData(io, data, ns, p.num_group);
    Shape w = UnknownShape(ns + 2);
    w[0] = data[1];
    w[1] = p.num_filter / p.num_group;
    for (size_t i = 0; i < ns; ++i) w[2 + i] = p.kernel[i];
    io.AssignIn(1, w);
    if (io.num_in() == 3) io.AssignIn(2, Shape{p.num_filter});
    const std::vector<int64_t> spatial(data.begin() + 2, data.end());
    std::pair<sdk::Tuple, sdk::Tuple> pad_adj;
    try {
      pad_adj = p.PadAdj(spatial);
    } catch (const sdk::Error& e) {
      io.Fail(e.what());
    }
    Shape out = UnknownShape(ns + 2);
    out[0] = data[0];
    out[1] = p.num_filter;
    for (size_t i = 0; i < ns; ++i) {
      if (spatial[i] < 0) continue;
      const int64_t o =
          sdk::DeconvOutExtent(spatial[i], p.kernel[i], p.stride[i], p.dilate[i], pad_adj.first[i], pad_adj.second[i]);
      if (o <= 0) io.Fail(fmt::format("input 'data' {} gives an empty output on spatial axis {}", data.ToString(), i));
      out[2 + i] = o;
    }
    io.AssignOut(0, out);
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_Deconvolution";
  d.backward_uses = kUsesInputs;
  d.resources = kResourceTempSpace;
  return d;
}

// ---- Pooling --------------------------------------------------------------------------------------

OpDef Pooling() {
  OpDef d;
  d.name = "Pooling";
  d.description = "Max/average/sum pooling over 1-3 spatial axes, channels-first layout.";
  DeclareParams<sdk::PoolingParam>(d);
  MarkInternal(d, {"data_format", "out_format"});  // the fusion pass's blocked layouts
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::PoolingParam>(d, [](ShapeIO& io, const sdk::PoolingParam& p) {
    if (!io.in(0)) return;
    const Shape& data = *io.in(0);
    if (data.ndim() < 3 || data.ndim() > 5) {
      io.Fail(fmt::format("input 'data' must be 3-d to 5-d (N, C, spatial...), got shape {}", data.ToString()));
    }
    Shape out = data;
    if (p.global_pool) {
      for (size_t i = 2; i < data.ndim(); ++i) out[i] = 1;
      io.AssignOut(0, out);
      return;
    }
    const sdk::Tuple& k = p.kernel;
    if (k.empty()) io.Fail("attribute 'kernel' is required unless global_pool is True");
    if (data.ndim() != k.size() + 2) {
      io.Fail(fmt::format("input 'data' must be {}-d for kernel {}, got shape {}", k.size() + 2, sdk::FormatTuple(k),
                          data.ToString()));
    }
    for (size_t i = 0; i < k.size(); ++i) {
      const int64_t x = data[2 + i];
      if (x < 0) continue;
      if (k[i] > x + 2 * p.pad[i]) {
        io.Fail(fmt::format("kernel {} exceeds input 'data' {} padded by {} on axis {}", sdk::FormatTuple(k),
                            data.ToString(), p.pad[i], 2 + i));
      }
      out[2 + i] = sdk::PoolOutExtent(x, k[i], p.stride[i], p.pad[i], p.pooling_convention);
    }
    io.AssignOut(0, out);
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_Pooling";
  d.backward_uses = kUsesInputs | kUsesOutputs;
  return d;
}

// ---- Activation, LeakyReLU ------------------------------------------------------------------------

OpDef Activation() {
  OpDef d;
  d.name = "Activation";
  d.description = "Element-wise activation: relu, sigmoid, tanh, softrelu (log(1 + exp(x))), softsign (x / (1 + |x|)).";
  DeclareParams<sdk::ActivationParam>(d);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, SameShapeAll);
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_Activation";
  d.backward_uses = kUsesInputs | kUsesOutputs;
  // As MXNet's ActivationGrad: relu, sigmoid, tanh and softrelu derive from the output alone.
  d.backward_uses_for = [](const AttrMap& a) {
    return sdk::ParseParams<sdk::ActivationParam>(a).OutputOnlyGradient() ? kUsesOutputs : kUsesInputs | kUsesOutputs;
  };
  d.inplace = InplacePairs({{0, 0}});
  return d;
}

OpDef LeakyReLU() {
  OpDef d;
  d.name = "LeakyReLU";
  d.description =
      "Leaky rectifiers: leaky (x > 0 ? x : slope·x), elu (slope·(exp(x) − 1) below 0), prelu (learned "
      "per-channel slope `gamma`), rrelu (random slope in [lower_bound, upper_bound] when training; "
      "the second output `mask` holds the slopes), selu, gelu.";
  DeclareParams<sdk::LeakyReLUParam>(d);
  d.list_inputs = [](const AttrMap& a) {
    return sdk::ParseParams<sdk::LeakyReLUParam>(a).act_type == sdk::LeakyType::kPrelu
               ? std::vector<std::string>{"data", "gamma"}
               : std::vector<std::string>{"data"};
  };
  d.list_outputs = [](const AttrMap& a) {
    return sdk::ParseParams<sdk::LeakyReLUParam>(a).act_type == sdk::LeakyType::kRrelu
               ? std::vector<std::string>{"output", "mask"}
               : std::vector<std::string>{"output"};
  };
  SetShapeFn(d, [](ShapeIO& io) {
    if (io.out(0) && !io.in(0)) io.AssignIn(0, *io.out(0));
    if (!io.in(0)) return;
    const Shape& data = *io.in(0);
    for (size_t i = 0; i < io.num_out(); ++i) io.AssignOut(i, data);
    if (io.num_in() == 2 && !io.in(1) && data.ndim() > 0) {
      // MXNet: one slope per channel (axis 1); a gamma of shape (1,) given by the user is kept.
      io.AssignIn(1, Shape{data.ndim() > 1 ? data[1] : data[0]});
    }
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_LeakyReLU";
  d.backward_uses = kUsesInputs | kUsesOutputs;
  // rrelu draws its slopes at random when training.
  d.resources = kResourceRandom;
  return d;
}

// ---- BatchNorm ------------------------------------------------------------------------------------

// ---- Dropout --------------------------------------------------------------------------------------

OpDef Dropout() {
  OpDef d;
  d.name = "Dropout";
  d.description =
      "In training, zeroes each element with probability p and scales the rest by 1/(1-p); the hidden "
      "mask output holds the per-element factor (0 or 1/(1-p)); with `axes` one factor is shared along "
      "those axes (the mask has extent 1 there). Identity otherwise.";
  DeclareParams<sdk::DropoutParam>(d);
  MarkInternal(d, {"data_format"});  // the fusion pass's blocked layouts
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output", "mask"});
  d.num_visible_outputs = [](const AttrMap&) { return 1; };
  // As MXNet's FInplaceOption: the output may take data's memory. Every kernel reads element i
  // before writing it, and the identity (not training) then copies nothing.
  d.inplace = InplacePairs({{0, 0}});
  SetShapeFn<sdk::DropoutParam>(d, [](ShapeIO& io, const sdk::DropoutParam& p) {
    if (io.out(0) && !io.in(0)) io.AssignIn(0, *io.out(0));
    if (!io.in(0)) return;
    io.AssignOut(0, *io.in(0));
    try {
      io.AssignOut(1, Shape(p.MaskShape(io.in(0)->dims())));
    } catch (const sdk::Error& e) {
      io.Fail(e.what());
    }
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_Dropout";
  d.backward_uses = kUsesOutputs;
  d.resources = kResourceRandom;
  return d;
}

// ---- LRN ------------------------------------------------------------------------------------------

// ---- RNN ------------------------------------------------------------------------------------------

// Inputs and outputs of the fused RNN: state_cell and the cell output for lstm only. The hidden
// output `reserve` (sdk::RnnGeometry) keeps what the backward needs; state and state_cell are
// always computed, visible when state_outputs.
std::vector<std::string> RnnInputs(const AttrMap& a) {
  const bool lstm = sdk::ParseParams<sdk::RNNParam>(a).mode == sdk::RnnMode::kLstm;
  return lstm ? std::vector<std::string>{"data", "parameters", "state", "state_cell"}
              : std::vector<std::string>{"data", "parameters", "state"};
}
std::vector<std::string> RnnOutputs(const AttrMap& a) {
  const bool lstm = sdk::ParseParams<sdk::RNNParam>(a).mode == sdk::RnnMode::kLstm;
  return lstm ? std::vector<std::string>{"output", "state_output", "statecell_output", "reserve"}
              : std::vector<std::string>{"output", "state_output", "reserve"};
}

OpDef RNN() {
  OpDef d;
  d.name = "RNN";
  d.description =
      "Fused multi-layer recurrent network (MXNet's cpu RNN): rnn_relu, rnn_tanh, lstm (gates i, f, g, o) or gru "
      "(r, z, n, linear before reset), optionally bidirectional, over time-major data (T, N, I) with one flat "
      "parameter vector (every layer's and direction's Wx, Wh, then every bx, bh).";
  DeclareParams<sdk::RNNParam>(d);
  d.list_inputs = RnnInputs;
  d.list_outputs = RnnOutputs;
  d.num_visible_outputs = [](const AttrMap& a) {
    return static_cast<int>(sdk::ParseParams<sdk::RNNParam>(a).NumVisibleOutputs());
  };
  SetShapeFn<sdk::RNNParam>(d, [](ShapeIO& io, const sdk::RNNParam& p) {
    if (!io.in(0)) return;  // as MXNet, everything follows from the data's shape
    const Shape& x = *io.in(0);
    if (x.ndim() != 3) io.Fail(fmt::format("input 'data' must be (T, N, input size), got shape {}", x.ToString()));
    if (x[0] < 0 || x[1] < 0 || x[2] < 0) return;
    const sdk::RnnGeometry g = sdk::RnnGeometry::Make(p, x[0], x[1], x[2]);
    io.AssignIn(1, Shape{g.ParamSize()});
    const Shape state{g.layers * g.dirs, g.n, g.h};
    for (size_t i = 2; i < io.num_in(); ++i) io.AssignIn(i, state);
    io.AssignOut(0, Shape{g.t, g.n, g.dh()});
    for (size_t i = 1; i + 1 < io.num_out(); ++i) io.AssignOut(i, state);
    io.AssignOut(io.num_out() - 1, Shape{g.ReserveSize()});
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_RNN";
  d.backward_uses = kUsesInputs | kUsesOutputs;
  d.resources = kResourceTempSpace | kResourceRandom;
  return d;
}

}  // namespace

void RegisterNnOps(OpRegistry& r) {
  r.Register(FullyConnected());
  r.Register(Convolution());
  r.Register(SgConv());
  r.Register(Pooling());
  r.Register(Activation());
  r.Register(LeakyReLU());
  r.Register(Dropout());
  r.Register(Deconvolution());
  r.Register(RNN());
}

}  // namespace weft::opdef
