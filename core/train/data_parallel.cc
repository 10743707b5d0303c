// weft core — data-parallel training (see data_parallel.h).
#include "train/data_parallel.h"

#include "train/checkpoint.h"

#include <algorithm>
#include <cmath>

namespace weft::train {

DataParallelTrainer::DataParallelTrainer(const Symbol& net, const Shape& data_shape, const DataParallelOptions& options)
    : net_(net), options_(options) {
  WEFT_CHECK(!options.contexts.empty(), "DataParallelTrainer: no devices given");
  WEFT_CHECK(data_shape.ndim() >= 1, "DataParallelTrainer: the data shape {} has no batch axis", data_shape);
  batch_size_ = static_cast<int>(data_shape[0]);
  const int n = static_cast<int>(options.contexts.size());
  WEFT_CHECK(batch_size_ >= n, "DataParallelTrainer: batch size {} is smaller than the {} devices", batch_size_, n);
  arg_names_ = net.ListArguments();
  aux_names_ = net.ListAuxiliaryStates();
  auto find = [&](const std::string& name) {
    auto it = std::find(arg_names_.begin(), arg_names_.end(), name);
    WEFT_CHECK(it != arg_names_.end(), "DataParallelTrainer: the net has no argument '{}'", name);
    return static_cast<size_t>(it - arg_names_.begin());
  };
  data_index_ = find(options.data_name);
  label_index_ = find(options.label_name);
  for (size_t i = 0; i < arg_names_.size(); ++i)
    if (i != data_index_ && i != label_index_) {
      param_names_.push_back(arg_names_[i]);
      param_index_.push_back(i);
    }

  int64_t begin = 0;
  for (int d = 0; d < n; ++d) {
    const int64_t rows = batch_size_ / n + (d < batch_size_ % n ? 1 : 0);
    slices_.emplace_back(begin, begin + rows);
    begin += rows;
    Shape dshape = data_shape;
    dshape[0] = rows;
    execs_.push_back(Executor::SimpleBind(net, options.contexts[static_cast<size_t>(d)],
                                          {{options.data_name, dshape}, {options.label_name, Shape(rows)}}, "write",
                                          {{options.data_name, "null"}, {options.label_name, "null"}}));
  }
}

DataParallelTrainer::~DataParallelTrainer() = default;

void DataParallelTrainer::InitParams(Initializer& init) {
  Executor& first = *execs_[0];
  for (size_t k = 0; k < param_index_.size(); ++k) init(param_names_[k], &first.arg_arrays[param_index_[k]]);
  for (size_t k = 0; k < aux_names_.size(); ++k) init(aux_names_[k], &first.aux_arrays[k]);
  for (size_t d = 1; d < execs_.size(); ++d) {
    for (size_t i : param_index_) NDArray::CopyFromTo(first.arg_arrays[i], execs_[d]->arg_arrays[i]);
    for (size_t k = 0; k < aux_names_.size(); ++k) NDArray::CopyFromTo(first.aux_arrays[k], execs_[d]->aux_arrays[k]);
  }
}

void DataParallelTrainer::SetParams(const std::map<std::string, NDArray>& arg_params,
                                    const std::map<std::string, NDArray>& aux_params, bool allow_missing) {
  // The KVStore holds its own copy of the weights, taken by SetOptimizer.
  WEFT_CHECK(kv_ == nullptr, "DataParallelTrainer: call SetParams before SetOptimizer");
  if (!allow_missing)
    RequireAllParams(param_names_, aux_names_, arg_params, aux_params, "DataParallelTrainer::SetParams");
  for (auto& exec : execs_) exec->CopyParamsFrom(arg_params, aux_params);
}

std::string DataParallelTrainer::FirstNonFiniteParam() const {
  auto bad = [](const NDArray& a) {
    if (a.GetDType() != DType::kFloat32) return false;
    std::vector<float> host(a.Size());
    a.SyncCopyToCPU(host.data(), host.size());
    return std::any_of(host.begin(), host.end(), [](float v) { return !std::isfinite(v); });
  };
  for (size_t k = 0; k < param_index_.size(); ++k)
    if (bad(execs_[0]->arg_arrays[param_index_[k]])) return param_names_[k];
  for (size_t k = 0; k < aux_names_.size(); ++k)
    if (bad(execs_[0]->aux_arrays[k])) return aux_names_[k];
  return "";
}

std::map<std::string, NDArray> DataParallelTrainer::ArgParams() const {
  std::map<std::string, NDArray> out;
  for (size_t k = 0; k < param_index_.size(); ++k)
    out[param_names_[k]] = execs_[0]->arg_arrays[param_index_[k]].Copy(Context::cpu(0));
  return out;
}

std::map<std::string, NDArray> DataParallelTrainer::AuxParams() const {
  std::map<std::string, NDArray> out;
  for (size_t k = 0; k < aux_names_.size(); ++k) out[aux_names_[k]] = execs_[0]->aux_arrays[k].Copy(Context::cpu(0));
  return out;
}

void DataParallelTrainer::SetOptimizer(std::unique_ptr<Optimizer> optimizer) {
  std::map<int, std::string> idx2name;
  for (size_t k = 0; k < param_names_.size(); ++k) idx2name[static_cast<int>(k)] = param_names_[k];
  optimizer->SetParamNames(idx2name, &net_);
  kv_ = KVStore::Create(options_.kvstore);
  for (size_t k = 0; k < param_index_.size(); ++k)
    kv_->Init(static_cast<int>(k), execs_[0]->arg_arrays[param_index_[k]]);
  kv_->SetOptimizer(std::move(optimizer));
}

KVStore& DataParallelTrainer::kvstore() {
  WEFT_CHECK(kv_ != nullptr, "DataParallelTrainer: SetOptimizer first");
  return *kv_;
}

void DataParallelTrainer::LoadBatch(const NDArray& data, const NDArray& label) {
  WEFT_CHECK(data.GetShape()[0] == batch_size_ && static_cast<int64_t>(label.Size()) == batch_size_,
             "DataParallelTrainer: batch of {} rows and {} labels, the trainer was bound for {}", data.GetShape()[0],
             label.Size(), batch_size_);
  const NDArray flat_label = label.Reshape(Shape(batch_size_));
  for (size_t d = 0; d < execs_.size(); ++d) {
    const auto [b, e] = slices_[d];
    NDArray::CopyFromTo(data.Slice(static_cast<size_t>(b), static_cast<size_t>(e)), execs_[d]->arg_arrays[data_index_]);
    NDArray::CopyFromTo(flat_label.Slice(static_cast<size_t>(b), static_cast<size_t>(e)),
                        execs_[d]->arg_arrays[label_index_]);
  }
}

void DataParallelTrainer::TrainStep(const NDArray& data, const NDArray& label) {
  WEFT_CHECK(kv_ != nullptr, "DataParallelTrainer: SetOptimizer before TrainStep");
  LoadBatch(data, label);
  for (auto& exec : execs_) {
    exec->Forward(true);
    exec->Backward();
  }
  for (size_t k = 0; k < param_index_.size(); ++k) {
    std::vector<NDArray> grads, weights;
    for (auto& exec : execs_) {
      grads.push_back(exec->grad_arrays[param_index_[k]]);
      weights.push_back(exec->arg_arrays[param_index_[k]]);
    }
    const int key = static_cast<int>(k);
    kv_->Push(key, grads, -key);
    kv_->Pull(key, weights, -key);
  }
}

void DataParallelTrainer::Forward(const NDArray& data, bool is_train) {
  const NDArray label =
      NDArray(std::vector<float>(static_cast<size_t>(batch_size_), 0.0f), Shape(batch_size_), Context::cpu(0));
  LoadBatch(data, label);
  for (auto& exec : execs_) exec->Forward(is_train);
}

void DataParallelTrainer::UpdateMetric(EvalMetric& metric, const NDArray& label) const {
  const NDArray flat_label = label.Reshape(Shape(batch_size_));
  for (size_t d = 0; d < execs_.size(); ++d) {
    const auto [b, e] = slices_[d];
    metric.Update(flat_label.Slice(static_cast<size_t>(b), static_cast<size_t>(e)), execs_[d]->outputs[0]);
  }
}

NDArray DataParallelTrainer::Outputs() const {
  Shape shape = execs_[0]->outputs[0].GetShape();
  shape[0] = batch_size_;
  NDArray out(shape, Context::cpu(0));
  for (size_t d = 0; d < execs_.size(); ++d) {
    const auto [b, e] = slices_[d];
    NDArray::CopyFromTo(execs_[d]->outputs[0], out.Slice(static_cast<size_t>(b), static_cast<size_t>(e)));
  }
  return out;
}

}  // namespace weft::train
