// weft core — running an op definition's inference: the entry points the symbol graph, the
// executor and imperative invoke use instead of calling OpDef's std::function members directly
// (they handle the unset members, check slot counts and turn attribute errors into weft::Error).
//
// Attributes passed here must be normalised (OpDef::Normalize). Thread-safe: pure functions of
// their arguments (OpDef objects are immutable).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "operator/op_def.h"

namespace weft {

/// The attributes an op's name lists are computed for when none are given (op info, OPS.md):
/// its defaults, and a valid placeholder for each required one ("1", "(1,)", an enum's first
/// word). Throws weft::Error when the op refuses them.
AttrMap DefaultAttrs(const OpDef& def);

/// Input, output (hidden ones too) and aux-state names of a node with these attributes.
std::vector<std::string> OpInputNames(const OpDef& def, const AttrMap& attrs);
std::vector<std::string> OpOutputNames(const OpDef& def, const AttrMap& attrs);
std::vector<std::string> OpAuxNames(const OpDef& def, const AttrMap& attrs);
/// Outputs visible to users (ListOutputs, heads): the first NumVisibleOutputs of OpOutputNames.
int OpNumVisibleOutputs(const OpDef& def, const AttrMap& attrs);
/// (input index, output index) pairs that may share memory.
std::vector<std::pair<int, int>> OpInplacePairs(const OpDef& def, const AttrMap& attrs);

/// Shape inference, partial: fills unknown slots it can (nullopt = unknown shape, extent -1 =
/// unknown axis), forwards and, where MXNet does, backwards. The vectors must be sized like the
/// name lists above. Throws weft::Error naming the op, the slot and both shapes on inconsistent
/// shapes, or on vectors of the wrong size.
void InferShapes(const OpDef& def, const AttrMap& attrs, std::vector<ShapeSlot>& in, std::vector<ShapeSlot>& out,
                 std::vector<ShapeSlot>& aux);

/// Dtype inference, partial (DType values, -1 = unknown). Without an op-specific rule every
/// slot takes the dtype of the first known input (else output, else aux state); a known slot
/// that differs throws weft::Error naming op, slot and both dtypes.
void InferTypes(const OpDef& def, const AttrMap& attrs, std::vector<int>& in, std::vector<int>& out,
                std::vector<int>& aux);

}  // namespace weft
