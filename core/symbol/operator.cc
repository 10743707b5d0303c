// weft::Operator (symbol composition) and NameManager.
#include "weft/operator.h"

#include "weft/imperative.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <mutex>

#include "symbol/graph.h"

namespace weft {

// ---- NameManager ---------------------------------------------------------------------------------

namespace {

std::mutex g_names_mu;
std::map<std::string, int> g_counters;                       // guarded by g_names_mu
thread_local std::map<std::string, int>* t_scope = nullptr;  // innermost Scope of this thread

}  // namespace

std::string NameManager::Get(const std::string& name, const std::string& hint) {
  if (!name.empty()) return name;
  std::string h = hint;
  std::transform(h.begin(), h.end(), h.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (t_scope != nullptr) return h + std::to_string((*t_scope)[h]++);
  std::lock_guard<std::mutex> lock(g_names_mu);
  return h + std::to_string(g_counters[h]++);
}

NameManager::Scope::Scope() : previous_(t_scope) { t_scope = &counters_; }
NameManager::Scope::~Scope() { t_scope = previous_; }

std::string FormatFloat(float v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

std::string FormatFloat(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

// ---- Operator ------------------------------------------------------------------------------------

Operator::Operator(const std::string& operator_name) : op_name_(operator_name), op_(&graph::LookupOp(operator_name)) {}

Operator& Operator::SetInput(const std::string& name, const Symbol& symbol) {
  named_.emplace_back(name, symbol);
  return *this;
}

void Operator::PushInput(const Symbol& symbol) { positional_.push_back(symbol); }

Symbol Operator::CreateSymbol(const std::string& name) {
  std::map<std::string, std::string> attrs = params_;
  bool variadic =
      std::any_of(op_->attrs.begin(), op_->attrs.end(), [](const AttrSpec& a) { return a.name == "num_args"; });
  if (variadic && !attrs.count("num_args")) attrs["num_args"] = std::to_string(positional_.size());

  graph::NodePtr node = graph::MakeOpNode(*op_, NameManager::Get(name, op_name_), std::move(attrs));
  const std::vector<std::string>& slots = node->input_names;
  std::vector<const Symbol*> given(slots.size(), nullptr);

  WEFT_CHECK(positional_.size() <= slots.size(), "{}: {} positional inputs given but the op takes {} ({})",
             node->Describe(), positional_.size(), slots.size(), fmt::join(slots, ", "));
  for (size_t i = 0; i < positional_.size(); ++i) given[i] = &positional_[i];
  for (const auto& [in_name, sym] : named_) {
    auto it = std::find(slots.begin(), slots.end(), in_name);
    // mxnet-cpp's op.h passes every input; an empty one for a slot the attributes removed
    // (FullyConnected's bias with no_bias) is simply not there.
    if (it == slots.end() && sym.IsEmpty()) continue;
    WEFT_CHECK(it != slots.end(), "{}: no input named '{}'; its inputs are: {}", node->Describe(), in_name,
               fmt::join(slots, ", "));
    size_t i = static_cast<size_t>(it - slots.begin());
    WEFT_CHECK(given[i] == nullptr || given[i]->IsEmpty(), "{}: input '{}' is given twice", node->Describe(), in_name);
    given[i] = &sym;
  }

  node->inputs.resize(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    if (given[i] == nullptr || given[i]->IsEmpty()) {
      // MXNet copies the node's attributes onto variables it creates for missing inputs.
      node->inputs[i] = graph::Entry{graph::MakeVariable(node->name + "_" + slots[i], node->attrs), 0, 0};
    } else {
      const std::vector<graph::Entry>& outs = given[i]->outputs();
      WEFT_CHECK(outs.size() == 1, "{}: input '{}' must be a symbol with one output, got {} outputs ({})",
                 node->Describe(), slots[i], outs.size(), fmt::join(given[i]->ListOutputs(), ", "));
      node->inputs[i] = outs[0];
    }
    graph::ApplyInputVarAttrs(*node, i, *node->inputs[i].node);
  }
  // NNVM's UpdateNodeVersion: entries of variables carry the variable's version; aux (mutated)
  // inputs bump it.
  for (size_t i = 0; i < slots.size(); ++i) {
    graph::Entry& e = node->inputs[i];
    if (!e.node->is_variable()) continue;
    e.version = i < node->num_args ? e.node->version : ++e.node->version;
  }

  std::vector<graph::Entry> outs;
  for (uint32_t i = 0; i < node->num_visible_outputs; ++i) outs.push_back(graph::Entry{node, i, 0});
  return Symbol::FromOutputs(std::move(outs));
}

Operator& Operator::SetInput(const std::string& name, const NDArray& array) {
  nd_named_.emplace_back(name, array);
  return *this;
}

void Operator::PushInput(const NDArray& array) { nd_positional_.push_back(array); }

void Operator::Invoke(std::vector<NDArray>& outputs) {
  ImperativeCall call{op_name_, params_, nd_positional_, nd_named_, false, std::nullopt};
  weft::Invoke(call, &outputs);
}

void Operator::Invoke(NDArray& output) {
  std::vector<NDArray> outputs{output};
  Invoke(outputs);
}

std::vector<NDArray> Operator::Invoke() {
  std::vector<NDArray> outputs;
  Invoke(outputs);
  return outputs;
}

}  // namespace weft
