// weft core — builders of the optimizer update definitions, shared by defs/optimizer.cc and
// defs/optimizer_more.cc.
#pragma once

#include <string>
#include <vector>

#include "operator/op_util.h"

namespace weft::opdef {

/// An update op: inputs weight, grad; output the new weight (in place on weight); `aux` the state
/// arrays (updated in place). Attributes in MXNet's order: lr, the op's own (`extra`), wd,
/// rescale_grad, clip_gradient, then `tail`. No gradient.
OpDef Update(std::string name, std::string description, std::vector<AttrSpec> extra, std::vector<std::string> aux,
             std::vector<AttrSpec> tail);

AttrSpec LazyUpdate();   // lazy_update (True; ignored: dense arrays)
AttrSpec ClipWeights();  // clip_weights (-1)
AttrSpec Momentum();     // momentum (0)
AttrSpec Epsilon();      // epsilon (1e-08)

}  // namespace weft::opdef
