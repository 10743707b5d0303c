// Handles as R external pointers (see common.h).
#include "common.h"

namespace mxr {

void Fail(const std::string& message) { throw Rcpp::exception(message.c_str(), false); }

namespace {

SEXP KindTag(Kind kind) { return Rf_install(KindName(kind)); }

bool KindOfTag(SEXP tag, Kind* kind) {
  for (Kind k : {Kind::kNDArray, Kind::kSymbol, Kind::kExecutor, Kind::kKVStore, Kind::kDataIter}) {
    if (tag == KindTag(k)) {
      *kind = k;
      return true;
    }
  }
  return false;
}

int FreeHandle(void* h, Kind kind) {
  const Api& a = api();
  switch (kind) {
    case Kind::kNDArray:
      return a.MXNDArrayFree(h);
    case Kind::kSymbol:
      return a.MXSymbolFree(h);
    case Kind::kExecutor:
      return a.MXExecutorFree(h);
    case Kind::kKVStore:
      return a.MXKVStoreFree(h);
    case Kind::kDataIter:
      return a.MXDataIterFree(h);
  }
  return 0;
}

// Run by R's garbage collector (never while C++ frames of this package are active): no R error
// may be raised here, and the C API's own error is of no use to anyone, so it is dropped.
void Finalize(SEXP ptr) {
  void* h = R_ExternalPtrAddr(ptr);
  Kind kind;
  if (h == nullptr || !KindOfTag(R_ExternalPtrTag(ptr), &kind) || !Loaded()) return;
  R_ClearExternalPtr(ptr);
  FreeHandle(h, kind);
}

SEXP PointerOf(SEXP x) {
  if (TYPEOF(x) == EXTPTRSXP) return x;
  if (TYPEOF(x) == ENVSXP) {
    SEXP p = Rf_findVarInFrame(x, Rf_install("handle"));
    if (p != R_UnboundValue && TYPEOF(p) == EXTPTRSXP) return p;
  }
  return R_NilValue;
}

}  // namespace

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kNDArray:
      return "MXNDArray";
    case Kind::kSymbol:
      return "MXSymbol";
    case Kind::kExecutor:
      return "MXExecutor";
    case Kind::kKVStore:
      return "MXKVStore";
    case Kind::kDataIter:
      return "MXDataIter";
  }
  return "handle";
}

SEXP Wrap(void* handle, Kind kind, SEXP keep) {
  if (handle == nullptr) Fail(std::string("the C API returned a NULL ") + KindName(kind) + " handle");
  // Until the pointer and its finalizer exist the handle would leak on an R allocation error, so
  // the pointer is made first, the finalizer right after (neither allocates beyond the pointer).
  Rcpp::Shield<SEXP> ptr(R_MakeExternalPtr(handle, KindTag(kind), keep));
  R_RegisterCFinalizerEx(ptr, Finalize, FALSE);
  if (kind == Kind::kNDArray || kind == Kind::kSymbol) {
    Rf_setAttrib(ptr, R_ClassSymbol, Rf_mkString(KindName(kind)));
  }
  return ptr;
}

void* Get(SEXP x, Kind kind, const char* what) {
  SEXP p = PointerOf(x);
  if (p == R_NilValue || R_ExternalPtrTag(p) != KindTag(kind)) {
    Fail(std::string(what) + " must be an " + KindName(kind) + " object");
  }
  void* h = R_ExternalPtrAddr(p);
  if (h == nullptr) {
    Fail(std::string(what) + " is an " + KindName(kind) +
         " whose handle is gone: it was freed, or restored from a saved R session (the arrays, symbols and "
         "executors of weft live in the library, not in R's workspace; save them with mx.nd.save, "
         "mx.symbol.save or mx.model.save)");
  }
  return h;
}

void FreeNow(SEXP x) {
  SEXP p = PointerOf(x);
  if (p == R_NilValue) Fail("mx.internal.free takes an MXNDArray, MXSymbol, MXExecutor, MXKVStore or MXDataIter");
  Finalize(p);
}

std::vector<void*> GetList(const Rcpp::List& list, Kind kind, const char* what, bool allow_null) {
  std::vector<void*> out(list.size(), nullptr);
  for (R_xlen_t i = 0; i < list.size(); ++i) {
    SEXP x = list[i];
    if (x == R_NilValue && allow_null) continue;
    const std::string item = std::string(what) + "[[" + std::to_string(i + 1) + "]]";
    out[i] = Get(x, kind, item.c_str());
  }
  return out;
}

Rcpp::IntegerVector RDim(const int* shape, int ndim) {
  Rcpp::IntegerVector dim(ndim);
  for (int i = 0; i < ndim; ++i) dim[i] = shape[ndim - 1 - i];
  return dim;
}

std::vector<uint32_t> MXShape(const Rcpp::IntegerVector& dim, const char* what) {
  std::vector<uint32_t> shape(dim.size());
  for (R_xlen_t i = 0; i < dim.size(); ++i) {
    if (dim[i] == NA_INTEGER || dim[i] < 0) {
      Fail(std::string(what) + ": dimensions must be non-negative whole numbers, got " +
           (dim[i] == NA_INTEGER ? std::string("NA") : std::to_string(dim[i])));
    }
    shape[dim.size() - 1 - i] = static_cast<uint32_t>(dim[i]);
  }
  return shape;
}

std::vector<std::string> Strings(uint32_t n, const char** array) {
  std::vector<std::string> s;
  s.reserve(n);
  for (uint32_t i = 0; i < n; ++i) s.emplace_back(array[i] ? array[i] : "");
  return s;
}

std::vector<const char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<const char*> c;
  c.reserve(strings.size());
  for (const std::string& s : strings) c.push_back(s.c_str());
  return c;
}

std::vector<int> ShapeOf(void* nd) {
  int ndim = 0;
  const int* data = nullptr;
  Check(api().MXNDArrayGetShapeEx(nd, &ndim, &data));
  return std::vector<int>(data, data + ndim);
}

}  // namespace mxr

// [[Rcpp::export(.mx_free, rng = false)]]
void mx_free(SEXP x) { mxr::FreeNow(x); }

// [[Rcpp::export(.mx_is_null_handle, rng = false)]]
bool mx_is_null_handle(SEXP x) { return TYPEOF(x) != EXTPTRSXP || R_ExternalPtrAddr(x) == nullptr; }
