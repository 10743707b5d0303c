// DataParallelExecutorGroup (see weft/executor_group.h).
#include "weft/executor_group.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace weft {

std::vector<std::pair<size_t, size_t>> SplitInputSlice(size_t batch_size, const std::vector<double>& work_load_list) {
  WEFT_CHECK(!work_load_list.empty(), "SplitInputSlice: the work-load list is empty");
  double total = 0;
  for (double w : work_load_list) {
    WEFT_CHECK(w > 0, "SplitInputSlice: work loads must be positive, got {}", w);
    total += w;
  }
  std::vector<size_t> counts;
  size_t sum = 0;
  for (double w : work_load_list) {
    // Python 3 round(): half to even (std::nearbyint in the default rounding mode).
    counts.push_back(static_cast<size_t>(std::nearbyint(w * static_cast<double>(batch_size) / total)));
    sum += counts.back();
  }
  if (sum < batch_size) counts.back() += batch_size - sum;
  std::vector<std::pair<size_t, size_t>> slices;
  size_t begin = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const size_t end = std::min(batch_size, begin + counts[i]);
    WEFT_CHECK(end > begin,
               "SplitInputSlice: batch {} split by work loads ({}) leaves device {} no rows; use fewer "
               "devices or a larger batch",
               batch_size, fmt::join(work_load_list, ", "), i);
    slices.emplace_back(begin, end);
    begin = end;
  }
  return slices;
}

DataParallelExecutorGroup::DataParallelExecutorGroup(const Symbol& symbol, const std::vector<Context>& contexts,
                                                     const std::map<std::string, Shape>& data_shapes,
                                                     const std::vector<std::string>& param_names,
                                                     const std::vector<double>& work_load_list,
                                                     const std::map<std::string, DType>& dtypes, bool for_training,
                                                     DataParallelExecutorGroup* shared_group)
    : data_shapes_(data_shapes), alias_inputs_(!for_training), own_inputs_(contexts.size()) {
  WEFT_CHECK(!contexts.empty(), "DataParallelExecutorGroup: no contexts given");
  if (shared_group) {
    bool same = shared_group->num_devices() == contexts.size();
    for (size_t d = 0; same && d < contexts.size(); ++d) same = shared_group->executor(d).context() == contexts[d];
    WEFT_CHECK(same,
               "DataParallelExecutorGroup: the shared group runs on other devices; bind every bucket on the "
               "same contexts");
  }
  WEFT_CHECK(!data_shapes.empty(), "DataParallelExecutorGroup: data_shapes is empty (give data and label shapes)");
  std::vector<double> loads = work_load_list.empty() ? std::vector<double>(contexts.size(), 1.0) : work_load_list;
  WEFT_CHECK(loads.size() == contexts.size(), "DataParallelExecutorGroup: {} work loads for {} contexts", loads.size(),
             contexts.size());
  const int64_t batch = data_shapes.begin()->second.ndim() > 0 ? data_shapes.begin()->second[0] : 0;
  for (const auto& [name, s] : data_shapes)
    WEFT_CHECK(s.ndim() > 0 && s[0] == batch,
               "DataParallelExecutorGroup: '{}' has shape {}; every data shape "
               "needs the batch size {} on axis 0",
               name, s.ToString(), batch);
  slices_ = SplitInputSlice(static_cast<size_t>(batch), loads);

  const std::vector<std::string> args = symbol.ListArguments();
  aux_names_ = symbol.ListAuxiliaryStates();
  if (param_names.empty()) {
    for (const std::string& a : args)
      if (!data_shapes.count(a)) param_names_.push_back(a);
  } else {
    for (const std::string& p : param_names)
      WEFT_CHECK(std::find(args.begin(), args.end(), p) != args.end(),
                 "DataParallelExecutorGroup: parameter '{}' is not an argument; arguments: {}", p,
                 fmt::join(args, ", "));
    param_names_ = param_names;
  }
  std::map<std::string, std::string> reqs;
  for (const std::string& a : args)
    reqs[a] =
        for_training && std::find(param_names_.begin(), param_names_.end(), a) != param_names_.end() ? "write" : "null";
  param_arrays_.assign(param_names_.size(), {});
  grad_arrays_.assign(param_names_.size(), {});
  aux_arrays_.assign(aux_names_.size(), {});
  for (size_t d = 0; d < contexts.size(); ++d) {
    std::map<std::string, Shape> shapes;
    for (const auto& [name, s] : data_shapes) {
      Shape part = s;
      part[0] = static_cast<int64_t>(slices_[d].second - slices_[d].first);
      shapes[name] = part;
    }
    execs_.push_back(Executor::SimpleBind(symbol, contexts[d], shapes, "null", reqs, dtypes,
                                          shared_group ? &shared_group->executor(d) : nullptr));
    auto args_d = execs_.back()->arg_dict();
    auto grads_d = execs_.back()->grad_dict();
    auto aux_d = execs_.back()->aux_dict();
    for (const auto& [name, s] : data_shapes) own_inputs_[d][name] = args_d.at(name);
    for (size_t p = 0; p < param_names_.size(); ++p) {
      param_arrays_[p].push_back(args_d.at(param_names_[p]));
      grad_arrays_[p].push_back(for_training ? grads_d.at(param_names_[p]) : NDArray());
    }
    for (size_t a = 0; a < aux_names_.size(); ++a) aux_arrays_[a].push_back(aux_d.at(aux_names_[a]));
  }
  if (shared_group) CheckSharedParams(*shared_group);
}

void DataParallelExecutorGroup::CheckSharedParams(const DataParallelExecutorGroup& shared) const {
  // SimpleBind shares an array only when name, shape and dtype agree; a parameter that did not
  // end up shared would silently train apart from the other buckets, so it is an error.
  auto check = [&](const std::vector<std::string>& names, const std::vector<std::vector<NDArray>>& mine,
                   const std::vector<std::string>& their_names, const std::vector<std::vector<NDArray>>& theirs,
                   const char* what) {
    for (size_t i = 0; i < names.size(); ++i) {
      auto it = std::find(their_names.begin(), their_names.end(), names[i]);
      WEFT_CHECK(it != their_names.end(), "DataParallelExecutorGroup: {} '{}' is not in the shared group ({})", what,
                 names[i], fmt::join(their_names, ", "));
      const NDArray& other = theirs[static_cast<size_t>(it - their_names.begin())][0];
      WEFT_CHECK(mine[i][0].is_none() || (mine[i][0].var() == other.var() && mine[i][0].offset() == other.offset()),
                 "DataParallelExecutorGroup: {} '{}' has shape {} here and {} in the shared group; every bucket "
                 "needs the same parameter shapes",
                 what, names[i], mine[i][0].GetShape().ToString(), other.GetShape().ToString());
    }
  };
  check(param_names_, param_arrays_, shared.param_names_, shared.param_arrays_, "parameter");
  check(aux_names_, aux_arrays_, shared.aux_names_, shared.aux_arrays_, "aux state");
}

DataParallelExecutorGroup::~DataParallelExecutorGroup() = default;

void DataParallelExecutorGroup::LoadDataBatch(const std::map<std::string, NDArray>& batch, bool in_place) {
  for (const auto& [name, array] : batch) {
    auto it = data_shapes_.find(name);
    WEFT_CHECK(it != data_shapes_.end(), "DataParallelExecutorGroup::LoadDataBatch: '{}' is not a data input", name);
    WEFT_CHECK(array.GetShape() == it->second,
               "DataParallelExecutorGroup::LoadDataBatch: '{}' has shape {}, the manager was bound for {}", name,
               array.GetShape().ToString(), it->second.ToString());
  }
  for (const auto& [name, array] : batch)
    for (size_t d = 0; d < execs_.size(); ++d) {
      const NDArray part = array.Slice(slices_[d].first, slices_[d].second);
      Executor& e = *execs_[d];
      // The copy into the executor was a third of an MLP's inference time.
      if (in_place && part.GetContext() == e.context() && e.AliasArgument(name, part)) continue;
      const NDArray& own = own_inputs_[d].at(name);
      // A copy must never land in an aliased batch: put the executor's own array back first.
      if (!e.AliasArgument(name, own))
        Fail("DataParallelExecutorGroup::LoadDataBatch: cannot restore the bound array of '{}'", name);
      NDArray::CopyFromTo(part, own);
    }
}

void DataParallelExecutorGroup::Forward(bool is_train) {
  for (auto& e : execs_) e->Forward(is_train);
}

void DataParallelExecutorGroup::Backward(const std::vector<std::vector<NDArray>>& head_grads_per_device) {
  WEFT_CHECK(head_grads_per_device.empty() || head_grads_per_device.size() == execs_.size(),
             "DataParallelExecutorGroup::Backward: {} head-gradient lists for {} devices", head_grads_per_device.size(),
             execs_.size());
  for (size_t d = 0; d < execs_.size(); ++d)
    execs_[d]->Backward(head_grads_per_device.empty() ? std::vector<NDArray>{} : head_grads_per_device[d]);
}

void DataParallelExecutorGroup::SetParams(const std::map<std::string, NDArray>& arg_params,
                                          const std::map<std::string, NDArray>& aux_params, bool allow_extra_params) {
  for (auto& e : execs_) e->CopyParamsFrom(arg_params, aux_params, allow_extra_params);
}

void DataParallelExecutorGroup::CopyTo(std::map<std::string, NDArray>* arg_params,
                                       std::map<std::string, NDArray>* aux_params) const {
  auto average = [&](const std::vector<std::string>& names, const std::vector<std::vector<NDArray>>& arrays,
                     std::map<std::string, NDArray>* out) {
    if (out == nullptr) return;
    for (size_t i = 0; i < names.size(); ++i) {
      auto it = out->find(names[i]);
      if (it == out->end()) continue;
      WEFT_CHECK(it->second.GetShape() == arrays[i][0].GetShape(),
                 "DataParallelExecutorGroup::CopyTo: '{}' has shape {}, the parameter is {}", names[i],
                 it->second.GetShape().ToString(), arrays[i][0].GetShape().ToString());
      std::vector<float> sum(arrays[i][0].Size(), 0.f), part;
      for (const NDArray& a : arrays[i]) {
        a.SyncCopyToCPU(&part);
        for (size_t k = 0; k < sum.size(); ++k) sum[k] += part[k];
      }
      for (float& v : sum) v /= static_cast<float>(arrays[i].size());
      it->second.SyncCopyFromCPU(sum);
    }
  };
  average(param_names_, param_arrays_, arg_params);
  average(aux_names_, aux_arrays_, aux_params);
}

const std::vector<NDArray>& DataParallelExecutorGroup::outputs(size_t device) const {
  WEFT_CHECK(device < execs_.size(), "DataParallelExecutorGroup: device {} out of range ({} devices)", device,
             execs_.size());
  return execs_[device]->outputs;
}

Executor& DataParallelExecutorGroup::executor(size_t device) {
  WEFT_CHECK(device < execs_.size(), "DataParallelExecutorGroup: device {} out of range ({} devices)", device,
             execs_.size());
  return *execs_[device];
}

std::vector<NDArray> DataParallelExecutorGroup::GetOutputs() const {
  std::vector<NDArray> merged;
  for (size_t o = 0; o < execs_[0]->outputs.size(); ++o) {
    Shape shape = execs_[0]->outputs[o].GetShape();
    shape[0] = static_cast<int64_t>(batch_size());
    NDArray out(shape, Context::cpu(0), false, execs_[0]->outputs[o].GetDType());
    for (size_t d = 0; d < execs_.size(); ++d)
      NDArray::CopyFromTo(execs_[d]->outputs[o], out.Slice(slices_[d].first, slices_[d].second));
    merged.push_back(out);
  }
  return merged;
}

void DataParallelExecutorGroup::UpdateMetric(EvalMetric& metric, const NDArray& labels) const {
  CheckMetricLabels(labels);
  for (size_t d = 0; d < execs_.size(); ++d)
    metric.Update(labels.Slice(slices_[d].first, slices_[d].second), execs_[d]->outputs[0]);
}

std::vector<std::pair<NDArray, NDArray>> DataParallelExecutorGroup::CopyMetricInputs(const NDArray& labels) const {
  CheckMetricLabels(labels);
  std::vector<std::pair<NDArray, NDArray>> copies;
  for (size_t d = 0; d < execs_.size(); ++d) {
    const NDArray& out = execs_[d]->outputs[0];
    copies.emplace_back(labels.Slice(slices_[d].first, slices_[d].second).Copy(labels.GetContext()),
                        out.Copy(out.GetContext()));
  }
  return copies;
}

void DataParallelExecutorGroup::CheckMetricLabels(const NDArray& labels) const {
  WEFT_CHECK(labels.GetShape().ndim() > 0 && static_cast<size_t>(labels.GetShape()[0]) == batch_size(),
             "DataParallelExecutorGroup::UpdateMetric: labels of shape {}, the group was bound for a batch of {}",
             labels.GetShape().ToString(), batch_size());
}

void DataParallelExecutorGroup::UpdateMetric(EvalMetric& metric, const std::vector<NDArray>& labels) const {
  const size_t outputs = execs_.empty() ? 0 : execs_[0]->outputs.size();
  WEFT_CHECK(labels.size() <= outputs, "DataParallelExecutorGroup::UpdateMetric: {} labels for {} outputs",
             labels.size(), outputs);
  for (size_t i = 0; i < labels.size(); ++i) {
    const NDArray& l = labels[i];
    WEFT_CHECK(l.GetShape().ndim() > 0 && static_cast<size_t>(l.GetShape()[0]) == batch_size(),
               "DataParallelExecutorGroup::UpdateMetric: label {} has shape {}, the group was bound for a batch of {}",
               i, l.GetShape().ToString(), batch_size());
    for (size_t d = 0; d < execs_.size(); ++d)
      metric.Update(l.Slice(slices_[d].first, slices_[d].second), execs_[d]->outputs[i]);
  }
}

void DataParallelExecutorGroup::InstallMonitor(const MonitorCallback& callback, bool monitor_all) {
  for (auto& e : execs_) e->SetMonitorCallback(callback, monitor_all);
}

}  // namespace weft
