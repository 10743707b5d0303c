#include "storage_fallback.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>

#include "weft/autograd.h"
#include "weft/imperative.h"
#include "weft/internal/sparse_update.h"
#include "weft/logging.h"
#include "weft/op_info.h"
#include "weft/sdk/ops/slice.hpp"
#include "weft/sparse.h"

namespace weft::mx {
namespace {

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
  if (!FirstTime("storage fallback: " + op)) return;
  LogWarning(
      "Storage type fallback detected: operator = {}: weft runs it on dense temporaries of its sparse inputs and "
      "outputs (the result is the same).",
      op);
}

// MXNet's row_sparse _square_sum with a row_sparse result.
bool IsRowSparseSquareSum(const std::string& op, const std::map<std::string, std::string>& params,
                          const std::vector<NDArray>& in) {
  return op == "_square_sum" && in.size() == 1 && in[0].storage_type() == StorageType::kRowSparse &&
         SquareSumKeepsRows(Param(params, "axis", "()"), Param(params, "keepdims", "False"));
}

// MXNet's dot(csr.T, dense or row_sparse) (DotForwardInferStorageType): a row_sparse result
// storing the csr's stored columns (zero or not).
bool IsCsrTransposedDot(const std::string& op, const std::map<std::string, std::string>& params,
                        const std::vector<NDArray>& in) {
  auto on = [&](const char* name) {
    const std::string v = Param(params, name, "False");
    return v == "True" || v == "true" || v == "1";
  };
  const std::string hint = Param(params, "forward_stype", "None");
  return op == "dot" && in.size() == 2 && in[0].storage_type() == StorageType::kCSR &&
         in[1].storage_type() != StorageType::kCSR && on("transpose_a") && !on("transpose_b") &&
         (hint == "None" || hint == "row_sparse");
}

// The storage type MXNet gives dot's output when it falls back (DotForwardInferStorageType's
// target_stype): the forward_stype hint when given, else csr for dot(dense, csr) without
// transpose_a (its cpu kernel's csr result, which the fallback then makes of the non-zero
// elements), else dense.
StorageType DotFallbackStype(const std::string& op, const std::map<std::string, std::string>& params,
                             const std::vector<NDArray>& in) {
  if (op != "dot" || in.size() != 2) return StorageType::kDefault;
  const std::string hint = Param(params, "forward_stype", "None");
  if (hint != "None") return StorageTypeFromName(hint);
  const std::string ta = Param(params, "transpose_a", "False");
  const bool lhs_transposed = ta == "True" || ta == "true" || ta == "1";
  return in[0].storage_type() == StorageType::kDefault && in[1].storage_type() == StorageType::kCSR && !lhs_transposed
             ? StorageType::kCSR
             : StorageType::kDefault;
}

// The first input that is an aux state (updated in place by the op: an update's mom, var...).
size_t FirstState(const OpInfo& info, size_t given) {
  if (!info.variadic_attr.empty() || static_cast<size_t>(info.num_aux) > info.inputs.size()) return given;
  return info.inputs.size() - static_cast<size_t>(info.num_aux);
}

}  // namespace

bool IsSparse(const NDArray& a) {
  return a.storage_type() == StorageType::kRowSparse || a.storage_type() == StorageType::kCSR;
}

bool FirstTime(const std::string& key) {
  static std::mutex mu;
  static std::set<std::string> seen;
  std::lock_guard lock(mu);
  return seen.insert(key).second;
}

bool SquareSumKeepsRows(std::string axis, const std::string& keepdims) {
  std::erase_if(axis, [](char c) { return c == '(' || c == ')' || c == '[' || c == ']' || c == ',' || c == ' '; });
  return (axis == "1" || axis == "-1") && (keepdims == "True" || keepdims == "true" || keepdims == "1");
}

// The values of `a` (any dtype, dense) on the host, as doubles.
std::vector<double> HostValues(const NDArray& a) {
  const NDArray d = a.GetDType() == DType::kFloat64 ? a : InvokeOne("Cast", {a}, {{"dtype", "float64"}});
  std::vector<double> v(d.Size());
  if (!v.empty()) d.SyncCopyToCPUBytes(v.data(), v.size() * sizeof(double));
  return v;
}

// An index array (a sparse array's aux array: int64 or int32; other dtypes through HostValues)
// on the host.
std::vector<int64_t> HostIndices(const NDArray& a) {
  std::vector<int64_t> out(a.Size());
  if (out.empty()) return out;
  if (a.GetDType() == DType::kInt64) {
    a.SyncCopyToCPUBytes(out.data(), out.size() * sizeof(int64_t));
  } else if (a.GetDType() == DType::kInt32) {
    std::vector<int32_t> narrow(out.size());
    a.SyncCopyToCPUBytes(narrow.data(), narrow.size() * sizeof(int32_t));
    std::copy(narrow.begin(), narrow.end(), out.begin());
  } else {
    const std::vector<double> v = HostValues(a);
    std::transform(v.begin(), v.end(), out.begin(), [](double x) { return static_cast<int64_t>(x); });
  }
  return out;
}

void DenseInto(const NDArray& sparse, const NDArray& dense) { CastStorageInto(sparse, dense); }

void WriteSparse(const NDArray& dense, const NDArray& target, const std::optional<NDArray>& rows) {
  if (rows && target.storage_type() == StorageType::kRowSparse) {
    RetainRowsInto(dense, *rows, target);
  } else {
    CastStorageInto(dense, target);
  }
}

bool RunCsrRowSlice(const OpEntry& entry, const std::map<std::string, std::string>& params,
                    const std::vector<NDArray>& in, std::vector<NDArray>* out) {
  if (entry.info.name != "slice" || in.size() != 1 || in[0].storage_type() != StorageType::kCSR) return false;
  if (out->size() > 1 || (out->size() == 1 && (*out)[0].storage_type() != StorageType::kCSR)) return false;
  const NDArray& x = in[0];
  const int64_t rows = x.GetShape()[0], cols = x.GetShape()[1];
  sdk::SliceParam p;
  try {
    p = sdk::ParseParams<sdk::SliceParam>(sdk::AttrMap(params));
  } catch (const std::exception&) {
    return false;  // the dense op reports the attributes
  }
  auto is = [](const std::optional<int64_t>& v, int64_t want) { return !v || *v == want; };
  if (p.begin.empty() || p.begin.size() > 2 || p.end.size() != p.begin.size()) return false;
  for (const auto& s : p.step)
    if (!is(s, 1)) return false;
  if (p.begin.size() == 2 && !(is(p.begin[1], 0) && is(p.end[1], cols))) return false;
  int64_t b = p.begin[0].value_or(0), e = p.end[0].value_or(rows);
  if (b < 0) b += rows;
  if (e < 0) e += rows;
  if (b < 0 || e > rows || b > e) return false;  // the dense op reports the range
  x.SyncCheckFormat(false);
  std::vector<int64_t> indptr = HostIndices(x.aux_ndarray(kCSRIndPtr));
  const auto first = static_cast<size_t>(indptr[static_cast<size_t>(b)]);
  const auto last = static_cast<size_t>(indptr[static_cast<size_t>(e)]);
  std::vector<int64_t> part(indptr.begin() + b, indptr.begin() + e + 1);
  for (int64_t& v : part) v -= static_cast<int64_t>(first);
  NDArray ptr(Shape{static_cast<int64_t>(part.size())}, x.GetContext(), false, DType::kInt64);
  ptr.SyncCopyFromCPUBytes(part.data(), part.size() * sizeof(int64_t));
  NDArray indices = x.aux_ndarray(kCSRIndices).Slice(first, last);
  if (x.aux_type(kCSRIndices) != DType::kInt64) indices = InvokeOne("Cast", {indices}, {{"dtype", "int64"}});
  NDArray result = NDArray::FromSparseParts(StorageType::kCSR, Shape{e - b, cols}, x.data_ndarray().Slice(first, last),
                                            {ptr, indices});
  if (out->empty()) {
    out->push_back(result);
  } else {
    NDArray::CopyFromTo(result, (*out)[0]);
  }
  return true;
}

bool RunSparseZeros(const OpEntry& entry, const std::map<std::string, std::string>& params,
                    const std::vector<NDArray>& in, std::vector<NDArray>* out) {
  auto empty = [](const NDArray& like) {
    return NDArray::CreateSparse(like.storage_type(), like.GetShape(), like.GetContext(), like.GetDType());
  };
  if (entry.info.name == "zeros_like") {
    if (in.size() != 1 || !IsSparse(in[0]) || out->size() > 1) return false;
    if (autograd::IsRecording() && in[0].autograd_node() != nullptr) return false;  // the tape records it
    if (out->empty()) {
      out->push_back(empty(in[0]));
      return true;
    }
    const NDArray& o = (*out)[0];
    if (!IsSparse(o) || o.GetShape() != in[0].GetShape() || o.GetDType() != in[0].GetDType()) return false;
    NDArray::CopyFromTo(empty(o), o);
    return true;
  }
  if (entry.info.name != "_zeros" || out->empty() || !std::all_of(out->begin(), out->end(), IsSparse)) return false;
  std::map<std::string, std::string> attrs = params;
  attrs.erase("ctx");
  std::vector<std::vector<int64_t>> shapes;
  try {
    shapes = InferOpOutputShapes("_zeros", attrs, {});
  } catch (const Error&) {
    return false;  // the dense op reports the attributes
  }
  const std::string dtype = Param(params, "dtype", "float32");
  for (const NDArray& a : *out)
    if (shapes.size() != 1 || Shape(shapes[0]) != a.GetShape() || (dtype != "None" && dtype != DTypeName(a.GetDType())))
      return false;
  for (const NDArray& a : *out) NDArray::CopyFromTo(empty(a), a);
  return true;
}

bool RunLazyUpdate(const OpEntry& entry, const std::map<std::string, std::string>& params,
                   const std::vector<NDArray>& in, std::vector<NDArray>* out) {
  const std::string& op = entry.info.name;
  if (!IsLazyUpdate(op, params, in)) return false;
  const bool in_place =
      out->empty() || (out->size() == 1 && (*out)[0].SharesChunkWith(in[0]) && (*out)[0].offset() == in[0].offset());
  if (!in_place) {
    Fail(
        "{}: a lazy update (row_sparse gradient, lazy_update=True) writes the weight in place: pass out=weight, as "
        "MXNet requires",
        entry.name);
  }
  LazyUpdate(op, params, in[0], in[1], std::vector<NDArray>(in.begin() + 2, in.end()));
  if (out->empty()) out->push_back(in[0]);
  return true;
}

bool RunSparseKernel(const OpEntry& entry, const std::map<std::string, std::string>& params,
                     const std::vector<NDArray>& in, std::vector<NDArray>* out) {
  if (std::none_of(in.begin(), in.end(), IsSparse) && std::none_of(out->begin(), out->end(), IsSparse)) return false;
  if (entry.is_numpy || entry.is_missing || entry.is_copyto) return false;
  ImperativeCall call;
  call.op = entry.info.name;
  call.params = params;
  call.params.erase("ctx");  // the inputs fix the device
  call.inputs = in;
  if (!SparseKernelClaims(call, *out)) return false;
  weft::Invoke(call, out);
  return true;
}

StorageFallback::StorageFallback(const OpEntry& entry, const std::map<std::string, std::string>& params,
                                 std::vector<NDArray>* in, std::vector<NDArray>* out) {
  const std::string& op = entry.name;
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
  if (entry.info.name == "dot") infer_ = DotFallbackStype(entry.info.name, params, *in);
  if (IsCsrTransposedDot(entry.info.name, params, *in)) {
    infer_ = StorageType::kRowSparse;
    infer_rows_ = (*in)[0].aux_ndarray(kCSRIndices);  // repeats are allowed: the rows are their set
  }
  if (IsRowSparseSquareSum(entry.info.name, params, *in)) {
    infer_ = StorageType::kRowSparse;
    infer_rows_ = (*in)[0].aux_ndarray(kRowSparseIndices);  // MXNet's result stores the input's rows
  }
  // Under autograd the result stays the recorded dense one (a converted copy would be off the
  // tape, and no gradient would flow through it).
  if (autograd::IsRecording()) {
    infer_ = StorageType::kDefault;
    infer_rows_.reset();
  }
  const size_t first_state = FirstState(entry.info, in->size());
  for (size_t i = 0; i < in->size(); ++i) {
    NDArray& a = (*in)[i];
    if (!IsSparse(a)) continue;
    const NDArray sparse = a;
    a = CastStorage(sparse, StorageType::kDefault);
    if (i >= first_state) sparse_state_.emplace_back(a, sparse);
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
  // MXNet casts the updated dense copies of sparse mutable inputs back (exec_utils.h).
  for (const auto& [dense, state] : sparse_state_) WriteSparse(dense, state);
  if (!sparse_out_.empty()) {
    for (auto& [i, target] : sparse_out_) {
      WriteSparse((*out)[i], target, infer_rows_);
      (*out)[i] = target;
    }
    return;
  }
  if (infer_ == StorageType::kDefault) return;
  for (NDArray& a : *out) {
    NDArray result = NDArray::CreateSparse(infer_, a.GetShape(), a.GetContext(), a.GetDType());
    WriteSparse(a, result, infer_rows_);
    a = result;
  }
}

}  // namespace weft::mx
