// weft — ImageRecordIter: batches of images from an image RecordIO file (.rec, made by
// weft-im2rec or MXNet's im2rec.py), decoded and augmented on worker threads and prefetched;
// MXNet 1.9.1's ImageRecordIter (src/io/iter_image_recordio_2.cc with the aug_default augmenter,
// image_aug_default.cc) with its parameter names, defaults and semantics.
//
//   ImageRecordIterOptions o;
//   o.path_imgrec = "train.rec"; o.data_shape = Shape(3, 224, 224); o.batch_size = 64;
//   o.rand_crop = o.rand_mirror = true; o.mean_r = 123.68f; ...
//   ImageRecordIter it(o);
//   while (it.Next()) { NDArray x = it.GetData(); NDArray y = it.GetLabel(); ... }
//
// What a batch holds:
//   data   (batch_size, C, H, W) = data_shape, dtype float32 (default) or uint8, planes in R, G, B
//          order (C = 3) or gray (C = 1), on `context`;
//   label  float32 (batch_size,) when label_width is 1, else (batch_size, label_width) (MXNet's
//          iterator makes (batch, label_width) and its C API reshapes width 1 to 1-d);
//   index  the records' image ids (header id) as int (MXNet 1.9.1 leaves its index at zeros);
//   pad    how many rows at the end are not part of this epoch (see round_batch).
// Each image: decoded (JPEG or PNG, weft/image.h) to C channels; then as MXNet's aug_default:
//   resize (shorter edge to `resize`, inter_method) → the affine transformation when any of
//   max_rotate_angle, rotate, max_shear_ratio, max/min_random_scale, max_aspect_ratio,
//   max/min_img_size is set (OpenCV warpAffine semantics, fill_value outside) → pad (fill_value)
//   → crop to data_shape (centred, or at a random place with rand_crop; with max/min_crop_size a
//   random square crop resized to data_shape) → mirror (mirror, or with probability 1/2 with
//   rand_mirror) → float32 only: (pixel - mean_c) * (contrast * scale / std_c) + illumination * scale / std_c,
//   contrast = 1 and illumination = 0 unless max_random_contrast / max_random_illumination draw
//   them; uint8 keeps the pixels. Without resize or affine or pad, only the crop window is decoded
//   (libjpeg-turbo's partial decoding; the same pixels as a whole decode).
// Order: records in file order, or shuffled (`shuffle`): a new permutation of the records of the
//   part at every epoch, drawn by std::shuffle with std::mt19937(111 + seed), MXNet's generator
//   and seed for an .idx file. (MXNet 1.9.1's own shuffled reading repeats and skips records
//   within an epoch, and without an .idx it only shuffles within 64 MiB chunks; weft gives every
//   record of the part once per epoch in both cases.)
// Partitions (num_parts, part_index): weft/recordio.h RecordIOPartition, MXNet's split.
// Epochs: round_batch (default) completes the last batch from the start of the next epoch's
//   order, pad = the rows taken from it, and the next epoch starts after them (MXNet); with
//   round_batch false the last batch is short: pad rows are zeros (MXNet 1.9.1 reports pad 0
//   there and leaves stale rows).
// Randomness: the draws for an image (crop place, mirror, scale, ...) come from a generator
//   seeded by (seed_aug, else seed) and the image's position in the sequence of epochs, so the
//   same seed gives the same batches run after run, whatever preprocess_threads and timing.
//   MXNet's draws are per thread; weft does not reproduce MXNet's random augmentations.
// Threads: preprocess_threads workers (at most the machine's cores, as MXNet) each make whole
//   batches, up to prefetch_buffer + preprocess_threads batches ahead of the consumer
//   (weft/prefetching_iter.h: ThreadedDataIter, which also describes BeforeFirst and how errors
//   reach Next).
// Device: batches are written into host memory and reach `context` without a host wait (on a
//   device that is not host-addressable through a staging buffer and a queued copy).
//
// Errors (weft::Error): at construction for a missing/corrupt file or index, bad parameters
// (naming them), and parameters weft does not implement set to a non-default value; at Next for a
// record that cannot be used (not an image, truncated or corrupt image data, a label count that is
// not label_width, an image smaller than data_shape), naming the file, the record's number, its id
// and byte offset, raised by the Next() that would return the batch (ThreadedDataIter).
// Thread-safety: an iterator belongs to one thread (its workers are internal).
#pragma once

#include "weft/export.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weft/io.h"
#include "weft/prefetching_iter.h"

namespace weft {

/// MXNet's ImageRecordIter parameters (ImageRecParserParam, ImageRecordParam, BatchParam,
/// PrefetcherParam, DefaultImageAugmentParam, ImageNormalizeParam), with MXNet's defaults.
struct WEFT_API ImageRecordIterOptions {
  std::string path_imgrec;   ///< required
  std::string path_imgidx;   ///< optional .idx: MXNet's partitioning by record count
  std::string path_imglist;  ///< optional .lst: labels by image id instead of the records' own
  Shape data_shape;          ///< required: (channels 1 or 3, height, width)
  int batch_size = 0;        ///< required, >= 1
  int label_width = 1;
  bool shuffle = false;
  int seed = 0;
  std::optional<int> seed_aug;  ///< seeds the augmentation draws instead of `seed`
  bool round_batch = true;
  int num_parts = 1;
  int part_index = 0;
  int preprocess_threads = 4;
  int prefetch_buffer = 4;
  DType dtype = DType::kFloat32;  ///< kFloat32 or kUint8
  Context context = Context::cpu(0);
  // Augmentation (aug_default).
  int resize = -1;
  bool rand_crop = false;
  int max_crop_size = -1;
  int min_crop_size = -1;
  int max_rotate_angle = 0;
  int rotate = -1;
  float max_shear_ratio = 0;
  float max_random_scale = 1;
  float min_random_scale = 1;
  float max_aspect_ratio = 0;
  float max_img_size = 1e10f;
  float min_img_size = 0;
  int fill_value = 255;
  int pad = 0;
  int inter_method = 1;  ///< 0 NN, 1 bilinear, 2 cubic, 3 area, 4 lanczos4, 9 auto, 10 random
  bool mirror = false;
  bool rand_mirror = false;
  // Normalisation (float32 output only).
  float mean_r = 0, mean_g = 0, mean_b = 0;
  float std_r = 1, std_g = 1, std_b = 1;
  float scale = 1;
  float max_random_contrast = 0;
  float max_random_illumination = 0;
  bool verbose = false;  ///< print the file, part and record count at construction
  /// weft's, not MXNet's: decode each batch as an engine operation on `context`'s compute worker
  /// (cpu only), in parallel on RecommendedCpuMathThreads() threads, instead of on the
  /// preprocess_threads workers (which then only read the records). The operation runs between
  /// the training's operations rather than beside them: on a machine whose cores the training
  /// keeps busy, a decoding thread takes them from its compute threads mid-operation. A corrupt
  /// image then fails the batch's data array (its first wait, or an operation reading it, throws,
  /// naming the record) instead of Next.
  bool decode_on_engine = false;
};

class WEFT_API ImageRecordIter : public ThreadedDataIter {
 public:
  /// Checks the options, reads the partition's record list (the .idx, or the record headers of
  /// the part's byte range) and starts the workers. Throws weft::Error as described above.
  explicit ImageRecordIter(const ImageRecordIterOptions& options);
  std::vector<DataDesc> ProvideData() const override;
  std::vector<DataDesc> ProvideLabel() const override;
  /// Records in this iterator's part.
  size_t num_records() const;
  /// Batches in the current epoch.
  size_t num_batches() const;

 private:
  struct Impl;
  const Impl* impl_;  // the producer, owned by ThreadedDataIter
};

}  // namespace weft
