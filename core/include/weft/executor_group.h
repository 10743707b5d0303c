// weft — data parallelism over several devices (MXNet's DataParallelExecutorGroup,
// python/mxnet/module/executor_group.py; what Module runs on): one executor per device, each
// bound to a slice of the batch, parameters replicated on every device.
//
// The batch (axis 0 of every data/label array) is split by `work_load_list` as MXNet's
// _split_input_slice does: device i gets round(work_load[i] * batch / sum(work_load)) rows
// (round half to even, as Python 3's round), the last device also takes what rounding left over;
// a device with an empty slice is an error.
//
// Parameters are not kept in sync here: after Backward, each device holds its own gradient in
// grad_arrays()[param][device]; a KVStore (Module::Update) or the caller reduces them and writes
// the updated weights back into param_arrays()[param][device].
//
// Thread-safety: as Executor — one group must not be used from two threads at once.
#pragma once

#include "weft/export.h"

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weft/executor.h"
#include "weft/metric.h"

namespace weft {

/// MXNet's _split_input_slice: [begin, end) rows per device. Throws weft::Error for an empty
/// work-load list, a non-positive load, or when some device would get no rows.
WEFT_API std::vector<std::pair<size_t, size_t>> SplitInputSlice(size_t batch_size,
                                                                const std::vector<double>& work_load_list);

class WEFT_API DataParallelExecutorGroup {
 public:
  /// Binds `symbol` once per context. `data_shapes`: every data and label input with its
  /// full-batch shape (axis 0 = batch; all must agree on it). `param_names`: the parameters
  /// (gradient "write" when for_training); empty = every argument not in data_shapes. Other
  /// arguments get no gradient (their shapes are inferred). `work_load_list`: one positive weight
  /// per context (empty = equal). Contents of parameters and aux states are unspecified until
  /// SetParams. `shared_group` (MXNet's shared_group, what bucketing binds each bucket with):
  /// device i's executor is bound against shared_group's executor i (Executor::SimpleBind's
  /// shared_exec), so the parameters, their gradients and the aux states are shared_group's own
  /// arrays and intermediate memory comes from its pool; the two groups must not run at once.
  /// Throws weft::Error for an empty context list, a work-load list of another length, unknown
  /// names, a shared group on other devices or whose parameter shapes differ, or any
  /// Executor::SimpleBind error.
  DataParallelExecutorGroup(const Symbol& symbol, const std::vector<Context>& contexts,
                            const std::map<std::string, Shape>& data_shapes,
                            const std::vector<std::string>& param_names = {},
                            const std::vector<double>& work_load_list = {},
                            const std::map<std::string, DType>& dtypes = {}, bool for_training = true,
                            DataParallelExecutorGroup* shared_group = nullptr);
  ~DataParallelExecutorGroup();

  /// Gives each device's executor its slice of each named array. With `in_place` a slice on the
  /// executor's device is read where it is (Executor::AliasArgument): the caller must not write
  /// the arrays until the passes that read them (Forward, and Backward when training) are
  /// pushed; writes after that are ordered after those passes. Otherwise, or where the executor
  /// refuses the alias, the slice is copied into the executor's own array (pushed copies), as
  /// MXNet does. The one-argument form reads in place for groups bound without training (only
  /// a Forward reads the batch). Throws weft::Error for a name not in data_shapes or an array of
  /// another shape.
  void LoadDataBatch(const std::map<std::string, NDArray>& batch, bool in_place);
  void LoadDataBatch(const std::map<std::string, NDArray>& batch) { LoadDataBatch(batch, alias_inputs_); }
  /// Forward / Backward on every device (pushed; returns at once).
  void Forward(bool is_train = false);
  void Backward(const std::vector<std::vector<NDArray>>& head_grads_per_device = {});

  /// Copies `arg_params` / `aux_params` (by name) to every device. Names that are not parameters
  /// or aux states raise weft::Error unless allow_extra_params.
  void SetParams(const std::map<std::string, NDArray>& arg_params, const std::map<std::string, NDArray>& aux_params,
                 bool allow_extra_params = false);
  /// Writes the average over devices of each parameter / aux state into the arrays of the maps
  /// (MXNet's copy_to); names the maps lack are skipped, wrong shapes raise weft::Error.
  void CopyTo(std::map<std::string, NDArray>* arg_params, std::map<std::string, NDArray>* aux_params) const;

  /// [param][device] arrays, in param_names() order; aux [aux][device].
  const std::vector<std::vector<NDArray>>& param_arrays() const { return param_arrays_; }
  const std::vector<std::vector<NDArray>>& grad_arrays() const { return grad_arrays_; }
  const std::vector<std::vector<NDArray>>& aux_arrays() const { return aux_arrays_; }
  const std::vector<std::string>& param_names() const { return param_names_; }
  const std::vector<std::string>& aux_names() const { return aux_names_; }
  /// The outputs of device i (its slice of the batch).
  const std::vector<NDArray>& outputs(size_t device) const;
  /// Every output of the last Forward merged over the devices into new arrays on cpu(0) (rows
  /// in batch order).
  std::vector<NDArray> GetOutputs() const;
  /// Updates `metric` with the first output of every device against its slice of `labels`
  /// (full batch; shape (batch,) or anything with batch rows).
  void UpdateMetric(EvalMetric& metric, const NDArray& labels) const;
  /// Label i (full batch) against output i of every device. Throws weft::Error for more labels
  /// than outputs or a label without batch rows.
  void UpdateMetric(EvalMetric& metric, const std::vector<NDArray>& labels) const;
  /// What UpdateMetric(metric, labels) would pass to EvalMetric::Update, one (labels slice, first
  /// output) pair per device, copied into new arrays by copies queued on the engine: the pairs stay
  /// valid after the next Forward (or the data iterator) overwrites the originals, so a caller can
  /// queue the next batch before it reads them (Module::Score). Same checks as UpdateMetric.
  std::vector<std::pair<NDArray, NDArray>> CopyMetricInputs(const NDArray& labels) const;
  /// Full-batch size bound.
  size_t batch_size() const { return slices_.empty() ? 0 : slices_.back().second; }
  const std::vector<std::pair<size_t, size_t>>& slices() const { return slices_; }
  size_t num_devices() const { return execs_.size(); }
  Executor& executor(size_t device);
  /// Installs the monitor callback on every executor.
  void InstallMonitor(const MonitorCallback& callback, bool monitor_all = false);

 private:
  /// Throws unless every parameter and aux state is the shared group's array.
  void CheckSharedParams(const DataParallelExecutorGroup& shared) const;
  /// Throws unless `labels` has the bound batch's rows (the UpdateMetric family's check).
  void CheckMetricLabels(const NDArray& labels) const;

  std::vector<std::unique_ptr<Executor>> execs_;
  std::vector<std::pair<size_t, size_t>> slices_;
  std::map<std::string, Shape> data_shapes_;
  bool alias_inputs_ = false;                               // bound without training
  std::vector<std::map<std::string, NDArray>> own_inputs_;  // per device: data arrays bound at construction
  std::vector<std::string> param_names_, aux_names_;
  std::vector<std::vector<NDArray>> param_arrays_, grad_arrays_, aux_arrays_;
};

}  // namespace weft
