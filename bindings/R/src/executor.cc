// MXExecutor: binding a symbol to arrays, forward, backward, outputs.
#include "common.h"

using namespace mxr;

// Binds `sym` on (dev_type, dev_id) to the argument arrays (in the symbol's argument order), their
// gradient arrays (NULL where no gradient), grad_req codes (0 null, 1 write, 3 add) and aux arrays.
// [[Rcpp::export(.mx_executor_bind, rng = false)]]
SEXP mx_executor_bind(SEXP sym, int dev_type, int dev_id, Rcpp::List args, Rcpp::List grads,
                      std::vector<unsigned int> reqs, Rcpp::List aux) {
  SymbolHandle s = Get(sym, Kind::kSymbol, "symbol");
  std::vector<void*> a = GetList(args, Kind::kNDArray, "arg.arrays");
  std::vector<void*> g = GetList(grads, Kind::kNDArray, "grad.arrays", true);
  std::vector<void*> x = GetList(aux, Kind::kNDArray, "aux.arrays");
  if (g.size() != a.size() || reqs.size() != a.size()) Fail("mx.symbol.bind: one gradient and grad.req per argument");
  std::vector<uint32_t> r(reqs.begin(), reqs.end());
  ExecutorHandle h = nullptr;
  Check(api().MXExecutorBind(s, dev_type, dev_id, static_cast<uint32_t>(a.size()), a.data(), g.data(), r.data(),
                             static_cast<uint32_t>(x.size()), x.data(), &h));
  return Wrap(h, Kind::kExecutor);
}

// The executor's output arrays (new handles onto the arrays forward writes).
// [[Rcpp::export(.mx_executor_outputs, rng = false)]]
Rcpp::List mx_executor_outputs(SEXP exec) {
  uint32_t n = 0;
  NDArrayHandle* out = nullptr;
  Check(api().MXExecutorOutputs(Get(exec, Kind::kExecutor, "exec"), &n, &out));
  std::vector<void*> handles(out, out + n);
  Rcpp::List result(n);
  for (uint32_t i = 0; i < n; ++i) result[i] = Wrap(handles[i], Kind::kNDArray);
  return result;
}

// [[Rcpp::export(.mx_executor_forward, rng = false)]]
void mx_executor_forward(SEXP exec, bool is_train) {
  Check(api().MXExecutorForward(Get(exec, Kind::kExecutor, "exec"), is_train ? 1 : 0));
}

// [[Rcpp::export(.mx_executor_backward, rng = false)]]
void mx_executor_backward(SEXP exec, Rcpp::List head_grads) {
  ExecutorHandle h = Get(exec, Kind::kExecutor, "exec");
  std::vector<void*> g = GetList(head_grads, Kind::kNDArray, "mx.exec.backward head gradient");
  Check(api().MXExecutorBackward(h, static_cast<uint32_t>(g.size()), g.data()));
}
