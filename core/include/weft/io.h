// weft — data input: the DataIter interface, the MNIST idx format and MNISTIter, and the registry
// of iterators that front ends create by name, following mxnet-cpp's DataIter /
// MXDataIter("MNISTIter") (include/mxnet-cpp/io.h) and MXNet's MNISTIter (src/io/iter_mnist.cc).
// The other iterators: weft/image_iter.h (ImageRecordIter), weft/csv_iter.h (CSVIter),
// weft/ndarray_iter.h (NDArrayIter), weft/prefetching_iter.h (any iterator on a loader thread);
// their files: weft/recordio.h, weft/image.h.
//
//   MNISTIter train("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", {.batch_size = 100, .flat = true});
//   train.Reset();
//   while (train.Next()) { DataBatch b = train.GetDataBatch(); ... }
//
//   // or mxnet-cpp's spelling:
//   auto it = MXDataIter("MNISTIter").SetParam("image", path).SetParam("label", path)
//                 .SetParam("batch_size", 100).SetParam("flat", 1).CreateDataIter();
//
// Files: the idx format (big-endian magic 0x0000080D with D dimensions, the extents as
// big-endian uint32, then uint8 data; http://yann.lecun.com/exdb/mnist/), plain or gzip
// (read with zlib, chosen by content, not by name).
// Batches: data float32 (batch, 784) when flat, else (batch, 1, rows, cols), pixel/255 in
// [0, 1]; label float32 (batch,). As MXNet's MNISTIter, only whole batches are produced (the
// remainder of an epoch is dropped, pad is 0). With shuffle, the order is a permutation drawn
// from std::mt19937(seed) once at construction (MXNet shuffles once too; reshuffle_each_epoch draws
// a new one per epoch from the same generator), so runs are repeatable.
// Without shuffle on a cpu context, each batch is a view of the iterator's copy of the whole set
// (as MXNet's NDArrayIter slices its arrays): copy a batch before writing into it. Otherwise each
// batch is a fresh array filled by a queued copy.
//
// Errors: weft::Error naming the file for a missing or truncated file, a bad magic, image and
// label counts that differ, batch_size < 1 or larger than the data set.
// Thread-safety: an iterator belongs to one thread.
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "weft/ndarray.h"

namespace weft {

/// One idx file: extents and the uint8 payload (C order).
struct WEFT_API IdxFile {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> data;
};
/// Reads an idx file (plain or gzip). Only unsigned-byte payloads (type code 0x08).
WEFT_API IdxFile ReadIdxFile(const std::string& path);

/// Name, shape and dtype of one input of a batch (MXNet's DataDesc, the entries of
/// provide_data / provide_label). Shapes include the batch axis.
struct WEFT_API DataDesc {
  std::string name;
  Shape shape;
  DType dtype = DType::kFloat32;
};

struct WEFT_API DataBatch {
  NDArray data;
  NDArray label;
  int pad_num = 0;
  std::vector<int> index;  ///< sample indices (into the data set) of the batch's rows
  /// The bucket a BucketingModule runs the batch in (MXNet's DataBatch.bucket_key, e.g. the
  /// padded sequence length); -1 = the module's default bucket.
  int bucket_key = -1;
};

class WEFT_API DataIter {
 public:
  virtual ~DataIter() = default;
  /// Back to the first batch of a new epoch (MXNet's reset). Threaded iterators drain their
  /// workers first; an error a worker met is rethrown here or at the next Next, after which the
  /// iterator is usable again. Throws weft::Error for what the iterator cannot reread (a file
  /// that went away).
  virtual void BeforeFirst() = 0;
  /// Advances to the next batch; false at the end of the epoch (then BeforeFirst starts another).
  /// Throws weft::Error naming the file, record and offset for bad input.
  virtual bool Next() = 0;
  /// The current batch's data: (batch_size, ...) as ProvideData says, on the iterator's context,
  /// in its dtype (float32 unless the iterator has a dtype option). Valid after a Next that
  /// returned true; the array may be reused by the next Next (copy it to keep it).
  virtual NDArray GetData() = 0;
  /// The current batch's labels: (batch_size) or (batch_size, label_width), float32.
  virtual NDArray GetLabel() = 0;
  /// How many of the current batch's last rows are padding (a final batch filled from the start
  /// of the data, MXNet's round_batch), 0 for a full batch.
  virtual int GetPadNum() = 0;
  /// The index of each row of the current batch in the data set (the record or sample number).
  virtual std::vector<int> GetIndex() = 0;
  /// The current batch as one DataBatch (data, label, pad, index).
  DataBatch GetDataBatch() { return DataBatch{GetData(), GetLabel(), GetPadNum(), GetIndex()}; }
  /// BeforeFirst, under MXNet's other name.
  void Reset() { BeforeFirst(); }
  /// The data inputs of every batch (MXNet's provide_data: "data" and its shape); empty when an
  /// iterator does not say (then look at a batch).
  virtual std::vector<DataDesc> ProvideData() const { return {}; }
  /// The label inputs of every batch (provide_label: "softmax_label"); empty when unknown.
  virtual std::vector<DataDesc> ProvideLabel() const { return {}; }
};

struct WEFT_API MNISTIterOptions {
  int batch_size = 128;
  bool shuffle = true;  ///< MXNet's default
  bool flat = false;
  uint32_t seed = 0;
  Context context = Context::cpu(0);  ///< where batches are written
  /// Use at most this many samples (the first ones, before shuffling); 0 = all.
  size_t max_samples = 0;
  /// Draw a new order at every Reset after the first (PyTorch's DataLoader behaviour; MXNet's
  /// MNISTIter keeps one order). The sequence of orders is fixed by `seed`.
  bool reshuffle_each_epoch = false;
  /// MXNet's sharding for distributed training: the samples (after max_samples) are split into
  /// num_parts contiguous parts of nearly equal size and this iterator reads part part_index
  /// (0 <= part_index < num_parts).
  int num_parts = 1;
  int part_index = 0;
};

class WEFT_API MNISTIter : public DataIter {
 public:
  MNISTIter(const std::string& image_file, const std::string& label_file, const MNISTIterOptions& options = {});
  /// Waits for the last batch's queued copies, which read this iterator's samples.
  ~MNISTIter() override;
  MNISTIter(const MNISTIter&) = default;
  MNISTIter(MNISTIter&&) = default;
  MNISTIter& operator=(const MNISTIter&) = default;
  MNISTIter& operator=(MNISTIter&&) = default;
  void BeforeFirst() override;
  bool Next() override;
  NDArray GetData() override { return data_; }
  NDArray GetLabel() override { return label_; }
  int GetPadNum() override { return 0; }
  std::vector<int> GetIndex() override { return index_; }
  std::vector<DataDesc> ProvideData() const override { return {{"data", data_.GetShape()}}; }
  std::vector<DataDesc> ProvideLabel() const override { return {{"softmax_label", label_.GetShape()}}; }
  /// Samples in the data set, and whole batches per epoch.
  size_t num_samples() const { return labels_.size(); }
  size_t num_batches() const { return labels_.size() / static_cast<size_t>(options_.batch_size); }

 private:
  MNISTIterOptions options_;
  size_t pixels_;
  std::vector<uint32_t> image_dims_;
  std::vector<float> images_;  // pixel/255, sample-major
  std::vector<float> labels_;
  std::vector<int> order_;
  std::mt19937 rng_;
  size_t cursor_ = 0;
  bool started_ = false;
  NDArray data_, label_;
  NDArray all_data_, all_label_;  // the whole set, when batches are views (unshuffled, cpu)
  std::vector<int> index_;
};

// ---- the iterator registry --------------------------------------------------------------------
// Every iterator that can be made from text parameters, for front ends that list and create them
// generically (MXNet's MXListDataIters / MXDataIterGetIterInfo / MXDataIterCreateIter) and for
// mxnet-cpp's MXDataIter. Registered: MNISTIter, ImageRecordIter, ImageRecordUInt8Iter, CSVIter
// (each wrapped in the threaded prefetcher, as MXNet composes them).

/// One parameter of a registered iterator.
struct WEFT_API DataIterParamInfo {
  std::string name;
  /// MXNet's type description, as MXDataIterGetIterInfo reports it: "int, optional, default='1'",
  /// "Shape(tuple), required", "boolean, optional, default=0", "{'cpu', 'gpu'},optional,
  /// default='gpu'".
  std::string type;
  /// The default as text ("1", "NULL", "gpu"); nullopt for a required parameter.
  std::optional<std::string> default_value;
  std::string doc;  ///< one line
};

/// One registered iterator.
struct WEFT_API DataIterInfo {
  std::string name;
  std::string description;
  std::vector<DataIterParamInfo> params;  ///< in MXNet's order
};

/// Every registered iterator, sorted by name. Thread-safe.
WEFT_API std::vector<DataIterInfo> ListDataIters();
/// The iterator `name`, or nullopt. Thread-safe.
WEFT_API std::optional<DataIterInfo> FindDataIter(const std::string& name);
/// Creates iterator `name` from parameters given as MXNet's Python front end passes them (text:
/// "1"/"0"/"True"/"False" for booleans, "(3, 224, 224)" or "[3,224,224]" for shapes, dtype names,
/// "None" for an unset optional). Parameters left out take their defaults. Throws weft::Error for
/// an unknown iterator (listing the known ones), an unknown parameter or a required one missing
/// (naming it and the iterator's parameters), a value that does not parse (naming parameter and
/// value), and whatever the iterator's constructor raises. MXNet parameters that weft accepts
/// without using (verbose, ctx, device_id, silent) are listed and ignored; ones weft does not
/// implement (e.g. ImageRecordIter's pca_noise) are listed but must keep their default.
/// Thread-safe; the iterator belongs to the caller's thread.
WEFT_API std::unique_ptr<DataIter> CreateDataIter(const std::string& name,
                                                  const std::map<std::string, std::string>& params);

/// mxnet-cpp's MXDataIter on the registry: MXDataIter("ImageRecordIter").SetParam("path_imgrec",
/// p).SetParam("batch_size", 64)....CreateDataIter().
class WEFT_API MXDataIter : public DataIter {
 public:
  /// Throws weft::Error when no iterator of that name is registered.
  explicit MXDataIter(const std::string& type);
  template <typename T>
  MXDataIter& SetParam(const std::string& name, const T& value) {
    params_[name] = fmt::format("{}", value);
    return *this;
  }
  /// Builds the iterator (CreateDataIter). Throws weft::Error as CreateDataIter.
  MXDataIter CreateDataIter();
  void BeforeFirst() override;
  bool Next() override;
  NDArray GetData() override;
  NDArray GetLabel() override;
  int GetPadNum() override;
  std::vector<int> GetIndex() override;
  std::vector<DataDesc> ProvideData() const override;
  std::vector<DataDesc> ProvideLabel() const override;

 private:
  DataIter& Impl() const;
  std::string type_;
  std::map<std::string, std::string> params_;
  std::shared_ptr<DataIter> impl_;
};

}  // namespace weft
