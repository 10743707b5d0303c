// weft io (internal) — interleaved 8-bit pixels to the planes of a batch: the last step of every
// image of ImageRecordIter, run once per output value, so it has an AVX2 path chosen at run time
// (the machines differ; no -march flags). Results are identical on every path: the same float
// operations in the same order, no fused multiply-add.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft::io_detail {

/// out[k][y][x'] = (in[y][x][k] - mean[k]) * mult[k] + bias[k] for k < c (1 or 3), x' = w-1-x
/// when mirrored, else x. `in` holds h rows of w * c bytes, `in_stride` bytes apart; `out` c planes
/// of h * w floats.
void ToPlanes(const uint8_t* in, size_t in_stride, int w, int h, int c, bool mirror, const float* mean,
              const float* mult, const float* bias, float* out);
/// The same without normalisation, to uint8 planes.
void ToPlanes(const uint8_t* in, size_t in_stride, int w, int h, int c, bool mirror, uint8_t* out);

}  // namespace weft::io_detail
