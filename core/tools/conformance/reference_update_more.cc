// References of the optimizer updates of core/operator/defs/optimizer_more.cc, from MXNet 1.9's op
// docstrings (checked against MXNet 1.9.1 itself where the docstring is loose):
//   mp_sgd_update, mp_sgd_mom_update, mp_nag_mom_update: the sgd / sgd_mom / nag_mom rule applied
//       to the float32 master copy weight32 (aux, advances); the output is weight32 in the
//       weight's dtype. (MXNet 1.9.1's mp_nag_mom_update stores a mom whose weight-decay term
//       uses the new weight32 rather than the old one; its docstring, "multi-precision NAG", and
//       nag_mom_update use the old one, as here.)
//   multi_* / preloaded_multi_* (mp_)sgd(_mom)_update: the same for each of num_weights weights
//       with that weight's lr and wd (attributes lrs, wds, or the last two inputs when preloaded).
//   signsgd_update: (1 − lr·wd)·w − lr·sign(grad). MXNet takes the sign of the raw gradient:
//       rescale_grad and clip_gradient do not enter (MXNet 1.9.1 with rescale_grad < 0 shows it).
//   signum_update: mom = momentum·mom − (1 − momentum)·(wd·w + clip(rescale·g));
//       w = (1 − lr·wd_lh)·w + lr·sign(mom).
//   ftrl_update, ftml_update, _sparse_adagrad_update, lamb_update_phase1/2 (and mp_): the docstrings'
//   formulas, below.
//       LAMB phase 2 bounds r1 from above with min (the docstring's "max(r1, upper_bound)" is a
//       typo; MXNet computes min). mp_lamb_update_phase2 advances weight32 as its docstring says
//       (MXNet 1.9.1 itself leaves weight32 as it was).
//   multi_sum_sq: Σx² per array (float32); multi_lars: the LARS learning rates.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "operator/op_util.h"
#include "reference_update.h"

namespace wconf::ref {
namespace {

double Sign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }

enum class Sgd { kPlain, kMomentum, kNag };

Sgd SgdKind(const std::string& op) {
  if (op.find("nag") != std::string::npos) return Sgd::kNag;
  return op.find("mom") != std::string::npos ? Sgd::kMomentum : Sgd::kPlain;
}

// One weight of the SGD family: `mom` and `w32` null when the op has no such state; the rule
// reads weight32 instead of the weight when there is one, and writes the new weight back to it.
void SgdWeight(const Hyper& h, Sgd rule, double momentum, const HostTensor& w, const HostTensor& g, HostTensor* mom,
               HostTensor* w32, HostTensor& out) {
  for (size_t i = 0; i < w.v.size(); ++i) {
    const double wi = w32 != nullptr ? w32->v[i] : w.v[i];
    double m = mom != nullptr ? mom->v[i] : 0.0;
    const double next = rule == Sgd::kPlain      ? SgdStep(h, wi, g.v[i])
                        : rule == Sgd::kMomentum ? SgdMomStep(h, momentum, wi, g.v[i], m)
                                                 : NagMomStep(h, momentum, wi, g.v[i], m);
    if (mom != nullptr) mom->v[i] = m;
    if (w32 != nullptr) w32->v[i] = next;
    out.v[i] = next;
  }
}

// mp_sgd_update, mp_sgd_mom_update, mp_nag_mom_update: aux [mom,] weight32.
void MpSgd(Call& c) {
  const Sgd rule = SgdKind(c.spec.op);
  HostTensor* mom = rule == Sgd::kPlain ? nullptr : &c.aux[0];
  SgdWeight(ReadHyper(c), rule, c.attrs().GetFloat("momentum", 0.0), c.in(0), c.in(1), mom, &c.aux.back(), c.out[0]);
}

// multi_* and preloaded_multi_*: inputs weight_i, grad_i[, lrs, wds]; aux per weight [mom_i][, weight32_i].
void MultiSgd(Call& c) {
  const std::string& op = c.spec.op;
  const Sgd rule = SgdKind(op);
  const bool mp = op.find("_mp_") != std::string::npos, preloaded = op.starts_with("preloaded_");
  const size_t n = static_cast<size_t>(c.attrs().GetInt("num_weights"));
  const size_t states = (rule == Sgd::kPlain ? 0 : 1) + (mp ? 1 : 0);
  std::vector<double> lrs, wds;
  if (preloaded) {
    lrs = c.in(2 * n).v;
    wds = c.in(2 * n + 1).v;
  } else {
    lrs = weft::sdk::ParseFloatTuple(c.attrs().GetString("lrs"), "lrs");
    wds = weft::sdk::ParseFloatTuple(c.attrs().GetString("wds"), "wds");
  }
  const double momentum = c.attrs().GetFloat("momentum", 0.0);
  for (size_t i = 0; i < n; ++i) {
    HostTensor* mom = rule == Sgd::kPlain ? nullptr : &c.aux[i * states];
    HostTensor* w32 = mp ? &c.aux[i * states + states - 1] : nullptr;
    SgdWeight(ReadHyper(c, lrs.at(i), wds.at(i)), rule, momentum, c.in(2 * i), c.in(2 * i + 1), mom, w32, c.out[i]);
  }
}

void SignSgd(Call& c) {
  const Hyper h = ReadHyper(c);
  ForEach(c, [&](size_t, double w, double g) { return (1 - h.lr * h.wd) * w - h.lr * Sign(g); });
}

void Signum(Call& c) {
  const Hyper h = ReadHyper(c);
  const double momentum = c.attrs().GetFloat("momentum", 0.0), wd_lh = c.attrs().GetFloat("wd_lh", 0.0);
  ForEach(c, [&](size_t i, double w, double g) {
    double& mom = c.aux[0].v[i];
    mom = momentum * mom - (1 - momentum) * (h.wd * w + Clip(h.rescale * g, h.clip_gradient));
    return (1 - h.lr * wd_lh) * w + h.lr * Sign(mom);
  });
}

// FTRL-proximal (McMahan et al. 2013) as ftrl_update's docstring: aux z, n.
void Ftrl(Call& c) {
  const Hyper h = ReadHyper(c);
  const double lamda1 = c.attrs().GetFloat("lamda1", 0.01), beta = c.attrs().GetFloat("beta", 1.0);
  ForEach(c, [&](size_t i, double w, double g) {
    const double gr = Clip(h.rescale * g, h.clip_gradient);
    double &z = c.aux[0].v[i], &n = c.aux[1].v[i];
    z += gr - (std::sqrt(n + gr * gr) - std::sqrt(n)) * w / h.lr;
    n += gr * gr;
    return std::fabs(z) > lamda1 ? (Sign(z) * lamda1 - z) / ((beta + std::sqrt(n)) / h.lr + h.wd) : 0.0;
  });
}

// AdaGrad (Duchi et al. 2011) as _sparse_adagrad_update's docstring: aux history.
void AdaGrad(Call& c) {
  const Hyper h = ReadHyper(c);
  const double eps = c.attrs().GetFloat("epsilon", 1e-7);
  ForEach(c, [&](size_t i, double w, double g) {
    const double gr = Clip(h.rescale * g, h.clip_gradient);
    double& history = c.aux[0].v[i];
    history += gr * gr;
    return w - h.lr * gr / std::sqrt(history + eps);
  });
}

// FTML (Zheng & Kwok 2017) as ftml_update's docstring: aux d, v, z; the weight decay enters
// before clipping, and the clipping attribute is clip_grad.
void Ftml(Call& c) {
  const Hyper h = ReadHyper(c);
  const double clip = c.attrs().GetFloat("clip_grad", -1.0), eps = c.attrs().GetFloat("epsilon", 1e-8);
  const double b1 = c.attrs().GetFloat("beta1", 0.6), b2 = c.attrs().GetFloat("beta2", 0.999);
  const double t = static_cast<double>(c.attrs().GetInt("t"));
  ForEach(c, [&](size_t i, double w, double g) {
    const double gp = Clip(h.rescale * g + h.wd * w, clip);
    double &d = c.aux[0].v[i], &v = c.aux[1].v[i], &z = c.aux[2].v[i];
    v = b2 * v + (1 - b2) * gp * gp;
    const double dt = (1 - std::pow(b1, t)) / h.lr * (std::sqrt(v / (1 - std::pow(b2, t))) + eps);
    z = b1 * z + (1 - b1) * gp - (dt - b1 * d) * w;
    d = dt;
    return -z / dt;
  });
}

// LAMB phase 1 (You et al. 2019): aux mean, var[, weight32]; the output g, with the weight decay
// applied to weight32 when there is one.
void LambPhase1(Call& c) {
  const Hyper h = ReadHyper(c, 0.0, c.attrs().GetFloat("wd"));
  const double b1 = c.attrs().GetFloat("beta1", 0.9), b2 = c.attrs().GetFloat("beta2", 0.999);
  const double eps = c.attrs().GetFloat("epsilon", 1e-6), t = static_cast<double>(c.attrs().GetInt("t"));
  const bool correct = c.attrs().GetBool("bias_correction", true);
  const bool mp = c.aux.size() == 3;
  ForEach(c, [&](size_t i, double w, double g) {
    const double gr = Clip(h.rescale * g, h.clip_gradient);
    double &mean = c.aux[0].v[i], &var = c.aux[1].v[i];
    mean = b1 * mean + (1 - b1) * gr;
    var = b2 * var + (1 - b2) * gr * gr;
    const double m = correct ? mean / (1 - std::pow(b1, t)) : mean;
    const double s = correct ? var / (1 - std::pow(b2, t)) : var;
    return m / (std::sqrt(s) + eps) + h.wd * (mp ? c.aux[2].v[i] : w);
  });
}

// LAMB phase 2: inputs weight, g, r1, r2; aux [weight32], which the mp_ op reads and advances.
void LambPhase2(Call& c) {
  const double lower = c.attrs().GetFloat("lower_bound", -1.0), upper = c.attrs().GetFloat("upper_bound", -1.0);
  double r1 = c.in(2).v.at(0);
  const double r2 = c.in(3).v.at(0);
  if (lower >= 0) r1 = std::max(r1, lower);
  if (upper >= 0) r1 = std::min(r1, upper);
  const double lr = c.attrs().GetFloat("lr") * (r1 == 0 || r2 == 0 ? 1.0 : r1 / r2);
  HostTensor* w32 = c.aux.empty() ? nullptr : &c.aux[0];
  for (size_t i = 0; i < c.in(0).v.size(); ++i) {
    const double next = (w32 != nullptr ? w32->v[i] : c.in(0).v[i]) - lr * c.in(1).v[i];
    if (w32 != nullptr) w32->v[i] = next;
    c.out[0].v[i] = next;
  }
}

void MultiSumSq(Call& c) {
  for (size_t a = 0; a < c.spec.in.size(); ++a) {
    double s = 0;
    for (double x : c.in(a).v) s += x * x;
    c.out[0].v[a] = s;
  }
}

// LARS (You et al. 2017): lrs[i]·eta·‖w‖ / (‖g‖·rescale_grad + wds[i]·‖w‖ + eps) from the sums of
// squares, lrs[i] when either norm is 0.
void MultiLars(Call& c) {
  const double eta = c.attrs().GetFloat("eta"), eps = c.attrs().GetFloat("eps");
  const double rescale = c.attrs().GetFloat("rescale_grad", 1.0);
  for (size_t i = 0; i < c.in(0).v.size(); ++i) {
    const double lr = c.in(0).v[i], wn = std::sqrt(c.in(1).v[i]), gn = std::sqrt(c.in(2).v[i]), wd = c.in(3).v[i];
    c.out[0].v[i] = wn > 0 && gn > 0 ? lr * eta * wn / (gn * rescale + wd * wn + eps) : lr;
  }
}

}  // namespace

void RegisterMoreUpdateReferences(Table& t) {
  for (const char* op : {"mp_sgd_update", "mp_sgd_mom_update", "mp_nag_mom_update"}) t[op] = MpSgd;
  for (const std::string prefix : {"multi_", "preloaded_multi_"})
    for (const char* rule : {"sgd_update", "sgd_mom_update", "mp_sgd_update", "mp_sgd_mom_update"})
      t[prefix + rule] = MultiSgd;
  t["signsgd_update"] = SignSgd;
  t["signum_update"] = Signum;
  t["ftrl_update"] = Ftrl;
  t["_sparse_adagrad_update"] = AdaGrad;
  t["ftml_update"] = Ftml;
  for (const char* op : {"lamb_update_phase1", "mp_lamb_update_phase1"}) t[op] = LambPhase1;
  for (const char* op : {"lamb_update_phase2", "mp_lamb_update_phase2"}) t[op] = LambPhase2;
  t["multi_sum_sq"] = MultiSumSq;
  t["multi_lars"] = MultiLars;
}

}  // namespace wconf::ref
