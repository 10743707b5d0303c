// BucketingModule (see weft/bucketing_module.h).
#include "weft/bucketing_module.h"

#include <fmt/ranges.h>

#include <optional>
#include <utility>

namespace weft {

BucketingModule::BucketingModule(SymGen sym_gen, int default_bucket_key, std::vector<Context> contexts,
                                 std::vector<double> work_load_list)
    : sym_gen_(std::move(sym_gen)),
      default_key_(default_bucket_key),
      current_key_(default_bucket_key),
      contexts_(std::move(contexts)),
      work_load_list_(std::move(work_load_list)) {
  WEFT_CHECK(sym_gen_ != nullptr, "BucketingModule: sym_gen is empty; give a function from bucket key to symbol");
  WEFT_CHECK(default_key_ >= 0, "BucketingModule: default_bucket_key is {}; bucket keys are >= 0", default_key_);
}

BucketingModule::~BucketingModule() = default;

std::unique_ptr<Module> BucketingModule::MakeModule(int key, BucketSymbol b) const {
  WEFT_CHECK(!b.symbol.IsEmpty(), "BucketingModule: sym_gen({}) returned an empty symbol", key);
  return std::make_unique<Module>(std::move(b.symbol), std::move(b.data_names), std::move(b.label_names), contexts_,
                                  work_load_list_);
}

void BucketingModule::CheckBound(const char* what) const {
  WEFT_CHECK(binded(), "BucketingModule::{}: call Bind first", what);
}

void BucketingModule::Bind(const std::map<std::string, Shape>& data_shapes,
                           const std::map<std::string, Shape>& label_shapes, bool for_training, bool force_rebind) {
  if (binded() && !force_rebind) return;
  std::optional<std::pair<std::map<std::string, NDArray>, std::map<std::string, NDArray>>> kept;
  if (binded() && buckets_.at(default_key_)->params_initialized()) kept = GetParams();
  buckets_.clear();
  std::unique_ptr<Module> m = MakeModule(default_key_, sym_gen_(default_key_));
  m->Bind(data_shapes, label_shapes, for_training);
  if (kept) m->SetParams(kept->first, kept->second);
  for_training_ = for_training;
  buckets_[default_key_] = std::move(m);
  current_key_ = default_key_;
}

Module& BucketingModule::BindBucket(int key, BucketSymbol b, const std::map<std::string, Shape>& data_shapes,
                                    const std::map<std::string, Shape>& label_shapes) {
  std::unique_ptr<Module> m = MakeModule(key, std::move(b));
  m->Bind(data_shapes, label_shapes, for_training_, false, buckets_.at(default_key_).get());
  return *(buckets_[key] = std::move(m));
}

void BucketingModule::SwitchBucket(int bucket_key, const std::map<std::string, Shape>& data_shapes,
                                   const std::map<std::string, Shape>& label_shapes) {
  CheckBound("SwitchBucket");
  WEFT_CHECK(bucket_key >= 0, "BucketingModule::SwitchBucket: bucket key {} is negative; bucket keys are >= 0",
             bucket_key);
  if (!buckets_.count(bucket_key)) BindBucket(bucket_key, sym_gen_(bucket_key), data_shapes, label_shapes);
  current_key_ = bucket_key;
}

void BucketingModule::InitParams(Initializer& init, const std::map<std::string, NDArray>& arg_params,
                                 const std::map<std::string, NDArray>& aux_params, bool allow_missing,
                                 bool force_init) {
  CheckBound("InitParams");
  buckets_.at(default_key_)->InitParams(init, arg_params, aux_params, allow_missing, force_init);
}

void BucketingModule::SetParams(const std::map<std::string, NDArray>& arg_params,
                                const std::map<std::string, NDArray>& aux_params, bool allow_missing,
                                bool allow_extra) {
  CheckBound("SetParams");
  buckets_.at(default_key_)->SetParams(arg_params, aux_params, allow_missing, allow_extra);
}

std::pair<std::map<std::string, NDArray>, std::map<std::string, NDArray>> BucketingModule::GetParams() const {
  CheckBound("GetParams");
  return buckets_.at(default_key_)->GetParams();
}

void BucketingModule::InitOptimizer(const std::string& kvstore, std::unique_ptr<Optimizer> optimizer, bool force_init) {
  CheckBound("InitOptimizer");
  buckets_.at(default_key_)->InitOptimizer(kvstore, std::move(optimizer), force_init);
}

void BucketingModule::Forward(const DataBatch& batch, bool is_train) {
  CheckBound("Forward");
  const int key = batch.bucket_key < 0 ? default_key_ : batch.bucket_key;
  if (!buckets_.count(key)) {
    // A new bucket takes the shapes of its first batch (MXNet's provide_data / provide_label).
    BucketSymbol b = sym_gen_(key);
    WEFT_CHECK(!b.data_names.empty() && !batch.data.is_none(),
               "BucketingModule::Forward: bucket {} needs a data input and the batch has none", key);
    std::map<std::string, Shape> data{{b.data_names[0], batch.data.GetShape()}}, label;
    if (!b.label_names.empty() && !batch.label.is_none()) label[b.label_names[0]] = batch.label.GetShape();
    BindBucket(key, std::move(b), data, label);
  }
  current_key_ = key;
  buckets_.at(key)->Forward(batch, is_train);
}

void BucketingModule::Backward() {
  CheckBound("Backward");
  buckets_.at(current_key_)->Backward();
}

void BucketingModule::Update() {
  CheckBound("Update");
  // Every bucket's gradient arrays are the default bucket's: its push/pull updates them all.
  buckets_.at(default_key_)->Update();
}

void BucketingModule::UpdateMetric(EvalMetric& metric, const NDArray& labels) const {
  CheckBound("UpdateMetric");
  buckets_.at(current_key_)->UpdateMetric(metric, labels);
}

std::vector<NDArray> BucketingModule::GetOutputs() const {
  CheckBound("GetOutputs");
  return buckets_.at(current_key_)->GetOutputs();
}

std::vector<int> BucketingModule::bucket_keys() const {
  std::vector<int> keys{default_key_};
  for (const auto& [k, m] : buckets_)
    if (k != default_key_) keys.push_back(k);
  return binded() ? keys : std::vector<int>{};
}

Module& BucketingModule::module(int bucket_key) const {
  auto it = buckets_.find(bucket_key);
  WEFT_CHECK(it != buckets_.end(), "BucketingModule::module: bucket {} is not bound (bound: {})", bucket_key,
             fmt::join(bucket_keys(), ", "));
  return *it->second;
}

}  // namespace weft
