// weft::Symbol: handles over graph outputs, listing, attributes, copy and file I/O.
#include "weft/symbol.h"

#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "symbol/graph.h"
#include "symbol/json_io.h"
#include "weft/operator.h"

namespace weft {

using graph::Entry;
using graph::NodePtr;

Symbol::Symbol() = default;
Symbol::Symbol(const std::string& name) : Symbol(Variable(name)) {}
Symbol::Symbol(const char* name) : Symbol(Variable(name ? std::string(name) : std::string())) {}
Symbol::Symbol(const Symbol&) = default;
Symbol::Symbol(Symbol&&) noexcept = default;
Symbol& Symbol::operator=(const Symbol&) = default;
Symbol& Symbol::operator=(Symbol&&) noexcept = default;
Symbol::~Symbol() = default;

namespace {

const std::vector<Entry>& Checked(const std::vector<Entry>& outs, const char* what) {
  WEFT_CHECK(!outs.empty(),
             "Symbol::{}: the symbol is empty (default-constructed); build it with "
             "Symbol::Variable, an op function or Symbol::Load first",
             what);
  return outs;
}

// The single node behind all outputs; throws for grouped symbols.
graph::Node& SingleNode(const std::vector<Entry>& outs, const char* what) {
  Checked(outs, what);
  for (const Entry& e : outs) {
    WEFT_CHECK(e.node == outs[0].node,
               "Symbol::{} only works on a symbol with one output node; this one groups {} "
               "outputs of different nodes",
               what, outs.size());
  }
  return *outs[0].node;
}

std::vector<std::string> NamesOf(const graph::IndexedGraph& g, const std::vector<uint32_t>& ids) {
  std::vector<std::string> names;
  names.reserve(ids.size());
  for (uint32_t id : ids) names.push_back(g.nodes[id].node->name);
  return names;
}

}  // namespace

Symbol Symbol::FromOutputs(std::vector<graph::Entry> outputs) {
  Symbol s;
  s.outputs_ = std::move(outputs);
  return s;
}

const std::vector<graph::Entry>& Symbol::outputs() const { return outputs_; }

Symbol Symbol::Variable(const std::string& name) {
  WEFT_CHECK(!name.empty(), "Symbol::Variable: a variable needs a non-empty name");
  return FromOutputs({Entry{graph::MakeVariable(name), 0, 0}});
}

Symbol Symbol::Group(const std::vector<Symbol>& symbols) {
  std::vector<Entry> outs;
  for (size_t i = 0; i < symbols.size(); ++i) {
    WEFT_CHECK(!symbols[i].IsEmpty(), "Symbol::Group: symbol #{} of {} is empty", i, symbols.size());
    outs.insert(outs.end(), symbols[i].outputs_.begin(), symbols[i].outputs_.end());
  }
  return FromOutputs(std::move(outs));
}

Symbol Symbol::Load(const std::string& file_name) {
  std::ifstream in(file_name, std::ios::binary);
  WEFT_CHECK(in.good(), "Symbol::Load: cannot open '{}' for reading", file_name);
  std::ostringstream ss;
  ss << in.rdbuf();
  WEFT_CHECK(!in.bad(), "Symbol::Load: reading '{}' failed", file_name);
  try {
    return FromOutputs(graph::LoadJSON(ss.str()));
  } catch (const Error& e) {
    Fail("Symbol::Load('{}'): {}", file_name, e.what());
  }
}

Symbol Symbol::LoadJSON(const std::string& json_str) { return FromOutputs(graph::LoadJSON(json_str)); }

void Symbol::Save(const std::string& file_name) const {
  std::string json = ToJSON();
  std::ofstream out(file_name, std::ios::binary | std::ios::trunc);
  WEFT_CHECK(out.good(), "Symbol::Save: cannot open '{}' for writing", file_name);
  out << json;
  out.close();
  WEFT_CHECK(out.good(), "Symbol::Save: writing '{}' failed (disk full?)", file_name);
}

std::string Symbol::ToJSON() const { return graph::SaveJSON(Checked(outputs_, "ToJSON")); }

bool Symbol::IsEmpty() const { return outputs_.empty(); }

mx_uint Symbol::GetNumOutputs() const { return static_cast<mx_uint>(Checked(outputs_, "GetNumOutputs").size()); }

Symbol Symbol::operator[](int index) const {
  Checked(outputs_, "operator[]");
  WEFT_CHECK(index >= 0 && static_cast<size_t>(index) < outputs_.size(),
             "Symbol::operator[]: output index {} is out of range; the symbol has {} outputs", index, outputs_.size());
  return FromOutputs({outputs_[static_cast<size_t>(index)]});
}

Symbol Symbol::operator[](const std::string& name) const {
  std::vector<std::string> names = ListOutputs();
  int found = -1;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != name) continue;
    WEFT_CHECK(found < 0, "Symbol::operator[]: several outputs are named '{}'; use the index", name);
    found = static_cast<int>(i);
  }
  WEFT_CHECK(found >= 0, "Symbol::operator[]: no output named '{}'; the outputs are: {}", name, fmt::join(names, ", "));
  return (*this)[found];
}

Symbol Symbol::GetInternals() const {
  std::vector<Entry> outs;
  graph::PostOrderDFS(Checked(outputs_, "GetInternals"), [&](const NodePtr& n) {
    for (uint32_t i = 0; i < n->num_visible_outputs; ++i) outs.push_back(Entry{n, i, 0});
  });
  return FromOutputs(std::move(outs));
}

Symbol Symbol::GetChildren() const {
  std::vector<Entry> outs;
  std::unordered_set<const graph::Node*> seen;
  for (const Entry& e : Checked(outputs_, "GetChildren")) {
    if (!seen.insert(e.node.get()).second) continue;
    outs.insert(outs.end(), e.node->inputs.begin(), e.node->inputs.end());
  }
  return FromOutputs(std::move(outs));
}

Symbol Symbol::Copy() const {
  std::unordered_map<const graph::Node*, NodePtr> copies;
  graph::PostOrderDFS(Checked(outputs_, "Copy"), [&](const NodePtr& n) {
    auto c = std::make_shared<graph::Node>(*n);
    for (Entry& in : c->inputs) in.node = copies.at(in.node.get());
    copies.emplace(n.get(), std::move(c));
  });
  std::vector<Entry> outs = outputs_;
  for (Entry& e : outs) e.node = copies.at(e.node.get());
  return FromOutputs(std::move(outs));
}

std::vector<std::string> Symbol::ListArguments() const {
  graph::IndexedGraph g = graph::Index(graph::ExpandSubgraphs(Checked(outputs_, "ListArguments")));
  return NamesOf(g, g.arg_nodes);
}

std::vector<std::string> Symbol::ListAuxiliaryStates() const {
  graph::IndexedGraph g = graph::Index(graph::ExpandSubgraphs(Checked(outputs_, "ListAuxiliaryStates")));
  return NamesOf(g, g.aux_nodes);
}

std::vector<std::string> Symbol::ListInputs() const {
  graph::IndexedGraph g = graph::Index(graph::ExpandSubgraphs(Checked(outputs_, "ListInputs")));
  return NamesOf(g, g.var_nodes);
}

std::vector<std::string> Symbol::ListOutputs() const {
  std::vector<std::string> names;
  for (const Entry& e : Checked(outputs_, "ListOutputs")) names.push_back(graph::OutputName(e));
  return names;
}

std::string Symbol::GetName() const {
  Checked(outputs_, "GetName");
  for (const Entry& e : outputs_) {
    if (e.node != outputs_[0].node) return "";
  }
  return outputs_[0].node->name;
}

namespace {

// MXNet's C API stores bare hidden keys as "__key__".
std::string LiftHiddenKey(const std::string& key) {
  for (const std::string& h : graph::HiddenKeys()) {
    if (key == h) return "__" + key + "__";
  }
  return key;
}

}  // namespace

void Symbol::SetAttr(const std::string& key, const std::string& value) { SetAttributes({{key, value}}); }

void Symbol::SetAttributes(const std::map<std::string, std::string>& attrs) {
  graph::Node& n = SingleNode(outputs_, "SetAttr");
  graph::Node updated = n;
  for (const auto& [key, value] : attrs) {
    WEFT_CHECK(!key.empty(), "Symbol::SetAttr: the attribute key is empty");
    if (key == "name") {
      updated.name = value;
    } else {
      updated.attrs[LiftHiddenKey(key)] = value;
    }
  }
  graph::Refresh(updated);  // validates before anything changes
  WEFT_CHECK(updated.input_names.size() == n.input_names.size() || n.is_variable(),
             "Symbol::SetAttr: {}: changing these attributes changes the number of inputs ({} -> {}); "
             "build a new node instead",
             n.Describe(), n.input_names.size(), updated.input_names.size());
  n = std::move(updated);
}

std::optional<std::string> Symbol::GetAttr(const std::string& key) const {
  const graph::Node& n = SingleNode(outputs_, "GetAttr");
  if (key == "name") return n.name;
  auto it = n.attrs.find(key);
  if (it == n.attrs.end()) it = n.attrs.find(LiftHiddenKey(key));
  if (it == n.attrs.end()) return std::nullopt;
  return it->second;
}

std::map<std::string, std::string> Symbol::ListAttributes() const {
  return SingleNode(outputs_, "ListAttributes").attrs;
}

std::map<std::string, std::map<std::string, std::string>> Symbol::AttrDict() const {
  std::map<std::string, std::map<std::string, std::string>> out;
  graph::PostOrderDFS(Checked(outputs_, "AttrDict"), [&](const NodePtr& n) {
    if (!n->attrs.empty()) out[n->name] = n->attrs;
  });
  return out;
}

// ---- arithmetic (MXNet's Python/C++ front ends' op choices and name hints) ----------------------

namespace {

std::string ScalarString(mx_float v) { return detail::AttrString(v); }

Symbol Binary(const char* op, const Symbol& lhs, const Symbol& rhs) { return Operator(op)(lhs)(rhs).CreateSymbol(); }

Symbol Scalar(const char* op, const Symbol& data, mx_float scalar) {
  return Operator(op).SetParam("scalar", ScalarString(scalar))(data).CreateSymbol();
}

}  // namespace

Symbol Symbol::operator+(const Symbol& rhs) const { return Binary("_Plus", *this, rhs); }
Symbol Symbol::operator-(const Symbol& rhs) const { return Binary("_Minus", *this, rhs); }
Symbol Symbol::operator*(const Symbol& rhs) const { return Binary("_Mul", *this, rhs); }
Symbol Symbol::operator/(const Symbol& rhs) const { return Binary("_Div", *this, rhs); }
Symbol Symbol::operator+(mx_float scalar) const { return Scalar("_PlusScalar", *this, scalar); }
Symbol Symbol::operator-(mx_float scalar) const { return Scalar("_MinusScalar", *this, scalar); }
Symbol Symbol::operator*(mx_float scalar) const { return Scalar("_MulScalar", *this, scalar); }
Symbol Symbol::operator/(mx_float scalar) const { return Scalar("_DivScalar", *this, scalar); }
Symbol Symbol::operator-() const { return Scalar("_MulScalar", *this, -1.0f); }

Symbol operator+(mx_float lhs, const Symbol& rhs) { return rhs + lhs; }
Symbol operator-(mx_float lhs, const Symbol& rhs) { return Scalar("_RMinusScalar", rhs, lhs); }
Symbol operator*(mx_float lhs, const Symbol& rhs) { return rhs * lhs; }
Symbol operator/(mx_float lhs, const Symbol& rhs) { return Scalar("_RDivScalar", rhs, lhs); }

}  // namespace weft
