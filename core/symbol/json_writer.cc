// Symbol JSON writer. MXNet writes graphs with dmlc::JSONWriter; byte-identical output needs its
// rules: every container opens inline; a "multi-line" container puts each item on a new line
// indented 2 spaces per open container, items separated by ", " (so lines end with a space) and
// closes on its own line; arrays of plain values are multi-line only above 10 items (node input
// lists count as plain: [id, index, version] triples), arrays of objects always; maps are
// multi-line above 1 entry; objects (nodes, the graph) always.
#include <string>

#include "symbol/json_io.h"

namespace weft::graph {
namespace {

class Writer {
 public:
  void BeginObject(bool multi_line) { Begin('{', multi_line); }
  void EndObject() { End('}'); }
  void BeginArray(bool multi_line) { Begin('[', multi_line); }
  void EndArray() { End(']'); }

  void Key(std::string_view key) {
    Separator();
    String(key);
    out_ += ": ";
  }
  /// Call before each array item.
  void Item() { Separator(); }

  void String(std::string_view s) {
    out_ += '"';
    for (char c : s) {
      switch (c) {
        case '"':
          out_ += "\\\"";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        case '\n':
          out_ += "\\n";
          break;
        case '\r':
          out_ += "\\r";
          break;
        case '\t':
          out_ += "\\t";
          break;
        default:
          out_ += c;
      }
    }
    out_ += '"';
  }
  void Int(int64_t v) { out_ += std::to_string(v); }
  void Raw(std::string_view s) { out_ += s; }

  std::string Take() { return std::move(out_); }

 private:
  struct Scope {
    bool multi_line;
    size_t count;
  };

  void Begin(char open, bool multi_line) {
    out_ += open;
    scopes_.push_back({multi_line, 0});
  }
  void End(char close) {
    Scope s = scopes_.back();
    scopes_.pop_back();
    if (s.multi_line && s.count != 0) NewLine();
    out_ += close;
  }
  void Separator() {
    Scope& s = scopes_.back();
    if (s.count++ != 0) out_ += ", ";
    if (s.multi_line) NewLine();
  }
  void NewLine() {
    out_ += '\n';
    out_.append(scopes_.size() * 2, ' ');
  }

  std::string out_;
  std::vector<Scope> scopes_;
};

void WriteEntries(Writer& w, const std::vector<IndexedGraph::EntryRef>& entries) {
  w.BeginArray(entries.size() > 10);
  for (const auto& e : entries) {
    w.Item();
    w.BeginArray(false);
    w.Item();
    w.Int(e.node_id);
    w.Item();
    w.Int(e.index);
    w.Item();
    w.Int(e.version);
    w.EndArray();
  }
  w.EndArray();
}

void WriteInts(Writer& w, const std::vector<uint32_t>& v) {
  w.BeginArray(v.size() > 10);
  for (uint32_t x : v) {
    w.Item();
    w.Int(x);
  }
  w.EndArray();
}

}  // namespace

std::string SaveJSON(const std::vector<Entry>& heads) {
  IndexedGraph g = Index(heads);
  Writer w;
  w.BeginObject(true);
  w.Key("nodes");
  w.BeginArray(true);
  for (const auto& info : g.nodes) {
    const Node& n = *info.node;
    w.Item();
    w.BeginObject(true);
    w.Key("op");
    w.String(n.is_variable() ? "null" : n.op->name);
    w.Key("name");
    w.String(n.name);
    if (!n.attrs.empty()) {
      w.Key("attrs");
      w.BeginObject(n.attrs.size() > 1);
      for (const auto& [k, v] : n.attrs) {
        w.Key(k);
        w.String(v);
      }
      w.EndObject();
    }
    w.Key("inputs");
    WriteEntries(w, info.inputs);
    w.EndObject();
  }
  w.EndArray();
  w.Key("arg_nodes");
  WriteInts(w, g.var_nodes);
  w.Key("node_row_ptr");
  WriteInts(w, g.row_ptr);
  w.Key("heads");
  WriteEntries(w, g.outputs);
  w.Key("attrs");
  w.BeginObject(false);
  w.Key("mxnet_version");
  w.Raw("[\"int\", " + std::to_string(kMXNetVersion) + "]");
  w.EndObject();
  w.EndObject();
  return w.Take();
}

}  // namespace weft::graph
