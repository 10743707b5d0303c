// weft — NDArrayIter: batches of rows of in-memory arrays, MXNet's mx.io.NDArrayIter
// (python/mxnet/io/io.py) in C++.
//
//   NDArrayIter it(x, y, {.batch_size = 32, .shuffle = true, .last_batch_handle = "discard"});
//
// data (n, ...) and label (n, ...) (optional: pass a none NDArray()) of any dtype and device; rows
// along axis 0. Batches hold batch_size rows of each, on the arrays' devices:
//   last_batch_handle "pad" (default): the last batch is completed with rows from the start,
//     GetPadNum() = how many; the next epoch starts at the first row again;
//   "discard": the short last batch is dropped;
//   "roll_over": the short last batch is not returned; its rows start the next epoch.
// shuffle: every epoch reads the rows in a new order, a permutation drawn by std::shuffle with one
// std::mt19937(seed) (MXNet reshuffles at every reset too, with numpy's generator).
// Unshuffled batches that lie inside the arrays are views of them (Slice; no copy): do not write
// to a batch. Other batches are gathered from a host copy of the arrays made at construction into
// new arrays, on a worker thread up to `prefetch_buffer` batches ahead.
// index: the rows' numbers; GetLabel() is a none array without a label. Errors (weft::Error): none
// arrays for data, row counts that differ, batch_size < 1, an unknown last_batch_handle,
// batch_size > rows with "pad".
// Thread-safety: an iterator belongs to one thread; the arrays must not be written while it lives.
#pragma once

#include "weft/export.h"

#include <memory>
#include <string>

#include "weft/io.h"
#include "weft/prefetching_iter.h"

namespace weft {

struct WEFT_API NDArrayIterOptions {
  int batch_size = 1;
  bool shuffle = false;
  uint32_t seed = 0;
  std::string last_batch_handle = "pad";  ///< "pad", "discard" or "roll_over"
  std::string data_name = "data";
  std::string label_name = "softmax_label";
  int prefetch_buffer = 2;
};

/// BeforeFirst begins the next epoch (a new order with shuffle); see ThreadedDataIter.
class WEFT_API NDArrayIter : public ThreadedDataIter {
 public:
  /// Copies the arrays to the host (for gathering) and starts the worker. Throws weft::Error.
  NDArrayIter(const NDArray& data, const NDArray& label = NDArray(), const NDArrayIterOptions& options = {});
  std::vector<DataDesc> ProvideData() const override { return {data_}; }
  /// Empty without a label.
  std::vector<DataDesc> ProvideLabel() const override { return label_; }
  /// Batches in the current epoch.
  size_t num_batches() const;

 private:
  struct Impl;
  const Impl* impl_;  // the producer, owned by ThreadedDataIter
  DataDesc data_;
  std::vector<DataDesc> label_;
};

}  // namespace weft
