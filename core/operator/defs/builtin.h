// weft core — registration of the built-in op definitions (core/operator/OPS.md), one function
// per family. Called once, from OpRegistry::Get().
#pragma once

#include <map>
#include <string>

#include "operator/op_def.h"

namespace weft::opdef {

void RegisterNnOps(OpRegistry& r);                   // defs/nn.cc
void RegisterLossOps(OpRegistry& r);                 // defs/loss.cc
void RegisterSoftmaxOps(OpRegistry& r);              // defs/softmax.cc
void RegisterGradientCompressionOps(OpRegistry& r);  // defs/gradient_compression.cc
void RegisterTensorOps(OpRegistry& r);               // defs/tensor.cc
void RegisterTensorShapeOps(OpRegistry& r);          // defs/tensor_shape.cc
void RegisterReduceOps(OpRegistry& r);               // defs/reduce.cc
void RegisterElemwiseOps(OpRegistry& r);             // defs/elemwise.cc
void RegisterOptimizerOps(OpRegistry& r);            // defs/optimizer.cc
void RegisterIndexOps(OpRegistry& r);                // defs/index.cc
void RegisterTensorLayoutOps(OpRegistry& r);         // defs/tensor_layout.cc
void RegisterTensorInitOps(OpRegistry& r);           // defs/tensor_init.cc
void RegisterNormOps(OpRegistry& r);                 // defs/norm.cc
void RegisterElemwiseBinaryOps(OpRegistry& r);       // defs/elemwise_binary.cc
void RegisterElemwiseUnaryOps(OpRegistry& r);        // defs/elemwise_unary.cc
void RegisterIndexingOps(OpRegistry& r);             // defs/indexing.cc
void RegisterTensorMatrixOps(OpRegistry& r);         // defs/tensor_matrix.cc
void RegisterOptimizerMoreOps(OpRegistry& r);        // defs/optimizer_more.cc
void RegisterRandomOps(OpRegistry& r);               // defs/random.cc
void RegisterRandomMultiOps(OpRegistry& r);          // defs/random_multi.cc
void RegisterTensorLegacyOps(OpRegistry& r);         // defs/tensor_legacy.cc
void RegisterTensorLinalgOps(OpRegistry& r);         // defs/tensor_linalg.cc
void RegisterCTCLossOps(OpRegistry& r);              // defs/ctc_loss.cc

/// One family of built-in definitions and the source file (relative to the repository root)
/// that holds it. The file names feed the generated OPS.md (tools/weft-ops-json), which must
/// lead from an op's name to its definition even when a helper builds it (softmax is made by
/// SoftmaxLike in defs/softmax.cc); the ops_md_current test fails when a path here goes stale.
struct BuiltinFamily {
  const char* file;
  void (*register_ops)(OpRegistry&);
};
inline constexpr BuiltinFamily kBuiltinFamilies[] = {
    {"core/operator/defs/nn.cc", &RegisterNnOps},
    {"core/operator/defs/loss.cc", &RegisterLossOps},
    {"core/operator/defs/softmax.cc", &RegisterSoftmaxOps},
    {"core/operator/defs/tensor.cc", &RegisterTensorOps},
    {"core/operator/defs/tensor_shape.cc", &RegisterTensorShapeOps},
    {"core/operator/defs/reduce.cc", &RegisterReduceOps},
    {"core/operator/defs/elemwise.cc", &RegisterElemwiseOps},
    {"core/operator/defs/optimizer.cc", &RegisterOptimizerOps},
    {"core/operator/defs/gradient_compression.cc", &RegisterGradientCompressionOps},
    {"core/operator/defs/index.cc", &RegisterIndexOps},
    {"core/operator/defs/tensor_layout.cc", &RegisterTensorLayoutOps},
    {"core/operator/defs/tensor_init.cc", &RegisterTensorInitOps},
    {"core/operator/defs/norm.cc", &RegisterNormOps},
    {"core/operator/defs/elemwise_binary.cc", &RegisterElemwiseBinaryOps},
    {"core/operator/defs/elemwise_unary.cc", &RegisterElemwiseUnaryOps},
    {"core/operator/defs/indexing.cc", &RegisterIndexingOps},
    {"core/operator/defs/tensor_matrix.cc", &RegisterTensorMatrixOps},
    {"core/operator/defs/optimizer_more.cc", &RegisterOptimizerMoreOps},
    {"core/operator/defs/random.cc", &RegisterRandomOps},
    {"core/operator/defs/random_multi.cc", &RegisterRandomMultiOps},
    {"core/operator/defs/tensor_legacy.cc", &RegisterTensorLegacyOps},
    {"core/operator/defs/tensor_linalg.cc", &RegisterTensorLinalgOps},
    {"core/operator/defs/ctc_loss.cc", &RegisterCTCLossOps},
};

/// Registers every family into `r` and returns op name (and alias) -> the family's file.
inline std::map<std::string, std::string> RegisterBuiltinOps(OpRegistry& r) {
  std::map<std::string, std::string> files;
  for (const BuiltinFamily& family : kBuiltinFamilies) {
    family.register_ops(r);
    for (const std::string& name : r.ListNames()) files.emplace(name, family.file);
    for (const auto& [alias, target] : r.ListAliases()) files.emplace(alias, family.file);
  }
  return files;
}

/// The file of BuiltinFamily that defines built-in op (or alias) `name`; "" for an op no
/// built-in family defines (a plugin's). Registers the built-ins first (OpRegistry::Get()).
const std::string& BuiltinDefinitionFile(const std::string& name);

}  // namespace weft::opdef
