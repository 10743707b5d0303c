// LRN and _backward_LRN (MXNet 1.9, src/operator/nn/lrn-inl.h): cross-channel local response
// normalisation on (N, C, ...) data, channel axis 1, window of nsize channels centred on each one
// (cut at the edges):
//   tmp_norm = knorm + alpha / nsize · Σ_window x²          (hidden output)
//   y        = x · tmp_norm^(−beta)
//   gx       = gy · tmp_norm^(−beta) − 2·alpha·beta/nsize · x · Σ_window gy · x · tmp_norm^(−beta−1)
// The window is symmetric, so the last sum (over the channels whose windows contain c) is the same
// window sum.
#include <algorithm>
#include <cmath>
#include <vector>

#include "nn_common.h"
#include "weft/sdk/ops/lrn.hpp"

namespace weft::cpu {
namespace {

using LrnParams = weft::sdk::LrnGeometry;

LrnParams ParseLrn(const KernelSetup& s, const TensorDesc& x) {
  return weft::sdk::LRNGeometry(s.op_name, s.Params<weft::sdk::LRNParam>(), x.shape);
}

// out[c] = Σ_{c' in window(c)} in[c'] for one (n, position) column of stride `inner`.
void WindowSum(const LrnParams& p, const float* in, float* out) {
  for (int64_t ch = 0; ch < p.c; ++ch) {
    float acc = 0.0f;
    const int64_t lo = std::max<int64_t>(ch - p.half, 0), hi = std::min<int64_t>(ch + p.half, p.c - 1);
    for (int64_t k = lo; k <= hi; ++k) acc += in[k * p.inner];
    out[ch * p.inner] = acc;
  }
}

class LrnForward {
 public:
  explicit LrnForward(const KernelSetup& s) {
    RequireFloat32(s);
    s.ExpectCounts(1, -1);
    if (s.outputs.empty() || s.outputs.size() > 2) Invalid(s, "expects output and the hidden tmp_norm");
    for (const TensorDesc& o : s.outputs)
      if (o.size() != s.inputs[0].size()) Invalid(s, "outputs must have data's shape " + ShapeString(s.inputs[0]));
    p_ = ParseLrn(s, s.inputs[0]);
  }
  void Compute(const KernelCall& c) const {
    const float* x = c.inputs[0].data<float>();
    const int64_t n = c.inputs[0].size();
    std::vector<float> sq(static_cast<size_t>(n)), norm(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) sq[i] = x[i] * x[i];
    const float scale = p_.alpha / static_cast<float>(p_.nsize);
    for (int64_t o = 0; o < p_.outer; ++o)
      for (int64_t i = 0; i < p_.inner; ++i) {
        const int64_t base = o * p_.c * p_.inner + i;
        WindowSum(p_, sq.data() + base, norm.data() + base);
      }
    for (int64_t i = 0; i < n; ++i) norm[i] = p_.knorm + scale * norm[i];
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      float* y = c.outputs[0].data<float>();
      for (int64_t i = 0; i < n; ++i) assign(y[i], x[i] * std::pow(norm[i], -p_.beta));
    });
    if (c.outputs.size() > 1) weft::sdk::StoreReq(c.req[1], c.outputs[1].data<float>(), norm.data(), n);
  }

 private:
  LrnParams p_;
};

// Inputs: out_grad(output), out_grad(tmp_norm) (unused), data, output, tmp_norm; output data grad.
class LrnBackward {
 public:
  explicit LrnBackward(const KernelSetup& s) {
    RequireFloat32(s);
    s.ExpectCounts(5, 1);
    for (const TensorDesc& t : s.inputs)
      if (t.size() != s.outputs[0].size()) Invalid(s, "inputs must have data's shape " + ShapeString(s.outputs[0]));
    p_ = ParseLrn(s, s.inputs[2]);
  }
  void Compute(const KernelCall& c) const {
    const float* gy = c.inputs[0].data<float>();
    const float* x = c.inputs[2].data<float>();
    const float* norm = c.inputs[4].data<float>();
    const int64_t n = c.inputs[0].size();
    std::vector<float> t(static_cast<size_t>(n)), sum(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) t[i] = gy[i] * x[i] * std::pow(norm[i], -p_.beta - 1.0f);
    for (int64_t o = 0; o < p_.outer; ++o)
      for (int64_t i = 0; i < p_.inner; ++i) {
        const int64_t base = o * p_.c * p_.inner + i;
        WindowSum(p_, t.data() + base, sum.data() + base);
      }
    const float k = -2.0f * p_.alpha * p_.beta / static_cast<float>(p_.nsize);
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      float* gx = c.outputs[0].data<float>();
      for (int64_t i = 0; i < n; ++i) assign(gx[i], gy[i] * std::pow(norm[i], -p_.beta) + k * x[i] * sum[i]);
    });
  }

 private:
  LrnParams p_;
};

}  // namespace

void RegisterLRN(KernelTable& t) {
  t.Add<LrnForward>("LRN", kF32);
  t.Add<LrnBackward>("_backward_LRN", kF32);
}

}  // namespace weft::cpu
