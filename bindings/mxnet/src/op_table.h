// The op handles of the C API (NNGetOpHandle, AtomicSymbolCreator): one entry per name MXNet's
// frontend may look up (every registered op and alias, plus the binding's own `_copyto`), with
// the information MXSymbolGetAtomicSymbolInfo returns, in MXNet's wording, computed once.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "binding_ops.h"
#include "weft/op_info.h"

namespace weft::mx {

struct OpEntry {
  std::string name;  ///< the name looked up (an alias keeps its own name)
  /// The name weft's registry knows the op by: `name`, except for MXNet's _sparse_X aliases
  /// (mx.nd.sparse.X, mx.sym.sparse.X), which weft does not register: X; and
  /// _contrib_SparseEmbedding: Embedding.
  std::string registry_name;
  OpInfo info;  ///< the op it stands for
  // MXSymbolGetAtomicSymbolInfo's arrays: the inputs (and aux states) first, then attributes.
  std::vector<std::string> arg_names, arg_types, arg_descs;
  std::vector<const char*> arg_name_ptrs, arg_type_ptrs, arg_desc_ptrs;
  std::string description;
  /// True for `_copyto`, which the binding implements itself (a copy between arrays).
  bool is_copyto = false;
  /// Set for the ops the binding runs itself (binding_ops.h: cast_storage, getnnz, _cvimresize).
  BindingOpRun run = nullptr;
  /// True for the names of MXNet's NumPy interface listed only so that its frontend imports.
  bool is_numpy = false;
  /// True for MXNet operators weft does not implement (listed so that calling one fails loudly).
  bool is_missing = false;
  /// Attributes every use of this name sets (MXNet's _contrib_SparseEmbedding is Embedding with
  /// sparse_grad=True).
  std::map<std::string, std::string> fixed_attrs;
};

/// Every name, sorted (MXListAllOpNames).
const std::vector<std::string>& AllOpNames();
/// The entry for `name`; throws weft::Error (with close names) for an unknown op.
OpEntry& LookupOpEntry(const std::string& name);
/// The entry behind a handle given back by the caller; throws for anything else.
OpEntry& OpFromHandle(void* handle);

/// MXNet's type text of an attribute ("int, required", "Shape(tuple), optional, default=[]",
/// "{'avg', 'max', 'sum'},optional, default='max'").
std::string MXNetTypeString(const OpAttrInfo& attr);

}  // namespace weft::mx
