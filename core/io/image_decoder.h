// weft io (internal) — an image decoder that keeps its libjpeg state between images and can
// decode a window of an image: only the rows and the iMCU columns the window needs go through
// libjpeg-turbo's IDCT, upsampling and colour conversion (jpeg_crop_scanline / jpeg_skip_scanlines;
// the rows below are only entropy-decoded, so that truncated data is still found). The pixels
// equal those of a whole-image decode (checked by the tests).
//
// Thread-safety: one decoder per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "io/pixel_view.h"
#include "io/png_fast.h"
#include "weft/image.h"

namespace weft::io_detail {

class ImageDecoder {
 public:
  /// `fast_png` false: every PNG through libpng (the tests compare the two PNG paths).
  explicit ImageDecoder(bool fast_png = true);
  ~ImageDecoder();
  ImageDecoder(const ImageDecoder&) = delete;
  ImageDecoder& operator=(const ImageDecoder&) = delete;

  /// Reads the header of `bytes` (kept by reference until the next Open) for output with
  /// `channels` channels (1, 3, or 0 = as stored: 1 for gray, else 3; see out_channels()).
  /// Returns the image's format, size and stored channels. Throws weft::Error (not JPEG/PNG,
  /// corrupt, decoded size above max_bytes, CMYK).
  ImageInfo Open(std::span<const uint8_t> bytes, int channels, uint64_t max_bytes = kMaxDecodedImageBytes);
  /// Channels Read writes per pixel for the opened image.
  int out_channels() const noexcept { return out_channels_; }
  /// Decodes the window of columns [x, x + w) and rows [y, y + h) of the opened image and returns
  /// a view of it in the decoder's memory (valid until the next Open or Read; libjpeg writes its
  /// rows there, so the window is not copied). The window must lie inside the image. Throws
  /// weft::Error for corrupt or truncated data; the decoder is usable for the next Open.
  PixelView ReadView(int x, int y, int w, int h);
  /// The same, copied to `out`: h rows of w * channels bytes, `stride` bytes apart.
  void Read(int x, int y, int w, int h, uint8_t* out, size_t stride);

 private:
  struct Jpeg;
  struct Png;
  std::unique_ptr<Jpeg> jpeg_;
  std::unique_ptr<Png> png_;
  std::unique_ptr<FastPng> fast_png_;  // null when off
  bool fast_open_ = false;             // the opened PNG goes through fast_png_ (libpng if it declines)
  int asked_channels_ = 0;             // Open's `channels`, for libpng when fast_png_ declines
  std::span<const uint8_t> bytes_;
  std::vector<uint8_t> buffer_;  // the decoded rows ReadView returns
  ImageInfo info_;
  int out_channels_ = 0;
};

}  // namespace weft::io_detail
