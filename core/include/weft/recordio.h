// weft — RecordIO: MXNet's binary record files (.rec), their index files (.idx) and the image
// record header, byte-compatible with dmlc-core's RecordIOWriter/RecordIOReader and MXNet's
// mx.recordio (MXRecordIO, MXIndexedRecordIO, IRHeader, pack/unpack).
//
// Format (dmlc-core include/dmlc/recordio.h; all integers little-endian uint32):
//   a record is one or more parts; each part is
//     kRecordIOMagic | lrec | payload (length bytes) | zero padding to a multiple of 4 bytes
//   lrec = cflag << 29 | length (length < 2^29); cflag 0 = a whole record, 1 = first part,
//   2 = middle part, 3 = last part.
//   The writer splits a record where its payload holds the magic number at a 4-byte-aligned
//   offset: that word is dropped from the file and the record continues in a new part; the reader
//   joins the parts, putting the magic back between them. So the magic appears in a file only at
//   the start of a part, and a reader can find the next record from any 4-byte-aligned offset
//   (the partitioning below relies on it).
//   Record offsets (Tell, the .idx file) are byte offsets of a record's first part from the start
//   of the file; they are multiples of 4.
// Index (.idx, written by MXNet's MXIndexedRecordIO and im2rec.py): one text line per record,
//   "<key>\t<offset>\n", key a non-negative integer, offset the record's byte offset.
// Image records (MXNet's IRHeader, struct format "IfQQ", 24 bytes) start the payload of each
//   record of an image .rec: uint32 flag, float32 label, uint64 id, uint64 id2. flag 0: the label
//   is the one float; flag n > 0: n float32 labels follow the header (and `label` is unused).
//   The encoded image (JPEG, PNG, ...) is the rest of the payload.
//
// Errors: every function throws weft::Error naming the file and, for a bad record, its byte
// offset and what is wrong (bad magic, a length past the end of the file, parts out of order, a
// truncated record, an index line that is not "<key> <offset>", an offset past the end).
// Thread-safety: one object belongs to one thread, except where a function says otherwise.
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

/// dmlc-core's RecordIO magic number (RecordIOWriter::kMagic).
inline constexpr uint32_t kRecordIOMagic = 0xced7230a;
/// Largest payload of one record part (the length field has 29 bits). A record holds parts of
/// at most this size between the magic words it contains.
inline constexpr uint64_t kRecordIOMaxPartBytes = (uint64_t{1} << 29) - 1;

/// Writes a .rec file. Records go to a hidden temporary file next to `path` that Close() (or the
/// destructor) renames over `path`, so an interrupted writer never leaves a torn file under the
/// final name (MXNet writes in place). Buffered: bytes reach the file at Close().
class WEFT_API RecordIOWriter {
 public:
  /// Starts a new file at `path` (an existing one is replaced at Close()). Throws weft::Error
  /// when the directory does not exist or is not writable.
  explicit RecordIOWriter(const std::string& path);
  /// Closes (renames) unless Close() was called; errors are logged, not thrown.
  ~RecordIOWriter();
  RecordIOWriter(const RecordIOWriter&) = delete;
  RecordIOWriter& operator=(const RecordIOWriter&) = delete;

  /// Appends one record of `size` bytes (any bytes, also empty). Throws weft::Error after Close(),
  /// on a write error (disk full), or when a run of the payload between two aligned magic words
  /// is 2^29 bytes or longer (the format cannot say so; dmlc-core writes a corrupt file then).
  void WriteRecord(const void* data, size_t size);
  void WriteRecord(std::string_view record) { WriteRecord(record.data(), record.size()); }
  /// Byte offset at which the next record starts (= bytes written so far): the offset an index
  /// file stores for it (MXNet's MXRecordIOWriterTell).
  uint64_t Tell() const noexcept { return offset_; }
  /// Flushes, syncs and renames the file into place. Idempotent. Throws weft::Error on failure
  /// (the temporary file is removed).
  void Close();
  const std::string& path() const noexcept { return path_; }

 private:
  void Put(const void* data, size_t size);
  std::string path_, tmp_path_;
  std::FILE* file_ = nullptr;
  uint64_t offset_ = 0;
};

/// Reads a .rec file: sequentially (ReadRecord), from a byte offset (Seek, ReadRecordAt).
class WEFT_API RecordIOReader {
 public:
  /// Opens `path`. `buffer_bytes` is the size of the read buffer for ReadRecord (records larger
  /// than it are read directly; tests use a small one). Throws weft::Error when the file cannot
  /// be opened or its size is not a multiple of 4 (no RecordIO file is).
  explicit RecordIOReader(const std::string& path, size_t buffer_bytes = size_t{1} << 20);
  ~RecordIOReader();
  RecordIOReader(const RecordIOReader&) = delete;
  RecordIOReader& operator=(const RecordIOReader&) = delete;

  /// Reads the record at Tell() into *record (its parts joined) and moves past it. Returns false
  /// at the end of the file (record left empty). Throws weft::Error naming the file and offset
  /// for a corrupt or truncated record.
  bool ReadRecord(std::string* record);
  /// Moves to byte `offset`, which must be the start of a record (0, a Tell() value, an .idx
  /// offset) or the file size. Throws weft::Error for an offset past the end or not a multiple of
  /// 4; a misplaced offset is reported by the next ReadRecord.
  void Seek(uint64_t offset);
  /// Byte offset of the next record ReadRecord returns (MXNet's MXRecordIOReaderTell).
  uint64_t Tell() const noexcept { return offset_; }
  /// Reads the record starting at byte `offset` into *record and returns the offset after it.
  /// Does not move Tell(). Thread-safe (positional reads): decode workers share one reader.
  uint64_t ReadRecordAt(uint64_t offset, std::string* record) const;
  /// The offset after the record starting at `offset`, reading only its part headers (validated as
  /// ReadRecordAt does). Thread-safe.
  uint64_t SkipRecord(uint64_t offset) const;
  /// The first record start at or after `offset` rounded up to 4 (an aligned magic word followed
  /// by continuation flag 0 or 1: dmlc-core's SeekRecordBegin), or file_size() when none follows.
  /// Thread-safe.
  uint64_t FindRecordStart(uint64_t offset) const;
  /// Reads `bytes` raw bytes at `offset` into `out` (e.g. a record's extent from
  /// RecordIOPartition, parsed with ParseRecordIO). Throws weft::Error when they are not all in
  /// the file. Thread-safe.
  void ReadBytes(uint64_t offset, size_t bytes, void* out) const;
  uint64_t file_size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }

 private:
  uint64_t ReadRecordBuffered(std::string* record);
  bool Fill(uint64_t offset, size_t bytes);
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t offset_ = 0;
  std::vector<char> buffer_;
  uint64_t buffer_offset_ = 0;  // file offset of buffer_[0]
  size_t buffer_fill_ = 0;      // valid bytes in buffer_
};

/// Parses the record at byte `pos` of `data` (a whole file or a read window that starts at a
/// record) into *record, returning the offset just past it. `file` and `file_offset` (of
/// data[0]) only name the place in errors. Throws weft::Error for bad magic, a part running past
/// the end of `data`, or parts out of order.
WEFT_API size_t ParseRecordIO(std::span<const uint8_t> data, size_t pos, std::string* record, std::string_view file,
                              uint64_t file_offset = 0);

/// One line of an .idx file.
struct WEFT_API RecordIOIndexEntry {
  uint64_t key = 0;
  uint64_t offset = 0;
};
/// Reads an .idx file (lines "<key>\t<offset>"; blank lines are skipped). Entries keep the file's
/// order. When `rec_size` is given, every offset must be a multiple of 4 and below it. Throws
/// weft::Error naming the file and line.
WEFT_API std::vector<RecordIOIndexEntry> ReadRecordIOIndex(const std::string& idx_path,
                                                           std::optional<uint64_t> rec_size = std::nullopt);

/// Writes a .rec file and its .idx together (MXIndexedRecordIO in 'w' mode): Write(key, record)
/// appends the record and the line "<key>\t<offset>". Both files appear at Close().
class WEFT_API IndexedRecordIOWriter {
 public:
  IndexedRecordIOWriter(const std::string& idx_path, const std::string& rec_path);
  ~IndexedRecordIOWriter();
  IndexedRecordIOWriter(const IndexedRecordIOWriter&) = delete;
  IndexedRecordIOWriter& operator=(const IndexedRecordIOWriter&) = delete;
  void Write(uint64_t key, std::string_view record);
  /// Closes the .rec, then writes the .idx atomically. Idempotent.
  void Close();

 private:
  std::string idx_path_;
  RecordIOWriter rec_;
  std::string index_;
  bool closed_ = false;
};

/// Reads records by key through an .idx file (MXIndexedRecordIO in 'r' mode).
class WEFT_API IndexedRecordIOReader {
 public:
  /// Reads the index; throws weft::Error as ReadRecordIOIndex, or for a key listed twice.
  IndexedRecordIOReader(const std::string& idx_path, const std::string& rec_path);
  /// The keys in index-file order.
  const std::vector<uint64_t>& keys() const noexcept { return keys_; }
  /// The record of `key`. Throws weft::Error for an unknown key or a corrupt record.
  std::string ReadIdx(uint64_t key) const;
  const RecordIOReader& reader() const noexcept { return reader_; }

 private:
  RecordIOReader reader_;
  std::vector<uint64_t> keys_;
  std::vector<std::pair<uint64_t, uint64_t>> sorted_;  // (key, offset) by key
};

/// Where one record lies in a .rec file.
struct WEFT_API RecordIOExtent {
  uint64_t offset = 0;  ///< byte offset of its first part
  uint64_t bytes = 0;   ///< bytes up to the next record (all its parts, headers and padding)
};

/// The records of part `part_index` of `num_parts` of a .rec file, in file order, as MXNet's
/// ImageRecordIter reads them (dmlc-core's InputSplit):
///  - without an index (`idx_path` empty): the file is cut into num_parts byte ranges of
///    ceil(size / num_parts) bytes rounded up to 4; a part holds the records that start in its
///    range (InputSplitBase::ResetPartition);
///  - with an index: the index offsets, sorted, are cut into parts of ceil(n / num_parts) records
///    (IndexedRecordIOSplitter::ResetPartition); a record's extent runs to the next indexed offset
///    (or the end of the file).
/// Every record belongs to exactly one part; a part may be empty. Reads the record headers of the
/// range (without an index) or the index file. Throws weft::Error for num_parts < 1, part_index
/// outside 0..num_parts-1, or a corrupt file or index.
WEFT_API std::vector<RecordIOExtent> RecordIOPartition(const std::string& rec_path, const std::string& idx_path,
                                                       int num_parts, int part_index);

/// MXNet's IRHeader (mx.recordio.IRHeader; image_recordio.h ImageRecordIO::Header).
struct WEFT_API ImageRecordHeader {
  uint32_t flag = 0;  ///< 0: one label in `label`; n > 0: n labels in `labels`
  float label = 0;
  uint64_t id = 0;            ///< image index (im2rec: the .lst index)
  uint64_t id2 = 0;           ///< unused by MXNet's tools
  std::vector<float> labels;  ///< the flag > 0 labels
};
/// Size of the fixed header in bytes.
inline constexpr size_t kImageRecordHeaderBytes = 24;

/// mx.recordio.pack: the header, then labels.size() float32 labels, then `payload`. As in MXNet,
/// `flag` is written as labels.size() whatever it holds, and `label` as 0 when there are labels.
WEFT_API std::string PackImageRecord(const ImageRecordHeader& header, std::span<const uint8_t> payload);
/// mx.recordio.unpack: the header of `record`, and in *payload the bytes after it (and after its
/// labels). Throws weft::Error when the record is shorter than the header and its labels.
WEFT_API ImageRecordHeader UnpackImageRecord(std::span<const uint8_t> record, std::span<const uint8_t>* payload);

}  // namespace weft
