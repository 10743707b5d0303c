// weft core — the backward node of an op, derived from its definition, so that the executor
// (which builds the gradient graph) and the kernels (which compute `_backward_X`) agree by
// construction.
//
// Convention (sdk/include/weft/sdk/operator.h, OPS.md): the inputs of `_backward_X` are, in order,
//   the gradients of all of X's outputs  (hidden outputs included: the executor passes zeros
//                                          for those, and for outputs nobody differentiates),
//   X's inputs                            (only if BackwardUses() has kUsesInputs),
//   X's outputs, hidden ones included     (only if kUsesOutputs),
//   X's aux states                        (only if kUsesAux);
// its outputs are the gradients of X's inputs, in input order, with X's input shapes and dtypes.
// The node carries X's (normalised) attributes unchanged. Loss ops (OpDef::is_loss) still get
// the out_grad inputs; their kernels ignore them.
//
// Ops with GradKind::kNone or kZero have no backward node: the executor writes zeros into their
// input gradients (req write) and leaves req add untouched.
//
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "operator/op_def.h"

namespace weft {

/// Where one input of a backward node comes from.
enum class BackwardSource {
  kOutGrad,  // gradient of forward output `index`
  kInput,    // forward input `index`
  kOutput,   // forward output `index`
  kAux,      // forward aux state `index`
};

struct BackwardInput {
  BackwardSource source;
  int index;
  bool operator==(const BackwardInput&) const = default;
};

struct BackwardNode {
  std::string op;                     // OpDef::backward_op, e.g. "_backward_FullyConnected"
  std::vector<BackwardInput> inputs;  // in the order the backward kernel receives them
  int num_outputs = 0;                // = the forward node's input count; output i = d(input i)
  uint32_t resources = 0;             // kResource* bits the backward kernel may ask for
};

/// What the backward of a node of `def` with (normalised) `attrs` reads: def.backward_uses,
/// narrowed by def.backward_uses_for when set. Throws weft::Error when backward_uses_for returns
/// a bit that backward_uses lacks (a definition bug).
uint32_t BackwardUses(const OpDef& def, const AttrMap& attrs);

/// The backward node of a forward node of `def` with (normalised) `attrs` and these slot counts
/// (hidden outputs included in `num_outputs`); nullopt when def.grad is not GradKind::kOp.
/// Throws weft::Error when the counts differ from what the definition lists for these attributes.
std::optional<BackwardNode> DescribeBackward(const OpDef& def, const AttrMap& attrs, int num_inputs, int num_outputs,
                                             int num_aux);

/// Picks the backward node's inputs out of the forward node's values (shapes, dtypes, arrays...):
/// result[j] comes from the vector that node.inputs[j] names. Throws weft::Error when an index is
/// out of range.
template <typename T>
std::vector<T> GatherBackwardInputs(const BackwardNode& node, const std::vector<T>& out_grads,
                                    const std::vector<T>& inputs, const std::vector<T>& outputs,
                                    const std::vector<T>& aux) {
  std::vector<T> result;
  result.reserve(node.inputs.size());
  for (const BackwardInput& b : node.inputs) {
    const std::vector<T>& from = b.source == BackwardSource::kOutGrad  ? out_grads
                                 : b.source == BackwardSource::kInput  ? inputs
                                 : b.source == BackwardSource::kOutput ? outputs
                                                                       : aux;
    WEFT_CHECK(b.index >= 0 && static_cast<size_t>(b.index) < from.size(),
               "{}: backward input index {} is out of range ({} values given)", node.op, b.index, from.size());
    result.push_back(from[static_cast<size_t>(b.index)]);
  }
  return result;
}

/// "out_grad", "input", "output" or "aux".
const char* BackwardSourceName(BackwardSource s) noexcept;

/// True for backward ops whose only output is an element-wise function of out_grad (input 0) at
/// the same index, so the gradient may overwrite out_grad in place (MXNet's backward
/// FInplaceOption). The op definitions do not describe backward in-place yet, so this list does;
/// the executor's memory plan and autograd's Backward both use it.
bool BackwardInplaceOk(const std::string& backward_op);

}  // namespace weft
