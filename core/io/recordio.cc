// RecordIO files, index files and image record headers (weft/recordio.h).
#include "weft/recordio.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/atomic_file.h"
#include "base/untrusted.h"
#include "weft/base.h"
#include "weft/logging.h"

namespace weft {
namespace {

constexpr uint32_t kLengthMask = (1u << 29) - 1;

uint32_t Load32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // the format is little-endian, as every host weft runs on
  return v;
}

uint64_t Padded(uint64_t n) { return (n + 3) & ~uint64_t{3}; }

// The record starting at `start`: its parts are read through `read(dst, n, pos)`, which must
// deliver exactly n bytes at pos (pos + n <= end is checked here first). Returns the offset past
// the record. One implementation for files (pread, buffered) and memory.
template <typename ReadFn>
uint64_t ReadParts(ReadFn&& read, uint64_t start, uint64_t end, std::string* out, std::string_view file) {
  if (out) out->clear();
  uint64_t pos = start;
  for (int part = 0;; ++part) {
    WEFT_CHECK(pos + 8 <= end,
               "'{}': the record at byte offset {} is truncated: {} bytes left where a part header (8 bytes) should "
               "be; the file is incomplete or the offset is not a record's",
               file, start, end - pos);
    uint32_t header[2];
    read(header, 8, pos);
    WEFT_CHECK(header[0] == kRecordIOMagic,
               "'{}': no RecordIO record at byte offset {}: found 0x{:08x} where the magic number 0x{:08x} should be "
               "(not a .rec file, a corrupt file, or an index offset that is not a record's)",
               file, pos, header[0], kRecordIOMagic);
    const uint32_t cflag = header[1] >> 29, len = header[1] & kLengthMask;
    if (part == 0) {
      WEFT_CHECK(cflag == 0 || cflag == 1,
                 "'{}': byte offset {} is the middle or end (continuation flag {}) of a record, not its start", file,
                 pos, cflag);
    } else {
      WEFT_CHECK(cflag == 2 || cflag == 3,
                 "'{}': the record at byte offset {} is corrupt: part {} at offset {} has continuation flag {} (2 or "
                 "3 expected)",
                 file, start, part, pos, cflag);
    }
    WEFT_CHECK(pos + 8 + Padded(len) <= end,
               "'{}': the record at byte offset {} is truncated: its part at offset {} announces {} bytes but only {} "
               "remain in the file",
               file, start, pos, len, end - pos - 8);
    if (out) {
      const size_t old = out->size();
      out->resize(old + len);
      if (len) read(out->data() + old, len, pos + 8);
    }
    pos += 8 + Padded(len);
    if (cflag == 0 || cflag == 3) return pos;
    if (out) out->append(reinterpret_cast<const char*>(&kRecordIOMagic), 4);  // the word the writer dropped
  }
}

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

// ---- writer ------------------------------------------------------------------------------------

RecordIOWriter::RecordIOWriter(const std::string& path) : path_(path), tmp_path_(detail::TempNameFor(path).string()) {
  file_ = std::fopen(tmp_path_.c_str(), "wbx");
  WEFT_CHECK(file_ != nullptr, "cannot write RecordIO file '{}': creating '{}' failed: {}", path, tmp_path_,
             ErrnoText());
  std::setvbuf(file_, nullptr, _IOFBF, size_t{1} << 20);
}

RecordIOWriter::~RecordIOWriter() {
  try {
    Close();
  } catch (const std::exception& e) {
    LogError("{}", e.what());
  }
}

void RecordIOWriter::Put(const void* data, size_t size) {
  if (size == 0) return;
  if (std::fwrite(data, 1, size, file_) != size)
    Fail("cannot write RecordIO file '{}': writing '{}' failed: {}", path_, tmp_path_, ErrnoText());
  offset_ += size;
}

void RecordIOWriter::WriteRecord(const void* data, size_t size) {
  WEFT_CHECK(file_ != nullptr, "RecordIOWriter: '{}' is closed; no more records can be written", path_);
  const auto* bytes = static_cast<const uint8_t*>(size ? data : "");
  // The cut points first (aligned magic words), so a record that cannot be written leaves the
  // file as it was.
  std::vector<size_t> cuts;
  for (size_t i = 0; i + 4 <= size; i += 4)
    if (Load32(bytes + i) == kRecordIOMagic) cuts.push_back(i);
  size_t from = 0;
  for (size_t i = 0; i <= cuts.size(); ++i) {
    const size_t to = i < cuts.size() ? cuts[i] : size;
    WEFT_CHECK(to - from <= kRecordIOMaxPartBytes,
               "RecordIOWriter '{}': a record of {} bytes has a run of {} bytes without the magic number; RecordIO "
               "parts are limited to 2^29 - 1 bytes (split the data into several records)",
               path_, size, to - from);
    from = to + 4;
  }
  from = 0;
  for (size_t i = 0; i <= cuts.size(); ++i) {
    const bool last = i == cuts.size();
    const size_t to = last ? size : cuts[i];
    const uint32_t cflag = last ? (cuts.empty() ? 0 : 3) : (i == 0 ? 1 : 2);
    const uint32_t header[2] = {kRecordIOMagic, cflag << 29 | static_cast<uint32_t>(to - from)};
    Put(header, 8);
    Put(bytes + from, to - from);
    from = to + 4;
  }
  const uint32_t zero = 0;
  Put(&zero, Padded(size) - size);
}

void RecordIOWriter::Close() {
  if (file_ == nullptr) return;
  std::FILE* f = file_;
  file_ = nullptr;
  const bool ok = std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const std::string why = ok ? "" : ErrnoText();
  if (std::fclose(f) != 0 || !ok) {
    ::unlink(tmp_path_.c_str());
    Fail("cannot write RecordIO file '{}': flushing '{}' failed: {}", path_, tmp_path_, ok ? ErrnoText() : why);
  }
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    const std::string err = ErrnoText();
    ::unlink(tmp_path_.c_str());
    Fail("cannot write RecordIO file '{}': renaming '{}' over it failed: {}", path_, tmp_path_, err);
  }
}

// ---- reader ------------------------------------------------------------------------------------

RecordIOReader::RecordIOReader(const std::string& path, size_t buffer_bytes)
    : path_(path), buffer_(std::max<size_t>(buffer_bytes, 64)) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  WEFT_CHECK(fd_ >= 0, "cannot open RecordIO file '{}': {}", path, ErrnoText());
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    Fail("cannot read RecordIO file '{}': not a regular file", path);
  }
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ % 4 != 0) {
    ::close(fd_);
    Fail("'{}' is not a RecordIO file: its size ({} bytes) is not a multiple of 4 (a truncated or foreign file)", path,
         size_);
  }
}

RecordIOReader::~RecordIOReader() {
  if (fd_ >= 0) ::close(fd_);
}

void RecordIOReader::ReadBytes(uint64_t offset, size_t bytes, void* out) const {
  WEFT_CHECK(offset <= size_ && bytes <= size_ - offset,
             "'{}': {} bytes at byte offset {} run past the end of the file ({} bytes)", path_, bytes, offset, size_);
  auto* p = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd_, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    WEFT_CHECK(n > 0, "cannot read RecordIO file '{}' at byte offset {}: {}", path_, offset,
               n == 0 ? std::string("the file became shorter while being read") : ErrnoText());
    p += n;
    bytes -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
}

uint64_t RecordIOReader::ReadRecordAt(uint64_t offset, std::string* record) const {
  WEFT_CHECK(offset <= size_, "'{}': byte offset {} is past the end of the file ({} bytes)", path_, offset, size_);
  return ReadParts([&](void* dst, size_t n, uint64_t pos) { ReadBytes(pos, n, dst); }, offset, size_, record, path_);
}

bool RecordIOReader::Fill(uint64_t offset, size_t bytes) {
  if (offset >= buffer_offset_ && offset + bytes <= buffer_offset_ + buffer_fill_) return true;
  if (bytes > buffer_.size()) return false;
  buffer_offset_ = offset;
  buffer_fill_ = static_cast<size_t>(std::min<uint64_t>(buffer_.size(), size_ - offset));
  ReadBytes(offset, buffer_fill_, buffer_.data());
  return true;
}

uint64_t RecordIOReader::ReadRecordBuffered(std::string* record) {
  auto read = [&](void* dst, size_t n, uint64_t pos) {
    if (Fill(pos, n)) {
      std::memcpy(dst, buffer_.data() + (pos - buffer_offset_), n);
    } else {
      ReadBytes(pos, n, dst);  // a part larger than the buffer
    }
  };
  return ReadParts(read, offset_, size_, record, path_);
}

bool RecordIOReader::ReadRecord(std::string* record) {
  if (offset_ >= size_) {
    record->clear();
    return false;
  }
  offset_ = ReadRecordBuffered(record);
  return true;
}

void RecordIOReader::Seek(uint64_t offset) {
  WEFT_CHECK(offset <= size_ && offset % 4 == 0,
             "RecordIOReader::Seek('{}', {}): {}; record offsets are multiples of 4 up to the file size ({} bytes)",
             path_, offset, offset > size_ ? "past the end of the file" : "not a multiple of 4", size_);
  offset_ = offset;
}

uint64_t RecordIOReader::SkipRecord(uint64_t offset) const {
  WEFT_CHECK(offset <= size_, "'{}': byte offset {} is past the end of the file ({} bytes)", path_, offset, size_);
  return ReadParts([&](void* dst, size_t n, uint64_t pos) { ReadBytes(pos, n, dst); }, offset, size_, nullptr, path_);
}

uint64_t RecordIOReader::FindRecordStart(uint64_t offset) const {
  uint64_t pos = Padded(std::min(offset, size_));
  std::vector<uint32_t> words(16384);
  while (pos + 8 <= size_) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(words.size() * 4, size_ - pos));
    ReadBytes(pos, n, words.data());
    // The last word of a block is looked at again with its successor (its flag word).
    const size_t count = n / 4;
    for (size_t i = 0; i + 1 < count; ++i)
      if (words[i] == kRecordIOMagic && (words[i + 1] >> 29) <= 1) return pos + 4 * i;
    if (n < words.size() * 4) break;
    pos += n - 4;
  }
  return size_;
}

// ---- memory ------------------------------------------------------------------------------------

size_t ParseRecordIO(std::span<const uint8_t> data, size_t pos, std::string* record, std::string_view file,
                     uint64_t file_offset) {
  WEFT_CHECK(pos <= data.size(), "'{}': offset {} is past the end of the data ({} bytes)", file, pos, data.size());
  // Offsets in messages are the file's: the reading happens at pos + file_offset.
  auto read = [&](void* dst, size_t n, uint64_t at) { std::memcpy(dst, data.data() + (at - file_offset), n); };
  return static_cast<size_t>(ReadParts(read, pos + file_offset, data.size() + file_offset, record, file) - file_offset);
}

// ---- index files -------------------------------------------------------------------------------

std::vector<RecordIOIndexEntry> ReadRecordIOIndex(const std::string& idx_path, std::optional<uint64_t> rec_size) {
  std::ifstream in(idx_path, std::ios::binary);
  WEFT_CHECK(in.good(), "cannot open RecordIO index '{}': {}", idx_path, ErrnoText());
  std::vector<RecordIOIndexEntry> out;
  std::string line;
  for (size_t lineno = 1; std::getline(in, line); ++lineno) {
    const char* p = line.data();
    const char* end = p + line.size();
    auto skip_space = [&] {
      while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
    };
    skip_space();
    if (p == end) continue;
    RecordIOIndexEntry e;
    auto r1 = std::from_chars(p, end, e.key);
    const bool key_ok = r1.ec == std::errc() && r1.ptr < end && (*r1.ptr == '\t' || *r1.ptr == ' ');
    p = r1.ptr;
    skip_space();
    auto r2 = std::from_chars(p, end, e.offset);
    p = r2.ptr;
    skip_space();
    WEFT_CHECK(key_ok && r2.ec == std::errc() && p == end,
               "RecordIO index '{}' line {}: expected '<key>\\t<offset>' (two non-negative integers), got '{}'",
               idx_path, lineno, detail::Excerpt(line, 80));
    if (rec_size) {
      WEFT_CHECK(e.offset < *rec_size && e.offset % 4 == 0,
                 "RecordIO index '{}' line {}: key {} points at byte offset {}, {} (the .rec file has {} bytes); "
                 "the index does not belong to this .rec file or one of them is damaged",
                 idx_path, lineno, e.key, e.offset,
                 e.offset >= *rec_size ? "past the end of the .rec file" : "which is not a multiple of 4", *rec_size);
    }
    out.push_back(e);
  }
  WEFT_CHECK(!in.bad(), "cannot read RecordIO index '{}': {}", idx_path, ErrnoText());
  return out;
}

IndexedRecordIOWriter::IndexedRecordIOWriter(const std::string& idx_path, const std::string& rec_path)
    : idx_path_(idx_path), rec_(rec_path) {
  detail::CheckCanWriteNextTo(idx_path, "RecordIO index");
}

IndexedRecordIOWriter::~IndexedRecordIOWriter() {
  try {
    Close();
  } catch (const std::exception& e) {
    LogError("{}", e.what());
  }
}

void IndexedRecordIOWriter::Write(uint64_t key, std::string_view record) {
  WEFT_CHECK(!closed_, "IndexedRecordIOWriter: '{}' is closed", idx_path_);
  const uint64_t at = rec_.Tell();
  rec_.WriteRecord(record);
  index_ += fmt::format("{}\t{}\n", key, at);
}

void IndexedRecordIOWriter::Close() {
  if (closed_) return;
  closed_ = true;
  rec_.Close();
  detail::WriteFileAtomically(idx_path_, {reinterpret_cast<const uint8_t*>(index_.data()), index_.size()},
                              "RecordIO index");
}

IndexedRecordIOReader::IndexedRecordIOReader(const std::string& idx_path, const std::string& rec_path)
    : reader_(rec_path) {
  for (const auto& e : ReadRecordIOIndex(idx_path, reader_.file_size())) {
    keys_.push_back(e.key);
    sorted_.emplace_back(e.key, e.offset);
  }
  std::sort(sorted_.begin(), sorted_.end());
  for (size_t i = 1; i < sorted_.size(); ++i)
    WEFT_CHECK(sorted_[i].first != sorted_[i - 1].first, "RecordIO index '{}' lists key {} twice", idx_path,
               sorted_[i].first);
}

std::string IndexedRecordIOReader::ReadIdx(uint64_t key) const {
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::make_pair(key, uint64_t{0}));
  WEFT_CHECK(it != sorted_.end() && it->first == key, "'{}': no record with key {} in its index", reader_.path(), key);
  std::string out;
  reader_.ReadRecordAt(it->second, &out);
  return out;
}

// ---- partitions --------------------------------------------------------------------------------

std::vector<RecordIOExtent> RecordIOPartition(const std::string& rec_path, const std::string& idx_path, int num_parts,
                                              int part_index) {
  WEFT_CHECK(num_parts >= 1 && part_index >= 0 && part_index < num_parts,
             "RecordIO partition of '{}': part_index {} is outside 0..num_parts-1 (num_parts {})", rec_path, part_index,
             num_parts);
  RecordIOReader reader(rec_path);
  const uint64_t size = reader.file_size();
  const auto parts = static_cast<uint64_t>(num_parts), rank = static_cast<uint64_t>(part_index);
  std::vector<RecordIOExtent> out;
  if (!idx_path.empty()) {
    std::vector<uint64_t> offsets;
    for (const auto& e : ReadRecordIOIndex(idx_path, size)) offsets.push_back(e.offset);
    std::sort(offsets.begin(), offsets.end());
    for (size_t i = 1; i < offsets.size(); ++i)
      WEFT_CHECK(offsets[i] != offsets[i - 1], "RecordIO index '{}' lists byte offset {} twice", idx_path, offsets[i]);
    const uint64_t n = offsets.size(), step = (n + parts - 1) / parts;
    for (uint64_t i = rank * step; i < std::min(n, (rank + 1) * step); ++i)
      out.push_back({offsets[i], (i + 1 < n ? offsets[i + 1] : size) - offsets[i]});
    return out;
  }
  const uint64_t step = Padded((size + parts - 1) / parts);
  const uint64_t begin = std::min(step * rank, size), end = std::min(step * (rank + 1), size);
  if (begin == end) return out;
  for (uint64_t pos = begin == 0 ? 0 : reader.FindRecordStart(begin); pos < end && pos < size;) {
    const uint64_t next = reader.SkipRecord(pos);
    out.push_back({pos, next - pos});
    pos = next;
  }
  return out;
}

// ---- image records -----------------------------------------------------------------------------

std::string PackImageRecord(const ImageRecordHeader& header, std::span<const uint8_t> payload) {
  std::string out(kImageRecordHeaderBytes + 4 * header.labels.size() + payload.size(), '\0');
  // As mx.recordio.pack: the flag is the number of labels that follow, whatever the caller set.
  const auto flag = static_cast<uint32_t>(header.labels.size());
  const float label = header.labels.empty() ? header.label : 0.0f;
  char* p = out.data();
  std::memcpy(p, &flag, 4);
  std::memcpy(p + 4, &label, 4);
  std::memcpy(p + 8, &header.id, 8);
  std::memcpy(p + 16, &header.id2, 8);
  if (!header.labels.empty()) std::memcpy(p + 24, header.labels.data(), 4 * header.labels.size());
  if (!payload.empty()) std::memcpy(p + 24 + 4 * header.labels.size(), payload.data(), payload.size());
  return out;
}

ImageRecordHeader UnpackImageRecord(std::span<const uint8_t> record, std::span<const uint8_t>* payload) {
  WEFT_CHECK(record.size() >= kImageRecordHeaderBytes,
             "image record of {} bytes is shorter than its header (24 bytes: flag, label, id, id2)", record.size());
  ImageRecordHeader h;
  std::memcpy(&h.flag, record.data(), 4);
  std::memcpy(&h.label, record.data() + 4, 4);
  std::memcpy(&h.id, record.data() + 8, 8);
  std::memcpy(&h.id2, record.data() + 16, 8);
  size_t at = kImageRecordHeaderBytes;
  if (h.flag > 0) {
    WEFT_CHECK(h.flag <= (record.size() - at) / 4,
               "image record (id {}) of {} bytes: its header announces {} labels ({} bytes) but only {} bytes follow "
               "the header",
               h.id, record.size(), h.flag, uint64_t{h.flag} * 4, record.size() - at);
    h.labels.resize(h.flag);
    std::memcpy(h.labels.data(), record.data() + at, 4 * size_t{h.flag});
    at += 4 * size_t{h.flag};
  }
  if (payload) *payload = record.subspan(at);
  return h;
}

}  // namespace weft
