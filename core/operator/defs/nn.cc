// Neural-network layers: FullyConnected, Convolution, Deconvolution, Pooling, Activation, LeakyReLU,
// BatchNorm, Dropout, LRN. Shape rules are MXNet 1.9's (src/operator/nn/*.cc), checked against MXNet 1.9.1.
#include <cmath>

#include "operator/defs/builtin.h"
#include "operator/op_util.h"

namespace weft::opdef {
namespace {

std::vector<int64_t> TupleOr(const AttrMap& a, std::string_view name, size_t n, int64_t fill) {
  std::vector<int64_t> t = a.GetTuple(name, {});
  if (t.empty()) t.assign(n, fill);
  return t;
}

// ---- FullyConnected -------------------------------------------------------------------------------

OpDef FullyConnected() {
  OpDef d;
  d.name = "FullyConnected";
  d.description = "out = data · weightᵀ + bias; weight is (num_hidden, K).";
  d.attrs = {Req("num_hidden", "int", "number of output units"), Opt("no_bias", "bool", "False", "drop the bias input"),
             Opt("flatten", "bool", "True",
                 "collapse data to (N, K) over all but the first axis; "
                 "else apply to the last axis")};
  d.list_inputs = [](const AttrMap& a) {
    return a.GetBool("no_bias", false) ? std::vector<std::string>{"data", "weight"}
                                       : std::vector<std::string>{"data", "weight", "bias"};
  };
  d.list_outputs = Fixed({"output"});
  d.validate = [](const AttrMap& a) {
    WEFT_CHECK(a.GetInt("num_hidden") > 0, "num_hidden must be positive, got {}", a.GetInt("num_hidden"));
  };
  SetShapeFn(d, [](ShapeIO& io) {
    const int64_t nh = io.attrs().GetInt("num_hidden");
    const bool flatten = io.attrs().GetBool("flatten");
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

struct ConvGeometry {
  std::vector<int64_t> kernel, stride, dilate, pad;
};

ConvGeometry ReadConv(const AttrMap& a) {
  ConvGeometry g;
  g.kernel = a.GetTuple("kernel");
  g.stride = TupleOr(a, "stride", g.kernel.size(), 1);
  g.dilate = TupleOr(a, "dilate", g.kernel.size(), 1);
  g.pad = TupleOr(a, "pad", g.kernel.size(), 0);
  return g;
}

const char* ConvLayoutFor(size_t spatial) { return spatial == 1 ? "NCW" : spatial == 2 ? "NCHW" : "NCDHW"; }

OpDef Convolution() {
  OpDef d;
  d.name = "Convolution";
  d.description =
      "N-d convolution (1-3 spatial axes), channels-first layout; weight is "
      "(num_filter, C / num_group, k...).";
  d.attrs = {Req("kernel", "shape", "kernel size, e.g. (3, 3)"),
             Opt("stride", "shape", "()", "stride per spatial axis (default 1)"),
             Opt("dilate", "shape", "()", "dilation per spatial axis (default 1)"),
             Opt("pad", "shape", "()", "zero padding per spatial axis, both sides (default 0)"),
             Req("num_filter", "int", "number of output channels"),
             Opt("num_group", "int", "1", "number of groups"),
             Ignored(Opt("workspace", "int", "1024", "")),
             Opt("no_bias", "bool", "False", "drop the bias input"),
             Ignored(Enum("cudnn_tune", {"None", "fastest", "limited_workspace", "off"}, "None", "")),
             Ignored(Opt("cudnn_off", "bool", "False", "")),
             Enum("layout", {"None", "NCW", "NCHW", "NCDHW"}, "None",
                  "data layout; None = channels first (only channels-first layouts are supported)")};
  d.list_inputs = [](const AttrMap& a) {
    return a.GetBool("no_bias", false) ? std::vector<std::string>{"data", "weight"}
                                       : std::vector<std::string>{"data", "weight", "bias"};
  };
  d.list_outputs = Fixed({"output"});
  d.validate = [](const AttrMap& a) {
    ConvGeometry g = ReadConv(a);
    size_t n = g.kernel.size();
    WEFT_CHECK(n >= 1 && n <= 3, "kernel must have 1 to 3 dimensions, got {}", sdk::FormatTuple(g.kernel));
    WEFT_CHECK(g.stride.size() == n && g.dilate.size() == n && g.pad.size() == n,
               "stride, dilate and pad must have as many dimensions as kernel {} (got {}, {}, {})",
               sdk::FormatTuple(g.kernel), sdk::FormatTuple(g.stride), sdk::FormatTuple(g.dilate),
               sdk::FormatTuple(g.pad));
    for (size_t i = 0; i < n; ++i) {
      WEFT_CHECK(g.kernel[i] > 0 && g.stride[i] > 0 && g.dilate[i] > 0 && g.pad[i] >= 0,
                 "kernel, stride and dilate must be positive and pad non-negative (kernel {}, stride {}, "
                 "dilate {}, pad {})",
                 sdk::FormatTuple(g.kernel), sdk::FormatTuple(g.stride), sdk::FormatTuple(g.dilate),
                 sdk::FormatTuple(g.pad));
    }
    int64_t nf = a.GetInt("num_filter"), ng = a.GetInt("num_group");
    WEFT_CHECK(nf > 0 && ng > 0 && nf % ng == 0, "num_filter ({}) must be a positive multiple of num_group ({})", nf,
               ng);
    std::string layout = a.GetString("layout", "None");
    WEFT_CHECK(layout == "None" || layout == ConvLayoutFor(n), "layout {} does not fit a {}-d kernel (use {})", layout,
               n, ConvLayoutFor(n));
  };
  SetShapeFn(d, [](ShapeIO& io) {
    const AttrMap& a = io.attrs();
    ConvGeometry g = ReadConv(a);
    const size_t ns = g.kernel.size();
    const int64_t nf = a.GetInt("num_filter"), ng = a.GetInt("num_group");
    if (!io.in(0)) return;
    Shape data = *io.in(0);
    if (data.ndim() != ns + 2) {
      io.Fail(fmt::format("input 'data' must be {}-d ({}) for a {}-d kernel, got shape {}", ns + 2, ConvLayoutFor(ns),
                          ns, data.ToString()));
    }
    const int64_t c = data[1];
    if (c >= 0 && c % ng != 0) io.Fail(fmt::format("input channels ({}) must divide by num_group ({})", c, ng));
    Shape w = UnknownShape(ns + 2);
    w[0] = nf;
    w[1] = c >= 0 ? c / ng : -1;
    for (size_t i = 0; i < ns; ++i) w[2 + i] = g.kernel[i];
    io.AssignIn(1, w);
    if (io.num_in() == 3) io.AssignIn(2, Shape{nf});

    Shape out = UnknownShape(ns + 2);
    out[0] = data[0];
    out[1] = nf;
    for (size_t i = 0; i < ns; ++i) {
      int64_t dk = g.dilate[i] * (g.kernel[i] - 1) + 1;
      int64_t x = data[2 + i];
      if (x < 0) continue;
      if (dk > x + 2 * g.pad[i]) {
        io.Fail(fmt::format("kernel {} (dilated {}) exceeds input 'data' {} padded by {} on axis {}",
                            sdk::FormatTuple(g.kernel), dk, data.ToString(), g.pad[i], 2 + i));
      }
      out[2 + i] = (x + 2 * g.pad[i] - dk) / g.stride[i] + 1;
    }
    io.AssignOut(0, out);
    // MXNet (2-d only) fills the batch size, and height/width where the stride is 1, back from
    // a known output.
    if (ns == 2) {
      const Shape& o = *io.out(0);
      data[0] = o[0];
      for (size_t i = 0; i < ns; ++i) {
        int64_t dk = g.dilate[i] * (g.kernel[i] - 1) + 1;
        if (o[2 + i] >= 0 && g.stride[i] == 1) data[2 + i] = o[2 + i] + dk - 1 - 2 * g.pad[i];
      }
      io.AssignIn(0, data);
    }
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_Convolution";
  d.backward_uses = kUsesInputs;
  d.resources = kResourceTempSpace;
  return d;
}

// ---- Deconvolution --------------------------------------------------------------------------------

// MXNet's DeconvolutionParam::InferPad: with a non-zero target_shape, pad and adj are derived so
// the output has exactly that size; otherwise they are the attributes' values.
void DeconvPadAdj(const AttrMap& a, const ConvGeometry& g, const std::vector<int64_t>& in, std::vector<int64_t>& pad,
                  std::vector<int64_t>& adj) {
  const size_t n = g.kernel.size();
  pad = g.pad;
  adj = TupleOr(a, "adj", n, 0);
  std::vector<int64_t> target = a.GetTuple("target_shape", {});
  bool use_target = false;
  for (int64_t t : target) use_target = use_target || t != 0;
  if (!use_target) return;
  WEFT_CHECK(target.size() == n, "target_shape {} must have as many entries as kernel {}", sdk::FormatTuple(target),
             sdk::FormatTuple(g.kernel));
  for (size_t i = 0; i < n; ++i) {
    if (in[i] < 0) continue;
    const int64_t full = g.stride[i] * (in[i] - 1) + g.dilate[i] * (g.kernel[i] - 1) + 1;
    WEFT_CHECK(full >= target[i], "target_shape {} exceeds the largest output {} on spatial axis {}",
               sdk::FormatTuple(target), full, i);
    const int64_t total = full - target[i];
    adj[i] = total % 2;
    pad[i] = (total + 1) / 2;
  }
}

OpDef Deconvolution() {
  OpDef d;
  d.name = "Deconvolution";
  d.description =
      "Transposed convolution (the gradient of Convolution with respect to its data), 1-3 spatial axes, "
      "channels first; weight is (C, num_filter / num_group, k...); output extent "
      "stride·(in − 1) + dilate·(k − 1) + 1 − 2·pad + adj, or target_shape when given.";
  d.attrs = {Req("kernel", "shape", "kernel size, e.g. (4, 4)"),
             Opt("stride", "shape", "()", "stride per spatial axis (default 1)"),
             Opt("dilate", "shape", "()", "dilation per spatial axis (default 1)"),
             Opt("pad", "shape", "()", "padding removed from both sides of the output (default 0)"),
             Opt("adj", "shape", "()", "extra cells at the end of each output axis (default 0)"),
             Opt("target_shape", "shape", "()", "output spatial size; when set, pad and adj are derived from it"),
             Req("num_filter", "int", "number of output channels"),
             Opt("num_group", "int", "1", "number of groups"),
             Ignored(Opt("workspace", "int", "512", "")),
             Opt("no_bias", "bool", "True", "drop the bias input (MXNet's default is True)"),
             Ignored(Enum("cudnn_tune", {"None", "fastest", "limited_workspace", "off"}, "None", "")),
             Ignored(Opt("cudnn_off", "bool", "False", "")),
             Enum("layout", {"None", "NCW", "NCHW", "NCDHW"}, "None",
                  "data layout; None = channels first (only channels-first layouts are supported)")};
  d.list_inputs = [](const AttrMap& a) {
    return a.GetBool("no_bias", true) ? std::vector<std::string>{"data", "weight"}
                                      : std::vector<std::string>{"data", "weight", "bias"};
  };
  d.list_outputs = Fixed({"output"});
  d.validate = [](const AttrMap& a) {
    ConvGeometry g = ReadConv(a);
    const size_t n = g.kernel.size();
    WEFT_CHECK(n >= 1 && n <= 3, "kernel must have 1 to 3 dimensions, got {}", sdk::FormatTuple(g.kernel));
    std::vector<int64_t> adj = TupleOr(a, "adj", n, 0);
    WEFT_CHECK(g.stride.size() == n && g.dilate.size() == n && g.pad.size() == n && adj.size() == n,
               "stride, dilate, pad and adj must have as many dimensions as kernel {}", sdk::FormatTuple(g.kernel));
    for (size_t i = 0; i < n; ++i) {
      WEFT_CHECK(g.kernel[i] > 0 && g.stride[i] > 0 && g.dilate[i] > 0 && g.pad[i] >= 0 && adj[i] >= 0,
                 "kernel, stride and dilate must be positive, pad and adj non-negative");
      WEFT_CHECK(adj[i] < g.stride[i], "adj {} must be smaller than stride {} on each axis", sdk::FormatTuple(adj),
                 sdk::FormatTuple(g.stride));
    }
    const int64_t nf = a.GetInt("num_filter"), ng = a.GetInt("num_group");
    WEFT_CHECK(nf > 0 && ng > 0 && nf % ng == 0, "num_filter ({}) must be a positive multiple of num_group ({})", nf,
               ng);
    std::string layout = a.GetString("layout", "None");
    WEFT_CHECK(layout == "None" || layout == ConvLayoutFor(n), "layout {} does not fit a {}-d kernel (use {})", layout,
               n, ConvLayoutFor(n));
  };
  SetShapeFn(d, [](ShapeIO& io) {
    const AttrMap& a = io.attrs();
    const ConvGeometry g = ReadConv(a);
    const size_t ns = g.kernel.size();
    const int64_t nf = a.GetInt("num_filter"), ng = a.GetInt("num_group");
    if (!io.in(0)) return;
    const Shape& data = *io.in(0);
    if (data.ndim() != ns + 2) {
      io.Fail(fmt::format("input 'data' must be {}-d ({}) for a {}-d kernel, got shape {}", ns + 2, ConvLayoutFor(ns),
                          ns, data.ToString()));
    }
    const int64_t c = data[1];
    if (c >= 0 && c % ng != 0) io.Fail(fmt::format("input channels ({}) must divide by num_group ({})", c, ng));
    Shape w = UnknownShape(ns + 2);
    w[0] = c;
    w[1] = nf / ng;
    for (size_t i = 0; i < ns; ++i) w[2 + i] = g.kernel[i];
    io.AssignIn(1, w);
    if (io.num_in() == 3) io.AssignIn(2, Shape{nf});
    std::vector<int64_t> spatial(data.begin() + 2, data.end()), pad, adj;
    try {
      DeconvPadAdj(a, g, spatial, pad, adj);
    } catch (const Error& e) {
      io.Fail(e.what());
    }
    Shape out = UnknownShape(ns + 2);
    out[0] = data[0];
    out[1] = nf;
    for (size_t i = 0; i < ns; ++i) {
      if (spatial[i] < 0) continue;
      const int64_t o = g.stride[i] * (spatial[i] - 1) + g.dilate[i] * (g.kernel[i] - 1) + 1 - 2 * pad[i] + adj[i];
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
  d.attrs = {Opt("kernel", "shape", "()", "pooling window (ignored with global_pool)"),
             Enum("pool_type", {"max", "avg", "sum"}, "max", "reduction over the window"),
             Opt("global_pool", "bool", "False", "pool over all spatial positions"),
             Ignored(Opt("cudnn_off", "bool", "False", "")),
             Enum("pooling_convention", {"valid", "full", "same"}, "valid",
                  "output size rounding: valid = floor, full = ceil, same = ceil(in / stride) (1-d only)"),
             Opt("stride", "shape", "()", "stride per spatial axis (default 1)"),
             Opt("pad", "shape", "()", "zero padding per spatial axis (default 0)"),
             DefaultOnly(Opt("p_value", "int", "None", "Lp pooling power (lp pooling is not supported)")),
             Opt("count_include_pad", "bool", "None",
                 "avg pooling divides by the window's size including padding (None = True, as MXNet) or, when "
                 "False, by the number of real cells in it"),
             Enum("layout", {"None", "NCW", "NCHW", "NCDHW"}, "None", "data layout; None = channels first")};
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  d.validate = [](const AttrMap& a) {
    // An empty kernel is an error only when shapes are inferred (MXNet creates such nodes).
    std::vector<int64_t> k = a.GetTuple("kernel");
    if (a.GetBool("global_pool") || k.empty()) return;
    WEFT_CHECK(k.size() <= 3, "kernel must have 1 to 3 dimensions, got {}", sdk::FormatTuple(k));
    std::vector<int64_t> s = TupleOr(a, "stride", k.size(), 1), p = TupleOr(a, "pad", k.size(), 0);
    WEFT_CHECK(s.size() == k.size() && p.size() == k.size(), "stride {} and pad {} must match kernel {}",
               sdk::FormatTuple(s), sdk::FormatTuple(p), sdk::FormatTuple(k));
    for (size_t i = 0; i < k.size(); ++i)
      WEFT_CHECK(k[i] > 0 && s[i] > 0 && p[i] >= 0, "kernel {} and stride {} must be positive, pad {} non-negative",
                 sdk::FormatTuple(k), sdk::FormatTuple(s), sdk::FormatTuple(p));
    WEFT_CHECK(a.GetString("pooling_convention") != "same" || (k.size() == 1 && a.GetString("pool_type") == "max"),
               "pooling_convention 'same' supports 1-d max pooling only (as MXNet)");
  };
  SetShapeFn(d, [](ShapeIO& io) {
    const AttrMap& a = io.attrs();
    if (!io.in(0)) return;
    const Shape& data = *io.in(0);
    if (data.ndim() < 3 || data.ndim() > 5) {
      io.Fail(fmt::format("input 'data' must be 3-d to 5-d (N, C, spatial...), got shape {}", data.ToString()));
    }
    Shape out = data;
    if (a.GetBool("global_pool")) {
      for (size_t i = 2; i < data.ndim(); ++i) out[i] = 1;
      io.AssignOut(0, out);
      return;
    }
    std::vector<int64_t> k = a.GetTuple("kernel");
    if (k.empty()) io.Fail("attribute 'kernel' is required unless global_pool is True");
    std::vector<int64_t> s = TupleOr(a, "stride", k.size(), 1), p = TupleOr(a, "pad", k.size(), 0);
    if (data.ndim() != k.size() + 2) {
      io.Fail(fmt::format("input 'data' must be {}-d for kernel {}, got shape {}", k.size() + 2, sdk::FormatTuple(k),
                          data.ToString()));
    }
    const std::string conv = a.GetString("pooling_convention");
    for (size_t i = 0; i < k.size(); ++i) {
      int64_t x = data[2 + i];
      if (x < 0) continue;
      if (k[i] > x + 2 * p[i]) {
        io.Fail(fmt::format("kernel {} exceeds input 'data' {} padded by {} on axis {}", sdk::FormatTuple(k),
                            data.ToString(), p[i], 2 + i));
      }
      if (conv == "valid") {
        out[2 + i] = 1 + (x + 2 * p[i] - k[i]) / s[i];
      } else if (conv == "full") {
        out[2 + i] = 1 + static_cast<int64_t>(std::ceil(static_cast<double>(x + 2 * p[i] - k[i]) / s[i]));
      } else {
        out[2 + i] = (x + s[i] - 1) / s[i];
      }
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
  d.attrs = {Enum("act_type", {"relu", "sigmoid", "tanh", "softrelu", "softsign"}, "", "activation function")};
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, SameShapeAll);
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_Activation";
  d.backward_uses = kUsesInputs | kUsesOutputs;
  // As MXNet's ActivationGrad: relu, sigmoid, tanh and softrelu derive from the output alone.
  d.backward_uses_for = [](const AttrMap& a) {
    return a.GetString("act_type") == "softsign" ? kUsesInputs | kUsesOutputs : kUsesOutputs;
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
  d.attrs = {Enum("act_type", {"leaky", "elu", "prelu", "rrelu", "selu", "gelu"}, "leaky", "activation function"),
             Opt("slope", "float", "0.25", "slope for leaky and elu"),
             Opt("lower_bound", "float", "0.125", "rrelu: lower bound of the random slope"),
             Opt("upper_bound", "float", "0.334", "rrelu: upper bound of the random slope")};
  d.list_inputs = [](const AttrMap& a) {
    return a.GetString("act_type", "leaky") == "prelu" ? std::vector<std::string>{"data", "gamma"}
                                                       : std::vector<std::string>{"data"};
  };
  d.list_outputs = [](const AttrMap& a) {
    return a.GetString("act_type", "leaky") == "rrelu" ? std::vector<std::string>{"output", "mask"}
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

// MXNet keeps gamma, beta, the hidden statistics and the moving statistics in the accumulation
// type: float32 for float16/bfloat16 data.
int BatchNormParamType(int data) {
  if (data == static_cast<int>(DType::kFloat16) || data == static_cast<int>(DType::kBfloat16)) {
    return static_cast<int>(DType::kFloat32);
  }
  return data;
}

OpDef BatchNorm() {
  OpDef d;
  d.name = "BatchNorm";
  d.description =
      "Batch normalisation over all axes but `axis`; hidden outputs are the batch mean and inverse "
      "std (1/sqrt(var + eps)).";
  d.attrs = {Opt("eps", "float", "0.001", "added to the variance"),
             Opt("momentum", "float", "0.9", "moving average momentum"),
             Opt("fix_gamma", "bool", "True", "treat gamma as 1 (and give it zero gradient)"),
             Opt("use_global_stats", "bool", "False", "use the moving statistics in training too"),
             Opt("output_mean_var", "bool", "False", "also expose the mean and var outputs"),
             Opt("axis", "int", "1", "channel axis"),
             Ignored(Opt("cudnn_off", "bool", "False", "")),
             Ignored(Opt("min_calib_range", "float", "None", "")),
             Ignored(Opt("max_calib_range", "float", "None", ""))};
  d.list_inputs = Fixed({"data", "gamma", "beta"});
  d.list_outputs = Fixed({"output", "mean", "var"});
  d.list_aux = Fixed({"moving_mean", "moving_var"});
  d.num_visible_outputs = [](const AttrMap& a) { return a.GetBool("output_mean_var", false) ? 3 : 1; };
  SetShapeFn(d, [](ShapeIO& io) {
    if (!io.in(0) && io.out(0)) io.AssignIn(0, *io.out(0));
    if (!io.in(0)) return;
    const Shape& data = *io.in(0);
    const int64_t nd = static_cast<int64_t>(data.ndim());
    if (nd == 0) io.Fail("input 'data' must have at least one axis, got shape ()");
    const int64_t axis = NormalizeAxis(io, io.attrs().GetInt("axis"), nd, "axis");
    const Shape ch{data[static_cast<size_t>(axis)]};
    io.AssignIn(1, ch);
    io.AssignIn(2, ch);
    io.AssignOut(0, data);
    io.AssignOut(1, ch);
    io.AssignOut(2, ch);
    io.AssignAux(0, ch);
    io.AssignAux(1, ch);
  });
  d.infer_type = [](const AttrMap&, std::vector<int>& in, std::vector<int>& out, std::vector<int>& aux) {
    if (in[0] < 0) return;  // MXNet needs the data dtype
    const int param = BatchNormParamType(in[0]);
    static const char* kIn[] = {"data", "gamma", "beta"};
    for (size_t i = 1; i < in.size(); ++i) AssignType("BatchNorm", "input", kIn[i], in[i], param);
    AssignType("BatchNorm", "output", "output", out[0], in[0]);
    AssignType("BatchNorm", "output", "mean", out[1], param);
    AssignType("BatchNorm", "output", "var", out[2], param);
    AssignType("BatchNorm", "aux state", "moving_mean", aux[0], param);
    AssignType("BatchNorm", "aux state", "moving_var", aux[1], param);
  };
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_BatchNorm";
  d.backward_uses = kUsesInputs | kUsesOutputs | kUsesAux;
  return d;
}

// ---- Dropout --------------------------------------------------------------------------------------

OpDef Dropout() {
  OpDef d;
  d.name = "Dropout";
  d.description =
      "In training, zeroes each element with probability p and scales the rest by 1/(1-p); the hidden "
      "mask output holds the per-element factor (0 or 1/(1-p)). Identity otherwise.";
  d.attrs = {Opt("p", "float", "0.5", "probability of dropping an element"),
             DefaultOnly(Enum("mode", {"training", "always"}, "training", "when dropout applies")),
             DefaultOnly(Opt("axes", "shape", "()", "axes sharing one mask value (variational dropout)")),
             Ignored(Opt("cudnn_off", "bool", "False", ""))};
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output", "mask"});
  d.num_visible_outputs = [](const AttrMap&) { return 1; };
  d.validate = [](const AttrMap& a) {
    double p = a.GetFloat("p");
    WEFT_CHECK(p >= 0 && p <= 1, "p must be in [0, 1], got {}", p);
  };
  SetShapeFn(d, SameShapeAll);
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_Dropout";
  d.backward_uses = kUsesOutputs;
  d.resources = kResourceRandom;
  return d;
}

// ---- LRN ------------------------------------------------------------------------------------------

OpDef LRN() {
  OpDef d;
  d.name = "LRN";
  d.description =
      "Local response normalisation across channels (axis 1): output = data · tmp_norm^(−beta) with "
      "tmp_norm = knorm + alpha / nsize · Σ data² over the nsize channels centred on each one. The hidden "
      "output tmp_norm feeds the backward.";
  d.attrs = {Opt("alpha", "float", "0.0001", "scale of the sum of squares"), Opt("beta", "float", "0.75", "exponent"),
             Opt("knorm", "float", "2", "offset"), Req("nsize", "int", "number of channels in the window (odd)")};
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output", "tmp_norm"});
  d.num_visible_outputs = [](const AttrMap&) { return 1; };
  d.validate = [](const AttrMap& a) {
    WEFT_CHECK(a.GetInt("nsize") > 0, "nsize must be positive, got {}", a.GetInt("nsize"));
  };
  SetShapeFn(d, [](ShapeIO& io) {
    SameShapeAll(io);
    if (io.in(0) && io.in(0)->ndim() < 2) {
      io.Fail(fmt::format("input 'data' must have a channel axis (N, C, ...), got shape {}", io.in(0)->ToString()));
    }
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_LRN";
  d.backward_uses = kUsesInputs | kUsesOutputs;
  return d;
}

}  // namespace

void RegisterNnOps(OpRegistry& r) {
  r.Register(FullyConnected());
  r.Register(Convolution());
  r.Register(Pooling());
  r.Register(Activation());
  r.Register(LeakyReLU());
  r.Register(BatchNorm());
  r.Register(Dropout());
  r.Register(Deconvolution());
  r.Register(LRN());
}

}  // namespace weft::opdef
