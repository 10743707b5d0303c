// References of the normalisations (BatchNorm, LayerNorm, InstanceNorm, L2Normalization), softmax
// and log_softmax, and the loss layers' forwards (SoftmaxOutput, LinearRegressionOutput, MakeLoss,
// BlockGrad). Statistics are the biased ones (divided by the group size), as MXNet's.
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
    c.out[1].v[static_cast<size_t>(ch)] = mean;
    c.out[2].v[static_cast<size_t>(ch)] = inv_std;
  }
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

// Forward: softmax over axis 1 with multi_output, else over data viewed as (N, rest).
void SoftmaxOutput(Call& c) {
  const Shape& s = c.in(0).shape;
  const Groups g = c.attrs().GetBool("multi_output", false) ? Groups{s[0], s[1], Prod(s, 2, s.ndim())}
                                                            : Groups{s[0], Prod(s, 1, s.ndim()), 1};
  Softmax(c.in(0).v, g, 1.0, false, c.out[0].v);
}

void Identity(Call& c) { c.out[0].v = c.in(0).v; }

}  // namespace

void RegisterNormReferences(Table& t) {
  t["BatchNorm"] = BatchNorm;
  t["LayerNorm"] = LayerNorm;
  t["InstanceNorm"] = InstanceNorm;
  t["L2Normalization"] = L2Normalization;
  t["softmax"] = [](Call& c) { SoftmaxAlong(c, false); };
  t["log_softmax"] = [](Call& c) { SoftmaxAlong(c, true); };
  t["SoftmaxOutput"] = SoftmaxOutput;
  for (const char* op : {"LinearRegressionOutput", "MakeLoss", "BlockGrad"}) t[op] = Identity;
}

}  // namespace wconf::ref
