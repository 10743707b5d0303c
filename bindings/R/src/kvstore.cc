// MXKVStore: create, init, push, pull, and an updater written in R.
//
// The store calls its updater in the thread that pushes (weft's local and device stores do), which
// is R's thread here, so the R closure is called directly. It must not raise an R error through
// the library's C++ frames: the call runs under R_ToplevelExec, its error is kept and raised once
// the push has returned.

#include <functional>

#include "common.h"

using namespace mxr;

namespace {

struct UpdaterState {
  SEXP env = R_NilValue;  // the R environment holding `updater` (kept alive by the store's pointer)
  std::string error;      // the first error the updater raised during the current push
};

// One per store with an updater; owned by a finalizer-free external pointer kept in the store's R
// object, so it lives as long as the store object and is deleted with it.
void DeleteState(SEXP p) {
  delete static_cast<UpdaterState*>(R_ExternalPtrAddr(p));
  R_ClearExternalPtr(p);
}

struct UpdaterCall {
  UpdaterState* state;
  int key;
  void* recv;  // handles the store gave; owned by this call until wrapped
  void* local;
};

// Runs under R_ToplevelExec, so an R error or interrupt (a longjmp) ends here, never in the
// library's frames. call.updater itself turns the updater's R errors into a returned message.
void RunUpdater(void* data) {
  auto* c = static_cast<UpdaterCall*>(data);
  SEXP grad = PROTECT(Wrap(c->recv, Kind::kNDArray));
  c->recv = nullptr;
  SEXP weight = PROTECT(Wrap(c->local, Kind::kNDArray));
  c->local = nullptr;
  SEXP fn = Rf_findVarInFrame(c->state->env, Rf_install("call.updater"));
  SEXP call = PROTECT(Rf_lang4(fn, Rf_ScalarInteger(c->key), grad, weight));
  SEXP result = PROTECT(Rf_eval(call, c->state->env));
  if (TYPEOF(result) == STRSXP && XLENGTH(result) == 1) c->state->error = CHAR(STRING_ELT(result, 0));
  UNPROTECT(4);
}

extern "C" void CallUpdater(int key, NDArrayHandle recv, NDArrayHandle local, void* handle) {
  auto* state = static_cast<UpdaterState*>(handle);
  UpdaterCall c{state, key, recv, local};
  if (!OnRThread()) {
    // A store that runs updaters on threads of its own (a parameter server) cannot call R.
    if (state->error.empty()) state->error = "this KVStore calls its updater outside R's thread; use a local store";
  } else if (state->error.empty() && recv != nullptr && local != nullptr && !R_ToplevelExec(RunUpdater, &c)) {
    // After a failed key the rest of the push is left alone (the error is raised once it returns).
    state->error = "the R updater was interrupted";
  }
  if (c.recv != nullptr) api().MXNDArrayFree(c.recv);
  if (c.local != nullptr) api().MXNDArrayFree(c.local);
}

UpdaterState* StateOf(SEXP kv) {
  SEXP p = Rf_findVarInFrame(kv, Rf_install("updater.state"));
  if (p == R_UnboundValue || TYPEOF(p) != EXTPTRSXP) return nullptr;
  return static_cast<UpdaterState*>(R_ExternalPtrAddr(p));
}

// Raises the error an updater raised during the last push, if any.
void RaiseUpdaterError(SEXP kv) {
  UpdaterState* state = StateOf(kv);
  if (state == nullptr || state->error.empty()) return;
  std::string message = state->error;
  state->error.clear();
  Fail("the KVStore updater raised an error: " + message);
}

// keys and per-device value lists (values[[device]][[key]]) as MXNet's grouped calls: one C call
// per key, with the key repeated once per device and that key's priority (recycled).
using KeyCall = std::function<int(uint32_t n, const int* keys, void** values, int priority)>;

void PerKey(const std::vector<int>& keys, const Rcpp::List& per_device, const std::vector<int>& priority,
            const char* what, const KeyCall& call) {
  std::vector<std::vector<void*>> devices;
  for (R_xlen_t d = 0; d < per_device.size(); ++d) {
    SEXP list = per_device[d];
    if (TYPEOF(list) != VECSXP || Rf_xlength(list) != static_cast<R_xlen_t>(keys.size())) {
      Fail(std::string(what) + ": each element must be a list of one MXNDArray per key (" +
           std::to_string(keys.size()) + " keys)");
    }
    devices.push_back(GetList(Rcpp::List(list), Kind::kNDArray, what));
  }
  for (size_t k = 0; k < keys.size(); ++k) {
    std::vector<void*> values;
    for (auto& d : devices) values.push_back(d[k]);
    const std::vector<int> repeated(values.size(), keys[k]);
    const int p = priority.empty() ? 0 : priority[k % priority.size()];
    Check(call(static_cast<uint32_t>(values.size()), repeated.data(), values.data(), p));
  }
}

}  // namespace

// [[Rcpp::export(.mx_kv_create, rng = false)]]
SEXP mx_kv_create(std::string type) {
  KVStoreHandle h = nullptr;
  Check(api().MXKVStoreCreate(type.c_str(), &h));
  return Wrap(h, Kind::kKVStore);
}

// [[Rcpp::export(.mx_kv_init, rng = false)]]
void mx_kv_init(SEXP kv, std::vector<int> keys, Rcpp::List values) {
  KVStoreHandle h = Get(kv, Kind::kKVStore, "kvstore");
  if (values.size() != static_cast<R_xlen_t>(keys.size())) Fail("kv$init: one value per key");
  std::vector<void*> v = GetList(values, Kind::kNDArray, "kv$init value");
  Check(api().MXKVStoreInit(h, static_cast<uint32_t>(keys.size()), keys.data(), v.data()));
}

// [[Rcpp::export(.mx_kv_push, rng = false)]]
void mx_kv_push(SEXP kv, std::vector<int> keys, Rcpp::List per_device, std::vector<int> priority) {
  KVStoreHandle h = Get(kv, Kind::kKVStore, "kvstore");
  PerKey(keys, per_device, priority, "kv$push values", [&](uint32_t n, const int* k, void** values, int p) {
    const int rc = api().MXKVStorePush(h, n, k, values, p);
    RaiseUpdaterError(kv);  // the updater's error first: it is why the push failed, if it did
    return rc;
  });
}

// [[Rcpp::export(.mx_kv_pull, rng = false)]]
void mx_kv_pull(SEXP kv, std::vector<int> keys, Rcpp::List per_device, std::vector<int> priority) {
  KVStoreHandle h = Get(kv, Kind::kKVStore, "kvstore");
  PerKey(keys, per_device, priority, "kv$pull out",
         [&](uint32_t n, const int* k, void** outs, int p) { return api().MXKVStorePull(h, n, k, outs, p); });
}

// Installs the updater of the store object `kv` (an R environment whose `call.updater(key, grad,
// weight)` runs the R updater and returns NULL, or the error message as a string).
// [[Rcpp::export(.mx_kv_set_updater, rng = false)]]
void mx_kv_set_updater(SEXP kv) {
  KVStoreHandle h = Get(kv, Kind::kKVStore, "kvstore");
  UpdaterState* state = StateOf(kv);
  if (state == nullptr) {
    Rcpp::Shield<SEXP> holder(R_MakeExternalPtr(new UpdaterState, R_NilValue, R_NilValue));
    R_RegisterCFinalizerEx(holder, DeleteState, FALSE);
    Rf_defineVar(Rf_install("updater.state"), holder, kv);
    state = StateOf(kv);
  }
  state->env = kv;
  Check(api().MXKVStoreSetUpdater(h, CallUpdater, state));
}

// [[Rcpp::export(.mx_kv_type, rng = false)]]
std::string mx_kv_type(SEXP kv) {
  const char* t = nullptr;
  Check(api().MXKVStoreGetType(Get(kv, Kind::kKVStore, "kvstore"), &t));
  return t;
}

// c(rank, number of workers)
// [[Rcpp::export(.mx_kv_rank_size, rng = false)]]
Rcpp::IntegerVector mx_kv_rank_size(SEXP kv) {
  KVStoreHandle h = Get(kv, Kind::kKVStore, "kvstore");
  int rank = 0, size = 0;
  Check(api().MXKVStoreGetRank(h, &rank));
  Check(api().MXKVStoreGetGroupSize(h, &size));
  return Rcpp::IntegerVector::create(rank, size);
}
