// References of the optimizer updates (MXNet 1.9's formulas as core/operator/OPS.md states them:
// sgd, sgd_mom, nag_mom, adam, rmsprop, rmspropalex; state arrays are aux and advance) and of the
// KVStore's 2-bit gradient compression (_quantize_2bit / _dequantize_2bit).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "reference_update.h"
#include "weft/base.h"

namespace wconf::ref {

Hyper ReadHyper(const Call& c, double lr, double wd) {
  return Hyper{lr, wd, c.attrs().GetFloat("rescale_grad", 1.0), c.attrs().GetFloat("clip_gradient", -1.0),
               c.attrs().GetFloat("clip_weights", -1.0)};
}

Hyper ReadHyper(const Call& c) { return ReadHyper(c, c.attrs().GetFloat("lr"), c.attrs().GetFloat("wd", 0.0)); }

double Clip(double x, double bound) { return bound >= 0 ? std::clamp(x, -bound, bound) : x; }

double SgdStep(const Hyper& h, double w, double g) {
  return (1 - h.lr * h.wd) * w - h.lr * Clip(h.rescale * g, h.clip_gradient);
}

double SgdMomStep(const Hyper& h, double momentum, double w, double g, double& mom) {
  mom = momentum * mom - h.lr * (Clip(h.rescale * g, h.clip_gradient) + h.wd * w);
  return w + mom;
}

double NagMomStep(const Hyper& h, double momentum, double w, double g, double& mom) {
  const double gp = Clip(h.rescale * g, h.clip_gradient) + h.wd * w;
  mom = momentum * mom - h.lr * gp;
  return w + momentum * mom - h.lr * gp;
}

namespace {

void Update(Call& c, const std::string& op) {
  const Hyper h = ReadHyper(c);
  const double momentum = c.attrs().GetFloat("momentum", 0.0);
  if (op == "sgd_update") {
    ForEach(c, [&](size_t, double w, double g) { return SgdStep(h, w, g); });
  } else if (op == "sgd_mom_update") {
    ForEach(c, [&](size_t i, double w, double g) { return SgdMomStep(h, momentum, w, g, c.aux[0].v[i]); });
  } else if (op == "nag_mom_update") {
    ForEach(c, [&](size_t i, double w, double g) { return NagMomStep(h, momentum, w, g, c.aux[0].v[i]); });
  } else if (op == "adam_update") {
    const double b1 = c.attrs().GetFloat("beta1", 0.9), b2 = c.attrs().GetFloat("beta2", 0.999);
    const double eps = c.attrs().GetFloat("epsilon", 1e-8);
    ForEach(c, [&](size_t i, double w, double g) {
      const double gp = Clip(h.rescale * g + h.wd * w, h.clip_gradient);
      double &mean = c.aux[0].v[i], &var = c.aux[1].v[i];
      mean = b1 * mean + (1 - b1) * gp;
      var = b2 * var + (1 - b2) * gp * gp;
      return w - h.lr * mean / (std::sqrt(var) + eps);
    });
  } else if (op == "rmsprop_update") {
    const double g1 = c.attrs().GetFloat("gamma1", 0.95), eps = c.attrs().GetFloat("epsilon", 1e-8);
    ForEach(c, [&](size_t i, double w, double g) {
      const double gp = Clip(h.rescale * g + h.wd * w, h.clip_gradient);
      double& n = c.aux[0].v[i];
      n = (1 - g1) * gp * gp + g1 * n;
      return Clip(w - h.lr * gp / std::sqrt(n + eps), h.clip_weights);
    });
  } else {  // rmspropalex_update
    const double g1 = c.attrs().GetFloat("gamma1", 0.95), g2 = c.attrs().GetFloat("gamma2", 0.9);
    const double eps = c.attrs().GetFloat("epsilon", 1e-8);
    ForEach(c, [&](size_t i, double w, double g) {
      const double gp = Clip(h.rescale * g + h.wd * w, h.clip_gradient);
      double &n = c.aux[0].v[i], &gs = c.aux[1].v[i], &delta = c.aux[2].v[i];
      n = (1 - g1) * gp * gp + g1 * n;
      gs = (1 - g1) * gp + g1 * gs;
      delta = g2 * delta - h.lr * gp / std::sqrt(n - gs * gs + eps);
      return Clip(w + delta, h.clip_weights);
    });
  }
}

// The 2-bit code of element i sits in byte (i mod 16) / 4 of word i / 16, highest bit pair first:
// bits 8·((i mod 16) / 4) + 6 − 2·(i mod 4) of the little-endian word.
int Shift(size_t i) { return static_cast<int>(8 * ((i % 16) / 4) + 6 - 2 * (i % 4)); }

// Per element r = residual + data; r ≥ t: code 11, r −= t; r ≤ −t: code 10, r += t; else 00.
void Quantize(Call& c) {
  const double t = RoundTo(c.in(0).dtype, c.attrs().GetFloat("threshold", 0.5));  // as the kernel holds it
  std::vector<uint32_t> words(c.out[0].v.size(), 0);
  for (size_t i = 0; i < c.in(0).v.size(); ++i) {
    double& r = c.aux[0].v[i];
    // The kernel sums in the data's dtype: round as it does, so the codes match at the threshold.
    r = RoundTo(c.in(0).dtype, r + c.in(0).v[i]);
    uint32_t code = 0;
    if (r >= t) {
      code = 3;
      r -= t;
    } else if (r <= -t) {
      code = 2;
      r += t;
    }
    words[i / 16] |= code << Shift(i);
  }
  for (size_t w = 0; w < words.size(); ++w) c.out[0].v[w] = static_cast<double>(words[w]);
}

void Dequantize(Call& c) {
  const double t = RoundTo(c.out[0].dtype, c.attrs().GetFloat("threshold", 0.5));
  for (size_t i = 0; i < c.out[0].v.size(); ++i) {
    const uint32_t code = (static_cast<uint32_t>(c.in(0).v[i / 16]) >> Shift(i)) & 3u;
    c.out[0].v[i] = code == 3 ? t : code == 2 ? -t : 0.0;
  }
}

}  // namespace

void RegisterUpdateReferences(Table& t) {
  for (const char* op :
       {"sgd_update", "sgd_mom_update", "nag_mom_update", "adam_update", "rmsprop_update", "rmspropalex_update"})
    t[op] = [op = std::string(op)](Call& c) { Update(c, op); };
  t["_quantize_2bit"] = Quantize;
  t["_dequantize_2bit"] = Dequantize;
}

}  // namespace wconf::ref
