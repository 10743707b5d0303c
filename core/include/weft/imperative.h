// weft — running operators on NDArrays right away (MXNet's imperative mode; mxnet-cpp's
// `Operator("FullyConnected").SetParam(...).PushInput(nd)...Invoke(outputs)` and NDArray
// arithmetic).
//
// An imperative call normalises the attributes against the op's definition (defaults filled in,
// unknown names and bad values refused), infers the output shapes and dtypes from the inputs'
// (core/operator/OPS.md), allocates the outputs that were not given on the inputs' device,
// prepares the device's kernel (once per op, attributes, device and shapes: later calls with the
// same signature reuse it, with its workspace) and pushes one engine operation. It returns as soon as the
// operation is pushed: reading an output (SyncCopyToCPU, WaitToRead, At) waits for it, and a
// failure of the kernel is rethrown there (as for any engine operation, engine.h).
//
// Inputs, as in MXNet's NDArray API, are the op's inputs followed by its aux states (BatchNorm:
// data, gamma, beta, moving_mean, moving_var); a kernel that updates aux states (BatchNorm in
// training) writes those arrays. Every array of one call must be on the same device.
// Outputs are the op's visible outputs (hidden ones, OPS.md, are allocated and dropped).
//
// Autograd (weft/autograd.h): while the calling thread records, every call whose inputs include an
// array of a recorded graph (or a marked variable) is added to the graph, and its outputs become
// part of it; writing into an array that is already part of a recorded graph is refused then
// (MXNet's "Assigning to NDArrays that are already in a computational graph ..."), before anything
// is pushed. Training mode is the call's is_train or the thread's autograd::IsTraining().
//
// Thread-safety: calls from several threads are fine (the engine orders them by their arrays).
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "weft/base.h"
#include "weft/context.h"
#include "weft/ndarray.h"

namespace weft {

/// The arguments of one imperative call.
struct WEFT_API ImperativeCall {
  std::string op;                                             // op name or alias ("FullyConnected", "_plus_scalar")
  std::map<std::string, std::string> params;                  // attribute strings as in MXNet JSON ("(3, 3)", "True")
  std::vector<NDArray> inputs;                                // positional: op inputs, then aux states
  std::vector<std::pair<std::string, NDArray>> named_inputs;  // by input or aux-state name
  bool is_train = false;  // training mode (Dropout, BatchNorm); also on inside autograd::TrainMode / Record scopes
  // Where outputs are made when no input or given output fixes the device (ops without inputs:
  // _zeros, _random_uniform; MXNet's `ctx` attribute). Unset: cpu(0). An input or output on
  // another device is an error naming both.
  std::optional<Context> context;
};

/// Runs `call`, writing into *outputs when it holds arrays (one per visible output, or one per
/// output hidden ones included; none arrays are allocated in place), otherwise filling *outputs
/// with new arrays. An output that is the same view as an input is computed in place. For ops
/// with a `num_args` attribute (Concat, add_n) it defaults to the number of positional inputs.
///
/// Throws weft::Error (nothing is pushed) for an unknown op, bad attributes (OpDef::Normalize's
/// messages), an unknown or twice-given input name, a missing input (its name is in the
/// message), inputs on different devices, shapes or dtypes the op refuses (the inference message
/// names op, slot and both shapes), outputs of the wrong shape / dtype / device, or no kernel for
/// the device (kernel_runner.h's message). weft::OutOfMemoryError when outputs cannot be allocated.
///
/// Ops that have kernels but no definition (backward ops such as "_backward_FullyConnected",
/// whose inputs and outputs follow OPS.md's convention) run when every output array is given:
/// the arrays' shapes and dtypes are the node's, `params` go to the kernel as given (pass the
/// forward node's attributes), inputs are positional only and there are no aux states.
/// Sparse arrays (weft/storage_type.h): a call with a row_sparse or csr input (or given output)
/// runs on the kernel of the device's plugin that claims those storage types (SDK 2.1
/// infer_storage: the cpu plugin's dot of csr·dense, csrᵀ·dense → row_sparse, ...); an output
/// not given gets the storage type the kernel infers (MXNet's FInferStorageType), and the call
/// returns once sparse outputs are written. When no kernel claims the call it is refused
/// (weft::Error naming the op, the storage types and the device) — never handed to a dense kernel;
/// convert with CastStorage first (what MXNet's storage fallback does). Aux states must be dense.
/// While autograd records, a sparse call is recorded as a dense one is; Backward runs its gradient
/// on the sparse kernel that claims the backward op's storage types, whose gradients then have the
/// storage types that kernel gives them (MXNet's backward FInferStorageType: _sparse_retain's and
/// _square_sum's row_sparse data gradient, dot(csr, dense)'s row_sparse rhs gradient), or, when
/// none claims them, on dense copies of the sparse values (MXNet's storage fallback).
WEFT_API void Invoke(const ImperativeCall& call, std::vector<NDArray>* outputs);
/// True when `call` (positional inputs, at least one input or given output sparse) would run on a
/// sparse kernel through Invoke: a plugin of the inputs' device claims its storage types (the
/// outputs' when `outputs` is not empty). False for dense calls, calls without inputs, unknown
/// ops, named inputs and attributes the op refuses (Invoke reports those). Throws weft::Error
/// with a plugin's message when its infer_storage fails.
WEFT_API bool SparseKernelClaims(const ImperativeCall& call, const std::vector<NDArray>& outputs);
/// Same, returning new output arrays.
WEFT_API std::vector<NDArray> Invoke(const ImperativeCall& call);
/// Shorthand: op on positional inputs with attributes, returning its first output.
WEFT_API NDArray InvokeOne(const std::string& op, const std::vector<NDArray>& inputs,
                           const std::map<std::string, std::string>& params = {});

// ---- NDArray arithmetic (mxnet-cpp's NDArray operators) ----------------------------------------
// Element-wise on arrays of equal shape (elemwise_add/sub/mul/div; use broadcast_* for
// broadcasting) or with a scalar (_plus_scalar, _minus_scalar, _rminus_scalar, _mul_scalar,
// _div_scalar, _rdiv_scalar). The result is a new array on the operands' device; the compound
// assignments compute in place into the left operand. All are pushed and return at once. Errors
// as Invoke (e.g. shapes differ: the message names both).
WEFT_API NDArray operator+(const NDArray& lhs, const NDArray& rhs);
WEFT_API NDArray operator-(const NDArray& lhs, const NDArray& rhs);
WEFT_API NDArray operator*(const NDArray& lhs, const NDArray& rhs);
WEFT_API NDArray operator/(const NDArray& lhs, const NDArray& rhs);
WEFT_API NDArray operator+(const NDArray& lhs, float scalar);
WEFT_API NDArray operator-(const NDArray& lhs, float scalar);
WEFT_API NDArray operator*(const NDArray& lhs, float scalar);
WEFT_API NDArray operator/(const NDArray& lhs, float scalar);
WEFT_API NDArray operator+(float scalar, const NDArray& rhs);
WEFT_API NDArray operator-(float scalar, const NDArray& rhs);
WEFT_API NDArray operator*(float scalar, const NDArray& rhs);
WEFT_API NDArray operator/(float scalar, const NDArray& rhs);
/// -a (negative).
WEFT_API NDArray operator-(const NDArray& a);
WEFT_API NDArray& operator+=(NDArray& lhs, const NDArray& rhs);
WEFT_API NDArray& operator-=(NDArray& lhs, const NDArray& rhs);
WEFT_API NDArray& operator*=(NDArray& lhs, const NDArray& rhs);
WEFT_API NDArray& operator/=(NDArray& lhs, const NDArray& rhs);
WEFT_API NDArray& operator+=(NDArray& lhs, float scalar);
WEFT_API NDArray& operator-=(NDArray& lhs, float scalar);
WEFT_API NDArray& operator*=(NDArray& lhs, float scalar);
WEFT_API NDArray& operator/=(NDArray& lhs, float scalar);

/// Seeds the random sequence of ops that draw random numbers (Dropout, the _random_* samplers, whose element i is a
/// function of the call's seed and i only): MXNet's mx.random.seed / mxnet-cpp's MXRandomSeed. Thread-safe.
WEFT_API void RandomSeed(uint64_t seed);

}  // namespace weft
