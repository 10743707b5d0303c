// weft io (internal) — a fast path for the PNGs training sets are made of: 8-bit gray or RGB, not
// interlaced, with no chunks but IHDR, IDAT and IEND (what weft-im2rec, OpenCV and libpng write by
// default). The zlib stream is inflated in one call by libdeflate and the rows unfiltered in
// place: for a 28x28 gray image about half of libpng's CPU time (libpng inflates row by row
// through zlib and allocates its structures and a 32 KiB window per image).
//
// It only decodes what libpng decodes to the same pixels without a warning: every CRC, the
// zlib checksum, the exact amount of image data and the filter types are checked, and anything
// else (other chunks, 16-bit or palette images, a check failing) makes Open or Read return false;
// the caller then decodes with libpng, which reports the error or decodes what it tolerates, as
// before. tests/io/png_fast_test.cc and the recordio fuzzer compare the two decoders.
//
// Thread-safety: one object per thread.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "io/pixel_view.h"

struct libdeflate_decompressor;

namespace weft::io_detail {

class FastPng {
 public:
  FastPng();
  ~FastPng();
  FastPng(const FastPng&) = delete;
  FastPng& operator=(const FastPng&) = delete;

  /// Checks that the whole of `bytes` (kept by reference until the next Open) is a PNG this path
  /// decodes; sets the size and stored channels (1 or 3). False: decode it with libpng.
  bool Open(std::span<const uint8_t> bytes, int* width, int* height, int* channels);
  /// Decodes the opened image with `channels` per pixel (its own, or 3 from gray) and returns a
  /// view of the whole image in this object's memory (valid until the next Open or Read). False
  /// when the data is not exactly as libpng would decode it: use libpng.
  bool Read(int channels, PixelView* out);

 private:
  std::span<const uint8_t> zlib_;  // the IDAT data (in bytes_ when it has one chunk, else joined_)
  std::span<const uint8_t> bytes_;
  std::vector<uint8_t> joined_;    // the data of several IDAT chunks, in order
  std::vector<uint8_t> filtered_;  // the inflated rows (filter byte + row), unfiltered in place
  std::vector<uint8_t> expanded_;  // gray to RGB
  libdeflate_decompressor* inflater_ = nullptr;
  int width_ = 0, height_ = 0, channels_ = 0;
};

}  // namespace weft::io_detail
