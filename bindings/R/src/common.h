// What the package's C++ files share: R errors, handles wrapped as R external pointers (freed by
// R's garbage collector), MXNet <-> R dimension order, string arrays.
#pragma once

#include <Rcpp.h>

#include <string>
#include <vector>

#include "mx_api.h"

namespace mxr {

/// Raises an R error with `message` (an Rcpp::exception without the C++ call, so R shows the
/// message as weft or the package wrote it).
[[noreturn]] void Fail(const std::string& message);

// ---- handles ------------------------------------------------------------------------------------
// Every handle the C API returns is owned by exactly one R external pointer, whose finalizer
// (run by R's garbage collector) frees it with the matching *Free function and clears the pointer,
// so a handle is freed once. An external pointer saved with an R session comes back NULL; every
// use checks for that and raises an R error naming the object.

enum class Kind { kNDArray, kSymbol, kExecutor, kKVStore, kDataIter };

/// The R name of a kind ("MXNDArray", "MXSymbol", "MXExecutor", "MXKVStore", "MXDataIter").
const char* KindName(Kind kind);

/// A new external pointer owning `handle`. NDArrays and symbols get their S3 class (the R object
/// is the pointer); the others are held by an R environment that carries the class. `keep` is kept
/// alive as long as the pointer (the KVStore's updater closure).
SEXP Wrap(void* handle, Kind kind, SEXP keep = R_NilValue);

/// The live handle inside `x`; raises an R error naming `what` when x is not an object of that
/// kind or its handle was freed (or restored from a saved session).
void* Get(SEXP x, Kind kind, const char* what);

/// Frees the handle inside `x` now (idempotent; the finalizer then does nothing).
void FreeNow(SEXP x);

/// Handles of a list of objects of one kind, in order; NULL elements allowed when `allow_null`.
std::vector<void*> GetList(const Rcpp::List& list, Kind kind, const char* what, bool allow_null = false);

// ---- conversions --------------------------------------------------------------------------------

/// R's dim (column-major, first index fastest) of an MXNet shape (row-major): the reverse.
Rcpp::IntegerVector RDim(const int* shape, int ndim);
/// MXNet's shape of an R dim; raises an error naming `what` for a non-positive or NA extent.
std::vector<uint32_t> MXShape(const Rcpp::IntegerVector& dim, const char* what);

std::vector<std::string> Strings(uint32_t n, const char** array);
std::vector<const char*> CStrings(const std::vector<std::string>& strings);

/// The shape of an NDArray handle in MXNet's order.
std::vector<int> ShapeOf(void* nd);

}  // namespace mxr
