// weft io (internal) — pixel operations on 8-bit interleaved images: resize (weft/image.h
// describes the methods) and OpenCV's warpAffine, used by ResizeImage and the image iterators'
// augmentation. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "io/pixel_view.h"
#include "weft/image.h"

namespace weft::io_detail {

/// Resizes `src` to out->width x out->height (out->channels == src.channels, out->data sized).
void ResizeInto(const PixelView& src, Image* out, Interpolation method);

/// cv::warpAffine(src, dst, M, Size(out->width, out->height), method, BORDER_CONSTANT, fill):
/// out(x, y) = src(M^-1 (x, y)) where M = [m0 m1 m2; m3 m4 m5] maps source to destination
/// coordinates. Bilinear for every method but kNearest (OpenCV's cubic and Lanczos warps are not
/// reproduced); samples outside the source read `fill`. Throws weft::Error for a singular M.
void WarpAffineInto(const PixelView& src, const float m[6], Interpolation method, uint8_t fill, Image* out);

}  // namespace weft::io_detail
