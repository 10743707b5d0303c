// weft core — builders of the optimizer update definitions, shared by defs/optimizer.cc and
// defs/optimizer_more.cc.
#pragma once

#include <string>
#include <vector>

#include "operator/op_util.h"
#include "weft/sdk/ops/optimizer.hpp"

namespace weft::opdef {

/// An update op without attributes: inputs weight, grad; output the new weight (in place on
/// weight); `aux` the state arrays (updated in place). No gradient.
OpDef UpdateBase(std::string name, std::string description, std::vector<std::string> aux);

/// An update op of rule R (sdk/ops/optimizer.hpp), its attributes declared by
/// sdk::UpdateParam<R> in MXNet's order.
template <sdk::UpdateRule R>
OpDef Update(std::string name, std::string description, std::vector<std::string> aux) {
  OpDef d = UpdateBase(std::move(name), std::move(description), std::move(aux));
  DeclareParams<sdk::UpdateParam<R>>(d);
  return d;
}

}  // namespace weft::opdef
