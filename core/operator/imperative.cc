// weft core — imperative invoke and NDArray arithmetic (see weft/imperative.h).
#include "weft/imperative.h"

#include <algorithm>
#include <optional>

#include "operator/autograd_hook.h"
#include "operator/infer.h"
#include "operator/kernel_runner.h"
#include "operator/op_def.h"
#include "weft/sdk/operator.h"

namespace weft {
namespace {

// Places positional and named arrays into the input + aux slots of the node.
// `order` (OpDef::mxnet_order; empty = the identity) maps positions to slots.
std::vector<NDArray> PlaceInputs(const ImperativeCall& call, const std::string& op, size_t num_in,
                                 const std::vector<std::string>& slot_names, const std::vector<size_t>& order) {
  WEFT_CHECK(call.inputs.size() <= slot_names.size(), "{}: {} inputs given, the op takes {} (inputs and aux states)",
             op, call.inputs.size(), slot_names.size());
  std::vector<NDArray> slots(slot_names.size());
  std::vector<bool> given(slot_names.size(), false);
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const size_t slot = i < order.size() ? order[i] : i;
    WEFT_CHECK(slot < slots.size(), "{}: input position {} has no slot", op, i);
    slots[slot] = call.inputs[i];
    given[slot] = true;
  }
  for (const auto& [name, array] : call.named_inputs) {
    size_t j = 0;
    while (j < slot_names.size() && slot_names[j] != name) ++j;
    if (j == slot_names.size()) {
      std::string known;
      for (const std::string& n : slot_names) known += (known.empty() ? "" : ", ") + n;
      Fail("{}: no input named '{}' (inputs and aux states: {})", op, name, known);
    }
    WEFT_CHECK(!given[j], "{}: input '{}' given twice", op, name);
    slots[j] = array;
    given[j] = true;
  }
  for (size_t j = 0; j < slots.size(); ++j)
    WEFT_CHECK(given[j] && !slots[j].is_none(), "{}: {} '{}' is missing", op, j < num_in ? "input" : "aux state",
               slot_names[j]);
  return slots;
}

std::string ShapeSlotString(const ShapeSlot& s) { return s ? s->ToString() : "unknown"; }

bool AnySparse(const std::vector<NDArray>& arrays) {
  return std::any_of(arrays.begin(), arrays.end(),
                     [](const NDArray& a) { return !a.is_none() && a.storage_type() != StorageType::kDefault; });
}

std::string StypeNames(const std::vector<StorageType>& v) {
  std::string r;
  for (StorageType t : v) r += (r.empty() ? "" : ", ") + std::string(StorageTypeName(t));
  return "(" + r + ")";
}

// For a kernel-only call (a backward op) with a sparse input or output: the storage types into
// *sig (whose shapes and dtypes the caller filled) and whether a sparse kernel of ctx's device
// claims them, producing exactly the given outputs' storage types.
bool KernelOnlyClaims(const ImperativeCall& call, const std::vector<NDArray>& outputs, const Context& ctx,
                      NodeSignature* sig) {
  for (const NDArray& a : call.inputs) sig->in_stypes.push_back(a.storage_type());
  for (const NDArray& a : outputs) sig->out_stypes.push_back(a.storage_type());
  std::vector<StorageType> claimed = sig->out_stypes;
  return ClaimStorageTypes(call.op, AttrMap{call.params}, ctx, *sig, &claimed) && claimed == sig->out_stypes;
}

// An op with kernels but no definition (backward ops): the caller's arrays are the signature.
// Channels per block of an activation-format attribute ("plain": 1).
int64_t FormatBlock(const AttrMap& attrs, const char* name) {
  const std::string f = attrs.GetString(name, "plain");
  return f == "nChw16c" ? 16 : f == "nChw8c" ? 8 : 1;
}

// A blocked activation whose channels fill no whole block lives in memory padded to whole blocks,
// which only an executor plans (core/executor/fuse_conv.h); an imperative call's arrays have the
// plain size, so the kernel would read or write past them. data_format is the layout of input 0
// (of every input for Concat) and, for Concat and _sg_batch_norm, of the output; out_format that
// of the output.
void CheckWholeBlocks(const std::string& op, const AttrMap& attrs, const std::vector<NDArray>& in,
                      const std::vector<Shape>& out) {
  auto check = [&](const Shape& s, int64_t block, const char* what) {
    if (block > 1 && s.ndim() == 4 && s[1] % block != 0)
      Fail(
          "{}: {} of shape {} has {} channels, not a multiple of its layout's block of {}: such values are padded "
          "and exist only inside an executor; call the op with data_format/out_format plain",
          op, what, s.ToString(), s[1], block);
  };
  const int64_t in_block = FormatBlock(attrs, "data_format");
  for (size_t i = 0; i < in.size() && (i == 0 || op == "Concat"); ++i) check(in[i].GetShape(), in_block, "an input");
  const bool joins = op == "Concat" || op == "_sg_batch_norm";
  const int64_t out_block = attrs.Has("out_format") ? FormatBlock(attrs, "out_format") : joins ? in_block : 1;
  for (const Shape& s : out) check(s, out_block, "an output");
}

void InvokeKernelOnly(const ImperativeCall& call, std::vector<NDArray>* outputs) {
  WEFT_CHECK(call.named_inputs.empty(), "{}: has no definition, so its inputs can only be given by position", call.op);
  WEFT_CHECK(!call.inputs.empty(), "{}: has no definition and no inputs were given", call.op);
  const Context ctx = call.inputs[0].GetContext();
  NodeSignature sig;
  for (const NDArray& a : call.inputs) {
    WEFT_CHECK(!a.is_none(), "{}: an input is a none array", call.op);
    sig.in_shapes.push_back(a.GetShape());
    sig.in_dtypes.push_back(a.GetDType());
  }
  std::vector<int32_t> req;
  for (const NDArray& a : *outputs) {
    sig.out_shapes.push_back(a.GetShape());
    sig.out_dtypes.push_back(a.GetDType());
    int32_t r = WEFT_REQ_WRITE;
    for (const NDArray& in : call.inputs)
      if (in.SharesChunkWith(a)) {
        WEFT_CHECK(in.offset() == a.offset() && in.GetShape() == a.GetShape(),
                   "{}: an output overlaps an input without being the same view", call.op);
        r = WEFT_REQ_WRITE_INPLACE;
      }
    req.push_back(r);
  }
  if (AnySparse(call.inputs) || AnySparse(*outputs))
    WEFT_CHECK(KernelOnlyClaims(call, *outputs, ctx, &sig),
               "{}: no kernel on {} takes inputs of storage types {} into outputs of storage types {}", call.op,
               ctx.ToString(), StypeNames(sig.in_stypes), StypeNames(sig.out_stypes));
  SharedKernelRunner(call.op, AttrMap{call.params}, ctx, sig)->Run(call.inputs, *outputs, req, {}, call.is_train);
}

}  // namespace

namespace {

// For a call with a sparse input or given output: the storage types of every slot into sig (an
// output not given takes the claiming kernel's answer) and true; false for a dense call. Throws
// weft::Error naming the op and the storage types when no kernel of the device claims the call.
bool ClaimSparse(const OpDef& def, const AttrMap& attrs, const Context& ctx, const std::vector<NDArray>& in,
                 const std::vector<NDArray>& aux, const std::vector<NDArray>& out, NodeSignature* sig) {
  if (!AnySparse(in) && !AnySparse(out) && !AnySparse(aux)) return false;
  const auto names = StypeNames;
  for (const NDArray& a : in) sig->in_stypes.push_back(a.storage_type());
  WEFT_CHECK(!AnySparse(aux), "{}: aux states are dense; convert the sparse ones with CastStorage", def.name);
  std::vector<StorageType> out_st(out.size(), StorageType::kUndefined);
  for (size_t i = 0; i < out.size(); ++i)
    if (!out[i].is_none()) out_st[i] = out[i].storage_type();
  WEFT_CHECK(ClaimStorageTypes(def.name, attrs, ctx, *sig, &out_st),
             "{}: no kernel on {} takes inputs of storage types {}{}; convert the sparse arrays with CastStorage "
             "(MXNet's storage fallback) or run the op on a device whose plugin claims them",
             def.name, ctx.ToString(), names(sig->in_stypes), AnySparse(out) ? " into the given sparse outputs" : "");
  sig->out_stypes = std::move(out_st);
  return true;
}

}  // namespace

bool SparseKernelClaims(const ImperativeCall& call, const std::vector<NDArray>& outputs) {
  const OpDef* def = OpRegistry::Get().Find(call.op);
  if (!call.named_inputs.empty() || call.inputs.empty() || (!AnySparse(call.inputs) && !AnySparse(outputs)))
    return false;
  if (def == nullptr) {
    // A kernel-only op (a backward op): every output must be given, as Invoke requires.
    NodeSignature sig;
    for (const std::vector<NDArray>* group : {&call.inputs, &outputs})
      for (const NDArray& a : *group) {
        if (a.is_none()) return false;
        (group == &outputs ? sig.out_shapes : sig.in_shapes).push_back(a.GetShape());
        (group == &outputs ? sig.out_dtypes : sig.in_dtypes).push_back(a.GetDType());
      }
    return !outputs.empty() && KernelOnlyClaims(call, outputs, call.inputs[0].GetContext(), &sig);
  }
  AttrMap given{call.params};
  if (def->FindAttr("num_args") != nullptr && !given.Has("num_args"))
    given.Set("num_args", std::to_string(call.inputs.size()));
  AttrMap attrs;
  try {
    attrs = def->Normalize(given);
  } catch (const Error&) {
    return false;  // Invoke reports the attributes (the binding's fallback calls it)
  }
  NodeSignature sig;
  for (const NDArray& a : call.inputs) {
    if (a.is_none()) return false;
    sig.in_shapes.push_back(a.GetShape());
    sig.in_dtypes.push_back(a.GetDType());
    sig.in_stypes.push_back(a.storage_type());
  }
  std::vector<StorageType> out_st(outputs.empty() ? OpOutputNames(*def, attrs).size() : outputs.size(),
                                  StorageType::kUndefined);
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].is_none()) out_st[i] = outputs[i].storage_type();
  return ClaimStorageTypes(def->name, attrs, call.inputs[0].GetContext(), sig, &out_st);
}

namespace {

// The names of a node's inputs, aux states and outputs, for the checks' messages.
struct SlotNames {
  std::vector<std::string> in, aux, out;
};

// The call's device: the inputs', else the given outputs', else the call's, else cpu(0). Every
// input and aux state must be on it.
Context CallContext(const ImperativeCall& call, const std::string& op, const std::vector<NDArray>& slots,
                    const std::vector<std::string>& slot_names, const std::vector<NDArray>& out) {
  std::optional<Context> ctx;
  for (const std::vector<NDArray>* group : {&slots, &out})
    for (const NDArray& a : *group)
      if (!a.is_none() && !ctx) ctx = a.GetContext();
  if (call.context) {
    WEFT_CHECK(!ctx || *ctx == *call.context, "{}: the arrays are on {} but the call asks for {}", op, ctx->ToString(),
               call.context->ToString());
    ctx = call.context;
  }
  if (!ctx) ctx = Context::cpu(0);
  for (size_t j = 0; j < slots.size(); ++j)
    WEFT_CHECK(slots[j].GetContext() == *ctx, "{}: '{}' is on {} but the other arrays are on {}", op, slot_names[j],
               slots[j].GetContext().ToString(), ctx->ToString());
  return *ctx;
}

// Shape and type inference from the inputs and aux states, checked against the arrays; makes the
// outputs the caller did not give (sparse ones when a sparse kernel claims the call) and checks
// those given. Fills `sig`; returns whether a sparse kernel runs.
bool InferOutputs(const OpDef& def, const AttrMap& attrs, const SlotNames& names, const Context& ctx,
                  const std::vector<NDArray>& in, const std::vector<NDArray>& aux, std::vector<NDArray>* outp,
                  NodeSignature* sig) {
  std::vector<NDArray>& out = *outp;
  const size_t num_in = in.size(), num_aux = aux.size(), num_out = out.size();
  std::vector<ShapeSlot> in_s(num_in), out_s(num_out), aux_s(num_aux);
  std::vector<int> in_t(num_in), out_t(num_out, -1), aux_t(num_aux);
  for (size_t i = 0; i < num_in; ++i) in_s[i] = in[i].GetShape(), in_t[i] = static_cast<int>(in[i].GetDType());
  for (size_t i = 0; i < num_aux; ++i) aux_s[i] = aux[i].GetShape(), aux_t[i] = static_cast<int>(aux[i].GetDType());
  // Output arrays given by the caller seed the inference, as in MXNet: an op whose output shape
  // its attributes do not fix (_set_value) takes the array's, and a mismatch is reported by it.
  for (size_t i = 0; i < num_out; ++i)
    if (!out[i].is_none()) out_s[i] = out[i].GetShape(), out_t[i] = static_cast<int>(out[i].GetDType());
  InferShapes(def, attrs, in_s, out_s, aux_s);
  InferTypes(def, attrs, in_t, out_t, aux_t);

  for (size_t i = 0; i < num_in; ++i) {
    WEFT_CHECK(in_s[i] && *in_s[i] == in[i].GetShape(), "{}: input '{}' has shape {}, the op needs {}", def.name,
               names.in[i], in[i].GetShape().ToString(), ShapeSlotString(in_s[i]));
    sig->in_shapes.push_back(in[i].GetShape());
    sig->in_dtypes.push_back(in[i].GetDType());
  }
  for (size_t i = 0; i < num_aux; ++i) {
    WEFT_CHECK(aux_s[i] && *aux_s[i] == aux[i].GetShape(), "{}: aux state '{}' has shape {}, the op needs {}", def.name,
               names.aux[i], aux[i].GetShape().ToString(), ShapeSlotString(aux_s[i]));
    sig->aux_shapes.push_back(aux[i].GetShape());
    sig->aux_dtypes.push_back(aux[i].GetDType());
  }
  const bool sparse = ClaimSparse(def, attrs, ctx, in, aux, out, sig);
  for (size_t i = 0; i < num_out; ++i) {
    bool known = out_s[i].has_value();
    if (known)
      for (int64_t d : *out_s[i]) known = known && d >= 0;
    WEFT_CHECK(known && out_t[i] >= 0, "{}: cannot infer output '{}' (shape {}) from the inputs", def.name,
               names.out[i], ShapeSlotString(out_s[i]));
    const DType dt = static_cast<DType>(out_t[i]);
    if (out[i].is_none()) {
      const StorageType st = sparse ? sig->out_stypes[i] : StorageType::kDefault;
      out[i] = st == StorageType::kDefault ? NDArray(*out_s[i], ctx, true, dt)
                                           : NDArray::CreateSparse(st, *out_s[i], ctx, dt);
    } else {
      WEFT_CHECK(out[i].GetShape() == *out_s[i] && out[i].GetDType() == dt,
                 "{}: output '{}' array has shape {} and dtype {}, the op makes {} {}", def.name, names.out[i],
                 out[i].GetShape().ToString(), DTypeName(out[i].GetDType()), out_s[i]->ToString(), DTypeName(dt));
    }
    sig->out_shapes.push_back(*out_s[i]);
    sig->out_dtypes.push_back(dt);
  }
  return sparse;
}

// An output that shares memory with an input is computed in place when the op allows that pair
// with the very same view (a += b), else into a temporary that is then copied over: sets `req`
// and redirects such outputs; returns the (temporary, caller's array) pairs to copy back.
std::vector<std::pair<NDArray, NDArray>> PlanInPlace(const OpDef& def, const AttrMap& attrs, const Context& ctx,
                                                     bool sparse, const NodeSignature& sig,
                                                     const std::vector<NDArray>& in, std::vector<NDArray>* outp,
                                                     std::vector<int32_t>* req) {
  std::vector<NDArray>& out = *outp;
  std::vector<std::pair<NDArray, NDArray>> copy_back;
  const std::vector<std::pair<int, int>> pairs = OpInplacePairs(def, attrs);
  for (size_t o = 0; o < out.size(); ++o) {
    for (size_t i = 0; i < in.size() && (*req)[o] == WEFT_REQ_WRITE; ++i) {
      if (!in[i].SharesChunkWith(out[o])) continue;
      // A sparse kernel may write a dense output over a dense input (a lazy update's weight); a
      // sparse array's parts are replaced while the kernel runs, so it cannot be such a pair.
      WEFT_CHECK(!sparse || (sig.in_stypes[i] == StorageType::kDefault && sig.out_stypes[o] == StorageType::kDefault),
                 "{}: output {} is input {}; a sparse kernel does not compute in place on a sparse array", def.name, o,
                 i);
      const bool allowed = in[i].offset() == out[o].offset() &&
                           std::find(pairs.begin(), pairs.end(),
                                     std::pair<int, int>(static_cast<int>(i), static_cast<int>(o))) != pairs.end();
      if (allowed) {
        (*req)[o] = WEFT_REQ_WRITE_INPLACE;
      } else {
        NDArray tmp(sig.out_shapes[o], ctx, true, sig.out_dtypes[o]);
        copy_back.emplace_back(tmp, out[o]);
        out[o] = tmp;
        break;
      }
    }
  }
  return copy_back;
}

}  // namespace

void Invoke(const ImperativeCall& call, std::vector<NDArray>* outputs) {
  WEFT_CHECK(outputs != nullptr, "Invoke({}): outputs is null", call.op);
  if (OpRegistry::Get().Find(call.op) == nullptr && !outputs->empty() &&
      std::none_of(outputs->begin(), outputs->end(), [](const NDArray& a) { return a.is_none(); })) {
    InvokeKernelOnly(call, outputs);
    return;
  }
  const OpDef& def = OpRegistry::Get().Lookup(call.op);
  AttrMap given{call.params};
  if (def.FindAttr("num_args") != nullptr && !given.Has("num_args"))
    given.Set("num_args", std::to_string(call.inputs.size() + call.named_inputs.size()));
  const AttrMap attrs = def.Normalize(given);

  const SlotNames names{OpInputNames(def, attrs), OpAuxNames(def, attrs), OpOutputNames(def, attrs)};
  const size_t num_in = names.in.size(), num_out = names.out.size();
  const size_t num_visible = static_cast<size_t>(OpNumVisibleOutputs(def, attrs));
  std::vector<std::string> slot_names = names.in;
  slot_names.insert(slot_names.end(), names.aux.begin(), names.aux.end());
  std::vector<NDArray> slots =
      PlaceInputs(call, def.name, num_in, slot_names, def.mxnet_order ? def.mxnet_order(attrs) : std::vector<size_t>{});
  std::vector<NDArray> in(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(num_in));
  std::vector<NDArray> aux(slots.begin() + static_cast<std::ptrdiff_t>(num_in), slots.end());

  // Outputs given by the caller: visible ones or all of them.
  std::vector<NDArray> out(num_out);
  if (!outputs->empty()) {
    WEFT_CHECK(outputs->size() == num_visible || outputs->size() == num_out,
               "{}: {} output arrays given, the op has {} outputs", def.name, outputs->size(), num_visible);
    for (size_t i = 0; i < outputs->size(); ++i) out[i] = (*outputs)[i];
  }
  // While recording, an output that is part of a recorded graph is refused before anything runs.
  const imperative_detail::Recorder* recorder = imperative_detail::ActiveRecorder();
  if (recorder != nullptr) recorder->check_outputs(def, out);

  const Context ctx = CallContext(call, def.name, slots, slot_names, out);
  NodeSignature sig;
  const bool sparse = InferOutputs(def, attrs, names, ctx, in, aux, &out, &sig);
  CheckWholeBlocks(def.name, attrs, in, sig.out_shapes);
  std::vector<int32_t> req(num_out, WEFT_REQ_WRITE);
  const std::vector<std::pair<NDArray, NDArray>> copy_back = PlanInPlace(def, attrs, ctx, sparse, sig, in, &out, &req);

  // Training mode: the call's flag or the thread's (autograd's train_mode / record scopes).
  const bool is_train = call.is_train || imperative_detail::IsTraining();
  // The prepared kernel is shared with earlier calls of the same signature (kernel_runner.h).
  SharedKernelRunner(def.name, attrs, ctx, sig, def.resources)->Run(in, out, req, aux, is_train);
  // A sparse output gets its parts while the kernel runs; its readers wait for that
  // (NDArray::BeginPartsWrite), so the call returns at once, as MXNet's does.
  for (const auto& [tmp, dst] : copy_back) {
    NDArray::CopyFromTo(tmp, dst);
    for (NDArray& o : out)
      if (o.SharesChunkWith(tmp)) o = dst;
  }
  if (recorder != nullptr) recorder->record({def, attrs, in, aux, out, is_train});

  if (outputs->empty()) {
    outputs->assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(num_visible));
  } else {
    for (size_t i = 0; i < outputs->size(); ++i) (*outputs)[i] = out[i];
  }
}

std::vector<NDArray> Invoke(const ImperativeCall& call) {
  std::vector<NDArray> out;
  Invoke(call, &out);
  return out;
}

NDArray InvokeOne(const std::string& op, const std::vector<NDArray>& inputs,
                  const std::map<std::string, std::string>& params) {
  ImperativeCall call;
  call.op = op;
  call.params = params;
  call.inputs = inputs;
  return Invoke(call).at(0);
}

namespace {

NDArray Binary(const char* op, const NDArray& lhs, const NDArray& rhs) { return InvokeOne(op, {lhs, rhs}); }
NDArray Scalar(const char* op, const NDArray& a, float s) {
  return InvokeOne(op, {a}, {{"scalar", fmt::format("{}", s)}});
}
// In place into `lhs`.
NDArray& Into(NDArray& lhs, const char* op, std::vector<NDArray> inputs, std::map<std::string, std::string> params) {
  ImperativeCall call;
  call.op = op;
  call.params = std::move(params);
  call.inputs = std::move(inputs);
  std::vector<NDArray> out{lhs};
  Invoke(call, &out);
  lhs = out[0];  // keeps what recording attached to it
  return lhs;
}

}  // namespace

NDArray operator+(const NDArray& lhs, const NDArray& rhs) { return Binary("elemwise_add", lhs, rhs); }
NDArray operator-(const NDArray& lhs, const NDArray& rhs) { return Binary("elemwise_sub", lhs, rhs); }
NDArray operator*(const NDArray& lhs, const NDArray& rhs) { return Binary("elemwise_mul", lhs, rhs); }
NDArray operator/(const NDArray& lhs, const NDArray& rhs) { return Binary("elemwise_div", lhs, rhs); }
NDArray operator+(const NDArray& lhs, float s) { return Scalar("_plus_scalar", lhs, s); }
NDArray operator-(const NDArray& lhs, float s) { return Scalar("_minus_scalar", lhs, s); }
NDArray operator*(const NDArray& lhs, float s) { return Scalar("_mul_scalar", lhs, s); }
NDArray operator/(const NDArray& lhs, float s) { return Scalar("_div_scalar", lhs, s); }
NDArray operator+(float s, const NDArray& rhs) { return Scalar("_plus_scalar", rhs, s); }
NDArray operator-(float s, const NDArray& rhs) { return Scalar("_rminus_scalar", rhs, s); }
NDArray operator*(float s, const NDArray& rhs) { return Scalar("_mul_scalar", rhs, s); }
NDArray operator/(float s, const NDArray& rhs) { return Scalar("_rdiv_scalar", rhs, s); }
NDArray operator-(const NDArray& a) { return InvokeOne("negative", {a}); }
NDArray& operator+=(NDArray& lhs, const NDArray& rhs) { return Into(lhs, "elemwise_add", {lhs, rhs}, {}); }
NDArray& operator-=(NDArray& lhs, const NDArray& rhs) { return Into(lhs, "elemwise_sub", {lhs, rhs}, {}); }
NDArray& operator*=(NDArray& lhs, const NDArray& rhs) { return Into(lhs, "elemwise_mul", {lhs, rhs}, {}); }
NDArray& operator/=(NDArray& lhs, const NDArray& rhs) { return Into(lhs, "elemwise_div", {lhs, rhs}, {}); }
NDArray& operator+=(NDArray& lhs, float s) {
  return Into(lhs, "_plus_scalar", {lhs}, {{"scalar", fmt::format("{}", s)}});
}
NDArray& operator-=(NDArray& lhs, float s) {
  return Into(lhs, "_minus_scalar", {lhs}, {{"scalar", fmt::format("{}", s)}});
}
NDArray& operator*=(NDArray& lhs, float s) {
  return Into(lhs, "_mul_scalar", {lhs}, {{"scalar", fmt::format("{}", s)}});
}
NDArray& operator/=(NDArray& lhs, float s) {
  return Into(lhs, "_div_scalar", {lhs}, {{"scalar", fmt::format("{}", s)}});
}

void RandomSeed(uint64_t seed) { SetRandomSeed(seed); }

}  // namespace weft
