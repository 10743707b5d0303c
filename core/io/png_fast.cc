// The fast PNG path (io/png_fast.h). Each check below names the libpng behaviour it keeps: where
// libpng would fail or warn, this path declines and libpng runs.
#include "io/png_fast.h"

#include <libdeflate.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace weft::io_detail {
namespace {

uint32_t Big32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

bool Is(const uint8_t* type, const char* name) { return std::memcmp(type, name, 4) == 0; }

// libpng's limits for a row: its default user limit on width and height (1 000 000) and a 31-bit
// value.
constexpr uint32_t kMaxSide = 1000000;

// The largest IDAT chunk libpng accepts for an image whatever its chunk-size limit
// (png_check_chunk_length: the raw rows plus zlib's and deflate's overhead).
uint64_t IdatLimit(uint64_t height, uint64_t row_factor) {
  uint64_t limit = height * row_factor;
  const uint64_t factor = row_factor > 32566 ? 32566 : row_factor;
  limit += 6 + 5 * (limit / factor + 1);
  return limit < 0x7fffffff ? limit : 0x7fffffff;
}

// The Paeth predictor of the PNG specification (a: left, b: above, c: above left), in a form
// compilers make branch-free (the specification's if/else mispredicts on image data): the nearer
// of a and b (a on a tie), then c if it is nearer still.
inline int Paeth(int a, int b, int c) {
  const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
  const int ab = pb < pa ? b : a, pab = pb < pa ? pb : pa;
  return pc < pab ? c : ab;
}

// Undoes the filter of one row of n bytes (B bytes per pixel) in place, `prev` being the row above
// (unfiltered; zeros for the first row). False for a filter type that does not exist. Sub, Avg
// and Paeth carry the left pixel in registers: reading it back from the row just written costs a
// store-to-load round trip per byte, most of this function's time for gray images.
template <int B>
bool UnfilterRow(int type, uint8_t* __restrict cur, const uint8_t* __restrict prev, size_t n) {
  int a[B] = {}, c[B] = {};  // left and above-left, zeros left of the row
  switch (type) {
    case 0:
      return true;
    case 1:
      for (size_t x = 0; x < n; x += B)
        for (int k = 0; k < B; ++k) cur[x + k] = static_cast<uint8_t>(a[k] = (cur[x + k] + a[k]) & 0xff);
      return true;
    case 2:
      for (size_t x = 0; x < n; ++x) cur[x] = static_cast<uint8_t>(cur[x] + prev[x]);
      return true;
    case 3:
      for (size_t x = 0; x < n; x += B)
        for (int k = 0; k < B; ++k)
          cur[x + k] = static_cast<uint8_t>(a[k] = (cur[x + k] + ((a[k] + prev[x + k]) >> 1)) & 0xff);
      return true;
    case 4:
      for (size_t x = 0; x < n; x += B)
        for (int k = 0; k < B; ++k) {
          const int b = prev[x + k];
          cur[x + k] = static_cast<uint8_t>(a[k] = (cur[x + k] + Paeth(a[k], b, c[k])) & 0xff);
          c[k] = b;
        }
      return true;
    default:
      return false;  // libpng: "bad adaptive filter value"
  }
}

}  // namespace

FastPng::FastPng() : inflater_(libdeflate_alloc_decompressor()) {
  if (!inflater_) throw std::bad_alloc();
}

FastPng::~FastPng() { libdeflate_free_decompressor(inflater_); }

bool FastPng::Open(std::span<const uint8_t> bytes, int* width, int* height, int* channels) {
  bytes_ = bytes;
  zlib_ = {};
  const uint8_t* p = bytes.data();
  const size_t size = bytes.size();
  // The signature (checked by the caller), then IHDR: 13 bytes, first.
  if (size < 8 + 25 || Big32(p + 8) != 13 || !Is(p + 12, "IHDR")) return false;
  const uint8_t* ihdr = p + 16;
  const uint32_t w = Big32(ihdr), h = Big32(ihdr + 4);
  const int depth = ihdr[8], color = ihdr[9];
  // 8-bit gray (0) or RGB (2), compression 0, filter 0, no interlacing; libpng's size limits.
  if (w == 0 || h == 0 || w > kMaxSide || h > kMaxSide || depth != 8 || (color != 0 && color != 2) || ihdr[10] != 0 ||
      ihdr[11] != 0 || ihdr[12] != 0)
    return false;
  const int c = color == 2 ? 3 : 1;
  const uint64_t idat_limit = IdatLimit(h, uint64_t{w} * static_cast<uint64_t>(c) + 1);
  // Every chunk's CRC (libpng fails on a critical chunk's); after IHDR only IDATs (so in one run,
  // as libpng wants them), then IEND.
  size_t idat_first = 0, idat_bytes = 0, idat_chunks = 0;
  for (size_t pos = 8;;) {
    if (size - pos < 12) return false;  // truncated
    const uint32_t len = Big32(p + pos);
    const uint8_t* type = p + pos + 4;
    if (len > size - pos - 12) return false;
    if (libdeflate_crc32(0, type, size_t{len} + 4) != Big32(type + 4 + len)) return false;
    if (Is(type, "IDAT")) {
      if (len > idat_limit) return false;  // a chunk libpng finds too large
      if (idat_chunks++ == 0) idat_first = pos;
      idat_bytes += len;
    } else if (Is(type, "IEND")) {
      if (len != 0 || idat_chunks == 0) return false;
      break;  // libpng reads nothing past IEND
    } else if (pos != 8) {
      return false;  // any other chunk (ancillary ones may change the output): libpng's business
    }
    pos += size_t{len} + 12;
  }
  if (idat_chunks == 1) {
    zlib_ = bytes.subspan(idat_first + 8, idat_bytes);
  } else {
    joined_.clear();
    for (size_t pos = idat_first, n = 0; n < idat_chunks; ++n) {
      const uint32_t len = Big32(p + pos);
      joined_.insert(joined_.end(), p + pos + 8, p + pos + 8 + len);
      pos += size_t{len} + 12;
    }
    zlib_ = joined_;
  }
  width_ = static_cast<int>(w);
  height_ = static_cast<int>(h);
  channels_ = c;
  *width = width_;
  *height = height_;
  *channels = c;
  return true;
}

bool FastPng::Read(int channels, PixelView* out) {
  if (zlib_.empty() || (channels != channels_ && !(channels == 3 && channels_ == 1))) return false;
  const size_t row = static_cast<size_t>(width_) * static_cast<size_t>(channels_), stride = row + 1;
  const size_t raw = stride * static_cast<size_t>(height_);
  // zlib reads back-references from its window (2^(8 + CINFO) bytes, from the stream's header)
  // when libpng inflates row by row: a stream whose data outgrows a small window could reach
  // further back than zlib allows. libpng's own writer makes the window small only for data that
  // fits it.
  const int cinfo = zlib_[0] >> 4;
  if (cinfo < 7 && raw > (size_t{1} << (8 + cinfo))) return false;
  filtered_.resize(raw + row);  // the rows, then a row of zeros above the first
  uint8_t* zeros = filtered_.data() + raw;
  std::memset(zeros, 0, row);
  size_t in_used = 0, out_made = 0;
  // All the data and exactly the rows: libpng warns about data left over and fails on too little.
  if (libdeflate_zlib_decompress_ex(inflater_, zlib_.data(), zlib_.size(), filtered_.data(), raw, &in_used,
                                    &out_made) != LIBDEFLATE_SUCCESS ||
      in_used != zlib_.size() || out_made != raw)
    return false;
  const uint8_t* prev = zeros;
  for (int y = 0; y < height_; ++y) {
    uint8_t* r = filtered_.data() + static_cast<size_t>(y) * stride;
    if (!(channels_ == 1 ? UnfilterRow<1>(r[0], r + 1, prev, row) : UnfilterRow<3>(r[0], r + 1, prev, row)))
      return false;
    prev = r + 1;
  }
  if (channels == channels_) {
    *out = {filtered_.data() + 1, width_, height_, channels_, stride};
    return true;
  }
  // Gray to RGB: libpng's png_set_gray_to_rgb copies the value to the three channels.
  expanded_.resize(row * 3 * static_cast<size_t>(height_));
  for (int y = 0; y < height_; ++y) {
    const uint8_t* src = filtered_.data() + static_cast<size_t>(y) * stride + 1;
    uint8_t* dst = expanded_.data() + static_cast<size_t>(y) * row * 3;
    for (size_t x = 0; x < row; ++x) dst[3 * x] = dst[3 * x + 1] = dst[3 * x + 2] = src[x];
  }
  *out = {expanded_.data(), width_, height_, 3, row * 3};
  return true;
}

}  // namespace weft::io_detail
