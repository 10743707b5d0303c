// MXNet C API: symbols — creation, composition, listing, attributes, JSON, shape/type inference.
#include <algorithm>

#include "op_table.h"
#include "symbol_handle.h"
#include "weft/operator.h"

using namespace weft;
using namespace weft::mx;

namespace weft::mx {

Symbol& SymbolH::Get() {
  if (atomic) {
    symbol = ComposeAtomic(*atomic, "", {}, {});
    atomic.reset();
  }
  return symbol;
}

Symbol ComposeAtomic(const SymbolH::Atomic& atomic, const std::string& name, const std::vector<Symbol>& args,
                     const std::map<std::string, Symbol>& kwargs) {
  Operator op(atomic.op);
  for (const auto& [k, v] : atomic.attrs) op.SetParam(k, v);
  for (const Symbol& s : args) op.PushInput(s);
  for (const auto& [k, s] : kwargs) op.SetInput(k, s);
  return op.CreateSymbol(name);
}

}  // namespace weft::mx

namespace {

// MXNet's hidden attribute keys, which a frontend may pass bare ("ctx_group") and which are stored
// as "__ctx_group__" (c_api_symbolic.cc's kHiddenKeys).
std::string LiftHidden(const std::string& key) {
  for (const char* h : {"ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage", "profiler_scope"}) {
    if (key == h) {
      std::string lifted = "__";  // appended piecewise: GCC 12's -Wrestrict misfires on a + b + c here
      lifted.append(key).append("__");
      return lifted;
    }
  }
  return key;
}

// The atomic symbol's op parameters (hidden keys left out), with a variadic op's count set when
// the caller left it to composition: what the op's definition validates at creation.
std::map<std::string, std::string> CheckedParams(const OpEntry& op, const SymbolH::Atomic& atomic) {
  std::map<std::string, std::string> params;
  for (const auto& [k, v] : atomic.attrs)
    if (!k.starts_with("__")) params.emplace(k, v);
  if (!op.info.variadic_attr.empty()) params.emplace(op.info.variadic_attr, std::string(1, '1'));
  return params;
}

const char** ReturnNames(const char* buffer, std::vector<std::string> names, uint32_t* out_size) {
  *NotNull(out_size, "out_size") = static_cast<uint32_t>(names.size());
  return ThreadStrings(buffer).Set(std::move(names));
}

// Lists of an empty symbol (GetChildren of a variable) are empty, as MXNet's.
template <typename F>
std::vector<std::string> ListOf(SymbolH& h, F list) {
  Symbol& s = h.Get();
  return s.IsEmpty() ? std::vector<std::string>{} : list(s);
}

void Compose(SymbolH& h, const char* name, uint32_t num_args, const char** keys, SymbolHandle* args) {
  if (num_args > 0) NotNull(args, "args");
  std::vector<Symbol> positional;
  std::map<std::string, Symbol> named;
  for (uint32_t i = 0; i < num_args; ++i) {
    const Symbol& s = Sym(args[i]).Get();
    if (keys != nullptr) {
      named[NotNull(keys[i], "key")] = s;
    } else {
      positional.push_back(s);
    }
  }
  if (h.atomic) {
    h.symbol = ComposeAtomic(*h.atomic, name ? name : "", positional, named);
    h.atomic.reset();
  } else {
    h.symbol.Compose(positional, named);
  }
}

// ---- shape inference results in MXNet's three layouts (uint32, int, int64 extents) ----------------

template <typename T>
struct ShapeList {
  std::vector<std::vector<T>> dims;
  std::vector<int> ndims;
  std::vector<uint32_t> ndims32;
  std::vector<const T*> ptrs;

  void Set(const std::vector<std::optional<Shape>>& shapes) {
    dims.clear();
    ndims.clear();
    const bool np = IsNumpyShape();
    for (const auto& s : shapes) {
      std::vector<T> d;
      // Unknown shapes and extents read 0 in MXNet's classic shape mode, -1 in NumPy shape mode.
      if (s)
        for (int64_t e : *s) d.push_back(static_cast<T>(e < 0 ? (np ? -1 : 0) : e));
      ndims.push_back(!s && np ? -1 : static_cast<int>(d.size()));
      dims.push_back(std::move(d));
    }
    ndims32.assign(ndims.begin(), ndims.end());
    ptrs.clear();
    for (const auto& d : dims) ptrs.push_back(d.data());
  }
};

template <typename T>
struct ShapeResult {
  ShapeList<T> in, out, aux;
};

template <typename T>
ShapeResult<T>& ThreadShapes() {
  thread_local ShapeResult<T> r;
  return r;
}

// The given shapes by name: keys NULL means positional, in ListArguments order.
template <typename IndT, typename DataT>
std::map<std::string, Shape> GivenShapes(Symbol& s, uint32_t num_args, const char** keys, const IndT* ind_ptr,
                                         const DataT* data) {
  std::map<std::string, Shape> shapes;
  if (num_args == 0) return shapes;
  NotNull(ind_ptr, "arg_ind_ptr");
  const std::vector<std::string> args = keys ? std::vector<std::string>{} : s.ListArguments();
  if (!keys && num_args > args.size()) Fail("infer_shape: {} shapes given for {} arguments", num_args, args.size());
  for (uint32_t i = 0; i < num_args; ++i) {
    std::vector<int64_t> d;
    for (IndT j = ind_ptr[i]; j < ind_ptr[i + 1]; ++j)
      d.push_back(static_cast<int64_t>(NotNull(data, "arg_shape_data")[j]));
    // In MXNet's classic shape mode an extent 0 is unknown, as is an empty shape; in NumPy shape
    // mode -1 is unknown and () a scalar.
    const bool np = IsNumpyShape();
    if (!np)
      for (int64_t& e : d)
        if (e == 0) e = -1;
    const std::string name = keys ? std::string(NotNull(keys[i], "key")) : args[i];
    if (!d.empty() || np) shapes[name] = Shape(d);
  }
  return shapes;
}

template <typename T>
ShapeResult<T>& InferShapes(SymbolH& h, const std::map<std::string, Shape>& given, bool partial, int* complete) {
  const ShapeInference r = h.Get().InferShapePartial(given);
  ShapeResult<T>& out = ThreadShapes<T>();
  out.in.Set(r.arg_shapes);
  out.out.Set(r.out_shapes);
  out.aux.Set(r.aux_shapes);
  // The partial forms report success whatever stayed unknown (MXNet's frontend returns their shapes
  // only when `complete` is set); the full forms say whether everything is known.
  *NotNull(complete, "complete") = partial || r.complete ? 1 : 0;
  return out;
}

template <typename T, typename SizeT, typename NDimT>
void ReturnShapes(ShapeResult<T>& r, SizeT* in_size, const NDimT** in_ndim, const T*** in_data, SizeT* out_size,
                  const NDimT** out_ndim, const T*** out_data, SizeT* aux_size, const NDimT** aux_ndim,
                  const T*** aux_data) {
  auto put = [](ShapeList<T>& l, SizeT* size, const NDimT** ndim, const T*** data) {
    *NotNull(size, "shape_size") = static_cast<SizeT>(l.ptrs.size());
    if constexpr (std::is_same_v<NDimT, int>) {
      *NotNull(ndim, "shape_ndim") = l.ndims.data();
    } else {
      *NotNull(ndim, "shape_ndim") = l.ndims32.data();
    }
    *NotNull(data, "shape_data") = l.ptrs.data();
  };
  put(r.in, in_size, in_ndim, in_data);
  put(r.out, out_size, out_ndim, out_data);
  put(r.aux, aux_size, aux_ndim, aux_data);
}

// The six MXSymbolInferShape* forms: shapes given as (ind_ptr, data) of element type T, results
// returned in T with SizeT counts and NDimT ranks; `partial` as InferShapes.
template <typename T, typename IndT, typename SizeT, typename NDimT>
int InferShapeCall(bool partial, SymbolHandle sym, uint32_t num_args, const char** keys, const IndT* arg_ind_ptr,
                   const T* arg_shape_data, SizeT* in_size, const NDimT** in_ndim, const T*** in_data, SizeT* out_size,
                   const NDimT** out_ndim, const T*** out_data, SizeT* aux_size, const NDimT** aux_ndim,
                   const T*** aux_data, int* complete) {
  API_BEGIN();
  SymbolH& h = Sym(sym);
  auto given = GivenShapes(h.Get(), num_args, keys, arg_ind_ptr, arg_shape_data);
  ReturnShapes(InferShapes<T>(h, given, partial, complete), in_size, in_ndim, in_data, out_size, out_ndim, out_data,
               aux_size, aux_ndim, aux_data);
  API_END();
}

int InferTypes(SymbolHandle sym, uint32_t num_args, const char** keys, const int* arg_type_data, uint32_t* in_type_size,
               const int** in_type_data, uint32_t* out_type_size, const int** out_type_data, uint32_t* aux_type_size,
               const int** aux_type_data, int* complete, bool partial) {
  API_BEGIN();
  Symbol& s = Sym(sym).Get();
  std::map<std::string, int> given;
  const std::vector<std::string> args = keys ? std::vector<std::string>{} : s.ListArguments();
  for (uint32_t i = 0; i < num_args; ++i) {
    const int t = NotNull(arg_type_data, "arg_type_data")[i];
    if (t < 0) continue;
    if (!keys && i >= args.size()) Fail("infer_type: {} types given for {} arguments", num_args, args.size());
    given[keys ? std::string(NotNull(keys[i], "key")) : args[i]] = t;
  }
  const TypeInference r = s.InferTypePartial(given);
  thread_local std::vector<int> in, out, aux;
  in = r.arg_types;
  out = r.out_types;
  aux = r.aux_types;
  *NotNull(in_type_size, "in_type_size") = static_cast<uint32_t>(in.size());
  *NotNull(in_type_data, "in_type_data") = in.data();
  *NotNull(out_type_size, "out_type_size") = static_cast<uint32_t>(out.size());
  *NotNull(out_type_data, "out_type_data") = out.data();
  *NotNull(aux_type_size, "aux_type_size") = static_cast<uint32_t>(aux.size());
  *NotNull(aux_type_data, "aux_type_data") = aux.data();
  *NotNull(complete, "complete") = partial || r.complete ? 1 : 0;  // as for shapes
  API_END();
}

}  // namespace

extern "C" {

int MXSymbolCreateVariable(const char* name, SymbolHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewSym(Symbol::Variable(NotNull(name, "name")));
  API_END();
}

// An op node not yet connected to inputs; NNSymbolCompose connects it.
int MXSymbolCreateAtomicSymbol(AtomicSymbolCreator creator, uint32_t num_param, const char** keys, const char** vals,
                               SymbolHandle* out) {
  API_BEGIN();
  OpEntry& op = OpFromHandle(creator);
  if (op.is_copyto) Fail("_copyto is an imperative-only operation; it has no symbol");
  // A binding op with a core definition (cast_storage, _sparse_retain) runs in graphs as that op.
  if (op.run && !FindOpInfo(op.registry_name))
    Fail("{}: this operator runs imperatively only in weft (binding_ops.h), not in a graph", op.name);
  if (op.is_numpy || op.is_missing) Fail("{}: {}", op.name, op.description);
  SymbolH::Atomic atomic{op.registry_name, {}};
  for (const auto& [k, v] : KeyValues(static_cast<int>(num_param), keys, vals, op.name.c_str()))
    atomic.attrs[LiftHidden(k)] = v;
  for (const auto& [k, v] : op.fixed_attrs) atomic.attrs[k] = v;
  // Validate now (as MXNet parses the parameters at creation): a bad attribute fails here.
  ListOpInputs(op.registry_name, CheckedParams(op, atomic));
  auto h = std::make_unique<SymbolH>();
  h->atomic = std::move(atomic);
  *NotNull(out, "out") = h.release();
  API_END();
}

int NNSymbolCompose(SymbolHandle sym, const char* name, nn_uint num_args, const char** keys, SymbolHandle* args) {
  API_BEGIN();
  Compose(Sym(sym), name, num_args, keys, args);
  API_END();
}

int MXSymbolCompose(SymbolHandle sym, const char* name, uint32_t num_args, const char** keys, SymbolHandle* args) {
  return NNSymbolCompose(sym, name, num_args, keys, args);
}

int MXSymbolCreateGroup(uint32_t num_symbols, SymbolHandle* symbols, SymbolHandle* out) {
  API_BEGIN();
  if (num_symbols > 0) NotNull(symbols, "symbols");
  std::vector<Symbol> list;
  for (uint32_t i = 0; i < num_symbols; ++i) list.push_back(Sym(symbols[i]).Get());
  *NotNull(out, "out") = NewSym(Symbol::Group(list));
  API_END();
}

int MXSymbolCreateFromFile(const char* fname, SymbolHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewSym(Symbol::Load(NotNull(fname, "fname")));
  API_END();
}

int MXSymbolCreateFromJSON(const char* json, SymbolHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewSym(Symbol::LoadJSON(NotNull(json, "json")));
  API_END();
}

int MXSymbolSaveToFile(SymbolHandle symbol, const char* fname) {
  API_BEGIN();
  Sym(symbol).Get().Save(NotNull(fname, "fname"));
  API_END();
}

int MXSymbolSaveToJSON(SymbolHandle symbol, const char** out_json) {
  API_BEGIN();
  std::string& json = ThreadString("MXSymbolSaveToJSON");
  json = Sym(symbol).Get().ToJSON();
  *NotNull(out_json, "out_json") = json.c_str();
  API_END();
}

int MXSymbolFree(SymbolHandle symbol) {
  API_BEGIN();
  delete &Sym(symbol);
  API_END();
}

int NNSymbolFree(SymbolHandle symbol) { return MXSymbolFree(symbol); }

int MXSymbolCopy(SymbolHandle symbol, SymbolHandle* out) {
  API_BEGIN();
  SymbolH& h = Sym(symbol);
  auto copy = std::make_unique<SymbolH>();
  copy->atomic = h.atomic;
  if (!h.atomic) copy->symbol = h.symbol.IsEmpty() ? Symbol() : h.symbol.Copy();
  *NotNull(out, "out") = copy.release();
  API_END();
}

int MXShallowCopySymbol(SymbolHandle src, SymbolHandle* out) {
  API_BEGIN();
  SymbolH& h = Sym(src);
  auto copy = std::make_unique<SymbolH>();
  copy->atomic = h.atomic;
  copy->symbol = h.symbol;
  *NotNull(out, "out") = copy.release();
  API_END();
}

int MXSymbolPrint(SymbolHandle symbol, const char** out_str) {
  API_BEGIN();
  std::string& s = ThreadString("MXSymbolPrint");
  s = Sym(symbol).Get().DebugStr();
  *NotNull(out_str, "out_str") = s.c_str();
  API_END();
}

// *success is 0 for a symbol whose outputs come from several nodes (a group), which has no name.
int MXSymbolGetName(SymbolHandle symbol, const char** out, int* success) {
  API_BEGIN();
  Symbol& s = Sym(symbol).Get();
  std::string& name = ThreadString("MXSymbolGetName");
  name = s.IsEmpty() ? "" : s.GetName();
  *NotNull(success, "success") = name.empty() ? 0 : 1;
  *NotNull(out, "out") = name.empty() ? nullptr : name.c_str();
  API_END();
}

int MXSymbolGetAttr(SymbolHandle symbol, const char* key, const char** out, int* success) {
  API_BEGIN();
  Symbol& s = Sym(symbol).Get();
  std::optional<std::string> v =
      s.GetNumOutputs() > 0 && !s.GetName().empty() ? s.GetAttr(NotNull(key, "key")) : std::nullopt;
  std::string& buf = ThreadString("MXSymbolGetAttr");
  buf = v.value_or("");
  *NotNull(success, "success") = v ? 1 : 0;
  *NotNull(out, "out") = v ? buf.c_str() : nullptr;
  API_END();
}

int MXSymbolSetAttr(SymbolHandle symbol, const char* key, const char* value) {
  API_BEGIN();
  Sym(symbol).Get().SetAttr(LiftHidden(NotNull(key, "key")), NotNull(value, "value"));
  API_END();
}

// Several attributes at once (the frontend's Symbol._set_attr, e.g. a Variable's __shape__,
// __dtype__, __init__, lr_mult); validated together before any is set.
int MXSymbolSetAttrs(SymbolHandle symbol, uint32_t num_args, const char** keys, const char** values) {
  API_BEGIN();
  std::map<std::string, std::string> attrs;
  for (const auto& [k, v] : KeyValues(static_cast<int>(num_args), keys, values, "Symbol._set_attr"))
    attrs[LiftHidden(k)] = v;
  Sym(symbol).Get().SetAttributes(attrs);
  API_END();
}

// A node's attributes for listing: MXNet lists a hidden key stored as "__lr_mult__" under its bare
// name "lr_mult" as well.
std::map<std::string, std::string> WithBareHidden(const std::map<std::string, std::string>& attrs) {
  std::map<std::string, std::string> out = attrs;
  for (const auto& [k, v] : attrs) {
    if (k.size() > 4 && k.starts_with("__") && k.ends_with("__")) {
      const std::string bare = k.substr(2, k.size() - 4);
      if (LiftHidden(bare) == k) out.emplace(bare, v);
    }
  }
  return out;
}

// Every node's attributes as pairs "<node>$<key>", "<value>" (*out_size counts pairs).
int MXSymbolListAttr(SymbolHandle symbol, uint32_t* out_size, const char*** out) {
  API_BEGIN();
  std::vector<std::string> flat;
  for (const auto& [node, attrs] : Sym(symbol).Get().AttrDict()) {
    for (const auto& [k, v] : WithBareHidden(attrs)) {
      flat.push_back(node + "$" + k);
      flat.push_back(v);
    }
  }
  *NotNull(out_size, "out_size") = static_cast<uint32_t>(flat.size() / 2);
  *NotNull(out, "out") = ThreadStrings("MXSymbolListAttr").Set(std::move(flat));
  API_END();
}

// The output node's own attributes as pairs "<key>", "<value>".
int MXSymbolListAttrShallow(SymbolHandle symbol, uint32_t* out_size, const char*** out) {
  API_BEGIN();
  std::vector<std::string> flat;
  Symbol& s = Sym(symbol).Get();
  if (!s.IsEmpty() && !s.GetName().empty()) {
    for (const auto& [k, v] : WithBareHidden(s.ListAttributes())) {
      flat.push_back(k);
      flat.push_back(v);
    }
  }
  *NotNull(out_size, "out_size") = static_cast<uint32_t>(flat.size() / 2);
  *NotNull(out, "out") = ThreadStrings("MXSymbolListAttrShallow").Set(std::move(flat));
  API_END();
}

int MXSymbolListArguments(SymbolHandle symbol, uint32_t* out_size, const char*** out_str_array) {
  API_BEGIN();
  *NotNull(out_str_array, "out_str_array") =
      ReturnNames("MXSymbolListArguments", ListOf(Sym(symbol), [](Symbol& s) { return s.ListArguments(); }), out_size);
  API_END();
}

int MXSymbolListOutputs(SymbolHandle symbol, uint32_t* out_size, const char*** out_str_array) {
  API_BEGIN();
  *NotNull(out_str_array, "out_str_array") =
      ReturnNames("MXSymbolListOutputs", ListOf(Sym(symbol), [](Symbol& s) { return s.ListOutputs(); }), out_size);
  API_END();
}

int MXSymbolListAuxiliaryStates(SymbolHandle symbol, uint32_t* out_size, const char*** out_str_array) {
  API_BEGIN();
  *NotNull(out_str_array, "out_str_array") = ReturnNames(
      "MXSymbolListAuxiliaryStates", ListOf(Sym(symbol), [](Symbol& s) { return s.ListAuxiliaryStates(); }), out_size);
  API_END();
}

// option: 0 every input, 1 arguments (read-only inputs), 2 aux states.
int NNSymbolListInputNames(SymbolHandle symbol, int option, nn_uint* out_size, const char*** out_str_array) {
  API_BEGIN();
  if (option < 0 || option > 2) Fail("NNSymbolListInputNames: option {} (0 all, 1 arguments, 2 aux states)", option);
  *NotNull(out_str_array, "out_str_array") = ReturnNames(
      "NNSymbolListInputNames",
      ListOf(Sym(symbol),
             [&](Symbol& s) {
               return option == 0 ? s.ListInputs() : option == 1 ? s.ListArguments() : s.ListAuxiliaryStates();
             }),
      out_size);
  API_END();
}

int MXSymbolGetNumOutputs(SymbolHandle symbol, uint32_t* output_count) {
  API_BEGIN();
  Symbol& s = Sym(symbol).Get();
  *NotNull(output_count, "output_count") = s.IsEmpty() ? 0 : s.GetNumOutputs();
  API_END();
}

int MXSymbolGetInternals(SymbolHandle symbol, SymbolHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewSym(Sym(symbol).Get().GetInternals());
  API_END();
}

int MXSymbolGetChildren(SymbolHandle symbol, SymbolHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewSym(Sym(symbol).Get().GetChildren());
  API_END();
}

int MXSymbolGetOutput(SymbolHandle symbol, uint32_t index, SymbolHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewSym(Sym(symbol).Get()[static_cast<int>(index)]);
  API_END();
}

// The symbol's input variables as symbols (ListInputs order).
int MXSymbolGetInputSymbols(SymbolHandle sym, SymbolHandle** inputs, int* input_size) {
  API_BEGIN();
  Symbol& s = Sym(sym).Get();
  const Symbol internals = s.GetInternals();
  const std::vector<std::string> outs = internals.ListOutputs();
  std::vector<void*>& handles = ThreadHandles("MXSymbolGetInputSymbols");
  handles.clear();
  for (const std::string& name : s.ListInputs()) {
    const auto it = std::find(outs.begin(), outs.end(), name);
    if (it != outs.end()) handles.push_back(NewSym(internals[static_cast<int>(it - outs.begin())]));
  }
  *NotNull(input_size, "input_size") = static_cast<int>(handles.size());
  *NotNull(inputs, "inputs") = handles.data();
  API_END();
}

// weft graphs hold no amp_cast nodes (mixed precision casts are not inserted), so this is a copy.
int MXSymbolRemoveAmpCast(SymbolHandle sym_handle, SymbolHandle* ret_sym_handle) {
  API_BEGIN();
  *NotNull(ret_sym_handle, "ret_sym_handle") = NewSym(Sym(sym_handle).Get().Copy());
  API_END();
}

int MXSymbolGrad(SymbolHandle, uint32_t, const char**, SymbolHandle*) {
  API_BEGIN();
  Fail("MXSymbolGrad (Symbol.grad) is not supported: bind an executor with grad_req and call backward");
  API_END();
}

int MXSymbolInferShapeEx(SymbolHandle sym, uint32_t num_args, const char** keys, const uint32_t* arg_ind_ptr,
                         const int* arg_shape_data, uint32_t* in_shape_size, const int** in_shape_ndim,
                         const int*** in_shape_data, uint32_t* out_shape_size, const int** out_shape_ndim,
                         const int*** out_shape_data, uint32_t* aux_shape_size, const int** aux_shape_ndim,
                         const int*** aux_shape_data, int* complete) {
  return InferShapeCall(false, sym, num_args, keys, arg_ind_ptr, arg_shape_data, in_shape_size, in_shape_ndim,
                        in_shape_data, out_shape_size, out_shape_ndim, out_shape_data, aux_shape_size, aux_shape_ndim,
                        aux_shape_data, complete);
}

int MXSymbolInferShapePartialEx(SymbolHandle sym, uint32_t num_args, const char** keys, const uint32_t* arg_ind_ptr,
                                const int* arg_shape_data, uint32_t* in_shape_size, const int** in_shape_ndim,
                                const int*** in_shape_data, uint32_t* out_shape_size, const int** out_shape_ndim,
                                const int*** out_shape_data, uint32_t* aux_shape_size, const int** aux_shape_ndim,
                                const int*** aux_shape_data, int* complete) {
  return InferShapeCall(true, sym, num_args, keys, arg_ind_ptr, arg_shape_data, in_shape_size, in_shape_ndim,
                        in_shape_data, out_shape_size, out_shape_ndim, out_shape_data, aux_shape_size, aux_shape_ndim,
                        aux_shape_data, complete);
}

int MXSymbolInferShape(SymbolHandle sym, uint32_t num_args, const char** keys, const uint32_t* arg_ind_ptr,
                       const uint32_t* arg_shape_data, uint32_t* in_shape_size, const uint32_t** in_shape_ndim,
                       const uint32_t*** in_shape_data, uint32_t* out_shape_size, const uint32_t** out_shape_ndim,
                       const uint32_t*** out_shape_data, uint32_t* aux_shape_size, const uint32_t** aux_shape_ndim,
                       const uint32_t*** aux_shape_data, int* complete) {
  return InferShapeCall(false, sym, num_args, keys, arg_ind_ptr, arg_shape_data, in_shape_size, in_shape_ndim,
                        in_shape_data, out_shape_size, out_shape_ndim, out_shape_data, aux_shape_size, aux_shape_ndim,
                        aux_shape_data, complete);
}

int MXSymbolInferShapePartial(SymbolHandle sym, uint32_t num_args, const char** keys, const uint32_t* arg_ind_ptr,
                              const uint32_t* arg_shape_data, uint32_t* in_shape_size, const uint32_t** in_shape_ndim,
                              const uint32_t*** in_shape_data, uint32_t* out_shape_size,
                              const uint32_t** out_shape_ndim, const uint32_t*** out_shape_data,
                              uint32_t* aux_shape_size, const uint32_t** aux_shape_ndim,
                              const uint32_t*** aux_shape_data, int* complete) {
  return InferShapeCall(true, sym, num_args, keys, arg_ind_ptr, arg_shape_data, in_shape_size, in_shape_ndim,
                        in_shape_data, out_shape_size, out_shape_ndim, out_shape_data, aux_shape_size, aux_shape_ndim,
                        aux_shape_data, complete);
}

int MXSymbolInferShapeEx64(SymbolHandle sym, uint32_t num_args, const char** keys, const int64_t* arg_ind_ptr,
                           const int64_t* arg_shape_data, size_t* in_shape_size, const int** in_shape_ndim,
                           const int64_t*** in_shape_data, size_t* out_shape_size, const int** out_shape_ndim,
                           const int64_t*** out_shape_data, size_t* aux_shape_size, const int** aux_shape_ndim,
                           const int64_t*** aux_shape_data, int* complete) {
  return InferShapeCall(false, sym, num_args, keys, arg_ind_ptr, arg_shape_data, in_shape_size, in_shape_ndim,
                        in_shape_data, out_shape_size, out_shape_ndim, out_shape_data, aux_shape_size, aux_shape_ndim,
                        aux_shape_data, complete);
}

int MXSymbolInferShapePartialEx64(SymbolHandle sym, uint32_t num_args, const char** keys, const int64_t* arg_ind_ptr,
                                  const int64_t* arg_shape_data, size_t* in_shape_size, const int** in_shape_ndim,
                                  const int64_t*** in_shape_data, size_t* out_shape_size, const int** out_shape_ndim,
                                  const int64_t*** out_shape_data, size_t* aux_shape_size, const int** aux_shape_ndim,
                                  const int64_t*** aux_shape_data, int* complete) {
  return InferShapeCall(true, sym, num_args, keys, arg_ind_ptr, arg_shape_data, in_shape_size, in_shape_ndim,
                        in_shape_data, out_shape_size, out_shape_ndim, out_shape_data, aux_shape_size, aux_shape_ndim,
                        aux_shape_data, complete);
}

int MXSymbolInferType(SymbolHandle sym, uint32_t num_args, const char** keys, const int* arg_type_data,
                      uint32_t* in_type_size, const int** in_type_data, uint32_t* out_type_size,
                      const int** out_type_data, uint32_t* aux_type_size, const int** aux_type_data, int* complete) {
  return InferTypes(sym, num_args, keys, arg_type_data, in_type_size, in_type_data, out_type_size, out_type_data,
                    aux_type_size, aux_type_data, complete, false);
}

int MXSymbolInferTypePartial(SymbolHandle sym, uint32_t num_args, const char** keys, const int* arg_type_data,
                             uint32_t* in_type_size, const int** in_type_data, uint32_t* out_type_size,
                             const int** out_type_data, uint32_t* aux_type_size, const int** aux_type_data,
                             int* complete) {
  return InferTypes(sym, num_args, keys, arg_type_data, in_type_size, in_type_data, out_type_size, out_type_data,
                    aux_type_size, aux_type_data, complete, true);
}

}  // extern "C"
