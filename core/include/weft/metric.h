// weft — evaluation metrics, following mxnet-cpp's EvalMetric (include/mxnet-cpp/metric.h) and MXNet
// 1.9's Python metrics (python/mxnet/metric.py):
//
//   Accuracy acc;
//   acc.Update(batch.label, exec->outputs[0]);   // labels (N,), predictions (N, C)
//   float value = acc.Get();
//
// Update copies both arrays to the host (waiting for them). Labels are class indices stored as
// floats, shape (N,) (or (N, 1)); predictions are class scores or probabilities, shape (N, C).
// Get() is sum / count over every Update since the last Reset (NaN before any Update).
//
// Errors: weft::Error when the label count differs from the prediction rows, or a label is not
// an integer in [0, C).
// Thread-safety: a metric belongs to one thread.
#pragma once

#include "weft/export.h"

#include <string>

#include "weft/ndarray.h"

namespace weft {

class WEFT_API EvalMetric {
 public:
  explicit EvalMetric(std::string name, int num = 0) : name_(std::move(name)), num_(num) {}
  virtual ~EvalMetric() = default;
  virtual void Update(NDArray labels, NDArray preds) = 0;
  void Reset() {
    num_inst_ = 0;
    sum_metric_ = 0.0;
  }
  float Get() const;
  const std::string& name() const { return name_; }
  /// Number of samples seen since the last Reset.
  long num_inst() const { return num_inst_; }

 protected:
  /// Host copies of labels and predictions with the shapes checked; sets *classes to C.
  static void ReadBatch(const NDArray& labels, const NDArray& preds, std::vector<float>* label_values,
                        std::vector<float>* pred_values, size_t* classes);
  std::string name_;
  int num_;
  double sum_metric_ = 0.0;
  long num_inst_ = 0;
};

/// Fraction of rows whose highest score is the label ("accuracy").
class WEFT_API Accuracy : public EvalMetric {
 public:
  Accuracy() : EvalMetric("accuracy") {}
  void Update(NDArray labels, NDArray preds) override;
};

/// Fraction of rows whose label is among the top_k scores ("top_k_accuracy_<k>"). Ties are
/// broken towards lower class indices.
class WEFT_API TopKAccuracy : public EvalMetric {
 public:
  explicit TopKAccuracy(int top_k);
  void Update(NDArray labels, NDArray preds) override;

 private:
  int top_k_;
};

/// Mean of -log(p[label] + eps) over rows of probabilities ("cross-entropy", eps 1e-12).
class WEFT_API CrossEntropy : public EvalMetric {
 public:
  explicit CrossEntropy(float eps = 1e-12f) : EvalMetric("cross-entropy"), eps_(eps) {}
  void Update(NDArray labels, NDArray preds) override;

 private:
  float eps_;
};

}  // namespace weft
