// References of the layers: FullyConnected, Convolution, Deconvolution, Pooling, UpSampling, LRN,
// Dropout, Embedding, RNN. Spatial ops take any number of spatial axes (NCW, NCHW, NCDHW); output
// shapes are the node's signature (core's inference), the values are computed here by direct
// summation over the definitions (no im2col, no GEMM library).
#include <algorithm>
#include <cmath>

#include "reference.h"
#include "weft/base.h"
#include "weft/sdk/ops/rnn.hpp"

namespace wconf::ref {
namespace {

// A spatial attribute tuple for `nd` axes: the given values, or `fallback` on each axis when
// empty.
std::vector<int64_t> Spatial(const Call& c, const char* name, size_t nd, int64_t fallback) {
  std::vector<int64_t> t = c.attrs().GetTuple(name, {});
  if (t.empty()) t.assign(nd, fallback);
  WEFT_CHECK(t.size() == nd, "reference: {} has {} entries for {} spatial axes", name, t.size(), nd);
  return t;
}

// Calls f(spatial position) for every position of `dims`.
template <typename F>
void ForEachPosition(const std::vector<int64_t>& dims, F f) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<int64_t> p(dims.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = i;
    for (size_t a = dims.size(); a-- > 0;) {
      p[a] = r % dims[a];
      r /= dims[a];
    }
    f(p);
  }
}

// Flat offset of spatial position `p` inside one (n, c) plane of `dims`.
int64_t PlaneOffset(const std::vector<int64_t>& p, const std::vector<int64_t>& dims) {
  int64_t o = 0;
  for (size_t a = 0; a < dims.size(); ++a) o = o * dims[a] + p[a];
  return o;
}

std::vector<int64_t> SpatialDims(const Shape& s) { return {s.dims().begin() + 2, s.dims().end()}; }

struct ConvGeometry {
  std::vector<int64_t> kernel, stride, dilate, pad;
  int64_t groups = 1;
};

ConvGeometry ReadConv(const Call& c, size_t nd) {
  ConvGeometry g;
  g.kernel = c.attrs().GetTuple("kernel");
  g.stride = Spatial(c, "stride", nd, 1);
  g.dilate = Spatial(c, "dilate", nd, 1);
  g.pad = Spatial(c, "pad", nd, 0);
  g.groups = c.attrs().GetInt("num_group", 1);
  return g;
}

// The extents a (de)convolution loops over: batch, data and output channels and their counts per
// group, and the elements of one data, output and kernel plane.
struct ConvExtents {
  int64_t N, C, F, cg, fg, in_plane, out_plane, k_plane;
  ConvExtents(const HostTensor& x, const HostTensor& w, const HostTensor& y, int64_t groups)
      : N(x.shape[0]),
        C(x.shape[1]),
        F(y.shape[1]),
        cg(C / groups),
        fg(F / groups),
        in_plane(Prod(x.shape, 2, x.shape.ndim())),
        out_plane(Prod(y.shape, 2, y.shape.ndim())),
        k_plane(Prod(w.shape, 2, w.shape.ndim())) {}
};

void AddBias(HostTensor& y, const HostTensor& bias) {
  const int64_t f = y.shape[1], plane = Prod(y.shape, 2, y.shape.ndim());
  for (size_t i = 0; i < y.v.size(); ++i) y.v[i] += bias.v[static_cast<size_t>((static_cast<int64_t>(i) / plane) % f)];
}

// y[n, f, o] = Σ_{c in f's group, k} x[n, c, o·stride − pad + k·dilate] · w[f, c − group start, k].
void Convolution(Call& c) {
  const HostTensor &x = c.in(0), &w = c.in(1);
  HostTensor& y = c.out[0];
  const std::vector<int64_t> in = SpatialDims(x.shape), out = SpatialDims(y.shape);
  const ConvGeometry g = ReadConv(c, in.size());
  // Plain locals, not a structured binding: clang before 16 cannot capture bindings in the lambdas.
  const ConvExtents e(x, w, y, g.groups);
  const int64_t N = e.N, C = e.C, F = e.F, cg = e.cg, fg = e.fg, in_plane = e.in_plane, out_plane = e.out_plane,
                k_plane = e.k_plane;
  std::vector<int64_t> ip(in.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t f = 0; f < F; ++f)
      ForEachPosition(out, [&](const std::vector<int64_t>& op) {
        double s = 0;
        for (int64_t ci = 0; ci < cg; ++ci) {
          const int64_t ch = f / fg * cg + ci;
          ForEachPosition(g.kernel, [&](const std::vector<int64_t>& kp) {
            for (size_t a = 0; a < in.size(); ++a) {
              ip[a] = op[a] * g.stride[a] - g.pad[a] + kp[a] * g.dilate[a];
              if (ip[a] < 0 || ip[a] >= in[a]) return;
            }
            s += x.v[static_cast<size_t>((n * C + ch) * in_plane + PlaneOffset(ip, in))] *
                 w.v[static_cast<size_t>((f * cg + ci) * k_plane + PlaneOffset(kp, g.kernel))];
          });
        }
        y.v[static_cast<size_t>((n * F + f) * out_plane + PlaneOffset(op, out))] = s;
      });
  if (!c.attrs().GetBool("no_bias", false)) AddBias(y, c.in(2));
}

double FusedActivation(const Call& c, const std::string& prefix, double v) {
  const std::string type = c.attrs().GetString(prefix + "act_type", "None");
  if (type == "clip")
    return std::min(std::max(v, c.attrs().GetFloat(prefix + "act_min")), c.attrs().GetFloat(prefix + "act_max"));
  return type == "None" ? v : Activation(type, v);  // relu, tanh, sigmoid, softrelu: Activation's
}

// _sg_conv: act2(act(BatchNorm(Convolution)) + sum), BatchNorm on the batch's statistics in
// training (updating the moving ones) unless use_global_stats, on the moving ones otherwise.
void SgConv(Call& c) {
  Convolution(c);
  HostTensor& y = c.out[0];
  const int64_t F = y.shape[1], plane = Prod(y.shape, 2, y.shape.ndim()), N = y.shape[0];
  size_t next = c.attrs().GetBool("no_bias", false) ? 2 : 3;
  if (c.attrs().GetBool("with_bn", false)) {
    const HostTensor &gamma = c.in(next), &beta = c.in(next + 1);
    next += 2;
    const bool batch = c.spec.is_train && !c.attrs().GetBool("bn_use_global_stats", false);
    const double eps = c.attrs().GetFloat("bn_eps"), momentum = c.attrs().GetFloat("bn_momentum");
    for (int64_t f = 0; f < F; ++f) {
      auto at = [&](int64_t n, int64_t i) { return static_cast<size_t>((n * F + f) * plane + i); };
      double sum = 0, sq = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < plane; ++i) sum += y.v[at(n, i)];
      const double mean_b = sum / static_cast<double>(N * plane);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < plane; ++i) sq += (y.v[at(n, i)] - mean_b) * (y.v[at(n, i)] - mean_b);
      const double var_b = sq / static_cast<double>(N * plane);
      double &mm = c.aux[0].v[static_cast<size_t>(f)], &mv = c.aux[1].v[static_cast<size_t>(f)];
      const double mean = batch ? mean_b : mm, var = batch ? var_b : mv;
      if (batch) {
        mm = momentum * mm + (1 - momentum) * mean_b;
        mv = momentum * mv + (1 - momentum) * var_b;
      }
      const double g = c.attrs().GetBool("bn_fix_gamma") ? 1.0 : gamma.v[static_cast<size_t>(f)];
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < plane; ++i)
          y.v[at(n, i)] = (y.v[at(n, i)] - mean) / std::sqrt(var + eps) * g + beta.v[static_cast<size_t>(f)];
    }
  }
  const bool with_sum = c.attrs().GetBool("with_sum", false);
  for (size_t i = 0; i < y.v.size(); ++i) {
    double v = FusedActivation(c, "", y.v[i]);
    if (with_sum) v = FusedActivation(c, "postsum_", v + c.in(next).v[i]);
    y.v[i] = v;
  }
}

// The transposed convolution: every x[n, c, i] · w[c, f, k] lands on y[n, group(c)·F/g + f,
// i·stride − pad + k·dilate]. target_shape sets pad (MXNet's InferPad, OPS.md).
void Deconvolve(const HostTensor& x, const HostTensor& w, ConvGeometry g, const std::vector<int64_t>& target,
                HostTensor& y) {
  const std::vector<int64_t> in = SpatialDims(x.shape), out = SpatialDims(y.shape);
  bool has_target = false;
  for (int64_t t : target) has_target = has_target || t > 0;
  if (has_target) {
    for (size_t a = 0; a < in.size(); ++a) {
      const int64_t full = g.stride[a] * (in[a] - 1) + g.dilate[a] * (g.kernel[a] - 1) + 1;
      g.pad[a] = (full - target[a] + 1) / 2;
    }
  }
  // Plain locals, not a structured binding: clang before 16 cannot capture bindings in the lambdas.
  const ConvExtents e(x, w, y, g.groups);
  const int64_t N = e.N, C = e.C, F = e.F, cg = e.cg, fg = e.fg, in_plane = e.in_plane, out_plane = e.out_plane,
                k_plane = e.k_plane;
  std::vector<int64_t> op(in.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      ForEachPosition(in, [&](const std::vector<int64_t>& ip) {
        const double xv = x.v[static_cast<size_t>((n * C + ch) * in_plane + PlaneOffset(ip, in))];
        for (int64_t f = 0; f < fg; ++f)
          ForEachPosition(g.kernel, [&](const std::vector<int64_t>& kp) {
            for (size_t a = 0; a < in.size(); ++a) {
              op[a] = ip[a] * g.stride[a] - g.pad[a] + kp[a] * g.dilate[a];
              if (op[a] < 0 || op[a] >= out[a]) return;
            }
            const int64_t fo = ch / cg * fg + f;
            y.v[static_cast<size_t>((n * F + fo) * out_plane + PlaneOffset(op, out))] +=
                xv * w.v[static_cast<size_t>((ch * fg + f) * k_plane + PlaneOffset(kp, g.kernel))];
          });
      });
}

void Deconvolution(Call& c) {
  const size_t nd = c.in(0).shape.ndim() - 2;
  Deconvolve(c.in(0), c.in(1), ReadConv(c, nd), c.attrs().GetTuple("target_shape", {}), c.out[0]);
  if (!c.attrs().GetBool("no_bias", true)) AddBias(c.out[0], c.in(2));
}

// max / avg / sum over windows; MXNet's pool size for avg with count_include_pad: the window cut
// at in + pad (before it is clipped to the data).
void Pooling(Call& c) {
  const HostTensor& x = c.in(0);
  HostTensor& y = c.out[0];
  const std::vector<int64_t> in = SpatialDims(x.shape), out = SpatialDims(y.shape);
  const bool global = c.attrs().GetBool("global_pool", false);
  const std::vector<int64_t> kernel = global ? in : c.attrs().GetTuple("kernel");
  const std::vector<int64_t> stride = global ? std::vector<int64_t>(in.size(), 1) : Spatial(c, "stride", in.size(), 1);
  const std::vector<int64_t> pad = global ? std::vector<int64_t>(in.size(), 0) : Spatial(c, "pad", in.size(), 0);
  const std::string type = c.attrs().GetString("pool_type", "max");
  const bool include_pad = c.attrs().GetBool("count_include_pad", true);
  const int64_t planes = x.shape[0] * x.shape[1], in_plane = Prod(x.shape, 2, x.shape.ndim());
  const int64_t out_plane = Prod(y.shape, 2, y.shape.ndim());
  std::vector<int64_t> ip(in.size());
  for (int64_t pl = 0; pl < planes; ++pl)
    ForEachPosition(out, [&](const std::vector<int64_t>& op) {
      double best = -INFINITY, sum = 0;
      int64_t padded = 1, real = 1;
      for (size_t a = 0; a < in.size(); ++a) {
        const int64_t start = op[a] * stride[a] - pad[a];
        const int64_t end = std::min(start + kernel[a], in[a] + pad[a]);
        padded *= end - start;
        real *= std::min(end, in[a]) - std::max<int64_t>(start, 0);
      }
      ForEachPosition(kernel, [&](const std::vector<int64_t>& kp) {
        for (size_t a = 0; a < in.size(); ++a) {
          ip[a] = op[a] * stride[a] - pad[a] + kp[a];
          if (ip[a] < 0 || ip[a] >= in[a]) return;
        }
        const double v = x.v[static_cast<size_t>(pl * in_plane + PlaneOffset(ip, in))];
        best = std::max(best, v);
        sum += v;
      });
      double r = best;
      if (type == "sum") r = sum;
      if (type == "avg") r = sum / static_cast<double>(include_pad ? padded : real);
      WEFT_CHECK(type == "max" || type == "avg" || type == "sum", "reference: pool_type '{}'", type);
      y.v[static_cast<size_t>(pl * out_plane + PlaneOffset(op, out))] = r;
    });
}

void UpSampling(Call& c) {
  HostTensor& y = c.out[0];
  const int64_t scale = c.attrs().GetInt("scale");
  if (c.attrs().GetString("sample_type") == "bilinear") {
    // MXNet's grouped deconvolution with the weight input: k = 2·scale − scale % 2, stride scale,
    // pad ⌈(scale − 1) / 2⌉, one group per channel, no bias.
    const int64_t k = 2 * scale - scale % 2, pad = scale / 2;  // scale / 2 = ⌈(scale − 1) / 2⌉
    ConvGeometry g{{k, k}, {scale, scale}, {1, 1}, {pad, pad}, c.in(0).shape[1]};
    Deconvolve(c.in(0), c.in(1), g, {}, y);
    return;
  }
  // nearest: input i repeated H / h_i times on both spatial axes; concatenated along channels, or
  // summed.
  const bool sum = c.attrs().GetString("multi_input_mode", "concat") == "sum";
  const int64_t N = y.shape[0], Cy = y.shape[1], H = y.shape[2], W = y.shape[3];
  int64_t offset = 0;
  for (const HostTensor& x : c.spec.in) {
    const int64_t C = x.shape[1], h = x.shape[2], w = x.shape[3], sh = H / h, sw = W / w;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t i = 0; i < H; ++i)
          for (int64_t j = 0; j < W; ++j)
            y.v[static_cast<size_t>(((n * Cy + (sum ? ch : offset + ch)) * H + i) * W + j)] +=
                x.v[static_cast<size_t>(((n * C + ch) * h + i / sh) * w + j / sw)];
    if (!sum) offset += C;
  }
}

// tmp_norm = knorm + alpha / nsize · Σ x² over channels c − ⌊nsize/2⌋ … c + ⌊nsize/2⌋ (cut at the
// edges); output = x · tmp_norm^−beta.
void LRN(Call& c) {
  const HostTensor& x = c.in(0);
  const int64_t nsize = c.attrs().GetInt("nsize");
  const double alpha = c.attrs().GetFloat("alpha", 1e-4), beta = c.attrs().GetFloat("beta", 0.75);
  const double knorm = c.attrs().GetFloat("knorm", 2.0);
  const int64_t N = x.shape[0], C = x.shape[1], inner = Prod(x.shape, 2, x.shape.ndim());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t i = 0; i < inner; ++i) {
        double s = 0;
        for (int64_t d = ch - nsize / 2; d <= ch + nsize / 2; ++d)
          if (d >= 0 && d < C)
            s += x.v[static_cast<size_t>((n * C + d) * inner + i)] * x.v[static_cast<size_t>((n * C + d) * inner + i)];
        const size_t at = static_cast<size_t>((n * C + ch) * inner + i);
        const double tmp = knorm + alpha / static_cast<double>(nsize) * s;
        c.out[0].v[at] = x.v[at] * std::pow(tmp, -beta);
        c.out[1].v[at] = tmp;
      }
}

// Outside training the identity (mask 1). In training the device's mask (output 1) is taken and
// checked: only 0 and 1/(1 − p), both present in a sizeable array; output = data · mask.
// (tests/conformance's DropoutMaskStatistics checks the kept fraction.)
void Dropout(Call& c) {
  const HostTensor& x = c.in(0);
  const double p = c.attrs().GetFloat("p", 0.5);
  const bool drop = c.spec.is_train && p > 0;
  const double scale = RoundTo(x.dtype, 1.0 / RoundTo(x.dtype, 1.0 - p));
  size_t kept = 0, bad = 0;
  // With `axes` the mask is smaller (extent 1 on those axes) and broadcasts over data.
  HostTensor& mask = c.out[1];
  for (size_t j = 0; j < mask.v.size(); ++j) {
    const double m = drop ? c.device.out.at(1).v[j] : 1.0;
    kept += m != 0;
    bad += drop && m != 0 && m != scale;
    mask.v[j] = m;
  }
  for (size_t i = 0; i < x.v.size(); ++i)
    c.out[0].v[i] = x.v[i] * mask.v[static_cast<size_t>(BroadcastSource(static_cast<int64_t>(i), x.shape, mask.shape))];
  if (bad > 0) *c.error += fmt::format("Dropout mask: {} values other than 0 and 1/(1 - p) = {}; ", bad, scale);
  if (drop && mask.v.size() >= 20 && (kept == 0 || kept == mask.v.size()))
    *c.error += fmt::format("Dropout mask keeps {} of {} elements in training with p = {}; ", kept, mask.v.size(), p);
}

// Rows of weight picked by the indices, truncated and clipped to [0, input_dim − 1].
void Embedding(Call& c) {
  const HostTensor &idx = c.in(0), &w = c.in(1);
  const int64_t rows = w.shape[0], dim = w.shape[1];
  for (size_t i = 0; i < idx.v.size(); ++i) {
    const int64_t r = std::clamp<int64_t>(static_cast<int64_t>(std::trunc(idx.v[i])), 0, rows - 1);
    for (int64_t k = 0; k < dim; ++k)
      c.out[0].v[i * static_cast<size_t>(dim) + static_cast<size_t>(k)] = w.v[static_cast<size_t>(r * dim + k)];
  }
}

// output = data · weightᵀ + bias, data flattened to (N, rest) (flatten) or used as (…, K).
void FullyConnected(Call& c) {
  const HostTensor &x = c.in(0), &w = c.in(1);
  const int64_t hidden = w.shape[0], k = w.shape[1], rows = x.shape.Size() / k;
  const bool bias = !c.attrs().GetBool("no_bias", false);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < hidden; ++h) {
      double s = bias ? c.in(2).v[static_cast<size_t>(h)] : 0.0;
      for (int64_t j = 0; j < k; ++j) s += x.v[static_cast<size_t>(r * k + j)] * w.v[static_cast<size_t>(h * k + j)];
      c.out[0].v[static_cast<size_t>(r * hidden + h)] = s;
    }
}

// MXNet's fused RNN from its cell equations, one element at a time: per layer and direction the
// steps in time order (reverse for the second direction), each gate a sum over the input and the
// previous hidden state. Offsets into the flat parameters are sdk::RnnGeometry's (MXNet's
// layout). The hidden `reserve` output is the device's own scratch layout, not part of the
// contract: the device's values are taken. Dropout between layers draws random masks, which the
// reference cannot reproduce: only p = 0 or inference is accepted.
void RNN(Call& c) {
  namespace sdk = weft::sdk;
  const auto p = sdk::ParseParams<sdk::RNNParam>(c.attrs());
  WEFT_CHECK(p.p == 0 || !c.spec.is_train, "reference: RNN's dropout between layers is random; use p = 0");
  const HostTensor &x = c.in(0), &w = c.in(1);
  const int64_t T = x.shape[0], N = x.shape[1], H = p.state_size, D = p.Directions();
  const sdk::RnnGeometry geo = sdk::RnnGeometry::Make(p, T, N, x.shape[2]);
  const bool lstm = p.mode == sdk::RnnMode::kLstm;
  std::vector<double> in = x.v, h_final(c.in(2).v.size()), c_final(h_final.size());
  int64_t width = x.shape[2];
  for (int64_t l = 0; l < p.num_layers; ++l) {
    std::vector<double> out(static_cast<size_t>(T * N * D * H));
    for (int64_t d = 0; d < D; ++d) {
      const double* wx = &w.v[static_cast<size_t>(geo.WeightOffset(l, d))];
      const double* wh = wx + geo.gh() * width;
      const double* bx = &w.v[static_cast<size_t>(geo.BiasOffset(l, d))];
      const double* bh = bx + geo.gh();
      const size_t slot = static_cast<size_t>((l * D + d) * N * H);
      std::vector<double> h(c.in(2).v.begin() + slot, c.in(2).v.begin() + slot + N * H), cell(h.size());
      if (lstm) std::copy_n(c.in(3).v.begin() + slot, N * H, cell.begin());
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = d == 0 ? s : T - 1 - s;
        std::vector<double> nh(h.size()), nc(h.size());
        for (int64_t n = 0; n < N; ++n)
          for (int64_t j = 0; j < H; ++j) {
            auto gx = [&](int64_t gate) {
              double v = bx[gate * H + j];
              for (int64_t k = 0; k < width; ++k) v += wx[(gate * H + j) * width + k] * in[(t * N + n) * width + k];
              return v;
            };
            auto gh = [&](int64_t gate) {
              double v = bh[gate * H + j];
              for (int64_t k = 0; k < H; ++k) v += wh[(gate * H + j) * H + k] * h[n * H + k];
              return v;
            };
            auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
            const size_t at = static_cast<size_t>(n * H + j);
            if (lstm) {
              nc[at] = sig(gx(1) + gh(1)) * cell[at] + sig(gx(0) + gh(0)) * std::tanh(gx(2) + gh(2));
              nh[at] = sig(gx(3) + gh(3)) * std::tanh(nc[at]);
            } else if (p.mode == sdk::RnnMode::kGru) {
              const double r = sig(gx(0) + gh(0)), z = sig(gx(1) + gh(1));
              const double cand = std::tanh(gx(2) + r * gh(2));
              nh[at] = (1 - z) * cand + z * h[at];
            } else {
              const double v = gx(0) + gh(0);
              nh[at] = p.mode == sdk::RnnMode::kRnnTanh ? std::tanh(v) : std::max(v, 0.0);
            }
            out[static_cast<size_t>((t * N + n) * D * H + d * H + j)] = nh[at];
          }
        h = nh, cell = nc;
      }
      std::copy(h.begin(), h.end(), h_final.begin() + static_cast<std::ptrdiff_t>(slot));
      std::copy(cell.begin(), cell.end(), c_final.begin() + static_cast<std::ptrdiff_t>(slot));
    }
    in = std::move(out);
    width = D * H;
  }
  c.out[0].v = in;
  c.out[1].v = h_final;
  if (lstm) c.out[2].v = c_final;
  c.out.back().v = c.device.out.back().v;
}

}  // namespace

void RegisterNNReferences(Table& t) {
  t["FullyConnected"] = FullyConnected;
  t["Convolution"] = Convolution;
  t["_sg_conv"] = SgConv;
  t["Deconvolution"] = Deconvolution;
  t["Pooling"] = Pooling;
  t["UpSampling"] = UpSampling;
  t["LRN"] = LRN;
  t["Dropout"] = Dropout;
  t["RNN"] = RNN;
  t["Embedding"] = Embedding;
}

}  // namespace wconf::ref
