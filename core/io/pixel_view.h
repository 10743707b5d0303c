// weft io (internal) — a view of 8-bit interleaved pixels, shared by the decoder and the pixel
// operations.
#pragma once

#include <cstddef>
#include <cstdint>

#include "weft/image.h"

namespace weft::io_detail {

/// `height` rows of `width * channels` bytes, `stride` bytes apart, from `data`.
struct PixelView {
  const uint8_t* data = nullptr;
  int width = 0, height = 0, channels = 0;
  size_t stride = 0;
};

inline PixelView ViewOf(const Image& im) {
  return {im.data.data(), im.width, im.height, im.channels, static_cast<size_t>(im.width * im.channels)};
}

}  // namespace weft::io_detail
