// Double-precision reference implementations of the built-in operators, written from their
// contract (core/operator/OPS.md, MXNet 1.9's definitions) and independent of every device
// plugin: the conformance suite compares the cpu plugin's results with them, so that a "pass" in
// the cpu certificate means correct results, not only a kernel that agrees with itself.
//
// Each reference computes in double from the inputs as the device sees them (already rounded to
// their dtype) and rounds its outputs to the output dtypes, so that exactly defined results
// (copies, IEEE add/sub/mul of two floats) can be compared bit for bit.
//
// The files: reference.cc (the table, tensor helpers, the gradients defined rather than derived),
// reference_elemwise.cc (element-wise, scalar, broadcast ops, activations), reference_nn.cc
// (layers), reference_norm.cc (normalisations, softmax and the loss layers), reference_shape.cc
// (copies, slicing, indexing, padding), reference_reduce.cc (reductions, ordering, matrix products,
// array creation), reference_update.cc (optimizer updates, 2-bit compression), reference_update_more.cc
// (the multi-precision, multi-tensor, sign, FTRL/FTML, LAMB and LARS updates), reference_index.cc
// (indexing, assignment and layout ops of MXNet's frontend), reference_math.cc (MXNet's further
// math: comparisons and logic, mod, power, hypot, inverse trigonometric and hyperbolic functions,
// rounding, erf/erfinv, gamma), reference_random.cc (the random samplers: the device's draws
// checked against their distribution).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "conformance_util.h"

namespace wconf {

/// What a reference computes for one node.
struct Reference {
  std::vector<HostTensor> out;  // every output, hidden ones included, rounded to its dtype
  std::vector<HostTensor> aux;  // the aux states after the call (copies of the inputs' when untouched)
};

/// The reference result of the forward node `spec` (spec.op the registry's canonical name,
/// spec.attrs normalised). `device` is the device's result of the same node: only ops that draw
/// random numbers read it (Dropout and LeakyReLU rrelu in training take the device's draws from
/// its mask output, the _random_* samplers their output; Reference then checks those draws and
/// appends what is wrong to *error).
/// nullopt when the suite has no reference for the op (operator plugins' ops). Throws
/// weft::Error for attributes or shapes the reference does not handle.
std::optional<Reference> ReferenceForward(const RunSpec& spec, const RunResult& device, std::string* error);

/// True when ReferenceForward has a reference for forward op `op`.
bool HasReferenceForward(const std::string& op);

/// The input gradients of the forward node `fwd` (one per input, in input order) for the output
/// gradients `out_grads` (one per output, hidden ones included), for the ops whose gradient is
/// defined by the op rather than derived from its forward, which finite differences cannot check:
/// the loss layers (SoftmaxOutput, the regression outputs, MakeLoss), Dropout, LeakyReLU selu and
/// rrelu, LayerNorm with visible statistics, Cast and amp_cast, mod (reference_math.cc), topk's
/// indices and mask. `fwd_result` is the forward's result (outputs, hidden ones included: the
/// masks). nullopt for other ops.
std::optional<std::vector<HostTensor>> ReferenceGradient(const RunSpec& fwd, const RunResult& fwd_result,
                                                         const std::vector<HostTensor>& out_grads);

namespace ref {

/// One call of a reference: the node and the tensors to fill.
struct Call {
  const RunSpec& spec;
  const RunResult& device;  // see ReferenceForward
  std::vector<HostTensor> out, aux;
  std::string* error;
  const HostTensor& in(size_t i) const { return spec.in.at(i); }
  const weft::AttrMap& attrs() const { return spec.attrs; }
};

using ForwardFn = std::function<void(Call&)>;
/// Forward op name -> its reference. Each reference_*.cc adds its ops (Register*References).
using Table = std::map<std::string, ForwardFn>;

void RegisterElemwiseReferences(Table& t);
void RegisterNNReferences(Table& t);
void RegisterNormReferences(Table& t);
void RegisterShapeReferences(Table& t);
void RegisterReduceReferences(Table& t);
void RegisterUpdateReferences(Table& t);
void RegisterMoreUpdateReferences(Table& t);
void RegisterIndexReferences(Table& t);
void RegisterMathReferences(Table& t);
/// ReferenceGradient's part for the ops of reference_math.cc whose gradient finite differences
/// cannot check (mod's steps): the input gradients, unrounded; nullopt for other ops.
std::optional<std::vector<HostTensor>> MathGradient(const RunSpec& fwd, const std::vector<HostTensor>& out_grads);
void RegisterRandomReferences(Table& t);

// ---- helpers shared by the reference files ------------------------------------------------------
/// Row-major strides of `s` (elements).
std::vector<int64_t> Strides(const Shape& s);
/// The multi-index of flat position `flat` in `s`.
std::vector<int64_t> Unravel(int64_t flat, const Shape& s);
/// The flat position of `idx` in `s`.
int64_t Ravel(const std::vector<int64_t>& idx, const Shape& s);
/// The flat position in `in` (broadcast to `out`'s rank from the right, size-1 axes repeating)
/// of the element that output position `flat` reads.
int64_t BroadcastSource(int64_t flat, const Shape& out, const Shape& in);
/// `axis` (negative counts from the end) as an index into `ndim` axes; throws when out of range.
size_t Axis(int64_t axis, size_t ndim);
/// The product of s[from, to).
int64_t Prod(const Shape& s, size_t from, size_t to);
/// A tensor of `shape` and `dtype` filled with `value`.
HostTensor Filled(const Shape& shape, DType dtype, double value);
/// True for float16, bfloat16, float32, float64.
bool IsFloatType(DType d);

/// Activation's act_type `type` (relu, sigmoid, tanh, softrelu, softsign) of x; throws for another.
double Activation(const std::string& type, double x);

using Unary = double (*)(double);
using Binary = double (*)(double, double);
/// The attribute `scalar` of a scalar op as the op sees it: MXNet passes it to the kernel in the
/// data's (input 0's) dtype.
double ScalarFor(const Call& c);
/// out[0] = f(in 0, in 1) element by element, each input broadcast to out[0]'s shape (NumPy
/// rules; also the element-wise binary ops, whose inputs have the output's shape).
void Broadcast(Call& c, Binary f);
/// The reference of an element-wise unary op: out[0] = f(in 0) element by element.
ForwardFn MapUnary(Unary f);

/// An element-wise unary math op (tan ... gammaln, softsign): its reference and the values its
/// conformance cases draw. reference_math.cc keeps the one table; op_cases_frontend.cc makes two
/// cases of each entry (shapes (7) and (3, 1, 5)), so a new op of this kind is one row there.
struct UnaryMathOp {
  const char* op;
  Unary f;
  Domain domain;
};
const std::vector<UnaryMathOp>& UnaryMathOps();
/// The reference of a scalar op: out[0] = f(in 0, scalar) element by element (the scalar as
/// ScalarFor), f(scalar, in 0) when `scalar_left` (_rminus_scalar's kind).
ForwardFn MapScalar(Binary f, bool scalar_left = false);

}  // namespace ref
}  // namespace wconf
