#include "storage_fallback.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>

#include "weft/autograd.h"
#include "weft/logging.h"
#include "weft/sparse.h"

namespace weft::mx {
namespace {

bool IsSparse(const NDArray& a) {
  return a.storage_type() == StorageType::kRowSparse || a.storage_type() == StorageType::kCSR;
}

// f(0, scalar) of MXNet's scalar comparisons; nullopt for other ops.
std::optional<bool> ComparisonAtZero(const std::string& op, double scalar) {
  if (op == "_equal_scalar") return 0 == scalar;
  if (op == "_not_equal_scalar") return 0 != scalar;
  if (op == "_greater_scalar") return 0 > scalar;
  if (op == "_greater_equal_scalar") return 0 >= scalar;
  if (op == "_lesser_scalar") return 0 < scalar;
  if (op == "_lesser_equal_scalar") return 0 <= scalar;
  return std::nullopt;
}

// The attribute as given, or `fallback` when absent.
std::string Param(const std::map<std::string, std::string>& params, const char* name, const char* fallback) {
  auto it = params.find(name);
  return it != params.end() ? it->second : fallback;
}

// MXNet's csr take: csr data, dense indices, axis 0, mode clip or wrap.
bool IsCsrTake(const std::string& op, const std::map<std::string, std::string>& params,
               const std::vector<NDArray>& in) {
  return op == "take" && in.size() == 2 && in[0].storage_type() == StorageType::kCSR && !IsSparse(in[1]) &&
         Param(params, "axis", "0") == "0" && Param(params, "mode", "clip") != "raise";
}

void WarnOnce(const std::string& op) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard lock(mu);
  if (!warned.insert(op).second) return;
  LogWarning(
      "Storage type fallback detected: operator = {}: weft runs it on dense temporaries of its sparse inputs and "
      "outputs (the result is the same).",
      op);
}

}  // namespace

// True when the op has MXNet's lazy_update attribute and it is on (given or by default).
bool LazyUpdate(const OpInfo& op, const std::map<std::string, std::string>& params) {
  for (const OpAttrInfo& a : op.attrs) {
    if (a.name != "lazy_update") continue;
    auto it = params.find("lazy_update");
    const std::string v = it != params.end() ? it->second : a.default_value.value_or("True");
    return v == "True" || v == "true" || v == "1";
  }
  return false;
}

StorageFallback::StorageFallback(const OpEntry& entry, const std::map<std::string, std::string>& params,
                                 std::vector<NDArray>* in, std::vector<NDArray>* out) {
  const std::string& op = entry.name;
  // A row_sparse array that stores every row is a lazy update's whole array: the lazy update
  // then equals the dense one (Gluon's gradient of a dense use of a row_sparse-gradient weight).
  auto partial = [](const NDArray& a) {
    return IsSparse(a) && !(a.storage_type() == StorageType::kRowSparse && a.storage_shape()[0] == a.GetShape()[0]);
  };
  if (std::any_of(in->begin(), in->end(), partial) && LazyUpdate(entry.info, params)) {
    Fail(
        "{}: a sparse input with lazy_update=True updates only the rows it holds in MXNet, and weft has no lazy "
        "update yet (only one whose row_sparse inputs hold every row): pass lazy_update=False (every row is "
        "updated, as MXNet does then) or a dense gradient",
        op);
  }
  bool any = false;
  if (in->size() == 1 && IsSparse((*in)[0])) {
    auto it = params.find("scalar");
    std::optional<bool> zero;
    try {
      if (it != params.end()) zero = ComparisonAtZero(op, std::stod(it->second));
    } catch (const std::exception&) {
      // not a number: the op itself reports it
    }
    if (zero && !*zero) infer_ = (*in)[0].storage_type();
  }
  if (IsCsrTake(op, params, *in)) infer_ = StorageType::kCSR;
  for (NDArray& a : *in) {
    if (!IsSparse(a)) continue;
    const NDArray sparse = a;
    a = CastStorage(sparse, StorageType::kDefault);
    // Under autograd the dense temporary is the sparse array's copy on the tape, so the op's
    // gradient reaches the sparse variable (a Gluon row_sparse parameter) through it.
    autograd::RecordView(sparse, &a, "_copy", {});
    any = true;
  }
  for (size_t i = 0; i < out->size(); ++i) {
    NDArray& a = (*out)[i];
    if (!IsSparse(a)) continue;
    sparse_out_.emplace_back(i, a);
    a = NDArray(a.GetShape(), a.GetContext(), true, a.GetDType());
    any = true;
  }
  if (any) WarnOnce(op);
}

void StorageFallback::Finish(std::vector<NDArray>* out) {
  if (!sparse_out_.empty()) {
    for (auto& [i, target] : sparse_out_) {
      CastStorageInto((*out)[i], target);
      (*out)[i] = target;
    }
    return;
  }
  if (infer_ == StorageType::kDefault) return;
  for (NDArray& a : *out) a = CastStorage(a, infer_);
}

}  // namespace weft::mx
