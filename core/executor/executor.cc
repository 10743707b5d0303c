// weft::Executor: the public face of ExecState (binding, running, dictionaries, parameters).
#include "weft/executor.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "executor/exec_state.h"

namespace weft {

const char* OpReqTypeName(OpReqType req) noexcept {
  switch (req) {
    case kNullOp:
      return "null";
    case kWriteTo:
      return "write";
    case kWriteInplace:
      return "inplace";
    case kAddTo:
      return "add";
  }
  return "?";
}

OpReqType ParseOpReqType(const std::string& text, const std::string& what) {
  if (text == "null") return kNullOp;
  if (text == "write") return kWriteTo;
  if (text == "inplace") return kWriteInplace;
  if (text == "add") return kAddTo;
  Fail("grad_req '{}' for {} is not one of null, write, add", text, what);
}

Executor::Executor(const Symbol& symbol, const Context& context, const std::vector<NDArray>& arg_arrays_in,
                   const std::vector<NDArray>& grad_arrays_in, const std::vector<OpReqType>& grad_reqs,
                   const std::vector<NDArray>& aux_arrays_in, const std::map<std::string, Context>& group_to_ctx,
                   Executor* shared_exec)
    : state_(std::make_unique<exec::ExecState>()) {
  state_->Init(symbol, context, arg_arrays_in, grad_arrays_in, grad_reqs, aux_arrays_in, group_to_ctx,
               shared_exec ? shared_exec->state_.get() : nullptr);
  arg_arrays = arg_arrays_in;
  aux_arrays = aux_arrays_in;
  grad_arrays.assign(arg_arrays.size(), NDArray());
  for (size_t i = 0; i < grad_arrays.size(); ++i)
    if (state_->grad_reqs[i] != kNullOp) grad_arrays[i] = grad_arrays_in[i];
  for (uint32_t h : state_->graph.heads) outputs.push_back(state_->entries[h]);
}

Executor::~Executor() = default;

namespace {

/// The array named `name` in `shared` when it has this shape, dtype and context (a shared
/// executor's parameter); otherwise a new one, zeroed when `zero`.
NDArray SharedOrNew(const std::map<std::string, NDArray>& shared, const std::string& name, const Shape& shape,
                    DType dtype, const Context& ctx, bool zero) {
  auto it = shared.find(name);
  if (it != shared.end() && !it->second.is_none() && it->second.GetShape() == shape && it->second.GetDType() == dtype &&
      it->second.GetContext() == ctx)
    return it->second;
  NDArray fresh(shape, ctx, false, dtype);
  if (zero) fresh = 0.0f;
  return fresh;
}

}  // namespace

std::unique_ptr<Executor> Executor::SimpleBind(const Symbol& symbol, const Context& context,
                                               const std::map<std::string, Shape>& arg_shapes,
                                               const std::string& grad_req,
                                               const std::map<std::string, std::string>& grad_req_per_arg,
                                               const std::map<std::string, DType>& arg_types, Executor* shared_exec) {
  const std::vector<std::string> args = symbol.ListArguments(), auxs = symbol.ListAuxiliaryStates();
  auto check_names = [&](const char* what, const auto& m) {
    for (const auto& [name, v] : m) {
      (void)v;
      bool found = std::find(args.begin(), args.end(), name) != args.end() ||
                   (std::string_view(what) != "grad_req" && std::find(auxs.begin(), auxs.end(), name) != auxs.end());
      WEFT_CHECK(found, "Executor::SimpleBind: {} names '{}', which is not an argument of the symbol; arguments: {}",
                 what, name, fmt::join(args, ", "));
    }
  };
  check_names("arg_shapes", arg_shapes);
  check_names("grad_req", grad_req_per_arg);
  check_names("arg_types", arg_types);
  ShapeInference si = symbol.InferShapePartial(arg_shapes);
  WEFT_CHECK(si.complete, "Executor::SimpleBind: cannot infer the shapes of {}; give them in arg_shapes",
             fmt::join(si.unknown_args, ", "));
  std::map<std::string, int> types;
  for (const auto& [n, t] : arg_types) types[n] = static_cast<int>(t);
  TypeInference ti = symbol.InferTypePartial(types);
  auto dtype_of = [](int t) { return t < 0 ? DType::kFloat32 : static_cast<DType>(t); };
  const OpReqType all = ParseOpReqType(grad_req, "all arguments");
  // The shared executor's arrays by name, built once (each dict is a new map).
  std::map<std::string, NDArray> shared_args, shared_grads, shared_aux;
  if (shared_exec) {
    shared_args = shared_exec->arg_dict();
    shared_grads = shared_exec->grad_dict();
    shared_aux = shared_exec->aux_dict();
  }
  std::vector<NDArray> a, g, x;
  std::vector<OpReqType> reqs;
  for (size_t i = 0; i < args.size(); ++i) {
    const DType dt = dtype_of(ti.arg_types[i]);
    a.push_back(SharedOrNew(shared_args, args[i], *si.arg_shapes[i], dt, context, true));
    auto it = grad_req_per_arg.find(args[i]);
    OpReqType r = it == grad_req_per_arg.end() ? all : ParseOpReqType(it->second, "argument '" + args[i] + "'");
    reqs.push_back(r);
    g.push_back(r == kNullOp ? NDArray()
                             : SharedOrNew(shared_grads, args[i], *si.arg_shapes[i], dt, context, r == kAddTo));
  }
  for (size_t i = 0; i < auxs.size(); ++i)
    x.push_back(SharedOrNew(shared_aux, auxs[i], *si.aux_shapes[i], dtype_of(ti.aux_types[i]), context, true));
  return std::make_unique<Executor>(symbol, context, a, g, reqs, x, std::map<std::string, Context>{}, shared_exec);
}

void Executor::Forward(bool is_train) { state_->RunNodes(0, state_->graph.num_forward, is_train); }

void Executor::Forward(bool is_train, const std::map<std::string, NDArray>& inputs) {
  const auto& names = state_->graph.arg_names;
  std::vector<std::pair<size_t, const NDArray*>> copies;
  for (const auto& [name, array] : inputs) {
    const auto it = std::find(names.begin(), names.end(), name);
    WEFT_CHECK(it != names.end(), "Executor::Forward: '{}' is not an argument; arguments: {}", name,
               fmt::join(names, ", "));
    const auto a = static_cast<size_t>(it - names.begin());
    WEFT_CHECK(array.GetShape() == arg_arrays[a].GetShape(),
               "Executor::Forward: the array given for '{}' has shape {}, the argument is bound as {}", name,
               array.GetShape().ToString(), arg_arrays[a].GetShape().ToString());
    copies.emplace_back(a, &array);
  }
  for (const auto& [a, array] : copies) NDArray::CopyFromTo(*array, arg_arrays[a]);
  Forward(is_train);
}

void Executor::Backward(const std::map<std::string, NDArray>& head_grads, bool is_train) {
  const auto& names = state_->graph.output_names;
  std::vector<NDArray> grads(names.size());
  for (const auto& [name, array] : head_grads) {
    const auto it = std::find(names.begin(), names.end(), name);
    WEFT_CHECK(it != names.end(), "Executor::Backward: '{}' is not an output; outputs: {}", name,
               fmt::join(names, ", "));
    grads[static_cast<size_t>(it - names.begin())] = array;
  }
  Backward(grads, is_train);
}

void Executor::Backward(const std::vector<NDArray>& head_grads, bool is_train) {
  const exec::ExecGraph& g = state_->graph;
  WEFT_CHECK(head_grads.empty() || head_grads.size() == g.heads.size(),
             "Executor::Backward: expects {} head gradients (one per output: {}), got {}", g.heads.size(),
             fmt::join(g.output_names, ", "), head_grads.size());
  for (size_t i = 0; i < g.heads.size(); ++i) {
    if (g.head_grads[i] == exec::kNoEntry) continue;
    WEFT_CHECK(i < head_grads.size() && !head_grads[i].is_none(),
               "Executor::Backward: head gradient is required for output {} ('{}'), which is not a loss output; pass "
               "one array per output",
               i, g.output_names[i]);
    const NDArray& dst = state_->entries[g.head_grads[i]];
    WEFT_CHECK(head_grads[i].GetShape() == dst.GetShape(),
               "Executor::Backward: the head gradient for output '{}' has shape {}, the output is {}",
               g.output_names[i], head_grads[i].GetShape().ToString(), dst.GetShape().ToString());
  }
  for (size_t i = 0; i < g.heads.size(); ++i)
    if (g.head_grads[i] != exec::kNoEntry) NDArray::CopyFromTo(head_grads[i], state_->entries[g.head_grads[i]]);
  for (uint32_t a : g.zero_fill_args) grad_arrays[a] = 0.0f;
  state_->RunNodes(g.num_forward, g.nodes.size(), is_train);
}

std::string Executor::DebugStr() const { return state_->DebugStr(); }

bool Executor::AliasArgument(const std::string& name, const NDArray& array) {
  const auto& names = state_->graph.arg_names;
  const auto it = std::find(names.begin(), names.end(), name);
  WEFT_CHECK(it != names.end(), "Executor::AliasArgument: '{}' is not an argument; arguments: {}", name,
             fmt::join(names, ", "));
  WEFT_CHECK(std::count(names.begin(), names.end(), name) == 1,
             "Executor::AliasArgument: the name '{}' is used by more than one argument; rename the variables", name);
  const auto a = static_cast<uint32_t>(it - names.begin());
  const NDArray& bound = arg_arrays[a];
  WEFT_CHECK(!array.is_none() && array.GetShape() == bound.GetShape() && array.GetDType() == bound.GetDType() &&
                 array.GetContext() == bound.GetContext(),
             "Executor::AliasArgument: '{}' is bound as {} {} on {}; the array given is {}", name,
             bound.GetShape().ToString(), DTypeName(bound.GetDType()), bound.GetContext().ToString(),
             array.is_none() ? std::string("none")
                             : fmt::format("{} {} on {}", array.GetShape().ToString(), DTypeName(array.GetDType()),
                                           array.GetContext().ToString()));
  if (!state_->RebindArg(a, array)) return false;
  arg_arrays[a] = array;
  return true;
}

namespace {

std::map<std::string, NDArray> MakeDict(const char* what, const std::vector<std::string>& names,
                                        const std::vector<NDArray>& arrays) {
  std::map<std::string, NDArray> out;
  for (size_t i = 0; i < names.size(); ++i) {
    WEFT_CHECK(out.emplace(names[i], arrays[i]).second,
               "Executor::{}: the name '{}' is used by more than one entry; rename the variables or use the list", what,
               names[i]);
  }
  return out;
}

}  // namespace

std::map<std::string, NDArray> Executor::arg_dict() const {
  return MakeDict("arg_dict", state_->graph.arg_names, arg_arrays);
}
std::map<std::string, NDArray> Executor::grad_dict() const {
  return MakeDict("grad_dict", state_->graph.arg_names, grad_arrays);
}
std::map<std::string, NDArray> Executor::aux_dict() const {
  return MakeDict("aux_dict", state_->graph.aux_names, aux_arrays);
}
std::map<std::string, NDArray> Executor::output_dict() const {
  return MakeDict("output_dict", state_->graph.output_names, outputs);
}

void Executor::CopyParamsFrom(const std::map<std::string, NDArray>& arg_params,
                              const std::map<std::string, NDArray>& aux_params, bool allow_extra_params) {
  std::vector<std::pair<NDArray, NDArray>> copies;
  auto plan = [&](const char* what, const std::map<std::string, NDArray>& params,
                  const std::map<std::string, NDArray>& dst) {
    for (const auto& [name, src] : params) {
      auto it = dst.find(name);
      if (it == dst.end()) {
        WEFT_CHECK(allow_extra_params,
                   "Executor::CopyParamsFrom: '{}' is not {} of the executor; pass allow_extra_params=true to skip it",
                   name, what);
        continue;
      }
      WEFT_CHECK(src.GetShape() == it->second.GetShape(),
                 "Executor::CopyParamsFrom: '{}' has shape {} but the executor's array is {}", name,
                 src.GetShape().ToString(), it->second.GetShape().ToString());
      copies.emplace_back(src, it->second);
    }
  };
  plan("an argument", arg_params, arg_dict());
  plan("an auxiliary state", aux_params, aux_dict());
  for (const auto& [src, dst] : copies) NDArray::CopyFromTo(src, dst);
}

void Executor::SetMonitorCallback(MonitorCallback callback, bool monitor_all) {
  state_->monitor = std::move(callback);
  state_->monitor_all = monitor_all;
}

std::unique_ptr<Executor> Executor::Reshape(bool partial_shaping, bool allow_up_sizing,
                                            const std::map<std::string, Shape>& new_shapes) const {
  const exec::ExecGraph& g = state_->graph;
  ShapeInference si = state_->symbol.InferShapePartial(new_shapes);
  WEFT_CHECK(si.complete, "Executor::Reshape: cannot infer the shapes of {}; give them",
             fmt::join(si.unknown_args, ", "));
  auto fit = [&](const NDArray& old, const Shape& shape, const std::string& name, const char* what) -> NDArray {
    if (old.is_none()) return old;
    if (old.GetShape() == shape) return old;
    WEFT_CHECK(partial_shaping || new_shapes.count(name),
               "Executor::Reshape: the shape of {} '{}' changes from {} to {}; name it or pass partial_shaping=true",
               what, name, old.GetShape().ToString(), shape.ToString());
    const uint64_t need = static_cast<uint64_t>(shape.Size()) * DTypeSize(old.GetDType());
    if (need <= old.Bytes()) return old.AsArray(shape, old.GetDType());
    WEFT_CHECK(allow_up_sizing,
               "Executor::Reshape: {} '{}' grows from {} to {}, beyond its memory; pass allow_up_sizing=true", what,
               name, old.GetShape().ToString(), shape.ToString());
    NDArray fresh(shape, old.GetContext(), false, old.GetDType());
    return fresh;
  };
  std::vector<NDArray> a, gr, x;
  for (size_t i = 0; i < arg_arrays.size(); ++i) {
    a.push_back(fit(arg_arrays[i], *si.arg_shapes[i], g.arg_names[i], "argument"));
    gr.push_back(fit(grad_arrays[i], *si.arg_shapes[i], g.arg_names[i], "argument"));
  }
  for (size_t i = 0; i < aux_arrays.size(); ++i)
    x.push_back(fit(aux_arrays[i], *si.aux_shapes[i], g.aux_names[i], "aux state"));
  // Internal memory (outputs included) comes from this executor's blocks, as MXNet's reshape binds
  // with the executor itself as the shared one: a smaller output is a view of this one's output.
  auto out = std::make_unique<Executor>(state_->symbol, state_->ctx, a, gr, state_->grad_reqs, x, state_->group2ctx,
                                        const_cast<Executor*>(this));
  out->SetMonitorCallback(state_->monitor, state_->monitor_all);
  return out;
}

Symbol Executor::GetOptimizedSymbol() const { return state_->optimized.Copy(); }

uint64_t Executor::planned_bytes() const { return state_->plan.total_bytes(); }
uint64_t Executor::unshared_bytes() const { return state_->plan.unshared_bytes; }
uint64_t Executor::allocated_bytes() const { return state_->allocated_bytes; }
const Context& Executor::context() const { return state_->ctx; }

}  // namespace weft
