// Operator information, from which the R functions mx.symbol.<op> and mx.nd.<op> are generated
// when the package loads.
#include "common.h"

using namespace mxr;

// Every operator name the library lists, with MXSymbolGetAtomicSymbolInfo's description of it:
// list(name, description, arg.names, arg.types, arg.descriptions, key.var.num.args).
// [[Rcpp::export(.mx_op_list, rng = false)]]
Rcpp::List mx_op_list() {
  uint32_t n = 0;
  const char** names = nullptr;
  Check(api().MXListAllOpNames(&n, &names));
  const std::vector<std::string> all = Strings(n, names);
  Rcpp::List out(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    OpHandle op = nullptr;
    Check(api().NNGetOpHandle(all[i].c_str(), &op));
    const char *name = nullptr, *desc = nullptr, *key_var = nullptr, *ret_type = nullptr;
    uint32_t num_args = 0;
    const char **arg_names = nullptr, **types = nullptr, **descs = nullptr;
    Check(api().MXSymbolGetAtomicSymbolInfo(op, &name, &desc, &num_args, &arg_names, &types, &descs, &key_var,
                                            &ret_type));
    out[i] = Rcpp::List::create(
        Rcpp::Named("name") = all[i], Rcpp::Named("description") = std::string(desc ? desc : ""),
        Rcpp::Named("arg.names") = Strings(num_args, arg_names), Rcpp::Named("arg.types") = Strings(num_args, types),
        Rcpp::Named("arg.descriptions") = Strings(num_args, descs),
        Rcpp::Named("key.var.num.args") = std::string(key_var ? key_var : ""));
  }
  return out;
}
