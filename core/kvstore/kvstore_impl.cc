// weft core — KVStore::Impl: keys, checks, updaters, compression settings, optimizer-state files
// (see kvstore_impl.h).
#include "kvstore/kvstore_impl.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/untrusted.h"
#include "ndarray/sparse_rows.h"
#include "weft/sparse.h"

namespace weft {

using kv::Key;

KVStore::Impl::Impl(std::string type) : type_(std::move(type)) {}
KVStore::Impl::~Impl() = default;

void KVStore::Impl::CheckKind(const Key& key) {
  if (!string_keys_) {
    string_keys_ = key.is_string;
    return;
  }
  WEFT_CHECK(*string_keys_ == key.is_string,
             "KVStore({}): key {} is {} but this store already uses {} keys; one store takes int keys or string "
             "keys, not both",
             type_, key.display(), key.is_string ? "a string" : "an int", *string_keys_ ? "string" : "int");
}

const KVStore::Impl::KeyInfo& KVStore::Impl::Find(const Key& key, const char* op) {
  CheckKind(key);
  auto it = keys_.find(key.id());
  WEFT_CHECK(it != keys_.end(), "KVStore({}) {}: key {} has not been initialized; call Init({}, value) first", type_,
             op, key.display(), key.display());
  return it->second;
}

void KVStore::Impl::CheckArray(const Key& key, const KeyInfo& info, const NDArray& a, const char* op, const char* what,
                               size_t i) const {
  WEFT_CHECK(!a.is_none(), "KVStore({}) {} of key {}: {} {} is a none array", type_, op, key.display(), what, i);
  WEFT_CHECK(a.GetShape() == info.shape && a.GetDType() == info.dtype,
             "KVStore({}) {} of key {}: {} {} has shape {} and dtype {}, but the key was initialized with shape {} "
             "and dtype {}",
             type_, op, key.display(), what, i, a.GetShape(), DTypeName(a.GetDType()), info.shape,
             DTypeName(info.dtype));
}

void KVStore::Impl::Init(const Key& key, const NDArray& value, bool in_place) {
  std::lock_guard<std::mutex> lock(mu_);
  CheckKind(key);
  WEFT_CHECK(keys_.count(key.id()) == 0, "KVStore({}) Init: duplicate init of key {}; a key is initialized once", type_,
             key.display());
  WEFT_CHECK(!value.is_none(), "KVStore({}) Init of key {}: the value is a none array", type_, key.display());
  WEFT_CHECK(value.GetDType() == DType::kFloat32, "KVStore({}) Init of key {}: the value is {}; KVStore keeps float32",
             type_, key.display(), DTypeName(value.GetDType()));
  if (!in_place || !InitSharedImpl(key, value)) InitImpl(key, value);
  keys_.emplace(key.id(), KeyInfo{value.GetShape(), value.GetDType(), key.is_string ? next_index_++ : key.int_key});
}

void KVStore::Impl::CheckPush(const Key& key, const KeyInfo& info, const std::vector<NDArray>& values, const char* op) {
  WEFT_CHECK(!values.empty(), "KVStore({}) {} of key {}: no values given", type_, op, key.display());
  for (size_t i = 0; i < values.size(); ++i) CheckArray(key, info, values[i], op, "value", i);
  if (has_updater() && !optimizer_) {
    // Checked before anything is pushed, so a refused push changes nothing.
    WEFT_CHECK(!key.is_string || static_cast<bool>(str_updater_),
               "KVStore({}) {} of key {}: the updater set takes int keys; set a StrUpdater for string keys", type_, op,
               key.display());
    WEFT_CHECK(key.is_string || static_cast<bool>(updater_),
               "KVStore({}) {} of key {}: the updater set takes string keys; set an Updater for int keys", type_, op,
               key.display());
  }
}

std::vector<NDArray> KVStore::Impl::PushedValues(const std::vector<NDArray>& values) const {
  const auto rsp = [](const NDArray& v) { return v.storage_type() == StorageType::kRowSparse; };
  const auto dense = [](const NDArray& v) { return v.storage_type() == StorageType::kDefault; };
  if (std::all_of(values.begin(), values.end(), dense)) return values;
  if (has_updater() && !values.empty() && std::all_of(values.begin(), values.end(), rsp) && RowSparsePushes())
    return values;
  std::vector<NDArray> out;
  for (const NDArray& v : values) out.push_back(dense(v) ? v : CastStorage(v, StorageType::kDefault));
  return out;
}

void KVStore::Impl::Push(const Key& key, const std::vector<NDArray>& values, int priority) {
  std::lock_guard<std::mutex> lock(mu_);
  CheckPush(key, Find(key, "Push"), values, "Push");
  pushed_ = true;
  PushImpl(key, PushedValues(values), priority);
}

void KVStore::Impl::Pull(const Key& key, const std::vector<NDArray>& outs, int priority) {
  std::lock_guard<std::mutex> lock(mu_);
  const KeyInfo& info = Find(key, "Pull");
  for (size_t i = 0; i < outs.size(); ++i) CheckArray(key, info, outs[i], "Pull", "out", i);
  PullImpl(key, outs, priority);
}

void KVStore::Impl::PullRowSparse(const Key& key, const std::vector<NDArray>& outs, const std::vector<NDArray>& row_ids,
                                  int priority) {
  std::lock_guard<std::mutex> lock(mu_);
  const KeyInfo& info = Find(key, "row_sparse_pull");
  WEFT_CHECK(outs.size() == row_ids.size(), "KVStore({}) row_sparse_pull of key {}: {} outs but {} row_ids arrays",
             type_, key.display(), outs.size(), row_ids.size());
  std::vector<std::vector<int64_t>> rows;
  for (size_t i = 0; i < outs.size(); ++i) {
    CheckArray(key, info, outs[i], "row_sparse_pull", "out", i);
    WEFT_CHECK(outs[i].storage_type() == StorageType::kRowSparse,
               "KVStore({}) row_sparse_pull of key {}: out {} is {}; row_sparse_pull writes row_sparse arrays (use "
               "Pull for a dense out)",
               type_, key.display(), i, StorageTypeName(outs[i].storage_type()));
    rows.push_back(RowSparsePullRows(row_ids[i], info.shape.ndim() == 0 ? 0 : info.shape[0]));
  }
  PullRowSparseImpl(key, outs, rows, priority);
}

void KVStore::Impl::PushPull(const Key& key, const std::vector<NDArray>& values, const std::vector<NDArray>& outs,
                             int priority) {
  std::lock_guard<std::mutex> lock(mu_);
  const KeyInfo& info = Find(key, "PushPull");
  CheckPush(key, info, values, "PushPull");
  for (size_t i = 0; i < outs.size(); ++i) CheckArray(key, info, outs[i], "PushPull", "out", i);
  pushed_ = true;
  PushPullImpl(key, PushedValues(values), outs, priority);
}

bool KVStore::Impl::has_updater() const { return optimizer_ || updater_ || str_updater_; }

void KVStore::Impl::ApplyUpdate(const Key& key, const NDArray& merged, NDArray* stored) {
  if (optimizer_) {
    optimizer_->Update(keys_.at(key.id()).opt_index, *stored, merged);
  } else if (key.is_string) {
    WEFT_CHECK(static_cast<bool>(str_updater_), "KVStore({}) Push of key {}: no StrUpdater is set", type_,
               key.display());
    str_updater_(key.str_key, merged, stored);
  } else {
    WEFT_CHECK(static_cast<bool>(updater_), "KVStore({}) Push of key {}: no Updater is set", type_, key.display());
    updater_(key.int_key, merged, stored);
  }
}

void KVStore::Impl::SetOptimizer(std::unique_ptr<Optimizer> optimizer) {
  std::lock_guard<std::mutex> lock(mu_);
  FlushPending();  // held-back pushes are applied with the updater they were pushed under
  optimizer_ = std::move(optimizer);
  updater_ = nullptr;
  str_updater_ = nullptr;
  OnUpdaterChanged();
}

Optimizer* KVStore::Impl::optimizer() const {
  std::lock_guard<std::mutex> lock(mu_);
  return optimizer_.get();
}

void KVStore::Impl::SetUpdater(Updater updater) {
  std::lock_guard<std::mutex> lock(mu_);
  FlushPending();  // held-back pushes are applied with the updater they were pushed under
  optimizer_.reset();
  updater_ = std::move(updater);
  OnUpdaterChanged();
}

void KVStore::Impl::SetUpdater(StrUpdater updater) {
  std::lock_guard<std::mutex> lock(mu_);
  FlushPending();  // held-back pushes are applied with the updater they were pushed under
  optimizer_.reset();
  str_updater_ = std::move(updater);
  OnUpdaterChanged();
}

namespace {

float ParseThreshold(const std::string& text) {
  float t = 0;
  try {
    size_t used = 0;
    t = std::stof(text, &used);
    WEFT_CHECK(used == text.size(), "trailing characters");
  } catch (const std::exception&) {
    Fail("KVStore SetGradientCompression: threshold '{}' is not a number", text);
  }
  WEFT_CHECK(t > 0, "KVStore SetGradientCompression: threshold must be > 0, got {}", t);
  return t;
}

}  // namespace

void KVStore::Impl::SetGradientCompression(const std::map<std::string, std::string>& params) {
  std::lock_guard<std::mutex> lock(mu_);
  WEFT_CHECK(!pushed_,
             "KVStore({}) SetGradientCompression: call it before the first Push (residuals start at zero then)", type_);
  auto it = params.find("type");
  WEFT_CHECK(it != params.end(), "KVStore SetGradientCompression: the parameter 'type' is required (\"2bit\")");
  for (const auto& [k, v] : params)
    WEFT_CHECK(k == "type" || k == "threshold",
               "KVStore SetGradientCompression: unknown parameter '{}' (known: type, threshold)", k);
  kv::GradientCompression gc;
  if (it->second != "none") {
    WEFT_CHECK(it->second == "2bit", "KVStore SetGradientCompression: unknown type '{}'; the known type is \"2bit\"",
               it->second);
    gc.enabled = true;
    if (auto th = params.find("threshold"); th != params.end()) gc.threshold = ParseThreshold(th->second);
  }
  compression_ = gc;
  OnGradientCompressionChanged();
}

void KVStore::Impl::SaveOptimizerStates(const std::string& file_name, bool dump_optimizer) {
  std::lock_guard<std::mutex> lock(mu_);
  WEFT_CHECK(optimizer_ != nullptr, "KVStore({}) SaveOptimizerStates: no optimizer is set (SetOptimizer first)", type_);
  FlushPending();
  std::string meta_json;
  std::map<std::string, NDArray> arrays = GatherOptimizerStates(&meta_json);
  nlohmann::json meta = nlohmann::json::parse(meta_json);
  if (!dump_optimizer) {
    meta.erase("type");
    meta.erase("params");
  }
  const std::string text = meta.dump();
  NDArray blob(Shape(static_cast<int64_t>(text.size())), Context::cpu(0), false, DType::kUint8);
  blob.SyncCopyFromCPUBytes(text.data(), text.size());
  arrays["__meta__"] = blob;
  NDArray::Save(file_name, arrays);
}

void KVStore::Impl::LoadOptimizerStates(const std::string& file_name) {
  std::lock_guard<std::mutex> lock(mu_);
  WEFT_CHECK(optimizer_ != nullptr, "KVStore({}) LoadOptimizerStates: no optimizer is set (SetOptimizer first)", type_);
  FlushPending();
  std::map<std::string, NDArray> arrays = NDArray::LoadToMap(file_name);
  auto it = arrays.find("__meta__");
  WEFT_CHECK(it != arrays.end(),
             "LoadOptimizerStates: {} has no __meta__ record; it was not written by SaveOptimizerStates", file_name);
  std::string text(it->second.Size(), '\0');
  it->second.SyncCopyToCPUBytes(text.data(), text.size());
  arrays.erase(it);
  nlohmann::json meta =
      detail::ParseJsonBounded(text, fmt::format("LoadOptimizerStates: {}: the __meta__ record", file_name));
  WEFT_CHECK(meta.is_object(), "LoadOptimizerStates: {}: the __meta__ record must be a JSON object, got {}", file_name,
             detail::JsonExcerpt(meta));
  if (!meta.contains("type")) meta["type"] = optimizer_->GetType();
  ScatterOptimizerStates(meta.dump(), arrays);
}

std::map<std::string, NDArray> KVStore::Impl::GatherOptimizerStates(std::string* meta_json) {
  *meta_json = optimizer_->Serialize();
  return optimizer_->GetStates();
}

void KVStore::Impl::ScatterOptimizerStates(const std::string& meta_json, const std::map<std::string, NDArray>& states) {
  optimizer_->Deserialize(meta_json);
  optimizer_->SetStates(states);
}

}  // namespace weft
