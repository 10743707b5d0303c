// Lazy optimizer updates on row_sparse gradients (weft/sparse_update.h): gather the gradient's
// rows of the weight and states, run the op's dense kernel on them, scatter them back (on the cpu
// by copying just those rows; elsewhere with take and _scatter_set_nd), or the device's own lazy
// kernel when one claims the call.
#include "weft/internal/sparse_update.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>

#include "weft/engine.h"
#include "weft/imperative.h"
#include "weft/op_info.h"
#include "weft/sparse.h"

namespace weft {
namespace {

bool IsRsp(const NDArray& a) { return a.storage_type() == StorageType::kRowSparse; }
bool DenseOrRsp(const NDArray& a) { return a.storage_type() == StorageType::kDefault || IsRsp(a); }

bool IsTrue(const std::map<std::string, std::string>& params, const char* name, bool fallback) {
  auto it = params.find(name);
  if (it == params.end()) return fallback;
  return it->second == "True" || it->second == "true" || it->second == "1";
}

bool StoresEveryRow(const NDArray& a) { return a.storage_shape()[0] == a.GetShape()[0]; }

// Makes row_sparse `a` store every row with its present values (zeros in the rows it lacked).
void StoreEveryRow(const NDArray& a) {
  const NDArray values = CastStorage(a, StorageType::kDefault);
  const auto rows = static_cast<size_t>(a.GetShape()[0]);
  NDArray indices(Shape{static_cast<int64_t>(rows)}, a.GetContext(), false, a.aux_type(kRowSparseIndices));
  if (a.aux_type(kRowSparseIndices) == DType::kInt32) {
    std::vector<int32_t> idx(rows);
    std::iota(idx.begin(), idx.end(), 0);
    indices.SyncCopyFromCPUBytes(idx.data(), rows * sizeof(int32_t));
  } else {
    std::vector<int64_t> idx(rows);
    std::iota(idx.begin(), idx.end(), 0);
    indices.SyncCopyFromCPUBytes(idx.data(), rows * sizeof(int64_t));
  }
  NDArray target = a;  // the parts are replaced for every view of `a`
  target.SyncCopyFromNDArray(values, -1);
  target.SyncCopyFromNDArray(indices, kRowSparseIndices);
}

// The dense array of every row of `a`: `a` itself, or the values of a row_sparse array storing
// every row (its indices are then 0..rows-1, so its values are laid out as the dense array).
NDArray EveryRow(const std::string& op, const NDArray& a, bool is_weight) {
  if (!IsRsp(a)) return a;
  if (!StoresEveryRow(a)) {
    if (is_weight) {
      Fail(
          "{}: the row_sparse weight stores {} of its {} rows; a lazy update needs a row_sparse weight with every "
          "row stored (as MXNet), or a dense weight",
          op, a.storage_shape()[0], a.GetShape()[0]);
    }
    StoreEveryRow(a);
  }
  return a.data_ndarray();
}

// The stored rows of a row_sparse gradient on the host (int64 or int32 indices; waits for them),
// each checked to lie in [0, bound): they address memory directly (PushRowCopy).
std::vector<int64_t> HostRows(const std::string& op, const NDArray& indices, int64_t bound) {
  std::vector<int64_t> rows(indices.Size());
  if (rows.empty()) return rows;
  if (indices.GetDType() == DType::kInt32) {
    std::vector<int32_t> narrow(rows.size());
    indices.SyncCopyToCPUBytes(narrow.data(), narrow.size() * sizeof(int32_t));
    std::copy(narrow.begin(), narrow.end(), rows.begin());
  } else {
    indices.SyncCopyToCPUBytes(rows.data(), rows.size() * sizeof(int64_t));
  }
  for (size_t k = 0; k < rows.size(); ++k)
    WEFT_CHECK(rows[k] >= 0 && rows[k] < bound,
               "{}: the row_sparse gradient's index {} at position {} is outside [0, {}) (check_format reports the "
               "details)",
               op, rows[k], k, bound);
  return rows;
}

using Rows = std::shared_ptr<const std::vector<int64_t>>;

// Pushes the copy of rows `rows` (row = the bytes of one index of axis 0) between a dense cpu
// array of every row and one of those rows only: gather (full -> part) or scatter (part -> full).
// One engine operation touching only those rows: take and _scatter_set_nd read or copy every row,
// which costs more than the update itself when a batch touches few of a million rows.
void PushRowCopy(const NDArray& full, const NDArray& part, const Rows& rows, bool gather) {
  full.CheckAndAlloc();
  part.CheckAndAlloc();
  const size_t row_bytes = full.GetShape()[0] == 0 ? 0 : full.Bytes() / static_cast<size_t>(full.GetShape()[0]);
  const NDArray& written = gather ? part : full;
  written.NoteWrite();
  Engine::Get()->PushSync(
      [full, part, rows, row_bytes, gather](RunContext) {
        auto* f = static_cast<char*>(const_cast<void*>(full.GetRawData()));
        auto* p = static_cast<char*>(const_cast<void*>(part.GetRawData()));
        for (size_t k = 0; k < rows->size(); ++k) {
          char* in_full = f + static_cast<size_t>((*rows)[k]) * row_bytes;
          std::memcpy(gather ? p + k * row_bytes : in_full, gather ? in_full : p + k * row_bytes, row_bytes);
        }
      },
      full.GetContext(), {(gather ? full : part).var()}, {written.var()}, FnProperty::kNormal, 0,
      gather ? "lazy_update_gather" : "lazy_update_scatter");
}

thread_local LazyWriteObserver* t_observer = nullptr;

}  // namespace

LazyWriteObserver::LazyWriteObserver() : outer_(t_observer) { t_observer = this; }
LazyWriteObserver::~LazyWriteObserver() { t_observer = outer_; }
LazyWriteObserver* LazyWriteObserver::Current() { return t_observer; }

bool IsLazyUpdate(const std::string& op, const std::map<std::string, std::string>& params,
                  const std::vector<NDArray>& inputs) {
  if (inputs.size() < 2 || !IsRsp(inputs[1])) return false;
  auto all = [&](auto pred) {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (i != 1 && !pred(inputs[i])) return false;
    return true;
  };
  if (op == "sgd_update" || op == "sgd_mom_update" || op == "adam_update")
    return IsTrue(params, "lazy_update", true) && all(DenseOrRsp);
  if (op == "ftrl_update") return all(IsRsp);
  if (op == "_sparse_adagrad_update") return all(DenseOrRsp);
  return false;
}

void LazyUpdate(const std::string& op, const std::map<std::string, std::string>& params, const NDArray& weight,
                const NDArray& grad, const std::vector<NDArray>& states) {
  WEFT_CHECK(IsRsp(grad), "{}: a lazy update takes a row_sparse gradient, not {}", op,
             StorageTypeName(grad.storage_type()));
  WEFT_CHECK(grad.GetShape() == weight.GetShape(), "{}: the gradient's shape {} differs from the weight's {}", op,
             grad.GetShape(), weight.GetShape());
  const std::optional<OpInfo> info = FindOpInfo(op);
  WEFT_CHECK(info.has_value(), "lazy update: unknown operator '{}'", op);
  WEFT_CHECK(static_cast<size_t>(info->num_aux) == states.size(), "{}: {} states given, the op has {}", op,
             states.size(), info->num_aux);
  // A device kernel that updates the stored rows in place (the cpu's optimizer_sparse.cc) takes
  // the call as it is: one engine operation, no host copy of the rows, no wait for the gradient.
  if (!IsRsp(weight) && std::none_of(states.begin(), states.end(), IsRsp)) {
    ImperativeCall direct;
    direct.op = op;
    direct.params = params;
    direct.inputs = {weight, grad};
    direct.inputs.insert(direct.inputs.end(), states.begin(), states.end());
    std::vector<NDArray> out{weight};
    if (SparseKernelClaims(direct, out)) {
      const uint64_t before = weight.write_count();
      Invoke(direct, &out);
      // Exactly one write (another thread's write in between would make it two): the weight
      // changed in the gradient's rows only.
      LazyWriteObserver* observer = LazyWriteObserver::Current();
      if (observer != nullptr && weight.write_count() == before + 1) observer->Report({weight, before + 1, grad});
      return;
    }
  }
  // On the cpu the rows are copied directly (PushRowCopy, after HostRows checks them); elsewhere
  // through take / _scatter_set_nd.
  const bool host = weight.GetContext().GetDeviceType() == "cpu";
  if (!host) grad.SyncCheckFormat(false);
  const int64_t count = grad.storage_shape()[0];
  if (count == 0) return;  // MXNet: a gradient with no stored row changes nothing
  std::vector<NDArray> full{EveryRow(op, weight, true)};
  for (size_t i = 0; i < states.size(); ++i) full.push_back(EveryRow(op, states[i], false));
  const NDArray rows = grad.aux_ndarray(kRowSparseIndices);
  Rows host_rows;
  if (host) {
    host_rows = std::make_shared<const std::vector<int64_t>>(HostRows(op, rows, weight.GetShape()[0]));
    WEFT_CHECK(static_cast<int64_t>(host_rows->size()) == count,
               "{}: the row_sparse gradient stores {} rows of values but {} indices", op, count, host_rows->size());
  }
  std::vector<NDArray> gathered;
  for (const NDArray& a : full) {
    if (!host) {
      gathered.push_back(InvokeOne("take", {a, rows}, {{"axis", "0"}, {"mode", "clip"}}));
      continue;
    }
    Shape part = a.GetShape();
    part[0] = count;
    gathered.emplace_back(part, a.GetContext(), true, a.GetDType());
    PushRowCopy(a, gathered.back(), host_rows, true);
  }
  ImperativeCall call;
  call.op = op;
  call.params = params;
  call.inputs = {gathered[0], grad.data_ndarray()};
  call.inputs.insert(call.inputs.end(), gathered.begin() + 1, gathered.end());
  std::vector<NDArray> out{gathered[0]};
  Invoke(call, &out);
  if (host) {
    for (size_t i = 0; i < full.size(); ++i) PushRowCopy(full[i], gathered[i], host_rows, false);
    return;
  }
  // _scatter_set_nd addresses rows by an index array of shape (1, count).
  const NDArray positions = rows.Reshape(Shape{1, count});
  for (size_t i = 0; i < full.size(); ++i) {
    std::vector<NDArray> target{full[i]};
    ImperativeCall scatter;
    scatter.op = "_scatter_set_nd";
    scatter.inputs = {full[i], gathered[i], positions};
    scatter.params = {{"shape", full[i].GetShape().ToString()}};
    Invoke(scatter, &target);
  }
}

}  // namespace weft
