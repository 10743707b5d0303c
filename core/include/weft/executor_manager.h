// weft — DataParallelExecutorManager: MXNet 1.1's mx.executor_manager (the seed
// mxnet.executor_manager-1.1.0.txt), the executor manager of the old FeedForward model: one
// DataParallelExecutorGroup (weft/executor_group.h) bound from a data iterator's shapes, and, with
// `sym_gen`, one more group per bucket key bound against it (shared parameters, gradients, aux
// states and memory, as BucketingModule's buckets; weft/bucketing_module.h).
//
//   DataParallelExecutorManager m(net, {Context::cpu(0), Context::cpu(1)}, train, arg_names,
//                                 param_names, aux_names);
//   m.SetParams(args, auxs);
//   while (train.Next()) {
//     m.LoadDataBatch(train.GetDataBatch()); m.Forward(true); m.Backward();
//     ... update m.param_arrays() from m.grad_arrays() ...; m.UpdateMetric(acc, {batch.label});
//   }
//
// The iterator gives the names and full-batch shapes of the data input and the label
// (ProvideData / ProvideLabel). Thread-safety: one thread. Errors: weft::Error naming what is wrong.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "weft/bucketing_module.h"
#include "weft/executor_group.h"
#include "weft/export.h"
#include "weft/io.h"
#include "weft/monitor.h"

namespace weft {

class WEFT_API DataParallelExecutorManager {
 public:
  /// `arg_names` / `param_names` / `aux_names`: the symbol's ListArguments(), the arguments that
  /// are parameters, and ListAuxiliaryStates() (checked against the symbol: MXNet's manager takes
  /// them as given). `train_data` must provide its data (and label) descriptions. `sym_gen`: the
  /// symbol of a bucket key, used for batches whose bucket_key is set (>= 0). Throws weft::Error
  /// for names that do not match the symbol, an iterator that provides no data description, or as
  /// DataParallelExecutorGroup.
  DataParallelExecutorManager(const Symbol& symbol, const std::vector<Context>& ctx, const DataIter& train_data,
                              const std::vector<std::string>& arg_names, const std::vector<std::string>& param_names,
                              const std::vector<std::string>& aux_names, const std::vector<double>& work_load_list = {},
                              SymGen sym_gen = nullptr);
  ~DataParallelExecutorManager();

  /// Installs `monitor` on every executor, of the buckets bound later too.
  void InstallMonitor(Monitor& monitor);
  /// Copies parameters and aux states (by name) to every device.
  void SetParams(const std::map<std::string, NDArray>& arg_params, const std::map<std::string, NDArray>& aux_params);
  /// The average over devices of each parameter and aux state, into the maps' arrays.
  void CopyTo(std::map<std::string, NDArray>* arg_params, std::map<std::string, NDArray>* aux_params) const;
  /// [param][device] (param_names order); gradients likewise; aux [aux][device]. Shared by every
  /// bucket.
  const std::vector<std::vector<NDArray>>& param_arrays() const;
  const std::vector<std::vector<NDArray>>& grad_arrays() const;
  const std::vector<std::vector<NDArray>>& aux_arrays() const;

  /// Feeds a batch (data, and label when the iterator provides one); with sym_gen, switches to
  /// the batch's bucket first (bound on first use for the batch's shapes).
  void LoadDataBatch(const DataBatch& batch);
  void Forward(bool is_train = false);
  void Backward();
  /// Label i (full batch) against output i of the current bucket's executors.
  void UpdateMetric(EvalMetric& metric, const std::vector<NDArray>& labels) const;

 private:
  DataParallelExecutorGroup& Current() const;

  std::vector<Context> ctx_;
  std::vector<double> work_load_list_;
  std::vector<std::string> param_names_;
  std::string data_name_, label_name_;  // label_name_ empty: no label
  SymGen sym_gen_;
  std::unique_ptr<DataParallelExecutorGroup> main_;
  std::map<int, std::unique_ptr<DataParallelExecutorGroup>> buckets_;
  DataParallelExecutorGroup* current_ = nullptr;
  std::vector<Monitor*> monitors_;
};

}  // namespace weft
