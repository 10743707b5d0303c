// weft core (internal) — releasing a node's inputs without recursion. Graph nodes hold their
// inputs by shared_ptr; destroying the last reference to a long chain (a 100 000-node graph, an
// unrolled recording) would recurse once per node and overflow the stack. The symbol graph
// (graph::Node) and the autograd tape (autograd_detail::Node) both release this way.
#pragma once

#include <type_traits>
#include <utility>
#include <vector>

namespace weft::detail {

/// Empties `inputs` (a vector of structs with a shared_ptr member `node` to a type that has such a
/// vector `inputs` too), destroying the nodes only it referred to, and their inputs, iteratively.
template <typename Inputs>
void ReleaseInputChain(Inputs& inputs) {
  using Ptr = std::remove_cvref_t<decltype(inputs.front().node)>;
  std::vector<Ptr> orphans;
  auto harvest = [&orphans](Inputs& ins) {
    for (auto& in : ins)
      if (in.node && in.node.use_count() == 1) orphans.push_back(std::move(in.node));
    ins.clear();
  };
  harvest(inputs);
  while (!orphans.empty()) {
    Ptr n = std::move(orphans.back());
    orphans.pop_back();
    harvest(n->inputs);
  }  // each node dies here with no inputs left
}

}  // namespace weft::detail
