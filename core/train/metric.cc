// weft core — evaluation metrics (see weft/metric.h).
#include "weft/metric.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace weft {

float EvalMetric::Get() const {
  if (num_inst_ == 0) return std::numeric_limits<float>::quiet_NaN();
  return static_cast<float>(sum_metric_ / static_cast<double>(num_inst_));
}

void EvalMetric::ReadBatch(const NDArray& labels, const NDArray& preds, std::vector<float>* label_values,
                           std::vector<float>* pred_values, size_t* classes) {
  const Shape ls = labels.GetShape(), ps = preds.GetShape();
  WEFT_CHECK(ps.ndim() == 2, "metric: predictions must be (N, classes), got {}", ps);
  WEFT_CHECK(static_cast<int64_t>(labels.Size()) == ps[0] && (ls.ndim() == 1 || (ls.ndim() == 2 && ls[1] == 1)),
             "metric: labels of shape {} do not match predictions of shape {} (need (N,) labels for (N, C))", ls, ps);
  labels.SyncCopyToCPU(label_values);
  preds.SyncCopyToCPU(pred_values);
  *classes = static_cast<size_t>(ps[1]);
  for (size_t i = 0; i < label_values->size(); ++i) {
    const float l = (*label_values)[i];
    WEFT_CHECK(l >= 0 && l < static_cast<float>(*classes) && std::floor(l) == l,
               "metric: label {} of row {} is not a class index in [0, {})", l, i, *classes);
  }
}

void Accuracy::Update(NDArray labels, NDArray preds) {
  std::vector<float> l, p;
  size_t c = 0;
  ReadBatch(labels, preds, &l, &p, &c);
  for (size_t i = 0; i < l.size(); ++i) {
    const float* row = p.data() + i * c;
    const size_t best = static_cast<size_t>(std::max_element(row, row + c) - row);
    if (best == static_cast<size_t>(l[i])) sum_metric_ += 1;
  }
  num_inst_ += static_cast<long>(l.size());
}

TopKAccuracy::TopKAccuracy(int top_k) : EvalMetric(fmt::format("top_k_accuracy_{}", top_k)), top_k_(top_k) {
  WEFT_CHECK(top_k >= 1, "TopKAccuracy: top_k must be >= 1, got {}", top_k);
}

void TopKAccuracy::Update(NDArray labels, NDArray preds) {
  std::vector<float> l, p;
  size_t c = 0;
  ReadBatch(labels, preds, &l, &p, &c);
  for (size_t i = 0; i < l.size(); ++i) {
    const float* row = p.data() + i * c;
    const size_t label = static_cast<size_t>(l[i]);
    // The label is in the top k when fewer than k classes beat it (ties go to lower indices).
    size_t better = 0;
    for (size_t j = 0; j < c; ++j)
      if (row[j] > row[label] || (row[j] == row[label] && j < label)) ++better;
    if (better < static_cast<size_t>(top_k_)) sum_metric_ += 1;
  }
  num_inst_ += static_cast<long>(l.size());
}

void CrossEntropy::Update(NDArray labels, NDArray preds) {
  std::vector<float> l, p;
  size_t c = 0;
  ReadBatch(labels, preds, &l, &p, &c);
  for (size_t i = 0; i < l.size(); ++i)
    sum_metric_ -= std::log(static_cast<double>(p[i * c + static_cast<size_t>(l[i])]) + eps_);
  num_inst_ += static_cast<long>(l.size());
}

}  // namespace weft
