// Rebuilding an indexed graph node by node, for the executor's inference graph passes
// (fuse_conv.h, pool_first.h): each pass walks the nodes in order and either keeps a node or puts
// new nodes in its place; untouched nodes and variables stay shared with the original graph.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "symbol/graph.h"

namespace weft::exec {

class GraphRebuilder {
 public:
  explicit GraphRebuilder(const graph::IndexedGraph& ig) : ig_(ig), made_(ig.nodes.size()) {}

  /// Entry `e` of the original graph in the rebuilt one (its node must have been visited).
  graph::Entry Map(const graph::IndexedGraph::EntryRef& e) const { return {made_[e.node_id], e.index, e.version}; }

  /// Node `nid` as the original node, or a copy reading the rebuilt inputs when any changed, with
  /// attributes `set` added (then the copy's parameters are parsed again).
  void Keep(uint32_t nid, const graph::AttrDict& set = {}) {
    const auto& info = ig_.nodes[nid];
    bool same = set.empty();
    std::vector<graph::Entry> inputs;
    for (const auto& in : info.inputs) {
      inputs.push_back(Map(in));
      same = same && inputs.back().node == info.node->inputs[inputs.size() - 1].node;
    }
    if (same) {
      made_[nid] = info.node;
      return;
    }
    auto copy = std::make_shared<graph::Node>(*info.node);
    copy->inputs = std::move(inputs);
    if (!set.empty()) {
      for (const auto& [k, v] : set) copy->attrs[k] = v;
      graph::Refresh(*copy);
    }
    made_[nid] = std::move(copy);
  }

  /// `node` stands for node `nid`'s outputs from now on.
  void Put(uint32_t nid, graph::NodePtr node) { made_[nid] = std::move(node); }

  /// The rebuilt graph's heads (after every node has been visited).
  std::vector<graph::Entry> Heads() const {
    std::vector<graph::Entry> heads;
    for (const auto& h : ig_.outputs) heads.push_back(Map(h));
    return heads;
  }

  /// `ig`'s own heads: what a pass returns when it changes nothing.
  static std::vector<graph::Entry> OriginalHeads(const graph::IndexedGraph& ig) {
    std::vector<graph::Entry> heads;
    for (const auto& h : ig.outputs) heads.push_back({ig.nodes[h.node_id].node, h.index, h.version});
    return heads;
  }

 protected:
  const graph::IndexedGraph& ig_;
  std::vector<graph::NodePtr> made_;  // per node id: the rebuilt node (null where none stands for it)
};

}  // namespace weft::exec
