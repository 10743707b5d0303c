// weft io (internal) — one image of an ImageRecordIter batch: decode, MXNet's aug_default
// augmentation, mirror and normalisation, written as planes (C, H, W) into the batch
// (weft/image_iter.h describes the steps).
//
// Thread-safety: a transform is immutable after construction and shared by the workers; each
// worker passes its own Scratch.
#pragma once

#include <cstdint>
#include <random>
#include <span>

#include "io/image_decoder.h"
#include "io/seed.h"
#include "weft/image.h"
#include "weft/image_iter.h"

namespace weft::io_detail {

/// The generator of an image's random draws.
using DrawRng = SplitMix64;

class ImageTransform {
 public:
  /// Checks the augmentation parameters of `o` (throws weft::Error naming a bad one).
  explicit ImageTransform(const ImageRecordIterOptions& o);

  /// Per-worker state: the decoder and buffers reused from image to image.
  struct Scratch {
    ImageDecoder decoder;
    Image a, b;                   // full images between steps
    std::vector<uint8_t> window;  // the crop, interleaved
  };
  /// Decodes `encoded` and writes C * H * W elements (float32 or uint8 per the options) at `out`.
  /// Throws weft::Error (undecodable data, an image smaller than the output).
  void Process(std::span<const uint8_t> encoded, DrawRng& rng, Scratch& s, void* out) const;
  /// Bytes of one output image.
  size_t out_bytes() const noexcept { return out_bytes_; }

 private:
  bool affine() const noexcept;
  void Augment(DrawRng& rng, Scratch& s, int* x, int* y) const;
  void Write(const PixelView& window, bool mirror, float contrast, float illumination, void* out) const;
  int Interp(int method, int ow, int oh, int nw, int nh, DrawRng& rng) const;
  ImageRecordIterOptions o_;
  int c_, h_, w_;
  size_t out_bytes_;
};

}  // namespace weft::io_detail
