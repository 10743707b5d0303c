// weft — image files for data pipelines: JPEG and PNG decoding and encoding, resizing. What
// MXNet does with OpenCV (mx.image.imdecode / imresize, im2rec, ImageRecordIter's decoder), done
// with the libraries OpenCV itself uses for these formats: libjpeg-turbo and libpng (Debian
// libjpeg62-turbo, libpng16).
//
// Pixels: an Image is 8-bit, interleaved (height, width, channels) in C order, channels 1 (gray)
// or 3 in R, G, B order (OpenCV keeps B, G, R; MXNet's iterators swap to R, G, B when they copy
// into a batch, which is where weft's order already is).
//
// Decoding follows OpenCV 3.4's imdecode, which MXNet 1.9.1 uses, so that the same file gives the
// same pixels: JPEG through libjpeg's default (islow) IDCT and fancy upsampling, gray output
// from libjpeg's grayscale output (the Y channel); PNG with 16-bit samples reduced to their high
// byte, palettes and low bit depths expanded, alpha dropped, gray replicated to RGB, and RGB
// turned to gray with libpng's rgb_to_gray(0.299, 0.587). Errors: a truncated or corrupt file is
// an error (OpenCV returns the partly decoded image for a truncated JPEG: libjpeg only warns; weft
// refuses data libjpeg reports as corrupt, except extraneous bytes between markers).
//
// Thread-safety: every function may be called from any thread concurrently.
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace weft {

/// An 8-bit image, (height, width, channels) interleaved, rows packed.
struct WEFT_API Image {
  int height = 0;
  int width = 0;
  int channels = 0;  ///< 1 (gray) or 3 (R, G, B)
  std::vector<uint8_t> data;
  uint8_t* row(int y) { return data.data() + static_cast<size_t>(y) * static_cast<size_t>(width * channels); }
  const uint8_t* row(int y) const {
    return data.data() + static_cast<size_t>(y) * static_cast<size_t>(width * channels);
  }
};

enum class ImageFormat { kUnknown, kJpeg, kPng };

/// The format of an encoded image, from its signature bytes (JPEG: FF D8; PNG: the 8-byte PNG
/// signature). kUnknown otherwise.
WEFT_API ImageFormat DetectImageFormat(std::span<const uint8_t> bytes) noexcept;

/// Width, height and stored channels (1, 3 or 4) of an encoded JPEG or PNG, from its header.
struct WEFT_API ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int width = 0;
  int height = 0;
  int channels = 0;
};
/// Reads the header only. Throws weft::Error for data that is not a JPEG or PNG, or a corrupt
/// header.
WEFT_API ImageInfo ReadImageInfo(std::span<const uint8_t> bytes);

/// Largest decoded image (width * height * channels bytes) DecodeImage accepts by default: a
/// header announcing more is taken for a corrupt file rather than allocated.
inline constexpr uint64_t kMaxDecodedImageBytes = uint64_t{1} << 30;

/// Decodes a JPEG or PNG into `channels` channels: 1 (gray) or 3 (RGB), MXNet's imdecode flag 0
/// and 1; 0 keeps the stored channel count (1 for gray, 3 otherwise; alpha is dropped). Throws
/// weft::Error naming the problem (not an image, truncated, corrupt, CMYK JPEG, larger than
/// `max_bytes` decoded).
WEFT_API Image DecodeImage(std::span<const uint8_t> bytes, int channels = 3,
                           uint64_t max_bytes = kMaxDecodedImageBytes);

/// JPEG with libjpeg's defaults at `quality` 1..100 (4:2:0 chroma subsampling, as cv2.imencode
/// and im2rec.py). Throws weft::Error for an empty image or a quality outside 1..100.
WEFT_API std::vector<uint8_t> EncodeJpeg(const Image& image, int quality = 95);
/// PNG (8-bit gray or RGB, no interlacing) at zlib `compression` level 0..9 (outside values are
/// clamped, as OpenCV's IMWRITE_PNG_COMPRESSION: im2rec.py passes its --quality, default 95).
WEFT_API std::vector<uint8_t> EncodePng(const Image& image, int compression = 3);

/// Interpolation for ResizeImage; the values are MXNet's inter_method (OpenCV's INTER_*).
enum class Interpolation : int { kNearest = 0, kLinear = 1, kCubic = 2, kArea = 3, kLanczos4 = 4 };

/// Resizes to width x height (each >= 1) with OpenCV's pixel-centre convention (source x =
/// (x + 0.5) * src_width / width - 0.5), edge pixels replicated. kLinear reproduces cv::resize's
/// 8-bit bilinear result bit for bit (its 11-bit fixed-point weights and x86 rounding, and its
/// switch to the area method for an exact halving). kArea averages the source pixels each output
/// pixel covers when shrinking (OpenCV's coverage weights; as OpenCV's area-linear blend when
/// enlarging), kCubic uses Keys' cubic with a = -0.75, kLanczos4 an 8-tap Lanczos window; these
/// three compute in float with one rounding at the end, so they can differ from OpenCV's
/// fixed-point results by a level. Throws weft::Error for an empty image or a size below 1.
WEFT_API Image ResizeImage(const Image& image, int width, int height, Interpolation method = Interpolation::kLinear);

}  // namespace weft
