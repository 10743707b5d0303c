// weft — host operators: operators a program implements itself, in C++ or (through a language
// binding) in another language, and then uses like any built-in op — imperatively, in symbols,
// in executors, with gradients. MXNet's CustomOp (mx.operator.CustomOp from Python) is one: the
// MXNet binding registers its "Custom" op here.
//
// A host operator's functions run on host threads that belong to no engine pool (a small pool
// that grows when all its threads are busy), so they may do anything a program may do: push
// NDArray operations (weft::Invoke, copies) and wait for them, call back into an interpreter. The
// arrays they receive are the node's arrays under engine variables of their own
// (NDArray::WithOwnVariable): the engine operation that runs the host operator holds the node's
// dependencies, and completes once the function returned *and* everything it pushed on those
// arrays has completed. An exception from the function (or from that pushed work) is stored on
// the node's outputs, as for any kernel, and rethrown at the next wait.
//
// Gradients: the backward op is "_backward_<name>" (the SDK convention, OPS.md); its node gets the
// output gradients, the forward inputs, the forward outputs and the aux states, and writes the
// input gradients. Each node (forward or backward) gets its own HostOpKernel from `create`.
//
// Devices: the arrays may live on any device; the function sees them where they are (copy to cpu
// to read them on the host). Host operators are never bulked with other nodes of an executor.
//
// Thread-safety: RegisterHostOp may be called from any thread; a kernel's Forward/Backward calls
// for one node never overlap (runs of one node are ordered by the engine).
#pragma once

#include "weft/export.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weft/base.h"
#include "weft/context.h"
#include "weft/executor.h"
#include "weft/ndarray.h"
#include "weft/op_info.h"

namespace weft {

/// Attribute text by name (MXNet's strings), defaults filled in.
using HostOpAttrs = std::map<std::string, std::string>;

/// The computation of one node of a host operator.
class WEFT_API HostOpKernel {
 public:
  virtual ~HostOpKernel() = default;
  /// Computes `out` from `in` and `aux` (aux states may be updated). `req[i]` says how to write
  /// out[i]: kNullOp (leave it), kWriteTo / kWriteInplace (overwrite), kAddTo (add to it).
  virtual void Forward(bool is_train, const std::vector<NDArray>& in, const std::vector<NDArray>& out,
                       const std::vector<OpReqType>& req, const std::vector<NDArray>& aux) = 0;
  /// Computes the input gradients `in_grad` (written as `req` says) from the output gradients and
  /// the forward pass's inputs, outputs and aux states.
  virtual void Backward(bool is_train, const std::vector<NDArray>& out_grad, const std::vector<NDArray>& in,
                        const std::vector<NDArray>& out, const std::vector<NDArray>& in_grad,
                        const std::vector<OpReqType>& req, const std::vector<NDArray>& aux) = 0;
};

/// What a host operator is. Every function may throw weft::Error (or any std::exception) to refuse
/// its arguments; the message reaches the caller naming the op.
struct WEFT_API HostOpDef {
  std::string name;         ///< a name no other op has (e.g. "Custom")
  std::string description;  ///< one paragraph
  /// Declared attributes (type, default, doc), as OpInfo lists them.
  std::vector<OpAttrInfo> attrs;
  /// Keep attributes that are not declared as given (MXNet's Custom passes any keyword through).
  bool any_attrs = false;
  /// Names of the inputs, outputs (all visible) and aux states for these attributes.
  std::function<std::vector<std::string>(const HostOpAttrs&)> list_inputs, list_outputs, list_aux;
  /// Fills unknown shapes (nullopt = unknown) of outputs and, where it can, inputs and aux states.
  std::function<void(const HostOpAttrs&, std::vector<std::optional<Shape>>& in, std::vector<std::optional<Shape>>& out,
                     std::vector<std::optional<Shape>>& aux)>
      infer_shape;
  /// Fills unknown dtypes (-1); unset = everything takes the first input's dtype.
  std::function<void(const HostOpAttrs&, std::vector<int>& in, std::vector<int>& out, std::vector<int>& aux)>
      infer_type;
  /// Makes the kernel of one node on `ctx`, given the forward node's input shapes and dtypes.
  std::function<std::unique_ptr<HostOpKernel>(const HostOpAttrs&, const Context& ctx,
                                              const std::vector<Shape>& in_shapes, const std::vector<DType>& in_dtypes)>
      create;
  /// False: no gradient (input gradients are zero, as for argmax).
  bool differentiable = true;
};

/// Registers a host operator. Throws weft::Error when the name is taken (by any op or alias) or a
/// required function (list_inputs, list_outputs, infer_shape, create) is missing.
WEFT_API void RegisterHostOp(HostOpDef def);

}  // namespace weft
