// CSVIter (weft/csv_iter.h): one Prefetcher worker streams the files and makes the batches.
#include "weft/csv_iter.h"

#include <charconv>
#include <cstring>
#include <fstream>

#include "base/untrusted.h"
#include "io/batch_buffer.h"
#include "io/batch_loader.h"

namespace weft {
namespace {

// One CSV file read line by line; Next parses the next non-blank line into `count` values.
class CsvStream {
 public:
  CsvStream(std::string path, size_t count, DType dtype) : path_(std::move(path)), count_(count), dtype_(dtype) {
    Rewind();
  }
  void Rewind() {
    in_ = std::ifstream(path_, std::ios::binary);
    WEFT_CHECK(in_.good(), "CSVIter: cannot open '{}'", path_);
    line_no_ = 0;
  }
  const std::string& path() const { return path_; }
  // False at the end of the file.
  bool Next(uint8_t* out) {
    std::string line;
    for (;;) {
      if (!std::getline(in_, line)) {
        WEFT_CHECK(!in_.bad(), "CSVIter: cannot read '{}'", path_);
        return false;
      }
      ++line_no_;
      if (line.find_first_not_of(" \t\r") != std::string::npos) break;
    }
    Parse(line, out);
    return true;
  }

 private:
  void Parse(const std::string& line, uint8_t* out) const {
    const char* p = line.data();
    const char* end = p + line.size();
    size_t n = 0;
    for (;; ++n) {
      while (p < end && (*p == ' ' || *p == '\t')) ++p;
      const char* field = p;
      while (p < end && *p != ',') ++p;
      const char* field_end = p;
      while (field_end > field && (field_end[-1] == ' ' || field_end[-1] == '\t' || field_end[-1] == '\r')) --field_end;
      if (n < count_) Store(field, field_end, out, n);
      if (p == end) break;
      ++p;  // the comma
    }
    WEFT_CHECK(n + 1 == count_, "CSVIter: '{}' line {} has {} values; the shape asks for {} per line", path_, line_no_,
               n + 1, count_);
  }
  void Store(const char* b, const char* e, uint8_t* out, size_t i) const {
    bool ok = false;
    if (dtype_ == DType::kFloat32) {
      float v = 0;
      auto r = std::from_chars(b, e, v);
      ok = r.ec == std::errc() && r.ptr == e;
      std::memcpy(out + 4 * i, &v, 4);
    } else {
      int64_t v = 0;
      auto r = std::from_chars(b, e, v);
      ok = r.ec == std::errc() && r.ptr == e && (dtype_ == DType::kInt64 || (v >= INT32_MIN && v <= INT32_MAX));
      if (dtype_ == DType::kInt64) {
        std::memcpy(out + 8 * i, &v, 8);
      } else {
        const auto w = static_cast<int32_t>(v);
        std::memcpy(out + 4 * i, &w, 4);
      }
    }
    WEFT_CHECK(ok, "CSVIter: '{}' line {} value {}: '{}' is not a{} number", path_, line_no_, i + 1,
               detail::Excerpt(std::string_view(b, static_cast<size_t>(e - b)), 40),
               dtype_ == DType::kFloat32 ? "" : fmt::format(" {}", DTypeName(dtype_)));
  }

  std::string path_;
  size_t count_;
  DType dtype_;
  std::ifstream in_;
  size_t line_no_ = 0;
};

}  // namespace

// The producer: one worker streams both files (its state is touched by Restart only while the
// worker is stopped).
struct CsvProducer : ThreadedDataIter::Producer {
  CsvProducer(const CSVIterOptions& o, Shape data_shape, Shape label_shape)
      : o(o), data_shape(std::move(data_shape)), label_shape(std::move(label_shape)), loader(o.round_batch) {
    data_count = static_cast<size_t>(o.data_shape.Size());
    label_count = static_cast<size_t>(o.label_shape.Size());
    data = std::make_unique<CsvStream>(o.data_csv, data_count, o.dtype);
    if (o.label_csv != "NULL") label = std::make_unique<CsvStream>(o.label_csv, label_count, o.dtype);
  }

  void Restart(uint64_t delivered) override {
    loader.Restart(delivered, [&] { Rewind(); });
  }

  bool Produce(uint64_t k, DataBatch* out, const ThreadedDataIter::Worker&) override;

  CSVIterOptions o;
  Shape data_shape, label_shape;  // with the batch axis
  size_t data_count = 0, label_count = 0;
  std::unique_ptr<CsvStream> data, label;
  int row = 0;  // examples read since the start of the file
  io_detail::BatchLoader loader;

  void Rewind() {
    data->Rewind();
    if (label) label->Rewind();
    row = 0;
  }

  // Reads one example into the batch row i; false at the end of the data file.
  bool ReadExample(io_detail::BatchBuffer& d, io_detail::BatchBuffer& l, size_t i, std::vector<int>& index) {
    const size_t esize = DTypeSize(o.dtype);
    if (!data->Next(d.host() + i * data_count * esize)) return false;
    if (label) {
      WEFT_CHECK(label->Next(l.host() + i * label_count * esize),
                 "CSVIter: '{}' has fewer examples than '{}' (example {} has no label)", label->path(), data->path(),
                 row);
    } else {
      std::memset(l.host() + i * label_count * esize, 0, label_count * esize);
    }
    index[i] = row++;
    return true;
  }
};

bool CsvProducer::Produce(uint64_t k, DataBatch* out, const ThreadedDataIter::Worker&) {
  const auto batch = static_cast<size_t>(o.batch_size);
  io_detail::BatchBuffer d(data_shape, o.dtype, o.context), l(label_shape, o.dtype, o.context);
  out->index.assign(batch, 0);
  const size_t rows = loader.Fill(
      k, batch, &out->pad_num, [&](size_t i) { return ReadExample(d, l, i, out->index); }, [&] { Rewind(); },
      fmt::format("CSVIter: '{}'", data->path()));
  if (rows == 0) return false;
  if (rows < batch) {  // round_batch=0: zero rows
    const size_t esize = DTypeSize(o.dtype);
    std::memset(d.host() + rows * data_count * esize, 0, (batch - rows) * data_count * esize);
    std::memset(l.host() + rows * label_count * esize, 0, (batch - rows) * label_count * esize);
  }
  out->data = d.Finish();
  out->label = l.Finish();
  return true;
}

CSVIter::CSVIter(const CSVIterOptions& o) {
  WEFT_CHECK(!o.data_csv.empty(), "CSVIter: data_csv is required");
  WEFT_CHECK(o.batch_size >= 1, "CSVIter: batch_size must be at least 1, got {}", o.batch_size);
  WEFT_CHECK(o.data_shape.ndim() >= 1 && o.data_shape.Size() >= 1, "CSVIter: data_shape {} must not be empty",
             o.data_shape);
  WEFT_CHECK(o.label_shape.ndim() >= 1 && o.label_shape.Size() >= 1, "CSVIter: label_shape {} must not be empty",
             o.label_shape);
  WEFT_CHECK(o.dtype == DType::kFloat32 || o.dtype == DType::kInt32 || o.dtype == DType::kInt64,
             "CSVIter: dtype {} is not supported (float32, int32 or int64)", DTypeName(o.dtype));
  WEFT_CHECK(o.prefetch_buffer >= 0, "CSVIter: prefetch_buffer must not be negative");
  std::vector<int64_t> d{o.batch_size}, l{o.batch_size};
  for (int64_t v : o.data_shape) d.push_back(v);
  if (!(o.label_shape.ndim() == 1 && o.label_shape[0] == 1))
    for (int64_t v : o.label_shape) l.push_back(v);
  data_ = {"data", Shape(d), o.dtype};
  label_ = {"softmax_label", Shape(l), o.dtype};
  StartWorkers(std::make_unique<CsvProducer>(o, data_.shape, label_.shape), 1,
               static_cast<size_t>(std::max(o.prefetch_buffer, 1)));
}

}  // namespace weft
