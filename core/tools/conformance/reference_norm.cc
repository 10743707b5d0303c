// References of the normalisations (BatchNorm, LayerNorm, InstanceNorm, L2Normalization), softmax
// and log_softmax, and the loss layers' forwards (SoftmaxOutput, the regression outputs, MakeLoss,
// BlockGrad, CTCLoss). Statistics are the biased ones (divided by the group size), as MXNet's.
#include <algorithm>
#include <cmath>

#include "reference.h"
#include "weft/base.h"

namespace wconf::ref {
namespace {

// Element k of group (o, i) of data viewed as (outer, n, inner) sits at (o·n + k)·inner + i.
struct Groups {
  int64_t outer, n, inner;
  size_t At(int64_t o, int64_t k, int64_t i) const { return static_cast<size_t>((o * n + k) * inner + i); }
};

struct Moments {
  double mean, var;
};

Moments GroupMoments(const std::vector<double>& x, const Groups& g, int64_t o, int64_t i) {
  double mean = 0, var = 0;
  for (int64_t k = 0; k < g.n; ++k) mean += x[g.At(o, k, i)];
  mean /= static_cast<double>(g.n);
  for (int64_t k = 0; k < g.n; ++k) var += (x[g.At(o, k, i)] - mean) * (x[g.At(o, k, i)] - mean);
  return {mean, var / static_cast<double>(g.n)};
}

// Per channel of `axis`: the batch's moments in training (updating the moving ones), the moving
// ones otherwise. Hidden outputs: the mean used and the inverse std 1/√(var + eps) (MXNet's).
void BatchNorm(Call& c) {
  const HostTensor &x = c.in(0), &gamma = c.in(1), &beta = c.in(2);
  const size_t axis = Axis(c.attrs().GetInt("axis", 1), x.shape.ndim());
  const double eps = c.attrs().GetFloat("eps", 1e-3), momentum = c.attrs().GetFloat("momentum", 0.9);
  const bool fix_gamma = c.attrs().GetBool("fix_gamma", true);
  const bool batch = c.spec.is_train && !c.attrs().GetBool("use_global_stats", false);
  // Channels as the middle axis of (outer, C, inner); a channel's elements are all (o, i).
  const Groups g{Prod(x.shape, 0, axis), x.shape[axis], Prod(x.shape, axis + 1, x.shape.ndim())};
  for (int64_t ch = 0; ch < g.n; ++ch) {
    double mean = 0, var = 0;
    const double count = static_cast<double>(g.outer * g.inner);
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t i = 0; i < g.inner; ++i) mean += x.v[g.At(o, ch, i)] / count;
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t i = 0; i < g.inner; ++i) var += (x.v[g.At(o, ch, i)] - mean) * (x.v[g.At(o, ch, i)] - mean) / count;
    double& moving_mean = c.aux[0].v[static_cast<size_t>(ch)];
    double& moving_var = c.aux[1].v[static_cast<size_t>(ch)];
    if (batch) {
      moving_mean = momentum * moving_mean + (1 - momentum) * mean;
      moving_var = momentum * moving_var + (1 - momentum) * var;
    } else {
      mean = moving_mean;
      var = moving_var;
    }
    const double inv_std = 1.0 / std::sqrt(var + eps);
    const double gm = fix_gamma ? 1.0 : gamma.v[static_cast<size_t>(ch)];
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t i = 0; i < g.inner; ++i) {
        const size_t at = g.At(o, ch, i);
        c.out[0].v[at] = (x.v[at] - mean) * inv_std * gm + beta.v[static_cast<size_t>(ch)];
      }
    if (c.out.size() < 3) continue;  // _sg_batch_norm: no hidden outputs
    c.out[1].v[static_cast<size_t>(ch)] = mean;
    c.out[2].v[static_cast<size_t>(ch)] = inv_std;
  }
}

// _sg_batch_norm: BatchNorm, then act_type's relu.
void SgBatchNorm(Call& c) {
  BatchNorm(c);
  if (c.attrs().GetString("act_type", "None") == "relu")
    for (double& v : c.out[0].v) v = std::max(v, 0.0);
}

// LayerNorm: groups along `axis`, gamma/beta by the position in the group; hidden mean and
// std = √(var + eps). InstanceNorm: the spatial axes of each (n, c), gamma/beta by channel; hidden
// mean and var.
void NormalizeGroups(Call& c, const Groups& g, double eps, bool instance) {
  const HostTensor &x = c.in(0), &gamma = c.in(1), &beta = c.in(2);
  const int64_t channels = instance ? x.shape[1] : 0;
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t i = 0; i < g.inner; ++i) {
      const Moments m = GroupMoments(x.v, g, o, i);
      const double std = std::sqrt(m.var + eps);
      for (int64_t k = 0; k < g.n; ++k) {
        const size_t p = static_cast<size_t>(instance ? o % channels : k);
        c.out[0].v[g.At(o, k, i)] = (x.v[g.At(o, k, i)] - m.mean) / std * gamma.v[p] + beta.v[p];
      }
      const size_t at = static_cast<size_t>(o * g.inner + i);
      c.out[1].v[at] = m.mean;
      c.out[2].v[at] = instance ? m.var : std;
    }
}

void LayerNorm(Call& c) {
  const Shape& s = c.in(0).shape;
  const size_t axis = Axis(c.attrs().GetInt("axis", -1), s.ndim());
  NormalizeGroups(c, Groups{Prod(s, 0, axis), s[axis], Prod(s, axis + 1, s.ndim())}, c.attrs().GetFloat("eps", 1e-5),
                  false);
}

void InstanceNorm(Call& c) {
  const Shape& s = c.in(0).shape;
  NormalizeGroups(c, Groups{s[0] * s[1], Prod(s, 2, s.ndim()), 1}, c.attrs().GetFloat("eps", 1e-3), true);
}

// output = x / √(Σx² + eps) over all but axis 0 (instance), over axis 1 (channel) or over the
// spatial axes (spatial); the hidden norm in MXNet's shape.
void L2Normalization(Call& c) {
  const HostTensor& x = c.in(0);
  const std::string mode = c.attrs().GetString("mode", "instance");
  const double eps = c.attrs().GetFloat("eps", 1e-10);
  const Shape& s = x.shape;
  Groups g{s[0], Prod(s, 1, s.ndim()), 1};
  if (mode == "channel") g = Groups{s[0], s[1], Prod(s, 2, s.ndim())};
  if (mode == "spatial") g = Groups{s[0] * s[1], Prod(s, 2, s.ndim()), 1};
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t i = 0; i < g.inner; ++i) {
      double sq = 0;
      for (int64_t k = 0; k < g.n; ++k) sq += x.v[g.At(o, k, i)] * x.v[g.At(o, k, i)];
      const double norm = std::sqrt(sq + eps);
      for (int64_t k = 0; k < g.n; ++k) c.out[0].v[g.At(o, k, i)] = x.v[g.At(o, k, i)] / norm;
      c.out[1].v[static_cast<size_t>(o * g.inner + i)] = norm;
    }
}

// softmax (or log-softmax) of x / temperature along the middle axis of `g`.
void Softmax(const std::vector<double>& x, const Groups& g, double temperature, bool log, std::vector<double>& y) {
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t i = 0; i < g.inner; ++i) {
      double m = -INFINITY, sum = 0;
      for (int64_t k = 0; k < g.n; ++k) m = std::max(m, x[g.At(o, k, i)] / temperature);
      for (int64_t k = 0; k < g.n; ++k) sum += std::exp(x[g.At(o, k, i)] / temperature - m);
      for (int64_t k = 0; k < g.n; ++k) {
        const double z = x[g.At(o, k, i)] / temperature - m;
        y[g.At(o, k, i)] = log ? z - std::log(sum) : std::exp(z) / sum;
      }
    }
}

void SoftmaxAlong(Call& c, bool log) {
  const Shape& s = c.in(0).shape;
  const size_t axis = Axis(c.attrs().GetInt("axis", -1), s.ndim());
  Softmax(c.in(0).v, Groups{Prod(s, 0, axis), s[axis], Prod(s, axis + 1, s.ndim())},
          c.attrs().GetFloat("temperature", 1.0), log, c.out[0].v);
}

// Forward: softmax over axis 1 with multi_output, else over the last axis with preserve_shape,
// else over data viewed as (N, rest).
void SoftmaxOutput(Call& c) {
  const Shape& s = c.in(0).shape;
  const size_t last = s.ndim() - 1;
  const Groups g = c.attrs().GetBool("multi_output", false)     ? Groups{s[0], s[1], Prod(s, 2, s.ndim())}
                   : c.attrs().GetBool("preserve_shape", false) ? Groups{Prod(s, 0, last), s[last], 1}
                                                                : Groups{s[0], Prod(s, 1, s.ndim()), 1};
  Softmax(c.in(0).v, g, 1.0, false, c.out[0].v);
}

void Identity(Call& c) { c.out[0].v = c.in(0).v; }

void Logistic(Call& c) {
  c.out[0].v = c.in(0).v;
  for (double& v : c.out[0].v) v = 1.0 / (1.0 + std::exp(-v));
}

// CTCLoss by enumeration instead of the kernel's forward-backward recursion: every path of class
// indices over a sequence's frames that collapses to its label (repeats merged, then blanks
// dropped) adds its probability Π softmax to p and to the occupancy of each (frame, class) it
// passes; loss −log p, gradient softmax − occupancy / p. Only for small cases (C^T paths).
// MXNet's rules: labels end at the first padding value unless label lengths are given; a label
// that cannot fit (length + repeats > frames) gives loss 0 (weft: zero gradient).
void CTCLoss(Call& c) {
  const bool use_data = c.attrs().GetBool("use_data_lengths", false);
  const bool use_label = c.attrs().GetBool("use_label_lengths", false);
  const bool first = c.attrs().GetString("blank_label", "first") == "first";
  const Shape& s = c.in(0).shape;
  const int64_t frames = s[0], batch = s[1], classes = s[2], width = c.in(1).shape[1];
  const int64_t blank = first ? 0 : classes - 1;
  std::fill(c.out[1].v.begin(), c.out[1].v.end(), 0.0);
  for (int64_t n = 0; n < batch; ++n) {
    const int64_t t_n = use_data ? static_cast<int64_t>(c.in(2).v[n]) : frames;
    const int64_t l_n = use_label ? static_cast<int64_t>(c.in(use_data ? 3 : 2).v[n]) : width;
    std::vector<int64_t> label;
    for (int64_t i = 0; i < l_n; ++i) {
      const double v = c.in(1).v[n * width + i];
      if (!use_label && v == (first ? 0.0 : -1.0)) break;
      label.push_back(static_cast<int64_t>(v));
    }
    int64_t repeats = 0;
    for (size_t i = 1; i < label.size(); ++i) repeats += label[i] == label[i - 1];
    c.out[0].v[n] = 0.0;
    if (static_cast<int64_t>(label.size()) + repeats > t_n) continue;
    WEFT_CHECK(std::pow(static_cast<double>(classes), static_cast<double>(t_n)) <= 1 << 20,
               "reference: CTCLoss enumerates {}^{} paths; give at most 2^20", classes, t_n);
    std::vector<double> y(static_cast<size_t>(t_n * classes)), occ(y.size(), 0.0);
    for (int64_t t = 0; t < t_n; ++t) {
      double sum = 0;
      for (int64_t k = 0; k < classes; ++k) sum += std::exp(c.in(0).v[(t * batch + n) * classes + k]);
      for (int64_t k = 0; k < classes; ++k)
        y[t * classes + k] = std::exp(c.in(0).v[(t * batch + n) * classes + k]) / sum;
    }
    std::vector<int64_t> path(static_cast<size_t>(t_n), 0);
    double p = 0;
    for (bool more = true; more;) {
      std::vector<int64_t> collapsed;
      double prob = 1;
      for (int64_t t = 0; t < t_n; ++t) {
        prob *= y[t * classes + path[t]];
        if (path[t] != blank && (t == 0 || path[t] != path[t - 1])) collapsed.push_back(path[t]);
      }
      if (collapsed == label) {
        p += prob;
        for (int64_t t = 0; t < t_n; ++t) occ[t * classes + path[t]] += prob;
      }
      more = false;  // next path: count in base `classes`
      for (int64_t t = 0; t < t_n && !more; ++t) {
        if (++path[t] < classes)
          more = true;
        else
          path[t] = 0;
      }
    }
    c.out[0].v[n] = -std::log(p);
    for (int64_t t = 0; t < t_n; ++t)
      for (int64_t k = 0; k < classes; ++k)
        c.out[1].v[(t * batch + n) * classes + k] = y[t * classes + k] - occ[t * classes + k] / p;
  }
}

}  // namespace

void RegisterNormReferences(Table& t) {
  t["BatchNorm"] = BatchNorm;
  t["_sg_batch_norm"] = SgBatchNorm;
  t["LayerNorm"] = LayerNorm;
  t["InstanceNorm"] = InstanceNorm;
  t["L2Normalization"] = L2Normalization;
  t["softmax"] = [](Call& c) { SoftmaxAlong(c, false); };
  t["log_softmax"] = [](Call& c) { SoftmaxAlong(c, true); };
  t["SoftmaxOutput"] = SoftmaxOutput;
  t["CTCLoss"] = CTCLoss;
  for (const char* op : {"LinearRegressionOutput", "MAERegressionOutput", "MakeLoss", "BlockGrad"}) t[op] = Identity;
  t["LogisticRegressionOutput"] = Logistic;
}

}  // namespace wconf::ref
