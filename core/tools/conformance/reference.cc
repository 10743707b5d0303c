// The reference table, its shared helpers, and the gradients that ops define rather than derive
// (reference.h).
#include "reference.h"

#include <cmath>

#include "weft/base.h"

namespace wconf {
namespace ref {

std::vector<int64_t> Strides(const Shape& s) {
  std::vector<int64_t> st(s.ndim(), 1);
  for (size_t i = s.ndim(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

std::vector<int64_t> Unravel(int64_t flat, const Shape& s) {
  std::vector<int64_t> idx(s.ndim(), 0);
  for (size_t i = s.ndim(); i-- > 0;) {
    if (s[i] == 0) continue;
    idx[i] = flat % s[i];
    flat /= s[i];
  }
  return idx;
}

int64_t Ravel(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t flat = 0;
  for (size_t i = 0; i < s.ndim(); ++i) flat = flat * s[i] + idx[i];
  return flat;
}

int64_t BroadcastSource(int64_t flat, const Shape& out, const Shape& in) {
  const std::vector<int64_t> o = Unravel(flat, out);
  const size_t lead = out.ndim() - in.ndim();
  int64_t src = 0;
  for (size_t i = 0; i < in.ndim(); ++i) src = src * in[i] + (in[i] == 1 ? 0 : o[lead + i]);
  return src;
}

size_t Axis(int64_t axis, size_t ndim) {
  const int64_t n = static_cast<int64_t>(ndim);
  const int64_t a = axis < 0 ? axis + n : axis;
  WEFT_CHECK(a >= 0 && a < n, "reference: axis {} out of range for {} axes", axis, ndim);
  return static_cast<size_t>(a);
}

int64_t Prod(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.ndim(); ++i) p *= s[i];
  return p;
}

HostTensor Filled(const Shape& shape, DType dtype, double value) {
  return HostTensor{shape, dtype, std::vector<double>(static_cast<size_t>(shape.Size()), value)};
}

bool IsFloatType(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16 || d == DType::kBfloat16;
}

double ScalarFor(const Call& c) { return RoundTo(c.in(0).dtype, c.attrs().GetFloat("scalar")); }

void Broadcast(Call& c, Binary f) {
  HostTensor& y = c.out[0];
  for (int64_t i = 0; i < y.shape.Size(); ++i)
    y.v[static_cast<size_t>(i)] = f(c.in(0).v[static_cast<size_t>(BroadcastSource(i, y.shape, c.in(0).shape))],
                                    c.in(1).v[static_cast<size_t>(BroadcastSource(i, y.shape, c.in(1).shape))]);
}

ForwardFn MapUnary(Unary f) {
  return [f](Call& c) {
    for (size_t i = 0; i < c.in(0).v.size(); ++i) c.out[0].v[i] = f(c.in(0).v[i]);
  };
}

ForwardFn MapScalar(Binary f, bool scalar_left) {
  return [f, scalar_left](Call& c) {
    const double s = ScalarFor(c);
    for (size_t i = 0; i < c.in(0).v.size(); ++i) c.out[0].v[i] = scalar_left ? f(s, c.in(0).v[i]) : f(c.in(0).v[i], s);
  };
}

}  // namespace ref

namespace {

const ref::Table& Forwards() {
  static const ref::Table table = [] {
    ref::Table t;
    ref::RegisterElemwiseReferences(t);
    ref::RegisterNNReferences(t);
    ref::RegisterNormReferences(t);
    ref::RegisterShapeReferences(t);
    ref::RegisterReduceReferences(t);
    ref::RegisterUpdateReferences(t);
    ref::RegisterMoreUpdateReferences(t);
    ref::RegisterIndexReferences(t);
    ref::RegisterMathReferences(t);
    ref::RegisterRandomReferences(t);
    return t;
  }();
  return table;
}

void RoundAll(std::vector<HostTensor>& ts) {
  for (HostTensor& t : ts)
    for (double& x : t.v) x = RoundTo(t.dtype, x);
}

// Softmax of `x` viewed as (rows, n): row r's elements at r * n + k.
std::vector<double> RowSoftmax(const std::vector<double>& x, int64_t rows, int64_t n) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t k = 0; k < n; ++k) m = std::max(m, x[static_cast<size_t>(r * n + k)]);
    for (int64_t k = 0; k < n; ++k) s += std::exp(x[static_cast<size_t>(r * n + k)] - m);
    for (int64_t k = 0; k < n; ++k)
      y[static_cast<size_t>(r * n + k)] = std::exp(x[static_cast<size_t>(r * n + k)] - m) / s;
  }
  return y;
}

// SoftmaxOutput's gradient (OPS.md notes): (softmax − one_hot(label)) · grad_scale / norm; rows
// with label == ignore_label give 0 when use_ignore.
std::vector<HostTensor> SoftmaxOutputGradient(const RunSpec& f) {
  const HostTensor& x = f.in[0];
  const HostTensor& label = f.in[1];
  const double scale = f.attrs.GetFloat("grad_scale", 1.0);
  const double ignore = f.attrs.GetFloat("ignore_label", -1.0);
  const bool use_ignore = f.attrs.GetBool("use_ignore", false);
  const bool multi = f.attrs.GetBool("multi_output", false);
  const std::string norm = f.attrs.GetString("normalization", "null");
  HostTensor g{x.shape, x.dtype, std::vector<double>(x.v.size(), 0.0)};
  const int64_t n = x.shape.ndim() > 0 ? x.shape[0] : 1;
  // multi_output: classes on axis 1, each (n, position) a softmax over them; otherwise MXNet's
  // backward views the output as (label size, rest) (OPS.md).
  const int64_t classes = multi ? x.shape[1] : x.shape.Size() / std::max<int64_t>(label.shape.Size(), 1);
  const int64_t inner = multi ? ref::Prod(x.shape, 2, x.shape.ndim()) : 1;
  const int64_t rows = label.shape.Size();
  std::vector<double> p(x.v.size());
  if (multi) {
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i) {
        std::vector<double> col(static_cast<size_t>(classes));
        for (int64_t c = 0; c < classes; ++c)
          col[static_cast<size_t>(c)] = x.v[static_cast<size_t>((b * classes + c) * inner + i)];
        const std::vector<double> s = RowSoftmax(col, 1, classes);
        for (int64_t c = 0; c < classes; ++c)
          p[static_cast<size_t>((b * classes + c) * inner + i)] = s[static_cast<size_t>(c)];
      }
  } else {
    // The forward's softmax is over the last axis (preserve_shape) or over (N, rest); the
    // gradient's rows are the label's elements.
    const int64_t len = f.attrs.GetBool("preserve_shape", false) ? x.shape[x.shape.ndim() - 1]
                                                                 : x.shape.Size() / std::max<int64_t>(n, 1);
    p = RowSoftmax(x.v, x.shape.Size() / std::max<int64_t>(len, 1), len);
  }
  if (label.shape == x.shape) {
    // A label of the output's shape holds probabilities: (p − label)·grad_scale, nothing divided.
    for (size_t i = 0; i < g.v.size(); ++i) g.v[i] = (p[i] - label.v[i]) * scale;
    return {g, ref::Filled(label.shape, label.dtype, 0.0)};
  }
  int64_t valid = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const double l = label.v[static_cast<size_t>(r)];
    const bool skip = use_ignore && l == ignore;
    valid += !skip;
    const int64_t b = multi ? r / inner : r, i = multi ? r % inner : 0;
    for (int64_t c = 0; c < classes; ++c) {
      const size_t at = static_cast<size_t>(multi ? (b * classes + c) * inner + i : r * classes + c);
      g.v[at] = skip ? 0.0 : p[at] - (static_cast<int64_t>(l) == c ? 1.0 : 0.0);
    }
  }
  double div = 1;
  if (norm == "batch") div = static_cast<double>(multi ? n * inner : rows);
  if (norm == "valid") div = static_cast<double>(std::max<int64_t>(valid, 1));
  if (norm == "null" && multi) div = static_cast<double>(inner);
  for (double& v : g.v) v *= scale / div;
  return {g, ref::Filled(label.shape, label.dtype, 0.0)};
}

// LayerNorm's gradient with the statistics' own output gradients ignored (as MXNet).
std::vector<HostTensor> LayerNormGradient(const RunSpec& f, const std::vector<HostTensor>& og) {
  const HostTensor& x = f.in[0];
  const HostTensor& gamma = f.in[1];
  const size_t axis = ref::Axis(f.attrs.GetInt("axis", -1), x.shape.ndim());
  const double eps = f.attrs.GetFloat("eps", 1e-5);
  const int64_t n = x.shape[axis], inner = ref::Prod(x.shape, axis + 1, x.shape.ndim());
  const int64_t outer = ref::Prod(x.shape, 0, axis);
  HostTensor gx{x.shape, x.dtype, std::vector<double>(x.v.size(), 0.0)};
  HostTensor gg = ref::Filled(gamma.shape, gamma.dtype, 0.0), gb = ref::Filled(f.in[2].shape, f.in[2].dtype, 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return static_cast<size_t>((o * n + k) * inner + i); };
      double mean = 0, var = 0;
      for (int64_t k = 0; k < n; ++k) mean += x.v[at(k)];
      mean /= static_cast<double>(n);
      for (int64_t k = 0; k < n; ++k) var += (x.v[at(k)] - mean) * (x.v[at(k)] - mean);
      const double rstd = 1.0 / std::sqrt(var / static_cast<double>(n) + eps);
      double mdy = 0, mdyx = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double xh = (x.v[at(k)] - mean) * rstd, dy = og[0].v[at(k)] * gamma.v[static_cast<size_t>(k)];
        mdy += dy / static_cast<double>(n);
        mdyx += dy * xh / static_cast<double>(n);
        gg.v[static_cast<size_t>(k)] += og[0].v[at(k)] * xh;
        gb.v[static_cast<size_t>(k)] += og[0].v[at(k)];
      }
      for (int64_t k = 0; k < n; ++k) {
        const double xh = (x.v[at(k)] - mean) * rstd, dy = og[0].v[at(k)] * gamma.v[static_cast<size_t>(k)];
        gx.v[at(k)] = rstd * (dy - mdy - xh * mdyx);
      }
    }
  return {gx, gg, gb};
}

// MXNet's SELU constants (Klambauer et al. 2017, as mshadow_op.h spells them).
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluLambda = 1.0507009873554804934193349852946;

}  // namespace

std::optional<Reference> ReferenceForward(const RunSpec& spec, const RunResult& device, std::string* error) {
  auto it = Forwards().find(spec.op);
  if (it == Forwards().end()) return std::nullopt;
  ref::Call call{spec, device, {}, {}, error};
  for (size_t o = 0; o < spec.sig.out_shapes.size(); ++o)
    call.out.push_back(ref::Filled(spec.sig.out_shapes[o], spec.sig.out_dtypes[o], 0.0));
  call.aux = spec.aux;
  it->second(call);
  RoundAll(call.out);
  RoundAll(call.aux);
  return Reference{std::move(call.out), std::move(call.aux)};
}

bool HasReferenceForward(const std::string& op) { return Forwards().count(op) > 0; }

std::optional<std::vector<HostTensor>> ReferenceGradient(const RunSpec& f, const RunResult& fwd,
                                                         const std::vector<HostTensor>& og) {
  std::vector<HostTensor> g;
  const HostTensor& x = f.in[0];
  auto like = [](const HostTensor& t) { return ref::Filled(t.shape, t.dtype, 0.0); };
  if (f.op == "SoftmaxOutput") {
    g = SoftmaxOutputGradient(f);
  } else if (f.op == "LinearRegressionOutput" || f.op == "LogisticRegressionOutput" || f.op == "MAERegressionOutput") {
    // (output − label) · grad_scale / (label size / N), its sign for MAE (−1 where equal); the
    // label gets 0.
    const HostTensor& label = f.in[1];
    const HostTensor& y = fwd.out.at(0);
    const int64_t n = label.shape.ndim() > 0 ? label.shape[0] : 1;
    const double scale = f.attrs.GetFloat("grad_scale", 1.0) / static_cast<double>(label.shape.Size() / n);
    g = {like(x), like(label)};
    for (size_t i = 0; i < x.v.size(); ++i) {
      const double d = y.v[i] - label.v[i];
      g[0].v[i] = (f.op == "MAERegressionOutput" ? (d > 0 ? 1.0 : -1.0) : d) * scale;
    }
  } else if (f.op == "MakeLoss") {
    // grad_scale everywhere (divided by N for normalization batch); the out-grad is ignored.
    double value = f.attrs.GetFloat("grad_scale", 1.0);
    if (f.attrs.GetString("normalization", "null") == "batch") value /= static_cast<double>(x.shape[0]);
    g = {ref::Filled(x.shape, x.dtype, value)};
  } else if (f.op == "Dropout") {
    // out_grad · mask, the mask the forward drew (1 everywhere outside training).
    g = {like(x)};
    const HostTensor& mask = fwd.out.at(1);  // broadcast along Dropout's axes
    for (size_t i = 0; i < x.v.size(); ++i)
      g[0].v[i] =
          og[0].v[i] *
          (f.is_train ? mask.v[static_cast<size_t>(ref::BroadcastSource(static_cast<int64_t>(i), x.shape, mask.shape))]
                      : 1.0);
  } else if (f.op == "LeakyReLU" && f.attrs.GetString("act_type", "leaky") == "selu") {
    // MXNet 1.9's selu gradient below zero, λ·(y + α) with y the output (OPS.md).
    g = {like(x)};
    for (size_t i = 0; i < x.v.size(); ++i) {
      const double y = x.v[i] > 0 ? kSeluLambda * x.v[i] : kSeluLambda * kSeluAlpha * std::expm1(x.v[i]);
      g[0].v[i] = og[0].v[i] * (x.v[i] > 0 ? kSeluLambda : kSeluLambda * (y + kSeluAlpha));
    }
  } else if (f.op == "LeakyReLU" && f.attrs.GetString("act_type", "leaky") == "rrelu") {
    // out_grad where the output is positive, out_grad · slope elsewhere (slopes: the mask output).
    g = {like(x)};
    for (size_t i = 0; i < x.v.size(); ++i) g[0].v[i] = og[0].v[i] * (x.v[i] > 0 ? 1.0 : fwd.out.at(1).v[i]);
  } else if (f.op == "LayerNorm") {
    g = LayerNormGradient(f, og);
  } else if (f.op == "Cast" || f.op == "amp_cast") {
    g = {like(x)};
    g[0].v = og[0].v;
  } else if (f.op == "topk" && (f.attrs.GetString("ret_typ") == "indices" || f.attrs.GetString("ret_typ") == "mask")) {
    g = {like(x)};
  } else if (f.op == "_sample_multinomial") {
    // The log-probabilities' gradient: 1/p at each drawn category (the indices get none).
    g = {like(x)};
    const size_t k = static_cast<size_t>(x.shape[x.shape.ndim() - 1]), rows = x.v.size() / k;
    const std::vector<double>& drawn = fwd.out.at(0).v;
    const size_t m = rows == 0 ? 0 : drawn.size() / rows;
    for (size_t i = 0; og.size() > 1 && i < drawn.size(); ++i) {
      const size_t at = (i / m) * k + static_cast<size_t>(drawn[i]);
      g[0].v[at] += og[1].v[i] / x.v[at];
    }
  } else if (auto math = ref::MathGradient(f, og)) {
    g = std::move(*math);
  } else {
    return std::nullopt;
  }
  for (HostTensor& t : g)
    for (double& v : t.v) v = RoundTo(t.dtype, v);
  return g;
}

}  // namespace wconf
