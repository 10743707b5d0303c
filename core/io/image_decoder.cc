// JPEG (libjpeg-turbo) and PNG (io/png_fast.h, else libpng) decoding for weft/image.h and the image iterators.
//
// Both libraries report errors by calling a handler that must not return; the handlers here
// longjmp back to a setjmp in the function that called the library (the libraries' documented
// pattern; no C++ exception may unwind through their C frames). Those functions keep their C++
// objects outside the setjmp..longjmp span.
#include "io/image_decoder.h"
#include "io/jpeg_error.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE
#include <cstring>
#include <vector>

#include <jerror.h>
#include <jpeglib.h>
#include <png.h>

#include "weft/base.h"

namespace weft::io_detail {
namespace {

// ---- libjpeg warnings ------------------------------------------------------------------------

// libjpeg only warns about data it cannot decode (and fills the rest of the image with gray):
// these warnings mean the pixels are not the file's, so they are errors here.
void OnJpegMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  switch (cinfo->err->msg_code) {
    case JWRN_JPEG_EOF:
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_MUST_RESYNC:
    case JWRN_NOT_SEQUENTIAL:
    case JWRN_BOGUS_PROGRESSION:
      OnJpegError(cinfo);
    default:
      return;  // e.g. JWRN_EXTRANEOUS_DATA: bytes between markers, the image is intact
  }
}

// ---- libpng callbacks --------------------------------------------------------------------------

struct PngSource {
  std::span<const uint8_t> bytes;
  size_t pos = 0;
  char message[200] = {};
};

[[noreturn]] void OnPngError(png_structp png, png_const_charp msg) {
  auto* src = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(src->message, sizeof(src->message), "%s", msg);
  png_longjmp(png, 1);
}

void OnPngWarning(png_structp, png_const_charp) {}

void OnPngRead(png_structp png, png_bytep out, size_t n) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (src->bytes.size() - src->pos < n) png_error(png, "the PNG data is truncated");
  std::memcpy(out, src->bytes.data() + src->pos, n);
  src->pos += n;
}

uint64_t DecodedBytes(uint64_t w, uint64_t h, uint64_t c) { return w * h * c; }

}  // namespace

// ---- JPEG ----------------------------------------------------------------------------------------

struct ImageDecoder::Jpeg {
  jpeg_decompress_struct cinfo{};
  JpegErrorManager err{};
  std::vector<uint8_t> row;
  bool created = false;

  Jpeg() {
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = OnJpegError;
    err.pub.emit_message = OnJpegMessage;
    if (setjmp(err.jump)) return;  // out of memory while creating: `created` stays false
    jpeg_create_decompress(&cinfo);
    created = true;
  }
  ~Jpeg() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }

  // Returns false with err.message set on failure (the object is reset for the next image).
  bool ReadHeader(std::span<const uint8_t> bytes) {
    jpeg_abort_decompress(&cinfo);  // the previous image may have stopped after its header
    if (setjmp(err.jump)) {
      jpeg_abort_decompress(&cinfo);
      return false;
    }
    jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
    jpeg_read_header(&cinfo, TRUE);
    return true;
  }

  // Decodes the window [x, x+w) x [y, y+h) into `buf` (rows of the cropped width, which starts
  // at column *cx) as described in image_decoder.h; `row` holds one output row. Rows below the
  // window are skipped but still entropy-decoded, and the decoder finished, so that a file
  // truncated anywhere is reported whatever the window.
  bool ReadWindow(int channels, int x, int y, int w, int h, std::vector<uint8_t>& buf, int* cx_out, size_t* stride) {
    if (setjmp(err.jump)) {
      jpeg_abort_decompress(&cinfo);
      return false;
    }
    cinfo.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&cinfo);
    const int width = static_cast<int>(cinfo.output_width), height = static_cast<int>(cinfo.output_height);
    // jpeg_crop_scanline widens the columns to whole iMCUs; the upsampler replicates the edge
    // samples of that range instead of reading their neighbours, which changes the first and last
    // column when chroma is subsampled horizontally (h2 fancy upsampling reads one neighbouring
    // sample). One column of margin on each side keeps the window's columns inside. Rows need no
    // margin: jpeg_skip_scanlines keeps the upsampler's context rows.
    const int margin = cinfo.max_h_samp_factor > 1 ? 1 : 0;
    JDIMENSION cx = static_cast<JDIMENSION>(std::max(0, x - margin));
    JDIMENSION cw = static_cast<JDIMENSION>(std::min(width, x + w + margin)) - cx;
    if (cw < static_cast<JDIMENSION>(width)) jpeg_crop_scanline(&cinfo, &cx, &cw);
    *cx_out = static_cast<int>(cx);
    *stride = static_cast<size_t>(cinfo.output_width) * static_cast<size_t>(channels);
    buf.resize(*stride * static_cast<size_t>(h));
    if (y > 0) jpeg_skip_scanlines(&cinfo, static_cast<JDIMENSION>(y));
    for (int r = 0; r < h;) {
      JSAMPROW rows[4];
      const int n = std::min(h - r, 4);
      for (int i = 0; i < n; ++i) rows[i] = buf.data() + static_cast<size_t>(r + i) * *stride;
      r += static_cast<int>(jpeg_read_scanlines(&cinfo, rows, static_cast<JDIMENSION>(n)));
    }
    // Skipping to the very end would mark the input done without reading it (libjpeg-turbo's
    // jpeg_skip_scanlines); skipping to the last row and reading it entropy-decodes everything.
    if (y + h < height) {
      if (y + h < height - 1) jpeg_skip_scanlines(&cinfo, static_cast<JDIMENSION>(height - 1 - y - h));
      JSAMPROW p = row.data();
      jpeg_read_scanlines(&cinfo, &p, 1);
    }
    jpeg_finish_decompress(&cinfo);
    return true;
  }
};

// ---- PNG -----------------------------------------------------------------------------------------

struct ImageDecoder::Png {
  png_structp png = nullptr;
  png_infop info = nullptr;
  PngSource src;
  std::vector<png_bytep> row_ptrs;
  std::vector<uint8_t> row;

  void Reset() {
    if (png) png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
    png = nullptr;
    info = nullptr;
  }
  ~Png() { Reset(); }

  // Reads the header and sets OpenCV's transformations for `channels` output channels (0: as
  // stored). Returns false with src.message set on failure.
  bool Open(std::span<const uint8_t> bytes, int channels, ImageInfo* out, int* out_channels) {
    Reset();
    src = PngSource{bytes, 0, {}};
    png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, OnPngError, OnPngWarning);
    if (!png) {
      std::snprintf(src.message, sizeof(src.message), "out of memory");
      return false;
    }
    info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) return false;
    if (!info) png_error(png, "out of memory");
    png_set_read_fn(png, &src, OnPngRead);
    png_read_info(png, info);
    const int color = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    const bool has_color = (color & PNG_COLOR_MASK_COLOR) != 0;
    const bool has_alpha = (color & PNG_COLOR_MASK_ALPHA) != 0 || png_get_valid(png, info, PNG_INFO_tRNS);
    out->format = ImageFormat::kPng;
    out->width = static_cast<int>(png_get_image_width(png, info));
    out->height = static_cast<int>(png_get_image_height(png, info));
    out->channels = (has_color ? 3 : 1) + (has_alpha ? 1 : 0);
    *out_channels = channels != 0 ? channels : (has_color ? 3 : 1);
    if (depth == 16) png_set_strip_16(png);
    png_set_strip_alpha(png);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (!has_color && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (*out_channels == 1 && has_color) png_set_rgb_to_gray(png, 1, 0.299, 0.587);
    if (*out_channels == 3 && !has_color) png_set_gray_to_rgb(png);
    return true;
  }

  // Decodes rows [y, y+h) (whole rows) into `buf`, `stride` bytes apart; reads every row and the
  // end of the file, so that a truncation anywhere is reported.
  bool ReadRows(int channels, int y, int h, std::vector<uint8_t>& buf, size_t* stride) {
    if (setjmp(png_jmpbuf(png))) return false;
    const int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    const auto height = static_cast<int>(png_get_image_height(png, info));
    const size_t rowbytes = png_get_rowbytes(png, info);
    if (rowbytes != static_cast<size_t>(png_get_image_width(png, info)) * static_cast<size_t>(channels))
      png_error(png, "unexpected row size after the colour transformations");
    *stride = rowbytes;
    if (passes > 1) {  // Adam7: every pass touches every row, so the whole image is kept
      buf.resize(rowbytes * static_cast<size_t>(height));
      row_ptrs.resize(static_cast<size_t>(height));
      for (int r = 0; r < height; ++r)
        row_ptrs[static_cast<size_t>(r)] = buf.data() + rowbytes * static_cast<size_t>(r);
      png_read_image(png, row_ptrs.data());
      std::memmove(buf.data(), buf.data() + rowbytes * static_cast<size_t>(y), rowbytes * static_cast<size_t>(h));
    } else {
      buf.resize(rowbytes * static_cast<size_t>(h));
      row.resize(rowbytes);
      for (int r = 0; r < height; ++r)
        png_read_row(png, r >= y && r < y + h ? buf.data() + rowbytes * static_cast<size_t>(r - y) : row.data(),
                     nullptr);
    }
    png_read_end(png, nullptr);
    return true;
  }
};

// ---- the decoder ---------------------------------------------------------------------------------

ImageDecoder::ImageDecoder(bool fast_png)
    : jpeg_(std::make_unique<Jpeg>()),
      png_(std::make_unique<Png>()),
      fast_png_(fast_png ? std::make_unique<FastPng>() : nullptr) {
  WEFT_CHECK(jpeg_->created, "cannot create a JPEG decoder: {}", jpeg_->err.message);
}

ImageDecoder::~ImageDecoder() = default;

ImageInfo ImageDecoder::Open(std::span<const uint8_t> bytes, int channels, uint64_t max_bytes) {
  WEFT_CHECK(channels == 0 || channels == 1 || channels == 3,
             "image decoding: {} channels asked for; 1 (gray), 3 (RGB) or 0 (as stored) are possible", channels);
  bytes_ = bytes;
  info_ = {};
  fast_open_ = false;
  asked_channels_ = channels;
  switch (DetectImageFormat(bytes)) {
    case ImageFormat::kJpeg: {
      WEFT_CHECK(jpeg_->ReadHeader(bytes), "cannot decode the JPEG image ({} bytes): {}", bytes.size(),
                 jpeg_->err.message);
      const auto& c = jpeg_->cinfo;
      WEFT_CHECK(c.num_components == 1 || c.num_components == 3,
                 "cannot decode the JPEG image: {} colour components (CMYK/YCCK JPEGs are not supported; convert "
                 "the image to RGB)",
                 c.num_components);
      info_ = {ImageFormat::kJpeg, static_cast<int>(c.image_width), static_cast<int>(c.image_height), c.num_components};
      out_channels_ = channels != 0 ? channels : c.num_components;
      break;
    }
    case ImageFormat::kPng:
      // The fast path takes gray and RGB as stored, and gray to RGB; libpng the rest (RGB to gray).
      if (fast_png_ && fast_png_->Open(bytes, &info_.width, &info_.height, &info_.channels) &&
          (channels == 0 || channels == info_.channels || channels == 3)) {
        fast_open_ = true;
        info_.format = ImageFormat::kPng;
        out_channels_ = channels != 0 ? channels : info_.channels;
        break;
      }
      info_ = {};
      WEFT_CHECK(png_->Open(bytes, channels, &info_, &out_channels_), "cannot decode the PNG image ({} bytes): {}",
                 bytes.size(), png_->src.message);
      break;
    default:
      Fail("cannot decode the image ({} bytes): it is neither JPEG nor PNG (its first bytes are {:02x})", bytes.size(),
           fmt::join(bytes.first(std::min<size_t>(bytes.size(), 8)), " "));
  }
  WEFT_CHECK(info_.width > 0 && info_.height > 0, "cannot decode the image: its header says {} x {} pixels",
             info_.width, info_.height);
  const uint64_t need = DecodedBytes(static_cast<uint64_t>(info_.width), static_cast<uint64_t>(info_.height),
                                     static_cast<uint64_t>(out_channels_));
  WEFT_CHECK(need <= max_bytes,
             "cannot decode the image: {} x {} pixels x {} channels ({} bytes) is more than the {} bytes allowed; "
             "the file is corrupt or far larger than a training image",
             info_.width, info_.height, out_channels_, need, max_bytes);
  return info_;
}

PixelView ImageDecoder::ReadView(int x, int y, int w, int h) {
  WEFT_CHECK(x >= 0 && y >= 0 && w >= 1 && h >= 1 && x + w <= info_.width && y + h <= info_.height,
             "image decoding: window {}x{} at ({}, {}) is outside the {} x {} image", w, h, x, y, info_.width,
             info_.height);
  const size_t c = static_cast<size_t>(out_channels_);
  size_t stride = 0;
  if (info_.format == ImageFormat::kJpeg) {
    jpeg_->row.resize(static_cast<size_t>(info_.width) * c);
    int cx = 0;
    WEFT_CHECK(jpeg_->ReadWindow(out_channels_, x, y, w, h, buffer_, &cx, &stride),
               "cannot decode the JPEG image ({} bytes): {}", bytes_.size(), jpeg_->err.message);
    return {buffer_.data() + static_cast<size_t>(x - cx) * c, w, h, out_channels_, stride};
  }
  if (fast_open_) {
    PixelView all;
    if (fast_png_->Read(out_channels_, &all))
      return {all.data + static_cast<size_t>(y) * all.stride + static_cast<size_t>(x) * c, w, h, out_channels_,
              all.stride};
    // Declined: libpng reports the error, or decodes what it tolerates.
    ImageInfo same;
    WEFT_CHECK(png_->Open(bytes_, asked_channels_, &same, &out_channels_), "cannot decode the PNG image ({} bytes): {}",
               bytes_.size(), png_->src.message);
  }
  const bool ok = png_->ReadRows(out_channels_, y, h, buffer_, &stride);
  png_->Reset();
  WEFT_CHECK(ok, "cannot decode the PNG image ({} bytes): {}", bytes_.size(), png_->src.message);
  return {buffer_.data() + static_cast<size_t>(x) * c, w, h, out_channels_, stride};
}

void ImageDecoder::Read(int x, int y, int w, int h, uint8_t* out, size_t stride) {
  const PixelView v = ReadView(x, y, w, h);
  const size_t bytes = static_cast<size_t>(w) * static_cast<size_t>(v.channels);
  for (int r = 0; r < h; ++r)
    std::memcpy(out + static_cast<size_t>(r) * stride, v.data + static_cast<size_t>(r) * v.stride, bytes);
}

}  // namespace weft::io_detail
