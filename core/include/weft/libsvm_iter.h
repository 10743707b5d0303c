// weft — LibSVMIter: batches of csr (compressed sparse row) arrays from LibSVM-format text files,
// MXNet 1.9.1's LibSVMIter (src/io/iter_libsvm.cc with its sparse batch loader and prefetcher)
// with its parameters and semantics.
//
//   LibSVMIter it({.data_libsvm = "train.t", .data_shape = Shape(62061), .batch_size = 64});
//
// Files: one example per line, "<label> <index>:<value> <index>:<value> ...", as in LibSVM's data
// sets (https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/) except that, as in MXNet, the
// indices are zero-based and must be in ascending order on a line; a line may hold only its label
// (an example with no stored values); blank lines are skipped. A path that names a directory
// reads every regular file in it, in name order, as one file.
// Batches:
//  - data: a csr array of shape (batch_size, data_shape[0]), float32, on the cpu, indptr and
//    indices int64 (MXNet's), values and indices in file order;
//  - label: without label_libsvm ("NULL", the default), a dense float32 array (batch_size,) of the
//    data lines' labels; with label_libsvm, a csr array (batch_size, label_shape[0]) of the label
//    file's values (the label file's own labels and the data file's labels are ignored), one
//    label line per data line;
//  - index: the example's line number in the part from 0 (blank lines not counted).
// round_batch must be true, as in MXNet: the epoch's last batch is completed from the start of
// the part, pad = the examples taken from there, and the next epoch goes on after them (MXNet's
// BatchLoader). num_parts / part_index split the bytes of the data (and of the label) files into
// num_parts ranges of equal size; a part holds the lines that begin in its range (MXNet's
// dmlc-core split: parts are not guaranteed to hold equal numbers of examples).
// Errors (weft::Error): at construction for a missing file, a data_shape or label_shape that is
// not 1-d, round_batch false, a dtype other than float32, or part_index out of range; at Next,
// naming file, line and token, for a token that is not a number or not "index:value", an index
// that is negative, not below the shape's extent or not above the index before it (MXNet would
// build an invalid csr array that check_format rejects later), and for a label file with fewer
// lines than the data file; raised by the Next() whose batch needs that line, after the batches
// before it.
// Threads: parse_threads workers each make whole batches; batch k's lines are cut from the files
// after batch k-1's, in order, and parsed in parallel with other batches, so every batch, error
// and epoch is the same for any number of workers.
// Thread-safety: an iterator belongs to one thread.
#pragma once

#include "weft/export.h"

#include <string>

#include "weft/io.h"
#include "weft/prefetching_iter.h"

namespace weft {

struct WEFT_API LibSVMIterOptions {
  std::string data_libsvm;            ///< required: a file or a directory of files
  Shape data_shape;                   ///< required: (number of features,)
  std::string label_libsvm = "NULL";  ///< "NULL": the labels are the data lines' first values
  Shape label_shape = Shape(1);       ///< (1,) without label_libsvm; (label columns,) with it
  int num_parts = 1;                  ///< parts the files are split into (>= 1)
  int part_index = 0;                 ///< the part read, 0..num_parts-1
  int batch_size = 0;                 ///< required, >= 1
  bool round_batch = true;            ///< must be true (MXNet's sparse loader supports no other)
  int prefetch_buffer = 4;            ///< batches made ahead (>= 0; 0 counts as 1)
  /// Threads parsing batches at once (1-64); 0: WEFT_LIBSVM_PARSE_THREADS, else 2 (at most the
  /// cores). The batches do not depend on it. Not one of MXNet's parameters.
  int parse_threads = 0;
};

/// BeforeFirst starts again at the part's first line (or after the lines the last padded batch
/// took, as MXNet); see ThreadedDataIter for the rest.
class WEFT_API LibSVMIter : public ThreadedDataIter {
 public:
  /// Checks the options, lists the files and starts the reading thread. Throws weft::Error.
  explicit LibSVMIter(const LibSVMIterOptions& options);
  std::vector<DataDesc> ProvideData() const override { return {data_}; }
  std::vector<DataDesc> ProvideLabel() const override { return {label_}; }

 private:
  DataDesc data_, label_;
};

}  // namespace weft
