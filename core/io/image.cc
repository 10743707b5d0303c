// weft/image.h: decoding through io/image_decoder.h, encoding with libjpeg-turbo and libpng,
// resizing through io/image_ops.h.
#include "weft/image.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE
#include <cstdlib>
#include <cstring>

#include <jpeglib.h>
#include <png.h>

#include "io/image_decoder.h"
#include "io/image_ops.h"
#include "io/jpeg_error.h"
#include "weft/base.h"

namespace weft {
namespace {

using io_detail::JpegErrorManager;

// Compresses into *out (malloc'd by libjpeg); false with err.message on failure.
bool CompressJpeg(const Image& im, int quality, unsigned char** out, unsigned long* size, JpegErrorManager* err) {
  jpeg_compress_struct cinfo{};
  cinfo.err = jpeg_std_error(&err->pub);
  err->pub.error_exit = io_detail::OnJpegError;
  if (setjmp(err->jump)) {
    jpeg_destroy_compress(&cinfo);
    return false;
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, out, size);
  cinfo.image_width = static_cast<JDIMENSION>(im.width);
  cinfo.image_height = static_cast<JDIMENSION>(im.height);
  cinfo.input_components = im.channels;
  cinfo.in_color_space = im.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(im.row(static_cast<int>(cinfo.next_scanline)));
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return true;
}

struct PngSink {
  std::vector<uint8_t>* out;
  char message[200];
};

[[noreturn]] void OnPngWriteError(png_structp png, png_const_charp msg) {
  auto* sink = static_cast<PngSink*>(png_get_error_ptr(png));
  std::snprintf(sink->message, sizeof(sink->message), "%s", msg);
  png_longjmp(png, 1);
}

void OnPngWrite(png_structp png, png_bytep data, size_t n) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  sink->out->insert(sink->out->end(), data, data + n);
}

bool CompressPng(const Image& im, int level, PngSink* sink) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, sink, OnPngWriteError, nullptr);
  if (!png) return false;
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  if (!info) png_error(png, "out of memory");
  png_set_write_fn(png, sink, OnPngWrite, nullptr);
  png_set_compression_level(png, level);
  png_set_IHDR(png, info, static_cast<png_uint_32>(im.width), static_cast<png_uint_32>(im.height), 8,
               im.channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < im.height; ++y) png_write_row(png, im.row(y));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

void CheckImage(const Image& im, const char* what) {
  WEFT_CHECK(im.width >= 1 && im.height >= 1 && (im.channels == 1 || im.channels == 3) &&
                 im.data.size() ==
                     static_cast<size_t>(im.width) * static_cast<size_t>(im.height) * static_cast<size_t>(im.channels),
             "{}: the image must be at least 1 x 1 with 1 or 3 channels and width * height * channels bytes; got {} x "
             "{} x {} with {} bytes",
             what, im.width, im.height, im.channels, im.data.size());
}

}  // namespace

ImageFormat DetectImageFormat(std::span<const uint8_t> bytes) noexcept {
  static constexpr uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (bytes.size() >= 2 && bytes[0] == 0xFF && bytes[1] == 0xD8) return ImageFormat::kJpeg;
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kPng, 8) == 0) return ImageFormat::kPng;
  return ImageFormat::kUnknown;
}

ImageInfo ReadImageInfo(std::span<const uint8_t> bytes) {
  io_detail::ImageDecoder decoder;
  return decoder.Open(bytes, 0, UINT64_MAX);
}

Image DecodeImage(std::span<const uint8_t> bytes, int channels, uint64_t max_bytes) {
  io_detail::ImageDecoder decoder;
  const ImageInfo info = decoder.Open(bytes, channels, max_bytes);
  Image im{info.height, info.width, decoder.out_channels(), {}};
  im.data.resize(static_cast<size_t>(im.width) * static_cast<size_t>(im.height) * static_cast<size_t>(im.channels));
  decoder.Read(0, 0, im.width, im.height, im.data.data(), static_cast<size_t>(im.width * im.channels));
  return im;
}

std::vector<uint8_t> EncodeJpeg(const Image& image, int quality) {
  CheckImage(image, "EncodeJpeg");
  WEFT_CHECK(quality >= 1 && quality <= 100, "EncodeJpeg: quality {} is outside 1..100", quality);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  JpegErrorManager err{};
  const bool ok = CompressJpeg(image, quality, &buf, &size, &err);
  std::vector<uint8_t> out;
  if (ok) out.assign(buf, buf + size);
  std::free(buf);
  WEFT_CHECK(ok, "EncodeJpeg: libjpeg failed: {}", err.message);
  return out;
}

std::vector<uint8_t> EncodePng(const Image& image, int compression) {
  CheckImage(image, "EncodePng");
  std::vector<uint8_t> out;
  PngSink sink{&out, "out of memory"};
  WEFT_CHECK(CompressPng(image, std::clamp(compression, 0, 9), &sink), "EncodePng: libpng failed: {}", sink.message);
  return out;
}

Image ResizeImage(const Image& image, int width, int height, Interpolation method) {
  CheckImage(image, "ResizeImage");
  WEFT_CHECK(width >= 1 && height >= 1, "ResizeImage: the new size {} x {} must be at least 1 x 1", width, height);
  WEFT_CHECK(static_cast<int>(method) >= 0 && static_cast<int>(method) <= 4,
             "ResizeImage: interpolation {} is not one of 0 (nearest), 1 (linear), 2 (cubic), 3 (area), 4 (lanczos4)",
             static_cast<int>(method));
  Image out{height, width, image.channels, {}};
  out.data.resize(static_cast<size_t>(width) * static_cast<size_t>(height) * static_cast<size_t>(image.channels));
  io_detail::ResizeInto(io_detail::ViewOf(image), &out, method);
  return out;
}

}  // namespace weft
