// Helpers shared by the optimizer-update references (reference_update.cc: sgd, adam, rmsprop...;
// reference_update_more.cc: the multi-precision, multi-tensor, sign, FTRL/FTML, LAMB and LARS ops):
// the common hyper-parameters and the SGD family's per-element rules, in double, as MXNet 1.9's
// op docstrings state them.
#pragma once

#include "reference.h"

namespace wconf::ref {

struct Hyper {
  double lr, wd, rescale, clip_gradient, clip_weights;
};

/// lr, wd (0), rescale_grad (1), clip_gradient (−1), clip_weights (−1) from the node's attributes.
Hyper ReadHyper(const Call& c);
/// The same with lr and wd given (the multi-tensor ops take them per weight).
Hyper ReadHyper(const Call& c, double lr, double wd);

/// x clipped to ±bound when bound ≥ 0.
double Clip(double x, double bound);

/// sgd_update: (1 − lr·wd)·w − lr·clip(rescale·g).
double SgdStep(const Hyper& h, double w, double g);
/// sgd_mom_update: mom = momentum·mom − lr·(clip(rescale·g) + wd·w); returns w + mom.
double SgdMomStep(const Hyper& h, double momentum, double w, double g, double& mom);
/// nag_mom_update: g' = clip(rescale·g) + wd·w; mom = momentum·mom − lr·g'; returns
/// w + momentum·mom − lr·g'.
double NagMomStep(const Hyper& h, double momentum, double w, double g, double& mom);

/// out[0][i] = f(i, weight, grad) for every element, weight and grad read from inputs 0 and 1.
template <typename F>
void ForEach(Call& c, F f) {
  for (size_t i = 0; i < c.in(0).v.size(); ++i) c.out[0].v[i] = f(i, c.in(0).v[i], c.in(1).v[i]);
}

}  // namespace wconf::ref
