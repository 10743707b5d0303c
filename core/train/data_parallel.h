// weft core — data-parallel training over several devices (what MXNet's Module + DataParallelExecutorGroup
// do for one symbol): one executor per device, each bound to its share of the batch; gradients
// are pushed to a KVStore, which sums them and runs the optimizer on the stored weights; the
// updated weights are pulled back into every executor.
//
// Batch split: MXNet's _split_input_slice — batch b over n devices gives the first b % n devices
// one extra row. Keys are parameter indices in ListArguments order (data and label excluded);
// pushes and pulls use priority -index so that the first layers' weights (needed first by the next
// forward pass) are updated first, as MXNet's Module does.
//
// Thread-safety: one trainer belongs to one thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "weft/executor.h"
#include "weft/initializer.h"
#include "weft/kvstore.h"
#include "weft/metric.h"
#include "weft/optimizer.h"

namespace weft::train {

struct DataParallelOptions {
  std::vector<Context> contexts{Context::cpu(0)};
  std::string kvstore = "local";  ///< "local" or "device"
  std::string data_name = "data";
  std::string label_name = "softmax_label";
};

class DataParallelTrainer {
 public:
  /// Binds one executor per context for a full batch of `data_shape` (first extent = batch).
  /// Throws weft::Error when the batch is smaller than the number of devices, or as
  /// Executor::SimpleBind.
  DataParallelTrainer(const Symbol& net, const Shape& data_shape, const DataParallelOptions& options);
  ~DataParallelTrainer();

  /// Parameter names (arguments other than data and label), then aux-state names.
  const std::vector<std::string>& param_names() const { return param_names_; }
  const std::vector<std::string>& aux_names() const { return aux_names_; }
  int batch_size() const { return batch_size_; }

  /// Initialises every parameter and aux state with `init` (by name) on the first device and
  /// copies them to the others.
  void InitParams(Initializer& init);
  /// Copies parameters (and aux states) into every executor. Names not in the net raise
  /// weft::Error; so do parameters or aux states of the net that are not given, listing them,
  /// unless `allow_missing` (then they keep their values; MXNet's set_params). Call it before
  /// SetOptimizer (which copies the weights into the KVStore); afterwards it raises weft::Error.
  void SetParams(const std::map<std::string, NDArray>& arg_params, const std::map<std::string, NDArray>& aux_params,
                 bool allow_missing = false);
  /// The name of the first parameter or aux state (in param_names(), then aux_names() order) on
  /// the first device holding a NaN or an infinity, or "" when all are finite. Waits for pending
  /// updates and copies every array to the host (cost: one read of the weights), so call it every
  /// so many steps, not every step. Arrays of a non-float dtype are skipped.
  std::string FirstNonFiniteParam() const;
  /// Parameters and aux states (copies on cpu(0), taken from the first device).
  std::map<std::string, NDArray> ArgParams() const;
  std::map<std::string, NDArray> AuxParams() const;

  /// Installs the optimizer (given the parameter names for lr_mult / wd_mult) in a new KVStore
  /// initialised with the current parameters.
  void SetOptimizer(std::unique_ptr<Optimizer> optimizer);
  KVStore& kvstore();

  /// One step on a full batch (data of the bound shape, labels (batch,)): forward, backward,
  /// push gradients, pull weights. Returns once everything is pushed.
  void TrainStep(const NDArray& data, const NDArray& label);
  /// Forward pass only (is_train false) on a full batch.
  void Forward(const NDArray& data, bool is_train = false);
  /// Updates `metric` with the outputs of the last TrainStep / Forward against `label`.
  void UpdateMetric(EvalMetric& metric, const NDArray& label) const;
  /// The first output of the last pass, gathered on cpu(0) (batch rows in order).
  NDArray Outputs() const;

 private:
  void LoadBatch(const NDArray& data, const NDArray& label);

  Symbol net_;
  DataParallelOptions options_;
  int batch_size_;
  std::vector<std::pair<int64_t, int64_t>> slices_;  // [begin, end) rows per device
  std::vector<std::unique_ptr<Executor>> execs_;
  std::vector<std::string> arg_names_, param_names_, aux_names_;
  std::vector<size_t> param_index_;  // position of each parameter in ListArguments
  size_t data_index_, label_index_;
  std::unique_ptr<KVStore> kv_;
};

}  // namespace weft::train
