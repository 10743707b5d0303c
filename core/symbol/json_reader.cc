// Symbol JSON reader: MXNet files of every version, with MXNet's legacy upgrades
// (src/nnvm/legacy_json_util.cc behaviour):
//   * any version before 1.9.1: a bare hidden key (ctx_group, lr_mult, ...) becomes __key__;
//   * before 0.9.0 (files without "mxnet_version" are 0.8.0): an op's "<input>_<hidden key>"
//     attribute moves to that input's variable as __<hidden key>__, and inputs the op now has but
//     the file lacks as aux states (BatchNorm's moving_mean / moving_var) become variables "<node>_<input>"
//     with a copy of the node's attributes, like variables created at composition.
#include <fmt/ranges.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/untrusted.h"
#include "symbol/json_io.h"

namespace weft::graph {
namespace {

using detail::JsonExcerpt;
using nlohmann::json;

struct RawNode {
  NodePtr node;
  std::vector<IndexedGraph::EntryRef> inputs;
};

// Every problem of a file that can be found without the rest of it being valid (unknown ops, bad
// attributes, wrong input counts), thrown together as one weft::Error.
class Problems {
 public:
  void Add(std::string message, const std::string& unknown_op = "") {
    messages_.push_back(std::move(message));
    if (!unknown_op.empty() && std::find(unknown_.begin(), unknown_.end(), unknown_op) == unknown_.end()) {
      unknown_.push_back(unknown_op);
    }
  }
  bool empty() const { return messages_.empty(); }
  void ThrowIfAny() const {
    if (messages_.empty()) return;
    if (messages_.size() == 1) Fail("{}", messages_[0]);
    std::string summary = fmt::format("symbol JSON: {} problems", messages_.size());
    if (!unknown_.empty()) summary += fmt::format(" (unknown operators: {})", fmt::join(unknown_, ", "));
    Fail("{}:\n  {}", summary, fmt::join(messages_, "\n  "));
  }

 private:
  std::vector<std::string> messages_;
  std::vector<std::string> unknown_;
};

std::string Where(size_t i, const std::string& name) {
  return fmt::format("symbol JSON: node #{} '{}'", i, detail::Excerpt(name));
}

// At most the first 16 names: an op can take thousands of inputs.
std::string NameList(const std::vector<std::string>& names) {
  const size_t shown = std::min<size_t>(names.size(), 16);
  std::string out =
      fmt::format("{}", fmt::join(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(shown), ", "));
  if (shown < names.size()) out += fmt::format(", ... ({} more)", names.size() - shown);
  return out;
}

const json& Member(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  WEFT_CHECK(it != obj.end(), "{}: missing key \"{}\"", where, key);
  return *it;
}

uint32_t SmallUInt(const json& v, const std::string& where, const char* what) {
  WEFT_CHECK(v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= INT32_MAX,
             "{}: {} must be a non-negative integer, got {}", where, what, JsonExcerpt(v));
  return static_cast<uint32_t>(v.get<int64_t>());
}

IndexedGraph::EntryRef ParseEntry(const json& v, size_t num_nodes, const std::string& where) {
  WEFT_CHECK(v.is_array() && (v.size() == 2 || v.size() == 3),
             "{}: an entry must be [node, output] or [node, output, version], got {}", where, JsonExcerpt(v));
  IndexedGraph::EntryRef e;
  e.node_id = SmallUInt(v[0], where, "an entry's node id");
  e.index = SmallUInt(v[1], where, "an entry's output index");
  if (v.size() == 3) e.version = SmallUInt(v[2], where, "an entry's version");
  WEFT_CHECK(e.node_id < num_nodes, "{}: entry {} refers to node #{}, but the file has {} nodes", where, JsonExcerpt(v),
             e.node_id, num_nodes);
  return e;
}

int ReadVersion(const json& root) {
  auto attrs = root.find("attrs");
  if (attrs == root.end()) return 800;  // MXNet 0.8.0 did not record its version
  WEFT_CHECK(attrs->is_object(), "symbol JSON: \"attrs\" must be an object");
  auto v = attrs->find("mxnet_version");
  if (v == attrs->end()) return 800;
  WEFT_CHECK(v->is_array() && v->size() == 2 && (*v)[1].is_number_integer(),
             "symbol JSON: \"mxnet_version\" must be [\"int\", <version>], got {}", JsonExcerpt(*v));
  return static_cast<int>((*v)[1].get<int64_t>());
}

AttrDict ReadAttrs(const json& jn, const std::string& where) {
  AttrDict dict;
  // nnvm reads "attrs" and "attr" into one dict and merges "param" without overwriting.
  for (const char* key : {"attrs", "attr", "param"}) {
    auto it = jn.find(key);
    if (it == jn.end()) continue;
    WEFT_CHECK(it->is_object(), "{}: \"{}\" must be an object of strings", where, key);
    for (const auto& [k, v] : it->items()) {
      WEFT_CHECK(v.is_string(), "{}: attribute '{}' must be a string, got {}", where, detail::Excerpt(k),
                 JsonExcerpt(v));
      if (std::string(key) == "param") {
        dict.emplace(k, v.get<std::string>());
      } else {
        dict[k] = v.get<std::string>();
      }
    }
  }
  return dict;
}

void RenameHiddenKeys(AttrDict& dict) {
  for (const std::string& h : HiddenKeys()) {
    auto it = dict.find(h);
    if (it == dict.end()) continue;
    dict["__" + h + "__"] = it->second;
    dict.erase(h);
  }
}

// Rejects cycles (a file may list inputs after their users, so order alone proves nothing).
void CheckAcyclic(const std::vector<RawNode>& nodes) {
  enum : char { kNew, kOpen, kDone };
  std::vector<char> state(nodes.size(), kNew);
  std::vector<std::pair<uint32_t, size_t>> stack;
  for (uint32_t root = 0; root < nodes.size(); ++root) {
    if (state[root] != kNew) continue;
    stack.emplace_back(root, 0);
    state[root] = kOpen;
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      if (next < nodes[id].inputs.size()) {
        uint32_t child = nodes[id].inputs[next++].node_id;
        if (state[child] == kOpen) {
          Fail("{}: its input {} (node #{} '{}') depends on it: the graph has a cycle", Where(id, nodes[id].node->name),
               next - 1, child, nodes[child].node->name);
        }
        if (state[child] == kNew) {
          state[child] = kOpen;
          stack.emplace_back(child, 0);
        }
      } else {
        state[id] = kDone;
        stack.pop_back();
      }
    }
  }
}

// MXNet 0.8 -> 0.9: "<input>_<hidden>" attributes of an op belong to that input's variable.
void MoveInputHiddenKeys(Node& n) {
  for (auto it = n.attrs.begin(); it != n.attrs.end();) {
    bool moved = false;
    for (size_t i = 0; i < n.inputs.size() && i < n.input_names.size() && !moved; ++i) {
      const std::string prefix = n.input_names[i] + "_";
      if (!it->first.starts_with(prefix)) continue;
      std::string rest = it->first.substr(prefix.size());
      for (const std::string& h : HiddenKeys()) {
        if (rest != h || !n.inputs[i].node->is_variable()) continue;
        n.inputs[i].node->attrs["__" + h + "__"] = it->second;
        moved = true;
        break;
      }
    }
    it = moved ? n.attrs.erase(it) : std::next(it);
  }
}

// Only aux states: 0.8-era files listed every argument, but aux states were not graph inputs yet.
void AddMissingAuxInputs(Node& n) {
  if (n.inputs.size() < n.num_args) return;
  for (size_t i = n.inputs.size(); i < n.input_names.size(); ++i) {
    n.inputs.push_back(Entry{MakeVariable(n.name + "_" + n.input_names[i], n.attrs), 0, 0});
    ApplyInputVarAttrs(n, i, *n.inputs.back().node);
  }
}

}  // namespace

std::vector<Entry> LoadJSON(std::string_view text) {
  const json root = detail::ParseJsonBounded(text, "symbol JSON");
  WEFT_CHECK(root.is_object(), "symbol JSON: the top level must be an object with \"nodes\" and \"heads\"");
  const int version = ReadVersion(root);
  const json& jnodes = Member(root, "nodes", "symbol JSON");
  WEFT_CHECK(jnodes.is_array(), "symbol JSON: \"nodes\" must be an array");
  const size_t num_nodes = jnodes.size();

  std::vector<RawNode> nodes(num_nodes);
  Problems problems;
  for (size_t i = 0; i < num_nodes; ++i) {
    const json& jn = jnodes[i];
    std::string where = fmt::format("symbol JSON: node #{}", i);
    WEFT_CHECK(jn.is_object(), "{}: must be an object", where);
    const json& jname = Member(jn, "name", where);
    WEFT_CHECK(jname.is_string(), "{}: \"name\" must be a string", where);
    std::string name = jname.get<std::string>();
    where = Where(i, name);
    const json& jop = Member(jn, "op", where);
    WEFT_CHECK(jop.is_string(), "{}: \"op\" must be a string", where);
    const json& jin = Member(jn, "inputs", where);
    WEFT_CHECK(jin.is_array(), "{}: \"inputs\" must be an array", where);

    AttrDict attrs = ReadAttrs(jn, where);
    if (version < kMXNetVersion) RenameHiddenKeys(attrs);
    for (const json& e : jin) nodes[i].inputs.push_back(ParseEntry(e, num_nodes, where + " input"));

    const std::string op_name = jop.get<std::string>();
    if (op_name == "null") {
      WEFT_CHECK(jin.empty(), "{}: a variable (op \"null\") cannot have inputs", where);
      nodes[i].node = MakeVariable(std::move(name), std::move(attrs));
    } else {
      const OpDef* op = FindOp(op_name);
      if (op == nullptr && op_name == "_CachedOp") {
        problems.Add(
            fmt::format("{}: a _CachedOp node (autograd.get_symbol of a hybridized block) does not hold its "
                        "graph in JSON, in MXNet either; save the block with HybridBlock.export, or "
                        "hybridize it with inline_limit at least its op count so get_symbol shows its ops",
                        where));
      } else if (op == nullptr) {
        // Keep going: a user fixing a file wants every unknown op at once.
        try {
          LookupOp(op_name);
        } catch (const std::exception& e) {
          problems.Add(fmt::format("{}: {}", where, e.what()), op_name);
        }
      }
      auto n = std::make_shared<Node>();
      n->op = op;
      n->name = std::move(name);
      n->attrs = std::move(attrs);
      nodes[i].node = std::move(n);
    }
  }
  CheckAcyclic(nodes);

  for (size_t i = 0; i < num_nodes; ++i) {
    Node& n = *nodes[i].node;
    for (const auto& e : nodes[i].inputs) n.inputs.push_back(Entry{nodes[e.node_id].node, e.index, e.version});
    if (n.is_variable() || n.op == nullptr) continue;  // unknown ops are already reported
    try {
      Refresh(n);
    } catch (const std::exception& e) {
      problems.Add(fmt::format("symbol JSON: node #{}: {}", i, e.what()));
      n.op = nullptr;  // its outputs are unknown: skip the checks that need them
      continue;
    }
    if (version < 900 && n.inputs.size() <= n.input_names.size()) {
      MoveInputHiddenKeys(n);
      AddMissingAuxInputs(n);
    }
    if (n.inputs.size() != n.input_names.size()) {
      problems.Add(fmt::format("{}: has {} inputs, but {} with these attributes takes {} ({})", Where(i, n.name),
                               n.inputs.size(), n.op->name, n.input_names.size(), NameList(n.input_names)));
    }
  }
  problems.ThrowIfAny();
  // Output indices can only be checked once every node knows its outputs.
  for (size_t i = 0; i < num_nodes; ++i) {
    const Node& n = *nodes[i].node;
    for (size_t k = 0; k < nodes[i].inputs.size(); ++k) {
      const auto& e = nodes[i].inputs[k];
      const Node& src = *nodes[e.node_id].node;
      WEFT_CHECK(e.index < src.num_outputs, "{}: input {} uses output {} of node #{} '{}', which has {} output(s)",
                 Where(i, n.name), k, e.index, e.node_id, src.name, src.num_outputs);
    }
  }

  const json& jheads = Member(root, "heads", "symbol JSON");
  WEFT_CHECK(jheads.is_array() && !jheads.empty(), "symbol JSON: \"heads\" must be a non-empty array of entries");
  std::vector<Entry> heads;
  for (const json& jh : jheads) {
    auto e = ParseEntry(jh, num_nodes, "symbol JSON: heads");
    const Node& src = *nodes[e.node_id].node;
    WEFT_CHECK(e.index < src.num_outputs,
               "symbol JSON: head {} uses output {} of node #{} '{}', which has {} output(s)", JsonExcerpt(jh), e.index,
               e.node_id, src.name, src.num_outputs);
    heads.push_back(Entry{nodes[e.node_id].node, e.index, e.version});
  }
  return heads;
}

}  // namespace weft::graph
