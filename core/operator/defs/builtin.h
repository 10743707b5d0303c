// weft core — registration of the built-in op definitions (OPS.md), one function per family.
// Called once, from OpRegistry::Get().
#pragma once

#include "operator/op_def.h"

namespace weft::opdef {

void RegisterNnOps(OpRegistry& r);         // defs/nn.cc
void RegisterLossOps(OpRegistry& r);       // defs/loss.cc
void RegisterTensorOps(OpRegistry& r);     // defs/tensor.cc
void RegisterShapeOps(OpRegistry& r);      // defs/shape.cc
void RegisterReduceOps(OpRegistry& r);     // defs/reduce.cc
void RegisterElemwiseOps(OpRegistry& r);   // defs/elemwise.cc
void RegisterOptimizerOps(OpRegistry& r);  // defs/optimizer.cc
void RegisterIndexOps(OpRegistry& r);      // defs/index.cc
void RegisterLayoutOps(OpRegistry& r);     // defs/layout.cc
void RegisterInitOps(OpRegistry& r);       // defs/init.cc
void RegisterNormOps(OpRegistry& r);       // defs/norm.cc

inline void RegisterBuiltinOps(OpRegistry& r) {
  RegisterNnOps(r);
  RegisterLossOps(r);
  RegisterTensorOps(r);
  RegisterShapeOps(r);
  RegisterReduceOps(r);
  RegisterElemwiseOps(r);
  RegisterOptimizerOps(r);
  RegisterIndexOps(r);
  RegisterLayoutOps(r);
  RegisterInitOps(r);
  RegisterNormOps(r);
}

}  // namespace weft::opdef
