// weft core — MNIST idx reader and batch iterators (see weft/io.h).
#include "weft/io.h"

#include <fmt/ranges.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>

namespace weft {
namespace {

uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// deflate cannot shrink data by more than about 1032:1, so a header announcing more than this
// many bytes per file byte is a lie (a gzip bomb or a corrupt file).
constexpr uint64_t kMaxInflateRatio = 1032;

// gzread that turns an error into weft::Error; passes plain files through.
class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path), f_(gzopen(path.c_str(), "rb")) {
    WEFT_CHECK(f_ != nullptr, "cannot open '{}': no such file or not readable", path);
  }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;
  ~GzReader() { gzclose(f_); }

  // Reads up to `n` bytes; fewer only at the end of the data.
  size_t Read(uint8_t* out, size_t n) {
    size_t done = 0;
    while (done < n) {
      const int chunk = static_cast<int>(std::min<size_t>(n - done, 1 << 20));
      const int got = gzread(f_, out + done, static_cast<unsigned>(chunk));
      if (got < 0) {
        int err = 0;
        const std::string msg = gzerror(f_, &err);
        Fail("cannot read '{}': {} (a truncated or corrupt gzip file?)", path_, msg);
      }
      if (got == 0) break;
      done += static_cast<size_t>(got);
    }
    return done;
  }

 private:
  std::string path_;
  gzFile f_;
};

}  // namespace

IdxFile ReadIdxFile(const std::string& path) {
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  GzReader in(path);
  // The header first, then exactly the bytes it announces: a gzip bomb used to be inflated
  // whole (36 s, 2 GB) before its size was compared with the header.
  uint8_t head[4 + 4 * 255];
  const size_t got = in.Read(head, 4);
  WEFT_CHECK(got == 4 && head[0] == 0 && head[1] == 0,
             "'{}' is not an idx file (the magic number must start with two zero bytes)", path);
  WEFT_CHECK(head[2] == 0x08, "'{}': idx element type 0x{:02x} is not supported (only unsigned bytes, 0x08)", path,
             head[2]);
  const size_t nd = head[3];
  WEFT_CHECK(nd >= 1 && in.Read(head + 4, 4 * nd) == 4 * nd, "'{}': the idx header is truncated ({} dimensions)", path,
             nd);
  IdxFile out;
  uint64_t total = 1;
  for (size_t i = 0; i < nd; ++i) {
    out.dims.push_back(BigEndian32(&head[4 + 4 * i]));
    const uint64_t d = out.dims.back();
    total = d != 0 && total > UINT64_MAX / d ? UINT64_MAX : total * d;  // saturates
  }
  const uint64_t limit = ec ? (uint64_t{1} << 40) : (file_size + 1) * kMaxInflateRatio;
  WEFT_CHECK(total <= limit,
             "'{}': the idx header announces dimensions {} ({} bytes), more than a {}-byte file can hold even "
             "compressed; the file is corrupt",
             path, fmt::join(out.dims, " x "), total, file_size);
  // Grown as data arrives, so a header that lies costs no more memory than the data present.
  constexpr size_t kChunk = size_t{1} << 20;
  while (out.data.size() < total) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, total - out.data.size()));
    const size_t old = out.data.size();
    out.data.resize(old + want);
    const size_t n = in.Read(out.data.data() + old, want);
    out.data.resize(old + n);
    WEFT_CHECK(n == want, "'{}': the header announces {} bytes of data but the file has {}", path, total,
               out.data.size());
  }
  uint8_t extra;
  WEFT_CHECK(in.Read(&extra, 1) == 0, "'{}': the file has more data than the {} bytes its header announces", path,
             total);
  return out;
}

MNISTIter::MNISTIter(const std::string& image_file, const std::string& label_file, const MNISTIterOptions& options)
    : options_(options) {
  WEFT_CHECK(options.batch_size >= 1, "MNISTIter: batch_size must be >= 1, got {}", options.batch_size);
  IdxFile images = ReadIdxFile(image_file);
  IdxFile labels = ReadIdxFile(label_file);
  WEFT_CHECK(images.dims.size() == 3, "MNISTIter: '{}' holds {}-d data; images must be (count, rows, cols)", image_file,
             images.dims.size());
  WEFT_CHECK(labels.dims.size() == 1, "MNISTIter: '{}' holds {}-d data; labels must be (count,)", label_file,
             labels.dims.size());
  WEFT_CHECK(images.dims[0] == labels.dims[0], "MNISTIter: '{}' has {} images but '{}' has {} labels", image_file,
             images.dims[0], label_file, labels.dims[0]);
  size_t count = images.dims[0];
  if (options.max_samples > 0) count = std::min(count, options.max_samples);
  WEFT_CHECK(options.num_parts >= 1 && options.part_index >= 0 && options.part_index < options.num_parts,
             "MNISTIter: part_index {} is outside 0..num_parts-1 (num_parts {})", options.part_index,
             options.num_parts);
  // MXNet's num_parts / part_index: this iterator's contiguous share of the samples.
  const size_t first = count * static_cast<size_t>(options.part_index) / static_cast<size_t>(options.num_parts);
  count = count * static_cast<size_t>(options.part_index + 1) / static_cast<size_t>(options.num_parts) - first;
  WEFT_CHECK(static_cast<size_t>(options.batch_size) <= count,
             "MNISTIter: batch_size {} is larger than the {} samples of '{}'", options.batch_size, count, image_file);
  image_dims_ = images.dims;
  pixels_ = size_t{images.dims[1]} * images.dims[2];
  images_.resize(count * pixels_);
  for (size_t i = 0; i < images_.size(); ++i)
    images_[i] = static_cast<float>(images.data[first * pixels_ + i]) / 255.0f;
  labels_.assign(labels.data.begin() + static_cast<std::ptrdiff_t>(first),
                 labels.data.begin() + static_cast<std::ptrdiff_t>(first + count));
  order_.resize(count);
  std::iota(order_.begin(), order_.end(), 0);
  rng_.seed(options.seed);
  if (options.shuffle) std::shuffle(order_.begin(), order_.end(), rng_);
  const auto b = static_cast<int64_t>(options.batch_size);
  const Shape data_shape = options.flat ? Shape(b, static_cast<int64_t>(pixels_))
                                        : Shape(b, 1, static_cast<int64_t>(image_dims_[1]), image_dims_[2]);
  data_ = NDArray(data_shape, options.context);
  label_ = NDArray(Shape(b), options.context);
  if (!options.shuffle && options.context.GetDeviceType() == "cpu") {
    // Unshuffled batches are consecutive rows: on the cpu they are views of the whole set (as
    // MXNet's NDArrayIter slices its arrays), so a batch costs no copy here; the consumer's copy
    // into its executor is the only one.
    Shape all_shape = data_shape;
    all_shape[0] = static_cast<int64_t>(count);
    all_data_ = NDArray(all_shape, options.context, false);
    all_data_.SyncCopyFromCPU(images_.data(), images_.size());
    all_label_ = NDArray(Shape(static_cast<int64_t>(count)), options.context, false);
    all_label_.SyncCopyFromCPU(labels_.data(), labels_.size());
    std::vector<float>().swap(images_);  // the array holds the samples now
  }
}

MNISTIter::~MNISTIter() {
  // The last batch's queued copies read images_ and labels_.
  try {
    if (!data_.is_none()) data_.WaitToRead();
    if (!label_.is_none()) label_.WaitToRead();
  } catch (...) {  // a failed copy was reported to whoever read the batch
  }
}

void MNISTIter::BeforeFirst() {
  // The first Reset (before any epoch ran) keeps the construction order.
  if (started_ && options_.shuffle && options_.reshuffle_each_epoch) std::shuffle(order_.begin(), order_.end(), rng_);
  cursor_ = 0;
}

bool MNISTIter::Next() {
  started_ = true;
  const size_t b = static_cast<size_t>(options_.batch_size);
  if (cursor_ + b > order_.size()) return false;
  index_.assign(order_.begin() + static_cast<std::ptrdiff_t>(cursor_),
                order_.begin() + static_cast<std::ptrdiff_t>(cursor_ + b));
  if (!all_data_.is_none()) {
    data_ = all_data_.Slice(cursor_, cursor_ + b);
    label_ = all_label_.Slice(cursor_, cursor_ + b);
    cursor_ += b;
    return true;
  }
  std::vector<uint32_t> rows(index_.begin(), index_.end());
  // Fresh arrays per batch: a consumer may still be reading the previous batch asynchronously.
  // On the cpu the rows are gathered here, while the engine still runs the previous step (a
  // queued gather waited behind it: ~100 us per shuffled MNIST batch on the worker); elsewhere
  // by a queued copy (the destructor waits for the last batch's copies).
  data_ = NDArray::FromHostRows(images_.data(), rows, pixels_ * sizeof(float), data_.GetShape(), options_.context);
  label_ = NDArray::FromHostRows(labels_.data(), std::move(rows), sizeof(float), label_.GetShape(), options_.context);
  cursor_ += b;
  return true;
}

}  // namespace weft
