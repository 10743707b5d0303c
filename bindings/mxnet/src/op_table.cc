// Op entries for the C API, built from weft/op_info.h once and never freed (handles stay valid
// for the life of the process, as MXNet's op handles do).
#include "op_table.h"

#include "binding_ops.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common.h"
#include "custom_op.h"

namespace weft::mx {
namespace {

std::string Quoted(const std::string& v) { return "'" + v + "'"; }

// MXNet's NumPy interface ops that its frontend requires at import (mxnet/_numpy_op_doc.py gives
// their signatures to mx.np functions of these names). weft does not implement mx.np: the names
// are listed so that `import mxnet` works, and calling one says so.
const std::vector<std::string>& NumpyImportNames() {
  static const std::vector<std::string> names = {"_np_all",
                                                 "_np_any",
                                                 "_np_sometrue",
                                                 "_np_cumsum",
                                                 "_npx_nonzero",
                                                 "_np_repeat",
                                                 "_np_transpose",
                                                 "_np_dot",
                                                 "_np_sum",
                                                 "_np_copy",
                                                 "_np_atleast_1d",
                                                 "_np_atleast_2d",
                                                 "_np_atleast_3d",
                                                 "_np_reshape",
                                                 "_np_roll",
                                                 "_np_trace",
                                                 "_np_squeeze",
                                                 "_np_max",
                                                 "_np_amax",
                                                 "_np_min",
                                                 "_np_amin",
                                                 "_np_prod",
                                                 "_np_product",
                                                 "_np_moveaxis",
                                                 "_np__random_shuffle",
                                                 "_npx_constraint_check",
                                                 "_npx_reshape",
                                                 "_np_diag",
                                                 "_np_diagonal",
                                                 "_np_diagflat",
                                                 "_npi_Custom"};
  return names;
}

bool IsNumpyImportName(const std::string& name) {
  const auto& n = NumpyImportNames();
  return std::find(n.begin(), n.end(), name) != n.end();
}

OpInfo NumpyInfo(const std::string& name) {
  OpInfo info;
  info.name = name;
  info.inputs = {"data"};
  info.variadic_attr = "num_args";
  info.description =
      "MXNet's NumPy interface (mx.np, mx.npx) is not implemented by weft; this name exists so that "
      "`import mxnet` works. Use the classic mx.nd / mx.sym operators.";
  info.source = "bindings/mxnet";
  return info;
}

// Every MXNet operator name (see tools/gen_mxnet_op_names.py for why they are all listed).
const std::vector<std::string>& MXNetOpNames() {
  static const std::vector<std::string> names = {
#include "mxnet_op_names.inc"
  };
  return names;
}

OpInfo MissingInfo(const std::string& name) {
  OpInfo info;
  info.name = name;
  // Any arguments: the generated function must reach the library (and its error) whatever it is
  // called with.
  info.inputs = {"data"};
  info.variadic_attr = "num_args";
  info.description = "MXNet's operator '" + name +
                     "' is not implemented by weft (listed so that calling it raises "
                     "this error instead of MXNet's placeholder returning None).";
  info.source = "bindings/mxnet";
  return info;
}

OpInfo CopyToInfo() {
  OpInfo info;
  info.name = "_copyto";
  info.description = "Copies the input into the output array (any two devices of one shape and dtype).";
  info.inputs = {"data"};
  info.source = "bindings/mxnet";
  return info;
}

std::unique_ptr<OpEntry> MakeEntry(const std::string& name, OpInfo info) {
  auto e = std::make_unique<OpEntry>();
  e->name = name;
  e->is_copyto = name == "_copyto";
  e->is_numpy = IsNumpyImportName(name);
  e->description = info.description;
  if (!info.aliases.empty()) e->description += fmt::format("\n\nAlso known as: {}", fmt::join(info.aliases, ", "));
  // A host operator's inputs depend on attributes the program gives (Custom's op_type): MXNet
  // lists one variadic "data" for them, with no count attribute.
  const bool open_inputs = info.source == "host" && info.inputs.empty();
  if (open_inputs) info.inputs = {"data"};
  const size_t num_args = info.inputs.size() - static_cast<size_t>(info.num_aux);
  for (size_t i = 0; i < info.inputs.size(); ++i) {
    e->arg_names.push_back(info.inputs[i]);
    e->arg_types.push_back(info.variadic_attr.empty() && !open_inputs ? "NDArray-or-Symbol" : "NDArray-or-Symbol[]");
    e->arg_descs.push_back(i < num_args ? "input " + info.inputs[i] : "auxiliary state " + info.inputs[i]);
  }
  for (const OpAttrInfo& a : info.attrs) {
    if (a.internal) continue;  // weft's own (the fusion pass's layouts): MXNet's signature lacks it
    e->arg_names.push_back(a.name);
    e->arg_types.push_back(MXNetTypeString(a));
    e->arg_descs.push_back(a.used ? a.doc : a.doc + " (accepted for compatibility; weft ignores it)");
  }
  for (size_t i = 0; i < e->arg_names.size(); ++i) {
    e->arg_name_ptrs.push_back(e->arg_names[i].c_str());
    e->arg_type_ptrs.push_back(e->arg_types[i].c_str());
    e->arg_desc_ptrs.push_back(e->arg_descs[i].c_str());
  }
  e->info = std::move(info);
  return e;
}

struct OpTable {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<OpEntry>> entries;  // built on first lookup
  std::set<const void*> handles;
  std::vector<std::string> names;
};

OpTable& GetTable() {
  static OpTable* t = [] {
    auto* table = new OpTable;
    RegisterCustomOp();  // before the op list is read: the frontend generates mx.nd.Custom from it
    std::set<std::string> names;
    for (const std::string& n : ListOpNames()) names.insert(n);
    for (const auto& [alias, target] : ListOpAliases()) names.insert(alias);
    names.insert("_copyto");
    names.insert("cast_storage");
    names.insert("_npi_Custom");  // MXNet's NumPy-interface name of Custom, which its frontend imports
    for (const std::string& n : NumpyImportNames()) names.insert(n);
    for (const std::string& n : MXNetOpNames()) names.insert(n);
    table->names.assign(names.begin(), names.end());
    return table;
  }();
  return *t;
}

}  // namespace

std::string MXNetTypeString(const OpAttrInfo& a) {
  std::string type;
  if (a.type == "int" || a.type == "long") {
    type = a.type;
  } else if (a.type == "float") {
    type = "float";
  } else if (a.type == "bool") {
    type = "boolean";
  } else if (a.type == "shape") {
    type = "Shape(tuple)";
  } else if (a.type == "dtype" || (a.type == "enum" && !a.choices.empty())) {
    std::vector<std::string> words;
    for (const std::string& c : a.choices) words.push_back(c == "None" ? c : Quoted(c));
    if (a.type == "dtype" && words.empty())
      words = {"'float16'", "'float32'", "'float64'", "'int32'", "'int64'", "'int8'", "'uint8'"};
    type = fmt::format("{{{}}}", fmt::join(words, ", "));
    if (!a.default_value) return type + ", required";
    return type + ",optional, default=" + Quoted(*a.default_value);
  } else {
    type = "string";
  }
  if (!a.default_value) return type + ", required";
  return type + ", optional, default=" +
         (a.type == "string" || a.type == "int" || a.type == "long" ? Quoted(*a.default_value) : *a.default_value);
}

const std::vector<std::string>& AllOpNames() { return GetTable().names; }

OpEntry& LookupOpEntry(const std::string& name) {
  OpTable& t = GetTable();
  std::lock_guard lock(t.mu);
  auto it = t.entries.find(name);
  if (it != t.entries.end()) return *it->second;
  std::optional<OpInfo> info = name == "_copyto"         ? std::optional<OpInfo>(CopyToInfo())
                               : IsNumpyImportName(name) ? std::optional<OpInfo>(NumpyInfo(name))
                               : name == "_npi_Custom"   ? FindOpInfo("Custom")
                                                         : FindOpInfo(name);
  // The binding's sparse ops come first: _sparse_retain has a core definition too, which its
  // binding op calls outside autograd's recording.
  std::optional<BindingOp> own_op = FindSparseOp(name);
  if (!info && !own_op) own_op = FindImageOp(name);
  if (!info && !own_op) own_op = FindArrayOp(name);
  if (own_op) info = own_op->info;
  // MXNet registers mx.nd.sparse.X as the alias _sparse_X of X (slice, dot, FullyConnected, abs...);
  // its sparse inputs reach the op through the C API's storage fallback.
  const bool sparse_alias = !info && name.starts_with("_sparse_") && FindOpInfo(name.substr(8));
  if (sparse_alias) info = FindOpInfo(name.substr(8));
  // MXNet 1.9's _contrib_SparseEmbedding is Embedding whose weight gradient is row_sparse.
  const bool sparse_embedding = !info && name == "_contrib_SparseEmbedding";
  if (sparse_embedding) info = FindOpInfo("Embedding");
  bool missing = false;
  if (!info && std::find(MXNetOpNames().begin(), MXNetOpNames().end(), name) != MXNetOpNames().end()) {
    info = MissingInfo(name);
    missing = true;
  }
  if (!info) ListOpInputs(name, {});  // throws the registry's "unknown operator" error with close names
  auto entry = MakeEntry(name, std::move(*info));
  entry->is_missing = missing;
  if (own_op) entry->run = own_op->run;
  // _sparse_cast_storage (mx.sym.sparse.cast_storage) is the binding's op of cast_storage.
  const bool own_alias = own_op && name.starts_with("_sparse_") && FindOpInfo(name.substr(8));
  entry->registry_name = sparse_alias || own_alias ? name.substr(8) : sparse_embedding ? "Embedding" : name;
  if (sparse_embedding) {
    entry->fixed_attrs["sparse_grad"] = "True";
    entry->description +=
        "\n\nMXNet's SparseEmbedding: Embedding with sparse_grad=True (a row_sparse weight gradient).";
  }
  t.handles.insert(entry.get());
  return *t.entries.emplace(name, std::move(entry)).first->second;
}

OpEntry& OpFromHandle(void* handle) {
  OpTable& t = GetTable();
  std::lock_guard lock(t.mu);
  if (handle == nullptr) Fail("the op handle (AtomicSymbolCreator) is NULL");
  if (!t.handles.count(handle)) Fail("invalid op handle {}: not one given out by NNGetOpHandle", handle);
  return *static_cast<OpEntry*>(handle);
}

}  // namespace weft::mx
