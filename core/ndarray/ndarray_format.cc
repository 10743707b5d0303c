#include "weft/ndarray_format.h"

#include "base/atomic_file.h"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace weft {

static_assert(std::endian::native == std::endian::little,
              "the NDArray list format is little-endian; a big-endian port must byte-swap here");

namespace {

// Cursor over the input that turns every short read into an error naming where it happened.
class ByteReader {
 public:
  ByteReader(std::span<const uint8_t> bytes, std::string_view source) : bytes_(bytes), source_(source) {}

  size_t offset() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  // Prefix for errors: "<source>: <where>" where `where` is set by the caller.
  void SetWhere(std::string where) { where_ = std::move(where); }
  std::string Where() const { return fmt::format("{}: {}", source_, where_); }

  template <typename... Args>
  [[noreturn]] void Bad(fmt::format_string<Args...> f, Args&&... args) const {
    Fail("{}: {}: {}", source_, where_, fmt::format(f, std::forward<Args>(args)...));
  }

  template <typename T>
  T Read(std::string_view what) {
    if (remaining() < sizeof(T))
      Bad("truncated: {} needs {} bytes at byte {} but only {} remain", what, sizeof(T), pos_, remaining());
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::span<const uint8_t> Take(uint64_t n, std::string_view what) {
    if (remaining() < n) Bad("truncated: {} needs {} bytes at byte {} but only {} remain", what, n, pos_, remaining());
    auto s = bytes_.subspan(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  std::span<const uint8_t> bytes_;
  std::string_view source_;
  std::string where_;
  size_t pos_ = 0;
};

// Reads a v1+ shape (i32 ndim, ndim x i64). Returns false when the shape is "none" under the
// record's semantics; `r.shape` is set otherwise.
bool ReadShape(ByteReader& in, int version, NDArrayRecord& r) {
  const auto ndim = in.Read<int32_t>("ndim");
  if (version == 3 && ndim == -1) return false;
  if (ndim < 0 || ndim > kNDArrayMaxNDim)
    in.Bad("ndim {} is out of range (0..{}); the file is corrupt", ndim, kNDArrayMaxNDim);
  if (version < 3 && ndim == 0) return false;
  std::vector<int64_t> dims(static_cast<size_t>(ndim));
  bool none = false;
  for (int32_t i = 0; i < ndim; ++i) {
    dims[i] = in.Read<int64_t>("shape extent");
    if (version == 3 && dims[i] == -1) {
      none = true;
    } else if (dims[i] < 0) {
      in.Bad("extent {} of the shape is {}; extents cannot be negative", i, dims[i]);
    } else if (version == 2 && dims[i] == 0) {
      none = true;  // MXNet's legacy shapes use 0 for "unknown"
    }
  }
  r.shape = Shape(std::move(dims));
  return !none;
}

bool ReadLegacyShape(ByteReader& in, uint32_t ndim, NDArrayRecord& r) {
  if (ndim > static_cast<uint32_t>(kNDArrayMaxNDim))
    in.Bad("ndim {} is out of range (0..{}), or the record magic is unknown; the file is corrupt", ndim,
           kNDArrayMaxNDim);
  if (ndim == 0) return false;
  std::vector<int64_t> dims(ndim);
  bool none = false;
  for (uint32_t i = 0; i < ndim; ++i) {
    dims[i] = in.Read<uint32_t>("shape extent");
    if (dims[i] == 0) none = true;
  }
  r.shape = Shape(std::move(dims));
  return !none;
}

// A sparse record's storage or aux shape: any ndim 0..kNDArrayMaxNDim, extents >= 0 (0 is real).
Shape ReadPartShape(ByteReader& in, std::string_view what) {
  const auto ndim = in.Read<int32_t>("ndim");
  if (ndim < 0 || ndim > kNDArrayMaxNDim)
    in.Bad("ndim {} of the {} is out of range (0..{}); the file is corrupt", ndim, what, kNDArrayMaxNDim);
  std::vector<int64_t> dims(static_cast<size_t>(ndim));
  for (auto& d : dims) {
    d = in.Read<int64_t>("shape extent");
    if (d < 0) in.Bad("an extent of the {} is {}; extents cannot be negative", what, d);
  }
  return Shape(std::move(dims));
}

DType ReadDType(ByteReader& in, std::string_view what) {
  const auto dtype = in.Read<int32_t>(what);
  if (!IsValidDType(dtype)) in.Bad("{} code {} is not a known dtype (valid codes are 0..12)", what, dtype);
  return static_cast<DType>(dtype);
}

// The C-order elements of `shape` and `dtype`. Each extent was checked non-negative; the product
// may still overflow, so it is bounded by the bytes that remain (an element is at least one byte)
// step by step.
std::vector<uint8_t> ReadData(ByteReader& in, const Shape& shape, DType dtype, std::string_view what) {
  const uint64_t elem = DTypeSize(dtype);
  uint64_t count = 1;
  const uint64_t limit = in.remaining() / elem;
  for (int64_t d : shape) {
    if (d != 0 && count > limit / static_cast<uint64_t>(d)) {
      in.Bad("{} of shape {} {} needs more data than the {} bytes left in the input; the file is truncated or corrupt",
             what, shape, DTypeName(dtype), in.remaining());
    }
    count *= static_cast<uint64_t>(d);
  }
  auto data = in.Take(count * elem, fmt::format("{} of shape {} {}", what, shape, DTypeName(dtype)));
  return {data.begin(), data.end()};
}

// The parts of a sparse record after the dtype: aux dtypes and shapes, values, aux data. The
// result is checked as MXNet's check_format(full_check=True) would.
void ReadSparseParts(ByteReader& in, NDArrayRecord& r) {
  // The full shape is not backed by data, so only its element count is bounded: it must be
  // representable (Shape::Size and every reader of the array compute it).
  uint64_t elements = 1;
  for (int64_t d : r.shape) {
    if (d != 0 && elements > (uint64_t{1} << 62) / static_cast<uint64_t>(d))
      in.Bad("the {} array's shape {} has more than 2^62 elements; the file is corrupt", StorageTypeName(r.stype),
             r.shape);
    elements *= static_cast<uint64_t>(d);
  }
  r.aux.resize(static_cast<size_t>(NumAuxData(r.stype)));
  for (auto& aux : r.aux) {
    aux.dtype = ReadDType(in, "aux dtype");
    aux.shape = ReadPartShape(in, "aux shape");
  }
  r.data = ReadData(in, r.storage_shape, r.dtype, "the values");
  for (auto& aux : r.aux) aux.data = ReadData(in, aux.shape, aux.dtype, "an aux array");
  CheckSparseFormat(r.stype, r.shape, r.storage_shape, r.aux, true,
                    fmt::format("{} ({} array of shape {})", in.Where(), StorageTypeName(r.stype), r.shape));
}

// v2/v3: the storage type, and for a sparse record its storage shape, then the shape.
bool ReadStypeAndShape(ByteReader& in, NDArrayRecord& r) {
  const auto stype = in.Read<int32_t>("storage type");
  if (stype < 0 || stype > 2)
    in.Bad("unknown storage type code {} (0 default, 1 row_sparse, 2 csr); the file is corrupt", stype);
  r.stype = static_cast<StorageType>(stype);
  if (r.stype != StorageType::kDefault) r.storage_shape = ReadPartShape(in, "storage shape");
  return ReadShape(in, r.version, r);
}

NDArrayRecord ReadRecord(ByteReader& in) {
  NDArrayRecord r;
  const auto magic = in.Read<uint32_t>("record magic");
  bool known_shape = false;
  switch (magic) {
    case kNDArrayRecordMagicV2:
    case kNDArrayRecordMagicV3:
      r.version = magic == kNDArrayRecordMagicV2 ? 2 : 3;
      known_shape = ReadStypeAndShape(in, r);
      break;
    case kNDArrayRecordMagicV1:
      r.version = 1;
      known_shape = ReadShape(in, 1, r);
      break;
    default:
      r.version = 0;
      known_shape = ReadLegacyShape(in, magic, r);
      break;
  }
  if (!known_shape) {
    // MXNet's empty NDArray, whatever storage type the record named.
    NDArrayRecord none;
    none.none = true;
    none.version = r.version;
    return none;
  }
  r.dev_type = in.Read<int32_t>("device type");
  r.dev_id = in.Read<int32_t>("device id");
  r.dtype = ReadDType(in, "dtype");
  if (r.stype != StorageType::kDefault) {
    ReadSparseParts(in, r);
  } else {
    r.data = ReadData(in, r.shape, r.dtype, "the data");
  }
  return r;
}

// Grows `out` and copies into the new tail. Not vector::insert(end, first, last): GCC 12 at -O3
// inlines insert's (unreachable, for an insert at end()) "move the elements after the insertion
// point" branch and reports a memmove into a zero-sized region (-Wstringop-overflow, a false
// positive: nothing follows end()). resize + memcpy has no such branch and copies the same bytes.
void AppendBytes(std::vector<uint8_t>& out, const void* p, size_t n) {
  if (n == 0) return;
  const size_t at = out.size();
  out.resize(at + n);
  std::memcpy(out.data() + at, p, n);
}
template <typename T>
void Append(std::vector<uint8_t>& out, T v) {
  AppendBytes(out, &v, sizeof(T));
}

void AppendShape(std::vector<uint8_t>& out, const Shape& shape) {
  Append<int32_t>(out, static_cast<int32_t>(shape.ndim()));
  for (int64_t d : shape) Append<int64_t>(out, d);
}

void CheckPartSize(const Shape& shape, DType dtype, size_t bytes, std::string_view what) {
  WEFT_CHECK(shape.ndim() <= static_cast<size_t>(kNDArrayMaxNDim), "cannot save {} of {} dimensions (at most {})", what,
             shape.ndim(), kNDArrayMaxNDim);
  for (int64_t d : shape) WEFT_CHECK(d >= 0, "cannot save {} of shape {}: extents cannot be negative", what, shape);
  const uint64_t expected = static_cast<uint64_t>(shape.Size()) * DTypeSize(dtype);
  WEFT_CHECK(bytes == expected, "cannot save {} of shape {} {}: it has {} bytes of data, expected {}", what, shape,
             DTypeName(dtype), bytes, expected);
}

// MXNet's NDArray::Save of a sparse array: storage shape before the shape, aux dtypes and shapes
// after the dtype, the values then the aux data at the end.
void AppendSparseRecord(std::vector<uint8_t>& out, const NDArrayRecord& r) {
  WEFT_CHECK(r.aux.size() == static_cast<size_t>(NumAuxData(r.stype)),
             "cannot save a {} array with {} aux arrays (it has {})", StorageTypeName(r.stype), r.aux.size(),
             NumAuxData(r.stype));
  for (int64_t d : r.shape) WEFT_CHECK(d >= 0, "cannot save an array of shape {}: extents cannot be negative", r.shape);
  CheckPartSize(r.storage_shape, r.dtype, r.data.size(), "the values of a sparse array");
  for (const auto& aux : r.aux) CheckPartSize(aux.shape, aux.dtype, aux.data.size(), "an aux array");
  Append<uint32_t>(out, kNDArrayRecordMagicV2);
  Append<int32_t>(out, static_cast<int32_t>(r.stype));
  AppendShape(out, r.storage_shape);
  AppendShape(out, r.shape);
  Append<int32_t>(out, r.dev_type);
  Append<int32_t>(out, r.dev_id);
  Append<int32_t>(out, static_cast<int32_t>(r.dtype));
  for (const auto& aux : r.aux) {
    Append<int32_t>(out, static_cast<int32_t>(aux.dtype));
    AppendShape(out, aux.shape);
  }
  AppendBytes(out, r.data.data(), r.data.size());
  for (const auto& aux : r.aux) AppendBytes(out, aux.data.data(), aux.data.size());
}

void AppendRecord(std::vector<uint8_t>& out, const NDArrayRecord& r) {
  if (r.none) {
    Append<uint32_t>(out, kNDArrayRecordMagicV2);
    Append<int32_t>(out, 0);
    Append<int32_t>(out, 0);
    return;
  }
  if (r.stype != StorageType::kDefault) {
    AppendSparseRecord(out, r);
    return;
  }
  CheckPartSize(r.shape, r.dtype, r.data.size(), "an array");
  bool v2_ok = r.shape.ndim() > 0;
  for (int64_t d : r.shape)
    if (d == 0) v2_ok = false;
  Append<uint32_t>(out, v2_ok ? kNDArrayRecordMagicV2 : kNDArrayRecordMagicV3);
  Append<int32_t>(out, 0);  // dense
  AppendShape(out, r.shape);
  Append<int32_t>(out, r.dev_type);
  Append<int32_t>(out, r.dev_id);
  Append<int32_t>(out, static_cast<int32_t>(r.dtype));
  AppendBytes(out, r.data.data(), r.data.size());
}

}  // namespace

NDArrayListData ParseNDArrayList(std::span<const uint8_t> bytes, std::string_view source) {
  ByteReader in(bytes, source);
  in.SetWhere("header");
  if (bytes.empty()) in.Bad("the input is empty; an NDArray list file starts with the magic 0x112");
  const auto magic = in.Read<uint64_t>("file magic");
  if (magic != kNDArrayListMagic)
    in.Bad("unknown magic 0x{:x}; not an MXNet NDArray list file (expected 0x{:x})", magic, kNDArrayListMagic);
  in.Read<uint64_t>("reserved field");
  const auto n = in.Read<uint64_t>("array count");
  // The smallest record (a v0 "none") is 4 bytes, so a count beyond remaining/4 cannot be real.
  if (n > in.remaining() / 4)
    in.Bad("the header declares {} arrays but only {} bytes follow; the file is truncated or corrupt", n,
           in.remaining());
  NDArrayListData out;
  out.arrays.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    in.SetWhere(fmt::format("record {} of {} at byte {}", i, n, in.offset()));
    out.arrays.push_back(ReadRecord(in));
  }
  in.SetWhere(fmt::format("names after {} records at byte {}", n, in.offset()));
  const auto k = in.Read<uint64_t>("name count");
  if (k != 0 && k != n) in.Bad("there are {} names for {} arrays; expected 0 or {}", k, n, n);
  out.names.reserve(k);
  for (uint64_t i = 0; i < k; ++i) {
    in.SetWhere(fmt::format("name {} of {} at byte {}", i, k, in.offset()));
    const auto len = in.Read<uint64_t>("name length");
    auto s = in.Take(len, "the name");
    out.names.emplace_back(reinterpret_cast<const char*>(s.data()), s.size());
  }
  if (in.remaining() != 0) {
    in.SetWhere("end of file");
    in.Bad("{} unexpected bytes after the names at byte {}; the file is corrupt", in.remaining(), in.offset());
  }
  return out;
}

NDArrayRecord ParseNDArrayRecord(std::span<const uint8_t> bytes, std::string_view source) {
  ByteReader in(bytes, source);
  in.SetWhere("record 0 of 1 at byte 0");
  NDArrayRecord r = ReadRecord(in);
  if (in.remaining() != 0) in.Bad("{} unexpected bytes after the record at byte {}", in.remaining(), in.offset());
  return r;
}

std::vector<uint8_t> SerializeNDArrayRecord(const NDArrayRecord& record) {
  std::vector<uint8_t> out;
  AppendRecord(out, record);
  return out;
}

std::vector<uint8_t> SerializeNDArrayList(const NDArrayListData& list) {
  WEFT_CHECK(list.names.empty() || list.names.size() == list.arrays.size(),
             "cannot save {} arrays with {} names: give no names or one per array", list.arrays.size(),
             list.names.size());
  std::vector<uint8_t> out;
  Append<uint64_t>(out, kNDArrayListMagic);
  Append<uint64_t>(out, 0);
  Append<uint64_t>(out, list.arrays.size());
  for (const auto& r : list.arrays) AppendRecord(out, r);
  Append<uint64_t>(out, list.names.size());
  for (const auto& name : list.names) {
    Append<uint64_t>(out, name.size());
    AppendBytes(out, name.data(), name.size());
  }
  return out;
}

namespace {

// Reads exactly `n` bytes unless the input ends first; returns how many were read.
size_t ReadUpTo(int fd, uint8_t* out, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::read(fd, out + done, n - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

// The file's bytes: mapped when it is a regular file (only the pages the parser touches are read,
// and the parse copies each record once), read in chunks otherwise (a pipe).
struct FileBytes {
  std::vector<uint8_t> owned;
  void* map = MAP_FAILED;
  size_t map_size = 0;
  std::span<const uint8_t> view;
  FileBytes() = default;
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  ~FileBytes() {
    if (map != MAP_FAILED) ::munmap(map, map_size);
  }
};

}  // namespace

NDArrayListData ReadNDArrayListFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Fail("cannot open NDArray file '{}': {}", path, std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) Fail("cannot read NDArray file '{}': {}", path, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) Fail("cannot read NDArray file '{}': it is a directory", path);
  // The magic first: /dev/zero or a 40 GB sparse file used to be read whole before it was checked.
  uint8_t head[8];
  const size_t got = ReadUpTo(fd, head, sizeof(head));
  uint64_t magic = 0;
  std::memcpy(&magic, head, got);
  if (got == 0) Fail("'{}': the file is empty; an NDArray list file starts with the magic 0x112", path);
  if (got < sizeof(head) || magic != kNDArrayListMagic) {
    Fail("'{}': {}; not an MXNet NDArray list file (expected the magic 0x{:x})", path,
         got < sizeof(head) ? fmt::format("only {} bytes long", got) : fmt::format("unknown magic 0x{:x}", magic),
         kNDArrayListMagic);
  }
  FileBytes bytes;
  if (S_ISREG(st.st_mode)) {
    bytes.map_size = static_cast<size_t>(st.st_size);
    bytes.map = ::mmap(nullptr, bytes.map_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (bytes.map == MAP_FAILED) Fail("cannot map NDArray file '{}': {}", path, std::strerror(errno));
    bytes.view = {static_cast<const uint8_t*>(bytes.map), bytes.map_size};
  } else {
    bytes.owned.assign(head, head + sizeof(head));
    uint8_t buf[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) Fail("cannot read NDArray file '{}': {}", path, std::strerror(errno));
      if (n == 0) break;
      bytes.owned.insert(bytes.owned.end(), buf, buf + n);
    }
    bytes.view = bytes.owned;
  }
  return ParseNDArrayList(bytes.view, path);
}

void WriteNDArrayListFile(const std::string& path, const NDArrayListData& list) {
  detail::WriteFileAtomically(path, SerializeNDArrayList(list), "NDArray file");
}

}  // namespace weft
