// DataParallelExecutorManager (see weft/executor_manager.h).
#include "weft/executor_manager.h"

#include <fmt/ranges.h>

#include <algorithm>

namespace weft {
namespace {

void CheckNames(const std::vector<std::string>& given, const std::vector<std::string>& actual, const char* what) {
  WEFT_CHECK(given == actual, "DataParallelExecutorManager: {} [{}] are not the symbol's [{}]", what,
             fmt::join(given, ", "), fmt::join(actual, ", "));
}

}  // namespace

DataParallelExecutorManager::DataParallelExecutorManager(const Symbol& symbol, const std::vector<Context>& ctx,
                                                         const DataIter& train_data,
                                                         const std::vector<std::string>& arg_names,
                                                         const std::vector<std::string>& param_names,
                                                         const std::vector<std::string>& aux_names,
                                                         const std::vector<double>& work_load_list, SymGen sym_gen)
    : ctx_(ctx), work_load_list_(work_load_list), param_names_(param_names), sym_gen_(std::move(sym_gen)) {
  CheckNames(arg_names, symbol.ListArguments(), "arg_names");
  CheckNames(aux_names, symbol.ListAuxiliaryStates(), "aux_names");
  const std::vector<DataDesc> data = train_data.ProvideData(), label = train_data.ProvideLabel();
  WEFT_CHECK(data.size() == 1, "DataParallelExecutorManager: the iterator provides {} data descriptions; one is needed",
             data.size());
  data_name_ = data[0].name;
  std::map<std::string, Shape> shapes{{data_name_, data[0].shape}};
  if (!label.empty()) {
    label_name_ = label[0].name;
    shapes[label_name_] = label[0].shape;
  }
  main_ = std::make_unique<DataParallelExecutorGroup>(symbol, ctx_, shapes, param_names_, work_load_list_);
  current_ = main_.get();
}

DataParallelExecutorManager::~DataParallelExecutorManager() = default;

DataParallelExecutorGroup& DataParallelExecutorManager::Current() const { return *current_; }

void DataParallelExecutorManager::InstallMonitor(Monitor& monitor) {
  monitors_.push_back(&monitor);
  for (size_t d = 0; d < main_->num_devices(); ++d) monitor.Install(main_->executor(d));
  for (auto& [key, g] : buckets_)
    for (size_t d = 0; d < g->num_devices(); ++d) monitor.Install(g->executor(d));
}

void DataParallelExecutorManager::SetParams(const std::map<std::string, NDArray>& arg_params,
                                            const std::map<std::string, NDArray>& aux_params) {
  main_->SetParams(arg_params, aux_params, /*allow_extra_params=*/true);
}

void DataParallelExecutorManager::CopyTo(std::map<std::string, NDArray>* arg_params,
                                         std::map<std::string, NDArray>* aux_params) const {
  main_->CopyTo(arg_params, aux_params);
}

const std::vector<std::vector<NDArray>>& DataParallelExecutorManager::param_arrays() const {
  return main_->param_arrays();
}
const std::vector<std::vector<NDArray>>& DataParallelExecutorManager::grad_arrays() const {
  return main_->grad_arrays();
}
const std::vector<std::vector<NDArray>>& DataParallelExecutorManager::aux_arrays() const { return main_->aux_arrays(); }

void DataParallelExecutorManager::LoadDataBatch(const DataBatch& batch) {
  std::map<std::string, NDArray> feed{{data_name_, batch.data}};
  if (!label_name_.empty() && !batch.label.is_none()) feed[label_name_] = batch.label;
  current_ = main_.get();
  if (sym_gen_ && batch.bucket_key >= 0) {
    std::unique_ptr<DataParallelExecutorGroup>& g = buckets_[batch.bucket_key];
    if (!g) {
      // A new bucket, bound for this batch's shapes against the main group (shared parameters,
      // gradients and memory).
      std::map<std::string, Shape> shapes;
      for (const auto& [name, a] : feed) shapes[name] = a.GetShape();
      g = std::make_unique<DataParallelExecutorGroup>(sym_gen_(batch.bucket_key).symbol, ctx_, shapes, param_names_,
                                                      work_load_list_, std::map<std::string, DType>{}, true,
                                                      main_.get());
      for (Monitor* m : monitors_)
        for (size_t d = 0; d < g->num_devices(); ++d) m->Install(g->executor(d));
    }
    current_ = g.get();
  }
  current_->LoadDataBatch(feed, /*in_place=*/false);
}

void DataParallelExecutorManager::Forward(bool is_train) { Current().Forward(is_train); }

void DataParallelExecutorManager::Backward() { Current().Backward(); }

void DataParallelExecutorManager::UpdateMetric(EvalMetric& metric, const std::vector<NDArray>& labels) const {
  Current().UpdateMetric(metric, labels);
}

}  // namespace weft
