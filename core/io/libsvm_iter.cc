// LibSVMIter (weft/libsvm_iter.h): Prefetcher workers make the batches, each in two steps: an
// ordered stage cuts batch k's lines from the part's files after batch k-1's (one worker at a
// time, in batch order), then the worker parses them into the batch's csr arrays, in parallel
// with the other workers' batches. So the batches are those of one thread reading line by line,
// whatever the number of workers.
#include "weft/libsvm_iter.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "base/untrusted.h"
#include "io/batch_loader.h"
#include "io/ordered_stage.h"
#include "weft/env.h"

namespace weft {
namespace {

namespace fs = std::filesystem;

// LibSVM's blanks between tokens (and a line's trailing '\r').
bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The blocks the files are read into. A line is a view into its block, and a batch's lines are
// parsed after the reader has gone on (by another worker, while later batches are cut): so a block
// is never refilled in place; the batches whose lines point into it hold it, and it comes back
// here for reuse when the last of them is parsed (the deleter; the mutex orders the parsing
// thread's reads before the next fill).
class BlockPool : public std::enable_shared_from_this<BlockPool> {
 public:
  using Block = std::shared_ptr<std::vector<char>>;

  Block Take() {
    std::unique_ptr<std::vector<char>> b;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        b = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (!b) b = std::make_unique<std::vector<char>>();
    // The deleter keeps the pool alive: a batch may release its block after the iterator is gone.
    return Block(b.release(), [pool = shared_from_this()](std::vector<char>* v) { pool->Give(v); });
  }

 private:
  void Give(std::vector<char>* v) {
    std::unique_ptr<std::vector<char>> b(v);
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.size() < kKeep) free_.push_back(std::move(b));
  }

  static constexpr size_t kKeep = 32;  // more than the batches in flight ever hold
  std::mutex mu_;
  std::vector<std::unique_ptr<std::vector<char>>> free_;
};

// Where a line came from, for errors: its file (an index into the part's list) and line number.
struct LinePos {
  size_t file = 0, line = 0;
};

// The lines of one part of a file, or of a directory's files read as one: the part holds the lines
// that begin in its byte range [begin, end) of the files' concatenated bytes (dmlc-core's split).
class PartLines {
 public:
  PartLines(const std::string& path, int num_parts, int part_index, std::shared_ptr<BlockPool> pool)
      : path_(path), pool_(std::move(pool)), buf_(pool_->Take()) {
    ListFiles(path);
    uint64_t total = 0;
    for (auto& f : files_) {
      f.offset = total;
      total += f.size;
    }
    const auto n = static_cast<uint64_t>(num_parts);
    const uint64_t step = (total + n - 1) / n;
    begin_ = std::min(total, step * static_cast<uint64_t>(part_index));
    end_ = std::min(total, begin_ + step);
    FindStart();
    Rewind();
  }

  const std::string& path() const { return path_; }
  // Where the last line came from, and as text for errors: "'file' line N" (any thread: the file
  // list does not change).
  LinePos Here() const { return {cur_, line_no_}; }
  std::string Where(LinePos at) const { return fmt::format("'{}' line {}", files_[at.file].path, at.line); }
  std::string Where() const { return Where(Here()); }
  // The block the last line is a view into.
  const BlockPool::Block& block() const { return buf_; }

  void Rewind() {
    cur_ = start_file_;
    OpenCurrent(start_pos_, start_line_);
  }

  // The next non-blank line of the part (a view into block(), valid while that block is held);
  // false at its end. The files are read in large blocks and split at '\n' in place: no copy or
  // allocation per line.
  bool Next(std::string_view* line) {
    for (;;) {
      if (cur_ >= files_.size() || pos_ >= end_) return false;
      if (!TakeLine(line)) {
        ++cur_;
        if (cur_ < files_.size()) OpenCurrent(files_[cur_].offset, 0);
        continue;
      }
      ++line_no_;
      if (std::any_of(line->begin(), line->end(), [](char c) { return !IsBlank(c); })) return true;
    }
  }

 private:
  struct File {
    std::string path;
    uint64_t size = 0, offset = 0;
  };

  void ListFiles(const std::string& path) {
    std::error_code ec;
    WEFT_CHECK(fs::exists(path, ec), "LibSVMIter: '{}' does not exist (give a LibSVM file or a directory of them)",
               path);
    std::vector<std::string> names;
    if (fs::is_directory(path, ec)) {
      for (const auto& e : fs::directory_iterator(path))
        if (e.is_regular_file()) names.push_back(e.path().string());
      std::sort(names.begin(), names.end());
      WEFT_CHECK(!names.empty(), "LibSVMIter: the directory '{}' holds no file", path);
    } else {
      names.push_back(path);
    }
    for (auto& name : names) {
      std::ifstream probe(name, std::ios::binary);
      WEFT_CHECK(probe.good(), "LibSVMIter: cannot open '{}'", name);
      files_.push_back({name, static_cast<uint64_t>(fs::file_size(name)), 0});
    }
  }

  // The first line that begins at or after begin_: its file, byte offset and line number, found
  // once (the part's later epochs seek there).
  void FindStart() {
    start_file_ = 0;
    while (start_file_ < files_.size() && files_[start_file_].offset + files_[start_file_].size <= begin_)
      ++start_file_;
    start_pos_ = start_file_ < files_.size() ? files_[start_file_].offset : end_;
    start_line_ = 0;
    if (start_file_ >= files_.size()) return;
    std::ifstream in(files_[start_file_].path, std::ios::binary);
    std::string line;
    while (start_pos_ < begin_) {
      if (!std::getline(in, line)) {  // the range begins in this file's last line: next file
        ++start_file_;
        start_pos_ = start_file_ < files_.size() ? files_[start_file_].offset : end_;
        start_line_ = 0;
        return;
      }
      start_pos_ += line.size() + (in.eof() ? 0 : 1);
      ++start_line_;
    }
  }

  void OpenCurrent(uint64_t pos, size_t line_no) {
    if (cur_ >= files_.size()) return;
    in_ = std::ifstream(files_[cur_].path, std::ios::binary);
    WEFT_CHECK(in_.good(), "LibSVMIter: cannot open '{}'", files_[cur_].path);
    in_.seekg(static_cast<std::streamoff>(pos - files_[cur_].offset));
    pos_ = pos;
    line_no_ = line_no;
    head_ = tail_ = 0;
    eof_ = false;
  }

  // The current file's next line (without its '\n'), reading blocks as needed; false at the
  // file's end.
  bool TakeLine(std::string_view* line) {
    for (;;) {
      const char* begin = buf_->data() + head_;
      if (const void* nl = tail_ > head_ ? std::memchr(begin, '\n', tail_ - head_) : nullptr) {
        const auto len = static_cast<size_t>(static_cast<const char*>(nl) - begin);
        *line = std::string_view(begin, len);
        head_ += len + 1;
        pos_ += len + 1;
        return true;
      }
      if (eof_) {  // a last line without '\n', or the end
        if (head_ == tail_) return false;
        *line = std::string_view(begin, tail_ - head_);
        pos_ += tail_ - head_;
        head_ = tail_;
        return true;
      }
      Refill();
    }
  }

  // Continues in a new block: the unread bytes at its front, the next bytes of the file behind them
  // (a block grows when one line fills it). The old block's lines stay valid for its holders.
  void Refill() {
    constexpr size_t kBlock = size_t{1} << 20;
    BlockPool::Block next = pool_->Take();
    const size_t unread = tail_ - head_;
    if (next->size() < unread + kBlock) next->resize(unread + kBlock);
    // memcpy's pointers must not be null even for 0 bytes, and the first block is empty.
    if (unread != 0) std::memcpy(next->data(), buf_->data() + head_, unread);
    buf_ = std::move(next);
    head_ = 0;
    tail_ = unread;
    in_.read(buf_->data() + tail_, static_cast<std::streamsize>(buf_->size() - tail_));
    WEFT_CHECK(!in_.bad(), "LibSVMIter: cannot read '{}'", files_[cur_].path);
    const auto got = static_cast<size_t>(in_.gcount());
    tail_ += got;
    eof_ = got == 0 || in_.eof();
  }

  std::string path_;
  std::vector<File> files_;
  uint64_t begin_ = 0, end_ = 0;
  size_t start_file_ = 0, start_line_ = 0;
  uint64_t start_pos_ = 0;
  size_t cur_ = 0, line_no_ = 0;
  uint64_t pos_ = 0;  // the byte offset of the next line in the concatenated files
  std::ifstream in_;
  std::shared_ptr<BlockPool> pool_;
  BlockPool::Block buf_;  // bytes read from in_: [head_, tail_) are not yet split into lines
  size_t head_ = 0, tail_ = 0;
  bool eof_ = false;  // in_ has no more bytes
};

// The next token of [*p, end) (blanks skipped before it), *p moved past it; empty at the end.
std::string_view NextToken(const char** p, const char* end) {
  const char* b = *p;
  while (b != end && IsBlank(*b)) ++b;
  const char* e = b;
  while (e != end && !IsBlank(*e)) ++e;
  *p = e;
  return {b, static_cast<size_t>(e - b)};
}

template <typename T>
bool ParseNumber(std::string_view t, T* out) {
  auto r = std::from_chars(t.data(), t.data() + t.size(), *out);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

// The common token "index:value" read in one pass, without from_chars: `index` 1 to 18 decimal
// digits, `value` [-]digits[.digits] with at most 7 digits in all, then a blank or the line's
// end. Returns false (p unmoved) for anything else, which the caller reads
// with from_chars. Why: from_chars was most of the parse (a batch of 512 lines of 100 features
// parses 51 200 of these), and a float with at most 7 digits is exact here: its digits m < 2^24
// and 10^f (f <= 7) are floats exactly, so m / 10^f is one correctly rounded division, the
// nearest float to the decimal (Clinger's fast path), which is what from_chars returns.
bool FastPair(const char** p, const char* end, int64_t* index, float* value) {
  static constexpr float kPow10[] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f};
  auto digit = [](char c) { return static_cast<unsigned>(c - '0') < 10; };
  const char* q = *p;
  const char* const index_begin = q;
  int64_t i = 0;
  for (; q != end && digit(*q); ++q) {
    if (q - index_begin == 18) return false;  // int64 may overflow: from_chars decides
    i = i * 10 + (*q - '0');
  }
  if (q == index_begin || q == end || *q != ':') return false;
  ++q;
  const bool negative = q != end && *q == '-';
  if (negative) ++q;
  uint32_t m = 0;
  int digits = 0, fraction = 0;
  for (; q != end && digit(*q); ++q, ++digits) m = m * 10 + static_cast<uint32_t>(*q - '0');
  if (q != end && *q == '.') {
    const char* const fraction_begin = ++q;
    // Stops after an 8th digit, which sends the token to from_chars below (and keeps f <= 7).
    for (; q != end && digit(*q) && digits < 8; ++q, ++digits) m = m * 10 + static_cast<uint32_t>(*q - '0');
    fraction = static_cast<int>(q - fraction_begin);
  }
  if (digits == 0 || digits > 7 || (q != end && !IsBlank(*q))) return false;
  const float v = static_cast<float>(m) / kPow10[fraction];
  *value = negative ? -v : v;
  *index = i;
  *p = q;
  return true;
}

// A 1-d cpu array over the vector's memory, which it then owns (freed with the array): a batch's
// parts reach the consumer without a copy. Why: SyncCopyFromCPUBytes pushed one engine copy per
// part and waited for it, behind the training's operations queued on the same worker.
template <typename T>
NDArray Adopt(std::vector<T>&& v, DType dtype) {
  const auto n = static_cast<int64_t>(v.size());
  if (n == 0) return NDArray(Shape{0}, Context::cpu(0), false, dtype);
  auto* owned = new std::vector<T>(std::move(v));
  try {
    return NDArray::FromExternal(Context::cpu(0), reinterpret_cast<weft_device_ptr>(owned->data()),
                                 static_cast<uint64_t>(n) * sizeof(T), Shape{n}, dtype, [owned] { delete owned; });
  } catch (...) {
    delete owned;  // FromExternal did not take it
    throw;
  }
}

// A batch's csr array, built row by row as the lines are parsed.
struct CsrBuilder {
  std::vector<int64_t> indptr{0}, indices;
  std::vector<float> values;

  // Parses one line "label index:value ..." (line `at` of `src`) into the next row; returns its
  // label.
  float AddLine(std::string_view line, int64_t columns, const PartLines& src, LinePos at) {
    auto bad = [&](std::string_view t, const char* what) {
      Fail("LibSVMIter: {} token '{}' {}", src.Where(at), detail::Excerpt(t, 40), what);
    };
    const char* p = line.data();
    const char* const end = p + line.size();
    const std::string_view label_token = NextToken(&p, end);
    float label = 0;
    if (!ParseNumber(label_token.substr(0, label_token.find(':')), &label))
      bad(label_token, "is not a label (a number)");
    const size_t first = indices.size();
    for (;;) {
      while (p != end && IsBlank(*p)) ++p;
      if (p == end) break;
      const char* const token_begin = p;
      int64_t index = 0;
      float value = 0;
      if (!FastPair(&p, end, &index, &value)) {
        const std::string_view t = NextToken(&p, end);
        if (t.substr(0, 4) == "qid:") continue;  // LibSVM ranking data: the query id is not a feature
        const size_t colon = t.find(':');
        if (colon == std::string_view::npos || !ParseNumber(t.substr(0, colon), &index) ||
            !ParseNumber(t.substr(colon + 1), &value))
          bad(t, "is not index:value");
      }
      if (index < 0 || index >= columns || (indices.size() > first && index <= indices.back())) {
        const char* e = p;  // the whole token, for the message
        while (e != end && !IsBlank(*e)) ++e;
        const std::string_view t(token_begin, static_cast<size_t>(e - token_begin));
        if (index < 0 || index >= columns)
          bad(t, fmt::format("has an index outside [0, {}) (indices are zero-based)", columns).c_str());
        bad(t, "does not follow the line's previous index in ascending order");
      }
      indices.push_back(index);
      values.push_back(value);
    }
    indptr.push_back(static_cast<int64_t>(indices.size()));
    return label;
  }

  // The batch's csr array; takes the vectors.
  NDArray Finish(int64_t columns) && {
    const auto rows = static_cast<int64_t>(indptr.size() - 1);
    NDArray v = Adopt(std::move(values), DType::kFloat32);
    NDArray p = Adopt(std::move(indptr), DType::kInt64);
    NDArray i = Adopt(std::move(indices), DType::kInt64);
    return NDArray::FromSparseParts(StorageType::kCSR, Shape(rows, columns), v, {p, i});
  }
};

// One batch's lines of one file as the ordered stage cut them, with the blocks they point into.
struct CutLines {
  std::vector<std::string_view> lines;
  std::vector<LinePos> at;
  std::vector<BlockPool::Block> blocks;

  void Add(const PartLines& src, std::string_view line) {
    lines.push_back(line);
    at.push_back(src.Here());
    if (blocks.empty() || blocks.back() != src.block()) blocks.push_back(src.block());
  }
};

// A batch's cut: its data lines (and label lines), and the error that stopped the cut, thrown once
// the lines before it are parsed (a bad token in them is reported first, as one thread reading
// line by line would).
struct Cut {
  CutLines data, label;
  size_t rows = 0;
  std::exception_ptr error;
};

// The number of parse workers: LibSVMIterOptions::parse_threads, else WEFT_LIBSVM_PARSE_THREADS,
// else 2 (at most the cores). Read on the caller's thread, where a bad value is an error.
int ParseThreads(int option) {
  constexpr int kMax = 64;
  if (option != 0) {
    WEFT_CHECK(option >= 1 && option <= kMax, "LibSVMIter: parse_threads {} must be in [1, {}] (0: the default)",
               option, kMax);
    return option;
  }
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return static_cast<int>(GetEnvIntInRange("WEFT_LIBSVM_PARSE_THREADS", std::min(2, cores), 1, kMax,
                                           "the number of threads that parse LibSVMIter's batches"));
}

}  // namespace

// The producer: batch k's lines are cut in the ordered stage (the reading state below is touched
// only there, and by Restart while the workers are stopped), then parsed on the worker.
struct LibSVMProducer : ThreadedDataIter::Producer {
  LibSVMProducer(const LibSVMIterOptions& o, int workers)
      : o(o),
        pool(std::make_shared<BlockPool>()),
        data(o.data_libsvm, o.num_parts, o.part_index, pool),
        loader(o.round_batch),
        last_nnz(static_cast<size_t>(workers)) {
    if (o.label_libsvm != "NULL") label.emplace(o.label_libsvm, o.num_parts, o.part_index, pool);
  }

  void Restart(uint64_t delivered) override {
    stage.Reset();
    loader.Restart(delivered, [&] { Rewind(); });
  }

  bool Produce(uint64_t k, DataBatch* out, const ThreadedDataIter::Worker& worker) override {
    Cut cut;
    out->index.assign(static_cast<size_t>(o.batch_size), 0);
    // Entered on every path (OrderedStage's rule); a failed cut still parses its lines first.
    stage.Enter(k, [&] { return CutBatch(k, &cut, out); });
    if (cut.rows == 0 && !cut.error) return false;
    if (worker.stopping()) return false;  // dropped anyway: skip the parse
    Parse(cut, out, &last_nnz[static_cast<size_t>(worker.index())]);
    return true;
  }

  // In the ordered stage: takes batch k's lines (BatchLoader's rule), their example numbers and pad.
  // Returns false when that failed (the error is in cut->error).
  bool CutBatch(uint64_t k, Cut* cut, DataBatch* out) {
    const auto batch = static_cast<size_t>(o.batch_size);
    cut->data.lines.reserve(batch);
    cut->data.at.reserve(batch);
    auto read = [&](size_t i) {
      std::string_view line;
      if (!data.Next(&line)) return false;
      cut->data.Add(data, line);
      if (label) {
        WEFT_CHECK(label->Next(&line), "LibSVMIter: '{}' has fewer lines than '{}' ({} has no label line)",
                   label->path(), data.path(), data.Where());
        cut->label.Add(*label, line);
      }
      out->index[i] = example++;
      return true;
    };
    try {
      cut->rows = loader.Fill(
          k, batch, &out->pad_num, read, [&] { Rewind(); }, fmt::format("LibSVMIter: '{}'", data.path()));
      return true;
    } catch (...) {
      cut->error = std::current_exception();
      return false;
    }
  }

  // On the worker: the cut lines into the batch's arrays, then the cut's error if it has one.
  void Parse(const Cut& cut, DataBatch* out, size_t* last) const {
    CsrBuilder d, l;
    const size_t lines = cut.data.lines.size();
    std::vector<float> labels(static_cast<size_t>(o.batch_size));
    // Room for a batch like the last one: the vectors then never grow while it is parsed.
    d.indices.reserve(*last);
    d.values.reserve(*last);
    d.indptr.reserve(lines + 1);
    for (size_t i = 0; i < lines; ++i) {
      labels[i] = d.AddLine(cut.data.lines[i], o.data_shape[0], data, cut.data.at[i]);
      if (i < cut.label.lines.size()) l.AddLine(cut.label.lines[i], o.label_shape[0], *label, cut.label.at[i]);
    }
    if (cut.error) std::rethrow_exception(cut.error);
    *last = d.indices.size() + d.indices.size() / 8;
    out->data = std::move(d).Finish(o.data_shape[0]);
    out->label = label ? std::move(l).Finish(o.label_shape[0]) : Adopt(std::move(labels), DType::kFloat32);
  }

  void Rewind() {
    data.Rewind();
    if (label) label->Rewind();
    example = 0;
  }

  LibSVMIterOptions o;
  std::shared_ptr<BlockPool> pool;
  PartLines data;
  std::optional<PartLines> label;
  io_detail::BatchLoader loader;
  io_detail::OrderedStage stage;
  std::vector<size_t> last_nnz;  // per worker: stored values of its last batch, with room to spare
  int example = 0;               // examples read since the start of the part
};

LibSVMIter::LibSVMIter(const LibSVMIterOptions& o) {
  WEFT_CHECK(!o.data_libsvm.empty(), "LibSVMIter: data_libsvm is required");
  WEFT_CHECK(o.batch_size >= 1, "LibSVMIter: batch_size must be at least 1, got {}", o.batch_size);
  WEFT_CHECK(o.data_shape.ndim() == 1 && o.data_shape[0] >= 1,
             "LibSVMIter: data_shape {} must be 1-d: (number of features,)", o.data_shape);
  WEFT_CHECK(o.label_shape.ndim() == 1 && o.label_shape[0] >= 1,
             "LibSVMIter: label_shape {} must be 1-d: (label columns,)", o.label_shape);
  WEFT_CHECK(o.label_libsvm != "NULL" || o.label_shape[0] == 1,
             "LibSVMIter: label_shape {} needs label_libsvm; the data file holds one label per line", o.label_shape);
  WEFT_CHECK(o.round_batch, "LibSVMIter: round_batch must be true (MXNet's sparse batch loader supports no other)");
  WEFT_CHECK(o.num_parts >= 1 && o.part_index >= 0 && o.part_index < o.num_parts,
             "LibSVMIter: part_index {} must be in [0, num_parts {})", o.part_index, o.num_parts);
  WEFT_CHECK(o.prefetch_buffer >= 0, "LibSVMIter: prefetch_buffer must not be negative");
  data_ = {"data", Shape(o.batch_size, o.data_shape[0]), DType::kFloat32};
  label_ = {
      "softmax_label",
      o.label_libsvm == "NULL" ? Shape(static_cast<int64_t>(o.batch_size)) : Shape(o.batch_size, o.label_shape[0]),
      DType::kFloat32};
  const int workers = ParseThreads(o.parse_threads);
  // Each worker may hold one batch in production beside the prefetch_buffer made ones.
  StartWorkers(std::make_unique<LibSVMProducer>(o, workers), workers,
               static_cast<size_t>(std::max(o.prefetch_buffer, 1)) + static_cast<size_t>(workers - 1));
}

}  // namespace weft
