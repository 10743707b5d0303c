// MXNet C API: executors — simple_bind (with MXNet's shared arguments and shared data buffer),
// bind, forward, backward, outputs, monitor, reshape. Sparse arguments and gradients:
// sparse_executor.h.
#include <nlohmann/json.hpp>

#include "frontend_callback.h"
#include "sparse_executor.h"
#include "storage_fallback.h"
#include "symbol_handle.h"
#include "weft/autograd.h"
#include "weft/executor.h"
#include "weft/imperative.h"
#include "weft/sparse.h"

using namespace weft;
using namespace weft::mx;

namespace {

struct ExecutorH : Handle<HandleKind::kExecutor> {
  std::unique_ptr<Executor> exec;
  std::vector<std::string> arg_names, aux_names;
  // The arrays the frontend sees: exec's own, except where sparse (then `sparse` converts).
  std::vector<NDArray> args, grads;
  std::vector<NDArray> aux;               // ListAuxiliaryStates order
  std::unique_ptr<SparseStorage> sparse;  // the dense emulation of sparse arrays, or null
  std::unique_ptr<SparseSplit> split;     // or the graph split at its sparse boundary, or null
  std::vector<NDArray> outputs;           // with `sparse`: the outputs the frontend sees
};
ExecutorH& Exec(ExecutorHandle h) { return *Handle<HandleKind::kExecutor>::From<ExecutorH>(h); }

std::map<std::string, Context> GroupToCtx(uint32_t num, const char** keys, const int* dev_types, const int* dev_ids) {
  std::map<std::string, Context> out;
  if (num > 0) {
    NotNull(keys, "map_keys");
    NotNull(dev_types, "map_dev_types");
    NotNull(dev_ids, "map_dev_ids");
  }
  for (uint32_t i = 0; i < num; ++i) out[NotNull(keys[i], "map_key")] = ToContext(dev_types[i], dev_ids[i]);
  return out;
}

OpReqType ReqFromCode(uint32_t code, const std::string& arg) {
  if (code > 3) Fail("grad_req code {} for argument '{}' (0 null, 1 write, 2 inplace, 3 add)", code, arg);
  return static_cast<OpReqType>(code);
}

// The handles returned for an executor's arrays: arguments, their gradients (NULL where none)
// and aux states, owned by the caller.
void ReturnArrays(const ExecutorH& h, uint32_t* num_in_args, NDArrayHandle** in_args, NDArrayHandle** arg_grads,
                  uint32_t* num_aux_states, NDArrayHandle** aux_states) {
  std::vector<void*>& args = ThreadHandles("executor_args");
  std::vector<void*>& grads = ThreadHandles("executor_grads");
  std::vector<void*>& aux = ThreadHandles("executor_aux");
  args.clear();
  grads.clear();
  aux.clear();
  for (size_t i = 0; i < h.args.size(); ++i) {
    args.push_back(NewND(h.args[i]));
    const bool has_grad = i < h.grads.size() && !h.grads[i].is_none();
    grads.push_back(has_grad ? NewND(h.grads[i]) : nullptr);
  }
  for (const NDArray& a : h.aux) aux.push_back(NewND(a));
  *NotNull(num_in_args, "num_in_args") = static_cast<uint32_t>(args.size());
  *NotNull(in_args, "in_args") = args.data();
  *NotNull(arg_grads, "arg_grads") = grads.data();
  *NotNull(num_aux_states, "num_aux_states") = static_cast<uint32_t>(aux.size());
  *NotNull(aux_states, "aux_states") = aux.data();
}

// Binds `s` to the frontend's arrays: the Executor runs them; with a sparse one, the dense
// remainder of `s` split at its sparse boundary (SparseSplit) when it has dots to cut, and dense
// copies of what is still sparse (`storage`, planned for the arrays' storage types).
std::unique_ptr<ExecutorH> BindArrays(const Symbol& s, const Context& ctx, std::unique_ptr<SparseStorage> storage,
                                      std::vector<NDArray> args, std::vector<NDArray> grads,
                                      std::vector<OpReqType> reqs, const std::vector<NDArray>& aux,
                                      const std::map<std::string, Context>& group2ctx, Executor* shared) {
  auto h = std::make_unique<ExecutorH>();
  h->arg_names = s.ListArguments();
  h->aux_names = s.ListAuxiliaryStates();
  h->args = args;
  h->grads = grads;
  h->aux = aux;
  auto any_sparse = [](const SparseStorage& plan, const std::vector<NDArray>& a, const std::vector<NDArray>& g) {
    bool sparse = !plan.all_dense();
    for (const auto& list : {a, g})
      for (const NDArray& x : list) sparse = sparse || (!x.is_none() && x.storage_type() != StorageType::kDefault);
    return sparse;
  };
  bool sparse = any_sparse(*storage, args, grads);
  const Symbol* core = &s;
  std::vector<NDArray> core_aux = aux;
  if (sparse) {
    // The dots SparseSplit cuts run on the sparse kernels; the remainder, with what stays sparse
    // in it, is bound through the dense emulation.
    h->split = SparseSplit::Make(s, storage->arg_stypes(), h->args, h->grads, reqs, aux);
    if (h->split) {
      const SparseSplit& p = *h->split;
      core = &p.dense_symbol();
      args = p.core_args();
      grads = p.core_grads();
      reqs = p.core_reqs();
      core_aux = p.core_aux();
      storage = std::make_unique<SparseStorage>(*core, p.core_stypes());
      sparse = any_sparse(*storage, args, grads);
    }
  }
  if (sparse) {
    std::vector<NDArray> core_args, core_grads;
    storage->Attach(args, grads, &core_args, &core_grads, &reqs);
    args = std::move(core_args);
    grads = std::move(core_grads);
    h->sparse = std::move(storage);
  }
  h->exec = std::make_unique<Executor>(DenseEmulation(*core), ctx, args, grads, reqs, core_aux, group2ctx, shared);
  if (h->sparse) h->outputs = h->sparse->AttachOutputs(h->exec->outputs);
  if (h->split) return h;  // h->aux: the frontend's order (the remainder may list them otherwise)
  h->aux = h->exec->aux_arrays;
  return h;
}

// ---- simple_bind ---------------------------------------------------------------------------------

struct SimpleBindArgs {
  Context ctx;
  std::map<std::string, Context> group2ctx;
  std::map<std::string, Shape> shapes;
  std::map<std::string, int> types;
  std::map<std::string, StorageType> stypes;  // stype_dict
  // grad_req: one for all (names empty, one type), one per argument (names empty), or by name.
  std::vector<std::string> req_names, req_types;
  std::vector<std::string> shared_arg_names;
  std::map<std::string, NDArray>* shared_buffer = nullptr;  // null: no buffer
  ExecutorH* shared_exec = nullptr;
};

std::vector<OpReqType> GradReqs(const SimpleBindArgs& a, const std::vector<std::string>& args) {
  std::vector<OpReqType> reqs(args.size(), kNullOp);
  if (a.req_types.empty()) return reqs;
  if (a.req_names.empty() && a.req_types.size() == 1) {
    reqs.assign(args.size(), ParseOpReqType(a.req_types[0], "grad_req"));
  } else if (a.req_names.empty()) {
    if (a.req_types.size() != args.size()) {
      Fail("simple_bind: {} grad_req values for {} arguments", a.req_types.size(), args.size());
    }
    for (size_t i = 0; i < args.size(); ++i) reqs[i] = ParseOpReqType(a.req_types[i], args[i]);
  } else {
    for (size_t j = 0; j < a.req_names.size(); ++j) {
      const auto it = std::find(args.begin(), args.end(), a.req_names[j]);
      if (it == args.end()) Fail("simple_bind: grad_req names '{}', which is not an argument", a.req_names[j]);
      reqs[static_cast<size_t>(it - args.begin())] = ParseOpReqType(a.req_types[j], a.req_names[j]);
    }
  }
  return reqs;
}

// Where an argument or aux state lives with model parallelism (group2ctx): the context of its own
// ctx_group, else of the first node that reads it, else the default (MXNet's device placement for
// variables). Names map to contexts; an empty map when there is no group2ctx.
std::map<std::string, Context> PlaceVariables(const Symbol& s, const SimpleBindArgs& a) {
  std::map<std::string, Context> place;
  if (a.group2ctx.empty()) return place;
  const nlohmann::json g = nlohmann::json::parse(s.ToJSON());
  const auto& nodes = g.at("nodes");
  auto group_of = [&](const nlohmann::json& node) -> std::optional<Context> {
    for (const char* key : {"attrs", "attr", "param"}) {
      if (!node.contains(key)) continue;
      auto it = node[key].find("__ctx_group__");
      if (it == node[key].end()) continue;
      auto c = a.group2ctx.find(it->get<std::string>());
      if (c != a.group2ctx.end()) return c->second;
    }
    return std::nullopt;
  };
  std::map<size_t, Context> consumer;  // variable node id -> context of its first reader
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].value("op", "null") == "null") continue;
    const Context ctx = group_of(nodes[i]).value_or(a.ctx);
    for (const auto& in : nodes[i].at("inputs")) consumer.emplace(in.at(0).get<size_t>(), ctx);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].value("op", "null") != "null") continue;
    const std::string name = nodes[i].at("name");
    if (auto own = group_of(nodes[i])) {
      place[name] = *own;
    } else if (auto c = consumer.find(i); c != consumer.end()) {
      place[name] = c->second;
    }
  }
  return place;
}

// A new array of zeros ("zeros" of MXNet's storage type: no stored values when sparse).
NDArray Zeros(StorageType stype, const Shape& shape, const Context& ctx, DType dtype) {
  if (stype != StorageType::kDefault) return NDArray::CreateSparse(stype, shape, ctx, dtype);
  NDArray z(shape, ctx, false, dtype);
  z = 0.0f;
  return z;
}

// An argument not shared with another executor: from the shared data buffer when an array of
// that name is there and large enough (a view of it), else a new zeroed array added to the buffer.
// A sparse argument is always new and stays out of the buffer (MXNet's buffer is dense only).
NDArray DataArray(const SimpleBindArgs& a, const std::string& name, const Shape& shape, DType dtype, const Context& ctx,
                  StorageType stype) {
  if (stype != StorageType::kDefault) return Zeros(stype, shape, ctx, dtype);
  if (a.shared_buffer) {
    auto it = a.shared_buffer->find(name);
    if (it != a.shared_buffer->end() && it->second.GetDType() == dtype &&
        it->second.Size() >= static_cast<size_t>(shape.Size()) && it->second.GetContext() == ctx) {
      return it->second.AsArray(shape, dtype);
    }
  }
  NDArray fresh(shape, ctx, false, dtype);
  fresh = 0.0f;
  if (a.shared_buffer) (*a.shared_buffer)[name] = fresh;
  return fresh;
}

std::unique_ptr<ExecutorH> SimpleBind(const Symbol& s, const SimpleBindArgs& a) {
  const ShapeInference si = s.InferShapePartial(a.shapes);
  if (!si.complete) {
    Fail("simple_bind: cannot infer the shapes of {}; give their shapes (or the shapes they follow from)",
         fmt::join(si.unknown_args, ", "));
  }
  const TypeInference ti = s.InferTypePartial(a.types);
  const std::vector<std::string> args = s.ListArguments(), aux_names = s.ListAuxiliaryStates();
  const std::vector<OpReqType> reqs = GradReqs(a, args);
  auto type_of = [](int t) { return t < 0 ? DType::kFloat32 : static_cast<DType>(t); };
  auto shared = [&](const std::string& name) -> const ExecutorH* {
    if (!a.shared_exec) return nullptr;
    return std::find(a.shared_arg_names.begin(), a.shared_arg_names.end(), name) != a.shared_arg_names.end()
               ? a.shared_exec
               : nullptr;
  };
  const std::map<std::string, Context> place = PlaceVariables(s, a);
  const std::vector<StorageType> arg_stypes = ArgStorageTypes(s, a.stypes);
  auto storage = std::make_unique<SparseStorage>(s, arg_stypes);
  auto ctx_of = [&](const std::string& name) {
    auto it = place.find(name);
    return it == place.end() ? a.ctx : it->second;
  };
  std::vector<NDArray> arg_arrays, grad_arrays, aux_arrays;
  for (size_t i = 0; i < args.size(); ++i) {
    const Shape& shape = *si.arg_shapes[i];
    const DType dtype = type_of(ti.arg_types[i]);
    const ExecutorH* from = shared(args[i]);
    if (from) {
      const auto idx = static_cast<size_t>(std::find(from->arg_names.begin(), from->arg_names.end(), args[i]) -
                                           from->arg_names.begin());
      if (idx >= from->arg_names.size()) Fail("simple_bind: shared executor has no argument '{}'", args[i]);
      const NDArray& sa = from->args[idx];
      if (sa.GetShape() != shape) {
        Fail("simple_bind: shared argument '{}' has shape {} in the shared executor but {} here", args[i],
             sa.GetShape(), shape);
      }
      arg_arrays.push_back(sa);
      // MXNet shares a gradient only when both are dense; a row_sparse one is each executor's own.
      const bool has_grad = idx < from->grads.size() && !from->grads[idx].is_none() &&
                            from->grads[idx].storage_type() == StorageType::kDefault &&
                            storage->grad_stype(i) == StorageType::kDefault;
      grad_arrays.push_back(reqs[i] == kNullOp ? NDArray()
                            : has_grad         ? from->grads[idx]
                                               : Zeros(storage->grad_stype(i), shape, a.ctx, dtype));
      continue;
    }
    // A parameter (in shared_arg_names) without a shared executor is new memory, never the data
    // buffer's (MXNet's InitArguments: the buffer holds inputs only).
    const bool param =
        std::find(a.shared_arg_names.begin(), a.shared_arg_names.end(), args[i]) != a.shared_arg_names.end();
    arg_arrays.push_back(param ? Zeros(arg_stypes[i], shape, ctx_of(args[i]), dtype)
                               : DataArray(a, args[i], shape, dtype, ctx_of(args[i]), arg_stypes[i]));
    grad_arrays.push_back(reqs[i] == kNullOp ? NDArray()
                                             : Zeros(storage->grad_stype(i), shape, ctx_of(args[i]), dtype));
  }
  for (size_t i = 0; i < aux_names.size(); ++i) {
    const Shape& shape = *si.aux_shapes[i];
    NDArray x;
    if (a.shared_exec) {
      const auto& names = a.shared_exec->aux_names;
      const auto it = std::find(names.begin(), names.end(), aux_names[i]);
      if (it != names.end()) x = a.shared_exec->aux[static_cast<size_t>(it - names.begin())];
    }
    if (x.is_none() || x.GetShape() != shape) {
      x = NDArray(shape, ctx_of(aux_names[i]), false, type_of(ti.aux_types[i]));
      x = 0.0f;
    }
    aux_arrays.push_back(x);
  }
  // The shared executor's memory pool too (MXNet's bucketing binds every bucket against the
  // default one): intermediate values reuse its planned blocks where they fit.
  return BindArrays(s, a.ctx, std::move(storage), arg_arrays, grad_arrays, reqs, aux_arrays, a.group2ctx,
                    a.shared_exec ? a.shared_exec->exec.get() : nullptr);
}

std::map<std::string, Shape> ProvidedShapes(uint32_t num, const char** names, const int* data, const uint32_t* idx) {
  std::map<std::string, Shape> shapes;
  if (num > 0) {
    NotNull(names, "provided_arg_shape_names");
    NotNull(idx, "provided_arg_shape_idx");
  }
  for (uint32_t i = 0; i < num; ++i) {
    std::vector<int64_t> d;
    for (uint32_t j = idx[i]; j < idx[i + 1]; ++j) d.push_back(NotNull(data, "provided_arg_shape_data")[j]);
    shapes[NotNull(names[i], "shape name")] = Shape(d);
  }
  return shapes;
}

// MXNet copies each head gradient into the executor's own buffer with CopyFromTo, which casts a
// dense array to the buffer's dtype (an int32 head gradient of a float32 output is accepted);
// weft's Executor::Backward copies without casting, so the dtype is matched here first.
NDArray HeadGradOfOutputDType(NDArray grad, const Executor& exec, size_t i) {
  if (grad.is_none() || i >= exec.outputs.size() || grad.storage_type() != StorageType::kDefault) return grad;
  const DType want = exec.outputs[i].GetDType();
  if (grad.GetDType() == want) return grad;
  auto paused = autograd::Pause(autograd::IsTraining());
  return InvokeOne("Cast", {grad}, {{"dtype", std::string(DTypeName(want))}});
}

}  // namespace

extern "C" {

int MXExecutorSimpleBindEx(
    SymbolHandle symbol_handle, int dev_type, int dev_id, const uint32_t num_g2c_keys, const char** g2c_keys,
    const int* g2c_dev_types, const int* g2c_dev_ids, const uint32_t provided_grad_req_list_len,
    const char** provided_grad_req_names, const char** provided_grad_req_types, const uint32_t num_provided_arg_shapes,
    const char** provided_arg_shape_names, const int* provided_arg_shape_data, const uint32_t* provided_arg_shape_idx,
    const uint32_t num_provided_arg_dtypes, const char** provided_arg_dtype_names, const int* provided_arg_dtypes,
    const uint32_t num_provided_arg_stypes, const char** provided_arg_stype_names, const int* provided_arg_stypes,
    const uint32_t num_shared_arg_names, const char** shared_arg_name_list, int* shared_buffer_len,
    const char** shared_buffer_name_list, NDArrayHandle* shared_buffer_handle_list,
    const char*** updated_shared_buffer_name_list, NDArrayHandle** updated_shared_buffer_handle_list,
    uint32_t* num_in_args, NDArrayHandle** in_args, NDArrayHandle** arg_grads, uint32_t* num_aux_states,
    NDArrayHandle** aux_states, ExecutorHandle shared_exec_handle, ExecutorHandle* out) {
  API_BEGIN();
  Symbol& s = Sym(symbol_handle).Get();
  SimpleBindArgs a;
  a.ctx = ToContext(dev_type, dev_id);
  a.group2ctx = GroupToCtx(num_g2c_keys, g2c_keys, g2c_dev_types, g2c_dev_ids);
  a.shapes = ProvidedShapes(num_provided_arg_shapes, provided_arg_shape_names, provided_arg_shape_data,
                            provided_arg_shape_idx);
  for (uint32_t i = 0; i < num_provided_arg_dtypes; ++i)
    a.types[NotNull(provided_arg_dtype_names, "dtype names")[i]] = NotNull(provided_arg_dtypes, "dtypes")[i];
  for (uint32_t i = 0; i < num_provided_arg_stypes; ++i) {
    const char* name = NotNull(NotNull(provided_arg_stype_names, "stype names")[i], "stype name");
    const int code = NotNull(provided_arg_stypes, "stypes")[i];
    if (code < 0 || code > 2)
      Fail("simple_bind: argument '{}': storage type {} (0 default, 1 row_sparse, 2 csr)", name, code);
    a.stypes[name] = static_cast<StorageType>(code);
  }
  if (provided_grad_req_types) {
    const uint32_t n = provided_grad_req_list_len == 0 ? 1 : provided_grad_req_list_len;
    for (uint32_t i = 0; i < n; ++i) a.req_types.emplace_back(NotNull(provided_grad_req_types[i], "grad_req"));
    if (provided_grad_req_names)
      for (uint32_t i = 0; i < provided_grad_req_list_len; ++i) a.req_names.emplace_back(provided_grad_req_names[i]);
  }
  for (uint32_t i = 0; i < num_shared_arg_names; ++i)
    a.shared_arg_names.emplace_back(NotNull(shared_arg_name_list, "shared_arg_name_list")[i]);
  std::map<std::string, NDArray> buffer;
  const bool has_buffer = shared_buffer_len && *shared_buffer_len >= 0;
  if (has_buffer) {
    for (int i = 0; i < *shared_buffer_len; ++i)
      buffer[NotNull(shared_buffer_name_list, "shared_buffer_name_list")[i]] =
          ND(NotNull(shared_buffer_handle_list, "shared_buffer_handle_list")[i]);
    a.shared_buffer = &buffer;
  }
  if (shared_exec_handle) a.shared_exec = &Exec(shared_exec_handle);
  std::unique_ptr<ExecutorH> e = SimpleBind(s, a);
  if (has_buffer) {
    std::vector<std::string> names;
    std::vector<void*>& handles = ThreadHandles("updated_shared_buffer");
    handles.clear();
    for (const auto& [k, v] : buffer) {
      names.push_back(k);
      handles.push_back(NewND(v));
    }
    *shared_buffer_len = static_cast<int>(names.size());
    *NotNull(updated_shared_buffer_name_list, "updated_shared_buffer_name_list") =
        ThreadStrings("updated_shared_buffer").Set(std::move(names));
    *NotNull(updated_shared_buffer_handle_list, "updated_shared_buffer_handle_list") = handles.data();
  }
  ReturnArrays(*e, num_in_args, in_args, arg_grads, num_aux_states, aux_states);
  *NotNull(out, "out") = e.release();
  API_END();
}

int MXExecutorSimpleBindEx64(SymbolHandle symbol_handle, int dev_type, int dev_id, const uint32_t num_g2c_keys,
                             const char** g2c_keys, const int* g2c_dev_types, const int* g2c_dev_ids,
                             const uint32_t provided_grad_req_list_len, const char** provided_grad_req_names,
                             const char** provided_grad_req_types, const uint32_t num_provided_arg_shapes,
                             const char** provided_arg_shape_names, const int64_t* provided_arg_shape_data,
                             const uint32_t* provided_arg_shape_idx, const uint32_t num_provided_arg_dtypes,
                             const char** provided_arg_dtype_names, const int* provided_arg_dtypes,
                             const uint32_t num_provided_arg_stypes, const char** provided_arg_stype_names,
                             const int* provided_arg_stypes, const uint32_t num_shared_arg_names,
                             const char** shared_arg_name_list, int* shared_buffer_len,
                             const char** shared_buffer_name_list, NDArrayHandle* shared_buffer_handle_list,
                             const char*** updated_shared_buffer_name_list,
                             NDArrayHandle** updated_shared_buffer_handle_list, uint32_t* num_in_args,
                             NDArrayHandle** in_args, NDArrayHandle** arg_grads, uint32_t* num_aux_states,
                             NDArrayHandle** aux_states, ExecutorHandle shared_exec_handle, ExecutorHandle* out) {
  std::vector<int> data;
  if (num_provided_arg_shapes > 0 && provided_arg_shape_idx && provided_arg_shape_data) {
    for (uint32_t j = 0; j < provided_arg_shape_idx[num_provided_arg_shapes]; ++j)
      data.push_back(static_cast<int>(provided_arg_shape_data[j]));
  }
  return MXExecutorSimpleBindEx(
      symbol_handle, dev_type, dev_id, num_g2c_keys, g2c_keys, g2c_dev_types, g2c_dev_ids, provided_grad_req_list_len,
      provided_grad_req_names, provided_grad_req_types, num_provided_arg_shapes, provided_arg_shape_names, data.data(),
      provided_arg_shape_idx, num_provided_arg_dtypes, provided_arg_dtype_names, provided_arg_dtypes,
      num_provided_arg_stypes, provided_arg_stype_names, provided_arg_stypes, num_shared_arg_names,
      shared_arg_name_list, shared_buffer_len, shared_buffer_name_list, shared_buffer_handle_list,
      updated_shared_buffer_name_list, updated_shared_buffer_handle_list, num_in_args, in_args, arg_grads,
      num_aux_states, aux_states, shared_exec_handle, out);
}

int MXExecutorBindEX(SymbolHandle symbol_handle, int dev_type, int dev_id, uint32_t num_map_keys, const char** map_keys,
                     const int* map_dev_types, const int* map_dev_ids, uint32_t len, NDArrayHandle* in_args,
                     NDArrayHandle* arg_grad_store, uint32_t* grad_req_type, uint32_t aux_states_len,
                     NDArrayHandle* aux_states, ExecutorHandle /*shared_exec*/, ExecutorHandle* out) {
  API_BEGIN();
  Symbol& s = Sym(symbol_handle).Get();
  const std::vector<std::string> names = s.ListArguments();
  std::vector<NDArray> args, grads, aux;
  std::vector<OpReqType> reqs;
  if (len > 0) NotNull(in_args, "in_args");
  for (uint32_t i = 0; i < len; ++i) {
    args.push_back(ND(in_args[i]));
    const std::string name = i < names.size() ? names[i] : std::to_string(i);
    const OpReqType req = grad_req_type ? ReqFromCode(grad_req_type[i], name) : kNullOp;
    const bool has = arg_grad_store && arg_grad_store[i];
    reqs.push_back(has ? req : kNullOp);
    grads.push_back(has ? ND(arg_grad_store[i]) : NDArray());
  }
  if (aux_states_len > 0) NotNull(aux_states, "aux_states");
  for (uint32_t i = 0; i < aux_states_len; ++i) aux.push_back(ND(aux_states[i]));
  std::vector<StorageType> stypes;
  for (const NDArray& a : args) stypes.push_back(a.storage_type());
  stypes.resize(names.size(), StorageType::kDefault);
  auto storage = std::make_unique<SparseStorage>(s, std::move(stypes));
  *NotNull(out, "out") = BindArrays(s, ToContext(dev_type, dev_id), std::move(storage), args, grads, reqs, aux,
                                    GroupToCtx(num_map_keys, map_keys, map_dev_types, map_dev_ids), nullptr)
                             .release();
  API_END();
}

int MXExecutorBindX(SymbolHandle symbol_handle, int dev_type, int dev_id, uint32_t num_map_keys, const char** map_keys,
                    const int* map_dev_types, const int* map_dev_ids, uint32_t len, NDArrayHandle* in_args,
                    NDArrayHandle* arg_grad_store, uint32_t* grad_req_type, uint32_t aux_states_len,
                    NDArrayHandle* aux_states, ExecutorHandle* out) {
  return MXExecutorBindEX(symbol_handle, dev_type, dev_id, num_map_keys, map_keys, map_dev_types, map_dev_ids, len,
                          in_args, arg_grad_store, grad_req_type, aux_states_len, aux_states, nullptr, out);
}

int MXExecutorBind(SymbolHandle symbol_handle, int dev_type, int dev_id, uint32_t len, NDArrayHandle* in_args,
                   NDArrayHandle* arg_grad_store, uint32_t* grad_req_type, uint32_t aux_states_len,
                   NDArrayHandle* aux_states, ExecutorHandle* out) {
  return MXExecutorBindEX(symbol_handle, dev_type, dev_id, 0, nullptr, nullptr, nullptr, len, in_args, arg_grad_store,
                          grad_req_type, aux_states_len, aux_states, nullptr, out);
}

int MXExecutorFree(ExecutorHandle handle) {
  API_BEGIN();
  delete &Exec(handle);
  API_END();
}

int MXExecutorPrint(ExecutorHandle handle, const char** out_str) {
  API_BEGIN();
  std::string& s = ThreadString("MXExecutorPrint");
  s = Exec(handle).exec->DebugStr();
  *NotNull(out_str, "out_str") = s.c_str();
  API_END();
}

int MXExecutorForward(ExecutorHandle handle, int is_train) {
  API_BEGIN();
  ExecutorH& h = Exec(handle);
  if (h.sparse) h.sparse->BeforeForward();
  if (h.split) h.split->BeforeForward();
  h.exec->Forward(is_train != 0);
  if (h.sparse) h.sparse->AfterForward();
  API_END();
}

// MXNet passes is_train to backward kernels; weft's backward kernels run in training mode always
// (the forward pass's mode decides what Dropout/BatchNorm did), so the flag changes nothing.
int MXExecutorBackwardEx(ExecutorHandle handle, uint32_t len, NDArrayHandle* head_grads, int is_train) {
  API_BEGIN();
  std::vector<NDArray> grads;
  if (len > 0) NotNull(head_grads, "head_grads");
  ExecutorH& h = Exec(handle);
  for (uint32_t i = 0; i < len; ++i) {
    NDArray g = head_grads[i] ? ND(head_grads[i]) : NDArray();
    // The Executor runs dense: a sparse head gradient (MXNet's of a sparse output) is densified.
    if (!g.is_none() && IsSparse(g)) g = CastStorage(g, StorageType::kDefault);
    grads.push_back(HeadGradOfOutputDType(g, *h.exec, i));
  }
  h.exec->Backward(grads, is_train != 0);
  if (h.sparse) h.sparse->AfterBackward();
  if (h.split) h.split->AfterBackward();
  API_END();
}

int MXExecutorBackward(ExecutorHandle handle, uint32_t len, NDArrayHandle* head_grads) {
  return MXExecutorBackwardEx(handle, len, head_grads, 1);
}

int MXExecutorOutputs(ExecutorHandle handle, uint32_t* out_size, NDArrayHandle** out) {
  API_BEGIN();
  std::vector<void*>& handles = ThreadHandles("MXExecutorOutputs");
  handles.clear();
  const ExecutorH& h = Exec(handle);
  for (const NDArray& o : h.sparse ? h.outputs : h.exec->outputs) handles.push_back(NewND(o));
  *NotNull(out_size, "out_size") = static_cast<uint32_t>(handles.size());
  *NotNull(out, "out") = handles.data();
  API_END();
}

int MXExecutorGetOptimizedSymbol(ExecutorHandle handle, SymbolHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewSym(Exec(handle).exec->GetOptimizedSymbol());
  API_END();
}

// The callback gets (name, a new NDArray handle the caller owns, callback_handle) once the array
// is ready, in the thread that runs forward/backward.
int MXExecutorSetMonitorCallbackEX(ExecutorHandle handle, ExecutorMonitorCallback callback, void* callback_handle,
                                   bool monitor_all) {
  API_BEGIN();
  if (callback == nullptr) {
    Exec(handle).exec->SetMonitorCallback({}, false);
  } else {
    Exec(handle).exec->SetMonitorCallback(
        [=](const std::string& name, const NDArray& a) {
          CallFrontend("the monitor callback", [&] { callback(name.c_str(), NewND(a), callback_handle); });
        },
        monitor_all);
  }
  API_END();
}

int MXExecutorSetMonitorCallback(ExecutorHandle handle, ExecutorMonitorCallback callback, void* callback_handle) {
  return MXExecutorSetMonitorCallbackEX(handle, callback, callback_handle, false);
}

// `shared_exec` is the executor to reshape (MXNet's frontend passes its own handle there).
int MXExecutorReshapeEx(int partial_shaping, int allow_up_sizing, int dev_type, int dev_id, uint32_t num_map_keys,
                        const char** map_keys, const int* map_dev_types, const int* map_dev_ids,
                        const uint32_t num_provided_arg_shapes, const char** provided_arg_shape_names,
                        const int* provided_arg_shape_data, const uint32_t* provided_arg_shape_idx,
                        uint32_t* num_in_args, NDArrayHandle** in_args, NDArrayHandle** arg_grads,
                        uint32_t* num_aux_states, NDArrayHandle** aux_states, ExecutorHandle shared_exec,
                        ExecutorHandle* out) {
  API_BEGIN();
  ExecutorH& from = Exec(shared_exec);
  if (from.sparse || from.split) {
    Fail(
        "Executor.reshape: the executor has sparse arguments or gradients, which weft does not reshape; bind a "
        "new executor for the new shapes");
  }
  const Context ctx = ToContext(dev_type, dev_id);
  if (ctx != from.exec->context()) {
    Fail("Executor.reshape: the executor is on {}, the reshape asks for {}", from.exec->context(), ctx);
  }
  if (num_map_keys > 0) GroupToCtx(num_map_keys, map_keys, map_dev_types, map_dev_ids);  // validated, kept as bound
  std::unique_ptr<Executor> e = from.exec->Reshape(partial_shaping != 0, allow_up_sizing != 0,
                                                   ProvidedShapes(num_provided_arg_shapes, provided_arg_shape_names,
                                                                  provided_arg_shape_data, provided_arg_shape_idx));
  auto h = std::make_unique<ExecutorH>();
  h->arg_names = from.arg_names;
  h->aux_names = from.aux_names;
  h->args = e->arg_arrays;
  h->grads = e->grad_arrays;
  h->aux = e->aux_arrays;
  h->exec = std::move(e);
  ReturnArrays(*h, num_in_args, in_args, arg_grads, num_aux_states, aux_states);
  *NotNull(out, "out") = h.release();
  API_END();
}

}  // extern "C"
