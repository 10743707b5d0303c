// The operators the binding runs itself, outside weft's registry (imperatively only, as MXNet's
// frontend uses them):
//  - sparse_ops.cc: those whose point is the storage type (weft's operator registry works on
//    dense arrays): cast_storage (and its alias _sparse_cast_storage), _sparse_retain and
//    _contrib_getnnz, with MXNet's names, attributes and errors (MXNet 1.9
//    src/operator/tensor/cast_storage.cc, sparse_retain.cc, src/operator/contrib/nnz.cc).
//    cast_storage and _sparse_retain have core definitions (their descriptions and attributes),
//    under which they also run in bound graphs (sparse_executor.h);
//  - image_ops.cc: MXNet's OpenCV image op _cvimresize (mx.image.imresize) on weft's image
//    functions (weft/image.h), which run on the host;
//  - array_ops.cc: reset_arrays (Gluon's zero_grad), which writes its inputs and has no outputs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "weft/ndarray.h"
#include "weft/op_info.h"

namespace weft::mx {

/// Runs the op on `in` with `params`: fills an empty *out with new arrays, or writes into the
/// arrays given (out=).
using BindingOpRun = void (*)(const std::vector<NDArray>& in, const std::map<std::string, std::string>& params,
                              std::vector<NDArray>* out);

struct BindingOp {
  OpInfo info;  ///< what MXSymbolGetAtomicSymbolInfo describes (info.name is the looked-up name)
  BindingOpRun run;
};

/// One attribute of a binding op's OpInfo.
inline OpAttrInfo BindingAttr(std::string name, std::string type, std::optional<std::string> default_value,
                              std::string doc, std::vector<std::string> choices = {}) {
  return OpAttrInfo{std::move(name), std::move(type), std::move(default_value), std::move(doc), std::move(choices)};
}

/// The OpInfo of a binding op (source "bindings/mxnet").
inline OpInfo BindingOpInfo(const std::string& name, std::string description, std::vector<std::string> inputs,
                            std::vector<OpAttrInfo> attrs) {
  OpInfo info;
  info.name = name;
  info.description = std::move(description);
  info.inputs = std::move(inputs);
  info.attrs = std::move(attrs);
  info.source = "bindings/mxnet";
  return info;
}

/// The storage-type op named `name` (sparse_ops.cc), or nullopt.
std::optional<BindingOp> FindSparseOp(const std::string& name);
/// The image op named `name` (image_ops.cc), or nullopt.
std::optional<BindingOp> FindImageOp(const std::string& name);
/// The array op named `name` (array_ops.cc), or nullopt.
std::optional<BindingOp> FindArrayOp(const std::string& name);

}  // namespace weft::mx
