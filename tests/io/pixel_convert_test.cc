// ToPlanes (io/pixel_convert.h): the vectorised rows (SSE2 gray, AVX2 RGB) give exactly the scalar
// formula's values, for every width (vector bodies and their tails) and both mirror settings.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "io/pixel_convert.h"

namespace weft::io_detail {
namespace {

TEST(PixelConvert, PlanesEqualTheFormulaForEveryWidthAndMirror) {
  std::mt19937 rng(7);
  const float mean[3] = {123.68f, 116.28f, 103.53f}, mult[3] = {1 / 58.4f, 1 / 57.1f, 1 / 57.4f},
              bias[3] = {0.5f, -0.25f, 0.0f};
  for (int c : {1, 3})
    for (int w = 1; w <= 37; ++w)
      for (bool mirror : {false, true}) {
        SCOPED_TRACE(testing::Message() << "c " << c << " w " << w << " mirror " << mirror);
        const int h = 3;
        const size_t stride = static_cast<size_t>(w * c + 5);  // rows padded, as a decoder's may be
        std::vector<uint8_t> in(stride * h);
        for (uint8_t& p : in) p = static_cast<uint8_t>(rng());
        std::vector<float> out(static_cast<size_t>(c * w * h), -1.0f);
        ToPlanes(in.data(), stride, w, h, c, mirror, mean, mult, bias, out.data());
        std::vector<uint8_t> out8(out.size());
        ToPlanes(in.data(), stride, w, h, c, mirror, out8.data());
        for (int k = 0; k < c; ++k)
          for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
              const uint8_t p = in[static_cast<size_t>(y) * stride + static_cast<size_t>(x * c + k)];
              const size_t at = static_cast<size_t>((k * h + y) * w + (mirror ? w - 1 - x : x));
              ASSERT_EQ(out[at], (static_cast<float>(p) - mean[k]) * mult[k] + bias[k]) << k << " " << y << " " << x;
              ASSERT_EQ(out8[at], p);
            }
      }
}

}  // namespace
}  // namespace weft::io_detail
