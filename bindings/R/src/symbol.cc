// MXSymbol: variables, operator symbols (create + compose), groups, JSON, listing, shape inference.
#include "common.h"

using namespace mxr;

namespace {

SymbolHandle Sym(SEXP x, const char* what) { return Get(x, Kind::kSymbol, what); }

Rcpp::CharacterVector List(int (*fn)(SymbolHandle, uint32_t*, const char***), SEXP sym, const char* what) {
  uint32_t n = 0;
  const char** names = nullptr;
  Check(fn(Sym(sym, what), &n, &names));
  return Rcpp::wrap(Strings(n, names));
}

}  // namespace

// [[Rcpp::export(.mx_symbol_variable, rng = false)]]
SEXP mx_symbol_variable(std::string name) {
  SymbolHandle h = nullptr;
  Check(api().MXSymbolCreateVariable(name.c_str(), &h));
  return Wrap(h, Kind::kSymbol);
}

// Operator `op` with string attributes, composed on `inputs` (MXSymbols; named by the op's input
// names, or unnamed for a variadic op) and named `name`.
// [[Rcpp::export(.mx_symbol_create, rng = false)]]
SEXP mx_symbol_create(std::string op, std::vector<std::string> keys, std::vector<std::string> values, Rcpp::List inputs,
                      std::string name) {
  if (keys.size() != values.size()) Fail("mx.symbol." + op + ": attribute names and values differ in number");
  OpHandle creator = nullptr;
  Check(api().NNGetOpHandle(op.c_str(), &creator));
  std::vector<const char*> ck = CStrings(keys), cv = CStrings(values);
  SymbolHandle h = nullptr;
  Check(api().MXSymbolCreateAtomicSymbol(creator, static_cast<uint32_t>(ck.size()), ck.data(), cv.data(), &h));
  Rcpp::Shield<SEXP> out(Wrap(h, Kind::kSymbol));
  std::vector<void*> args = GetList(inputs, Kind::kSymbol, ("mx.symbol." + op + " input").c_str());
  std::vector<std::string> arg_names;
  if (!Rf_isNull(inputs.names())) arg_names = Rcpp::as<std::vector<std::string>>(inputs.names());
  std::vector<const char*> ckeys = CStrings(arg_names);
  Check(api().MXSymbolCompose(h, name.c_str(), static_cast<uint32_t>(args.size()),
                              arg_names.empty() ? nullptr : ckeys.data(), args.data()));
  return out;
}

// [[Rcpp::export(.mx_symbol_group, rng = false)]]
SEXP mx_symbol_group(Rcpp::List symbols) {
  std::vector<void*> handles = GetList(symbols, Kind::kSymbol, "mx.symbol.Group");
  SymbolHandle h = nullptr;
  Check(api().MXSymbolCreateGroup(static_cast<uint32_t>(handles.size()), handles.data(), &h));
  return Wrap(h, Kind::kSymbol);
}

// [[Rcpp::export(.mx_symbol_load, rng = false)]]
SEXP mx_symbol_load(std::string filename) {
  SymbolHandle h = nullptr;
  Check(api().MXSymbolCreateFromFile(filename.c_str(), &h));
  return Wrap(h, Kind::kSymbol);
}

// [[Rcpp::export(.mx_symbol_load_json, rng = false)]]
SEXP mx_symbol_load_json(std::string json) {
  SymbolHandle h = nullptr;
  Check(api().MXSymbolCreateFromJSON(json.c_str(), &h));
  return Wrap(h, Kind::kSymbol);
}

// [[Rcpp::export(.mx_symbol_save, rng = false)]]
void mx_symbol_save(SEXP sym, std::string filename) {
  Check(api().MXSymbolSaveToFile(Sym(sym, "mx.symbol.save(symbol)"), filename.c_str()));
}

// [[Rcpp::export(.mx_symbol_json, rng = false)]]
std::string mx_symbol_json(SEXP sym) {
  const char* json = nullptr;
  Check(api().MXSymbolSaveToJSON(Sym(sym, "symbol"), &json));
  return json;
}

// [[Rcpp::export(.mx_symbol_debug_str, rng = false)]]
std::string mx_symbol_debug_str(SEXP sym) {
  const char* s = nullptr;
  Check(api().MXSymbolPrint(Sym(sym, "symbol"), &s));
  return s;
}

// [[Rcpp::export(.mx_symbol_set_attr, rng = false)]]
void mx_symbol_set_attr(SEXP sym, std::string key, std::string value) {
  Check(api().MXSymbolSetAttr(Sym(sym, "symbol"), key.c_str(), value.c_str()));
}

// [[Rcpp::export(.mx_symbol_arguments, rng = false)]]
Rcpp::CharacterVector mx_symbol_arguments(SEXP sym) { return List(api().MXSymbolListArguments, sym, "symbol"); }

// [[Rcpp::export(.mx_symbol_outputs, rng = false)]]
Rcpp::CharacterVector mx_symbol_outputs(SEXP sym) { return List(api().MXSymbolListOutputs, sym, "symbol"); }

// [[Rcpp::export(.mx_symbol_auxiliary_states, rng = false)]]
Rcpp::CharacterVector mx_symbol_auxiliary_states(SEXP sym) {
  return List(api().MXSymbolListAuxiliaryStates, sym, "symbol");
}

// [[Rcpp::export(.mx_symbol_internals, rng = false)]]
SEXP mx_symbol_internals(SEXP sym) {
  SymbolHandle h = nullptr;
  Check(api().MXSymbolGetInternals(Sym(sym, "symbol"), &h));
  return Wrap(h, Kind::kSymbol);
}

// Output `index` (0-based here; the R functions take 1-based indices).
// [[Rcpp::export(.mx_symbol_output, rng = false)]]
SEXP mx_symbol_output(SEXP sym, int index) {
  SymbolHandle h = nullptr;
  if (index < 0) Fail("symbol output index must be at least 1");
  Check(api().MXSymbolGetOutput(Sym(sym, "symbol"), static_cast<uint32_t>(index), &h));
  return Wrap(h, Kind::kSymbol);
}

// [[Rcpp::export(.mx_symbol_copy, rng = false)]]
SEXP mx_symbol_copy(SEXP sym) {
  SymbolHandle h = nullptr;
  Check(api().MXSymbolCopy(Sym(sym, "symbol"), &h));
  return Wrap(h, Kind::kSymbol);
}

// Composes `sym` in place on `inputs` (named or positional MXSymbols): MXNet's Symbol.__call__.
// [[Rcpp::export(.mx_symbol_compose, rng = false)]]
void mx_symbol_compose(SEXP sym, Rcpp::List inputs, std::string name) {
  std::vector<void*> args = GetList(inputs, Kind::kSymbol, "mx.apply input");
  std::vector<std::string> arg_names;
  if (!Rf_isNull(inputs.names())) arg_names = Rcpp::as<std::vector<std::string>>(inputs.names());
  std::vector<const char*> ckeys = CStrings(arg_names);
  Check(api().MXSymbolCompose(Sym(sym, "symbol"), name.c_str(), static_cast<uint32_t>(args.size()),
                              arg_names.empty() ? nullptr : ckeys.data(), args.data()));
}

// Shapes of the arguments, outputs and aux states given the R dims of some arguments (a named
// list); NULL when they are not all determined.
// [[Rcpp::export(.mx_symbol_infer_shape, rng = false)]]
SEXP mx_symbol_infer_shape(SEXP sym, Rcpp::List shapes) {
  SymbolHandle h = Sym(sym, "symbol");
  std::vector<std::string> keys;
  if (shapes.size() > 0) {
    if (Rf_isNull(shapes.names())) Fail("mx.symbol.infer.shape: give the shapes as name = dim");
    keys = Rcpp::as<std::vector<std::string>>(shapes.names());
  }
  std::vector<uint32_t> ind{0};
  std::vector<int> data;
  for (R_xlen_t i = 0; i < shapes.size(); ++i) {
    if (keys[i].empty()) Fail("mx.symbol.infer.shape: give the shapes as name = dim");
    const std::string what = "the shape of '" + keys[i] + "'";
    for (uint32_t d : MXShape(Rcpp::as<Rcpp::IntegerVector>(shapes[i]), what.c_str()))
      data.push_back(static_cast<int>(d));
    ind.push_back(static_cast<uint32_t>(data.size()));
  }
  std::vector<const char*> ck = CStrings(keys);
  uint32_t n_in = 0, n_out = 0, n_aux = 0;
  const int *in_ndim = nullptr, *out_ndim = nullptr, *aux_ndim = nullptr;
  const int **in_data = nullptr, **out_data = nullptr, **aux_data = nullptr;
  int complete = 0;
  Check(api().MXSymbolInferShapeEx(h, static_cast<uint32_t>(keys.size()), ck.data(), ind.data(), data.data(), &n_in,
                                   &in_ndim, &in_data, &n_out, &out_ndim, &out_data, &n_aux, &aux_ndim, &aux_data,
                                   &complete));
  if (!complete) return R_NilValue;
  // The shape arrays belong to the library until its next call on this thread: convert them
  // before listing the names (which is another call).
  Rcpp::List in(n_in), out(n_out), aux(n_aux);
  for (uint32_t i = 0; i < n_in; ++i) in[i] = RDim(in_data[i], in_ndim[i]);
  for (uint32_t i = 0; i < n_out; ++i) out[i] = RDim(out_data[i], out_ndim[i]);
  for (uint32_t i = 0; i < n_aux; ++i) aux[i] = RDim(aux_data[i], aux_ndim[i]);
  in.names() = mx_symbol_arguments(sym);
  out.names() = mx_symbol_outputs(sym);
  aux.names() = mx_symbol_auxiliary_states(sym);
  return Rcpp::List::create(Rcpp::Named("arg.shapes") = in, Rcpp::Named("out.shapes") = out,
                            Rcpp::Named("aux.shapes") = aux);
}
