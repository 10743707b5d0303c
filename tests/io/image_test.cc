// Image decoding, encoding and resizing (weft/image.h, io/image_decoder.h).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "io/image_decoder.h"
#include "io_test_util.h"
#include "weft/image.h"
#include "weft/recordio.h"

namespace weft {
namespace {

using test::DataPath;
using test::ErrorOf;

Image Pattern(int w, int h, int c, uint32_t seed) {
  std::mt19937 rng(seed);
  Image im{h, w, c, std::vector<uint8_t>(static_cast<size_t>(w * h * c))};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int k = 0; k < c; ++k)
        im.row(y)[x * c + k] = static_cast<uint8_t>((x * 7 + y * 3 + k * 60 + static_cast<int>(rng() % 9)) & 0xff);
  return im;
}

// The image payloads of a fixture .rec.
std::vector<std::vector<uint8_t>> Payloads(const std::string& rec) {
  IndexedRecordIOReader r(DataPath(rec.substr(0, rec.size() - 4) + ".idx"), DataPath(rec));
  std::vector<std::vector<uint8_t>> out;
  for (uint64_t k : r.keys()) {
    const std::string s = r.ReadIdx(k);
    std::span<const uint8_t> payload;
    UnpackImageRecord({reinterpret_cast<const uint8_t*>(s.data()), s.size()}, &payload);
    out.emplace_back(payload.begin(), payload.end());
  }
  return out;
}

TEST(Image, PngRoundTripIsExact) {
  for (int c : {1, 3}) {
    const Image im = Pattern(37, 23, c, 1);
    for (int level : {0, 6, 9}) {
      const auto png = EncodePng(im, level);
      EXPECT_EQ(DetectImageFormat(png), ImageFormat::kPng);
      const Image back = DecodeImage(png, c);
      EXPECT_EQ(back.width, 37);
      EXPECT_EQ(back.height, 23);
      EXPECT_EQ(back.data, im.data);
    }
  }
  // Gray to RGB replicates the channel.
  const Image gray = Pattern(5, 4, 1, 2);
  const Image rgb = DecodeImage(EncodePng(gray), 3);
  for (size_t i = 0; i < gray.data.size(); ++i) EXPECT_EQ(rgb.data[3 * i + 2], gray.data[i]);
}

TEST(Image, JpegRoundTripIsClose) {
  Image im{48, 64, 3, std::vector<uint8_t>(64 * 48 * 3)};
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x)
      for (int k = 0; k < 3; ++k)
        im.row(y)[x * 3 + k] = static_cast<uint8_t>(128 + 60 * std::sin(x / 5.0 + k) * std::cos(y / 7.0));
  const auto jpg = EncodeJpeg(im, 95);
  EXPECT_EQ(DetectImageFormat(jpg), ImageFormat::kJpeg);
  const ImageInfo info = ReadImageInfo(jpg);
  EXPECT_EQ(info.width, 64);
  EXPECT_EQ(info.height, 48);
  EXPECT_EQ(info.channels, 3);
  const Image back = DecodeImage(jpg, 3);
  double err = 0;
  for (size_t i = 0; i < im.data.size(); ++i) err += std::abs(int(back.data[i]) - int(im.data[i]));
  EXPECT_LT(err / static_cast<double>(im.data.size()), 2.0);
}

TEST(Image, WindowDecodingEqualsWholeImage) {
  // Every window of the fixtures' JPEGs (4:2:0 colour, and gray) and PNGs (all colour types)
  // decodes to the pixels of the whole-image decode: the partial decoding the iterators use is
  // exact.
  std::mt19937 rng(11);
  io_detail::ImageDecoder dec;
  for (const char* rec : {"jpg.rec", "gray.rec", "png.rec"}) {
    for (const auto& bytes : Payloads(rec)) {
      for (int c : {1, 3}) {
        const Image full = DecodeImage(bytes, c);
        for (int t = 0; t < 40; ++t) {
          const int w = std::uniform_int_distribution<int>(1, full.width)(rng);
          const int h = std::uniform_int_distribution<int>(1, full.height)(rng);
          const int x = std::uniform_int_distribution<int>(0, full.width - w)(rng);
          const int y = std::uniform_int_distribution<int>(0, full.height - h)(rng);
          std::vector<uint8_t> win(static_cast<size_t>(w * h * c));
          dec.Open(bytes, c);
          dec.Read(x, y, w, h, win.data(), static_cast<size_t>(w * c));
          for (int r = 0; r < h; ++r)
            ASSERT_EQ(0, std::memcmp(win.data() + r * w * c, full.row(y + r) + x * c, static_cast<size_t>(w * c)))
                << rec << " window " << w << "x" << h << " at " << x << "," << y << " row " << r << " channels " << c;
        }
      }
    }
  }
}

TEST(Image, BadDataIsAnError) {
  const auto jpg = EncodeJpeg(Pattern(64, 64, 3, 4), 90);
  const std::span<const uint8_t> half(jpg.data(), jpg.size() / 2);
  std::string msg = ErrorOf([&] { DecodeImage(half, 3); });
  EXPECT_NE(msg.find("JPEG"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Premature end"), std::string::npos) << msg;
  // The window decoder also reports a truncation below its window.
  io_detail::ImageDecoder dec;
  std::vector<uint8_t> win(8 * 8 * 3);
  dec.Open(half, 3);
  msg = ErrorOf([&] { dec.Read(0, 0, 8, 8, win.data(), 24); });
  EXPECT_NE(msg.find("Premature end"), std::string::npos) << msg;
  dec.Open(jpg, 3);  // and is usable again
  dec.Read(0, 0, 8, 8, win.data(), 24);

  const auto png = EncodePng(Pattern(64, 64, 3, 5));
  msg = ErrorOf([&] { DecodeImage(std::span(png.data(), png.size() - 40), 3); });
  EXPECT_NE(msg.find("PNG"), std::string::npos) << msg;
  const std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o', '!', '!', '!'};
  EXPECT_NE(ErrorOf([&] { DecodeImage(text, 3); }).find("neither JPEG nor PNG"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { DecodeImage(std::span<const uint8_t>(), 3); }).find("neither JPEG nor PNG"),
            std::string::npos);
  // A header announcing a huge image is refused before anything that size is allocated.
  auto big = EncodePng(Pattern(4, 4, 3, 6));
  big[16] = 0x00, big[17] = 0x00, big[18] = 0xEA, big[19] = 0x60;  // width 60000 (the CRC no longer matches:
  msg = ErrorOf([&] { DecodeImage(big, 3, 1 << 20); });            // either error will do)
  EXPECT_FALSE(msg.empty());
  EXPECT_NE(ErrorOf([&] { DecodeImage(EncodePng(Pattern(600, 600, 3, 7)), 3, 1 << 20); }).find("more than"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { DecodeImage(png, 4); }).find("channels"), std::string::npos);
}

TEST(Image, Resize) {
  // Identity sizes keep the pixels for every method.
  const Image im = Pattern(13, 9, 3, 8);
  for (int m = 0; m <= 4; ++m) EXPECT_EQ(ResizeImage(im, 13, 9, static_cast<Interpolation>(m)).data, im.data) << m;
  // Halving with kArea averages 2x2 blocks (rounded to nearest).
  Image g{2, 4, 1, {0, 10, 20, 31, 2, 4, 40, 40}};
  const Image half = ResizeImage(g, 2, 1, Interpolation::kArea);
  EXPECT_EQ(half.data, (std::vector<uint8_t>{4, 33}));  // (0+10+2+4)/4 = 4, (20+31+40+40)/4 = 32.75
  // Doubling with kLinear: OpenCV's centre convention (x' = (x + 0.5) / 2 - 0.5).
  Image row{1, 2, 1, {0, 100}};
  EXPECT_EQ(ResizeImage(row, 4, 1, Interpolation::kLinear).data, (std::vector<uint8_t>{0, 25, 75, 100}));
  EXPECT_EQ(ResizeImage(row, 4, 1, Interpolation::kNearest).data, (std::vector<uint8_t>{0, 0, 100, 100}));
  EXPECT_NE(ErrorOf([&] { ResizeImage(im, 0, 3); }).find("at least 1"), std::string::npos);
}

}  // namespace
}  // namespace weft
