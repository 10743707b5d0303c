// weft — CSVIter: batches from CSV files, MXNet 1.9.1's CSVIter (src/io/iter_csv.cc wrapped in
// its BatchLoader and PrefetcherIter) with its parameters and semantics.
//
//   CSVIter it({.data_csv = "x.csv", .data_shape = Shape(10), .label_csv = "y.csv", .batch_size = 32});
//
// Files: one example per line, values separated by commas (spaces around them ignored; blank
// lines skipped); the values of a line fill data_shape (label_shape) in C order, so each data
// line holds data_shape.Size() values and each label line label_shape.Size(). label_csv "NULL"
// (MXNet's default) gives labels 0. Lines are read as the batches are made (the files are
// streamed, not loaded whole).
// Batches: data (batch_size, data_shape...) and label (batch_size, label_shape...) — (batch_size,)
// for the default label_shape (1) — of `dtype` (float32, int32 or int64) on `context`; index = the
// examples' line numbers from 0 (blank lines not counted). round_batch (default) completes the last
// batch from the start of the file, pad = the examples taken from there, and the next epoch starts
// after them (MXNet's BatchLoader); with round_batch false the last batch is short, its pad rows
// zero.
// Errors: weft::Error at construction for a missing file or bad parameters; at Next for a line
// with the wrong number of values or a value that is not a number (naming file, line and value),
// and for a label file with fewer lines than the data file (MXNet's exception-handling example);
// raised by the Next() whose batch needs that line, after the batches before it.
// Thread-safety: an iterator belongs to one thread (one worker thread reads the files).
#pragma once

#include "weft/export.h"

#include <memory>
#include <string>

#include "weft/io.h"
#include "weft/prefetching_iter.h"

namespace weft {

struct WEFT_API CSVIterOptions {
  std::string data_csv;            ///< required
  Shape data_shape;                ///< required: the shape of one example
  std::string label_csv = "NULL";  ///< "NULL": every label is 0
  Shape label_shape = Shape(1);
  int batch_size = 0;  ///< required, >= 1
  bool round_batch = true;
  int prefetch_buffer = 4;
  DType dtype = DType::kFloat32;  ///< kFloat32, kInt32 or kInt64
  Context context = Context::cpu(0);
};

/// BeforeFirst starts again at the first line (or after the lines the last padded batch took, as
/// MXNet); see ThreadedDataIter for the rest.
class WEFT_API CSVIter : public ThreadedDataIter {
 public:
  /// Checks the options, opens the files and starts the reading thread. Throws weft::Error.
  explicit CSVIter(const CSVIterOptions& options);
  std::vector<DataDesc> ProvideData() const override { return {data_}; }
  std::vector<DataDesc> ProvideLabel() const override { return {label_}; }

 private:
  DataDesc data_, label_;
};

}  // namespace weft
