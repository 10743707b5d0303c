// weft SDK ops — LRN (MXNet 1.9's LRNParam): local response normalisation across channels.
#pragma once

#include <span>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// output = data · tmp_norm^(−beta), tmp_norm = knorm + alpha / nsize · Σ data² over the nsize
/// channels centred on each one (cut at the edges).
struct LRNParam {
  float alpha = 1e-4f, beta = 0.75f, knorm = 2.0f;
  int64_t nsize = 1;

  template <class V>
  void Visit(V& v) {
    v(alpha, Attr("alpha").Default("0.0001").Doc("scale of the sum of squares"));
    v(beta, Attr("beta").Default("0.75").Doc("exponent"));
    v(knorm, Attr("knorm").Default("2").Doc("offset"));
    v(nsize, Attr("nsize").Min(1).Doc("number of channels in the window (odd)"));
  }
};

/// LRN on (N, C, ...) data: N blocks of C channels of `inner` elements each; the window reaches
/// `half` channels to each side.
struct LrnGeometry {
  int64_t outer = 0, c = 0, inner = 1, half = 0, nsize = 1;
  float alpha = 1e-4f, beta = 0.75f, knorm = 2.0f;
};

/// The geometry of LRN `op` with attributes `p` on data of `shape`; throws naming the op when the
/// data has no channel axis.
inline LrnGeometry LRNGeometry(std::string_view op, const LRNParam& p, std::span<const int64_t> shape) {
  if (shape.size() < 2)
    OpError(WEFT_ERR_INVALID_ARGUMENT, op, "data " + ShapeText(shape) + " needs a channel axis (N, C, ...)");
  LrnGeometry g;
  g.outer = shape[0], g.c = shape[1];
  g.inner = g.outer == 0 || g.c == 0 ? 1 : ShapeSize(shape) / (g.outer * g.c);
  g.nsize = p.nsize, g.half = p.nsize / 2;
  g.alpha = p.alpha, g.beta = p.beta, g.knorm = p.knorm;
  return g;
}

}  // namespace weft::sdk
