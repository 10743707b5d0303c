#include "binding_ops.h"

#include "weft/imperative.h"
#include "weft/op_info.h"
#include "weft/sparse.h"

namespace weft::mx {
namespace {

const NDArray& OneInput(const std::vector<NDArray>& in, const char* op) {
  if (in.size() != 1) Fail("{} takes one input (data), {} given", op, in.size());
  return in[0];
}

// cast_storage(data, stype): a new array of that storage type, or the conversion into out=.
void CastStorageOp(const std::vector<NDArray>& in, const std::map<std::string, std::string>& params,
                   std::vector<NDArray>* out) {
  const NDArray& data = OneInput(in, "cast_storage");
  auto it = params.find("stype");
  if (it == params.end()) Fail("cast_storage: the attribute stype ('default', 'row_sparse' or 'csr') is required");
  const StorageType stype = StorageTypeFromName(it->second);
  const StorageType from = data.storage_type();
  if (from != StorageType::kDefault && stype != StorageType::kDefault && from != stype) {
    // MXNet 1.9's cast_storage has no kernel between the two sparse types.
    Fail("cast_storage: from {} to {} is not supported (as in MXNet): convert to 'default' first",
         StorageTypeName(from), StorageTypeName(stype));
  }
  if (out->empty()) {
    out->push_back(CastStorage(data, stype));
    return;
  }
  if (out->size() != 1) Fail("cast_storage has one output, {} given", out->size());
  if ((*out)[0].storage_type() != stype)
    Fail("cast_storage: out= is {} but stype='{}'", StorageTypeName((*out)[0].storage_type()), it->second);
  CastStorageInto(data, (*out)[0]);
}

// _contrib_getnnz(data, axis=None): stored values of a csr array, in all or per row.
void GetNnzOp(const std::vector<NDArray>& in, const std::map<std::string, std::string>& params,
              std::vector<NDArray>* out) {
  const NDArray& data = OneInput(in, "_contrib_getnnz");
  std::optional<int> axis;
  if (auto it = params.find("axis"); it != params.end() && it->second != "None") {
    try {
      axis = std::stoi(it->second);
    } catch (const std::exception&) {
      Fail("_contrib_getnnz: axis '{}' is not an integer or None", it->second);
    }
  }
  NDArray result = GetNNZ(data, axis);
  if (out->empty()) {
    out->push_back(std::move(result));
    return;
  }
  if (out->size() != 1) Fail("_contrib_getnnz has one output, {} given", out->size());
  NDArray::CopyFromTo(result, (*out)[0]);
}

// _sparse_retain(data, indices) (mx.nd.sparse.retain): the core op, which the cpu's sparse kernel
// computes (sorted distinct rows; tensor_sparse_ops.cc). Under autograd it is recorded as any
// call: data's gradient is row_sparse, out_grad's retained rows (MXNet's _backward_sparse_retain).
void SparseRetainOp(const std::vector<NDArray>& in, const std::map<std::string, std::string>&,
                    std::vector<NDArray>* out) {
  if (in.size() != 2) Fail("_sparse_retain takes data and indices, {} inputs given", in.size());
  if (in[0].storage_type() != StorageType::kRowSparse)
    Fail("_sparse_retain: data is {}; it takes a row_sparse array (as MXNet's sparse_retain)",
         StorageTypeName(in[0].storage_type()));
  if (out->size() > 1) Fail("_sparse_retain has one output, {} given", out->size());
  ImperativeCall call;
  call.op = "_sparse_retain";
  call.inputs = in;
  weft::Invoke(call, out);
}

}  // namespace

std::optional<BindingOp> FindSparseOp(const std::string& name) {
  if (name == "cast_storage" || name == "_sparse_cast_storage") {
    // The core definition's description and attributes (defs/tensor.cc); the binding runs it.
    return BindingOp{*FindOpInfo("cast_storage"), CastStorageOp};
  }
  if (name == "_contrib_getnnz") {
    return BindingOp{
        BindingOpInfo(name, "Number of stored values of a csr array, in all (axis None) or per row (axis 1).", {"data"},
                      {BindingAttr("axis", "int or None", "None", "None, or 1 for a count per row")}),
        GetNnzOp};
  }
  if (name == "_sparse_retain") return BindingOp{*FindOpInfo("_sparse_retain"), SparseRetainOp};
  return std::nullopt;
}

}  // namespace weft::mx
