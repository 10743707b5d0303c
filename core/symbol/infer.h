// Shape and dtype inference over an IndexedGraph (MXNet's InferShape/InferType passes):
// variables start from the given values (by name) or their __shape__ / __dtype__ attributes, then
// every op's inference function runs forward and backward over the nodes until nothing changes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "symbol/graph.h"

namespace weft::graph {

/// Per entry id (IndexedGraph::entry_id): the inferred shape, nullopt when unknown. `known` is
/// keyed by variable name (arguments or aux states); a name that is no variable throws
/// weft::Error listing the arguments. Conflicts throw weft::Error naming the node and shapes.
std::vector<ShapeSlot> InferShapes(const IndexedGraph& g, const std::map<std::string, Shape>& known);

/// Per entry id: DType codes, -1 when unknown. Same rules as InferShapes.
std::vector<int> InferTypes(const IndexedGraph& g, const std::map<std::string, int>& known);

/// True when a shape is known with every extent known (>= 0).
bool FullyKnown(const ShapeSlot& s);

}  // namespace weft::graph
