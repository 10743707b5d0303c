// The fast PNG path (io/png_fast.h) against libpng: PNGs written here chunk by chunk (every filter
// type, IDAT splits, zlib windows, foreign chunks, damage) decode to the same pixels, or to the
// same error, whether the decoder takes the fast path or libpng alone.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "io/image_decoder.h"
#include "io/png_fast.h"
#include "weft/base.h"

namespace weft::io_detail {
namespace {

using Bytes = std::vector<uint8_t>;

void Put32(Bytes* out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out->push_back(static_cast<uint8_t>(v >> s));
}

void PutChunk(Bytes* out, const char* type, const Bytes& data) {
  Put32(out, static_cast<uint32_t>(data.size()));
  const size_t at = out->size();
  out->insert(out->end(), type, type + 4);
  out->insert(out->end(), data.begin(), data.end());
  Put32(out, static_cast<uint32_t>(crc32(0, out->data() + at, static_cast<uInt>(data.size() + 4))));
}

// Recomputes the CRC of the chunk at `at` (after its data was changed).
void FixCrc(Bytes* png, size_t at) {
  const size_t len =
      (size_t{(*png)[at]} << 24) | (size_t{(*png)[at + 1]} << 16) | (size_t{(*png)[at + 2]} << 8) | (*png)[at + 3];
  const uLong crc = crc32(0, png->data() + at + 4, static_cast<uInt>(len + 4));
  for (size_t k = 0; k < 4; ++k) (*png)[at + 8 + len + k] = static_cast<uint8_t>(crc >> (24 - 8 * k));
}

// The specification's Paeth predictor, written as it says (the decoder's is rearranged).
int SpecPaeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  if (pb <= pc) return b;
  return c;
}

struct Spec {
  int w = 28, h = 28, c = 1;
  std::function<int(int)> filter = [](int y) { return y % 5; };  // the filter type of row y
  int level = 6, window_bits = 15;
  std::vector<size_t> idat_cuts;                             // split points of the zlib stream into IDAT chunks
  Bytes zlib_tail;                                           // bytes appended to the zlib stream
  std::vector<std::pair<std::string, Bytes>> before, after;  // chunks around the IDATs
};

Bytes Pixels(const Spec& s, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes px(static_cast<size_t>(s.w * s.h * s.c));
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(i % 3 == 0 ? rng() : (i * 5 + rng() % 7));
  return px;
}

// The PNG of `px` per the spec: rows filtered as s.filter says, deflated with zlib.
Bytes MakePng(const Spec& s, const Bytes& px) {
  const size_t row = static_cast<size_t>(s.w * s.c), bpp = static_cast<size_t>(s.c);
  Bytes raw;
  for (int y = 0; y < s.h; ++y) {
    const int type = s.filter(y);
    raw.push_back(static_cast<uint8_t>(type));
    const uint8_t* cur = px.data() + static_cast<size_t>(y) * row;
    for (size_t x = 0; x < row; ++x) {
      const int a = x >= bpp ? cur[x - bpp] : 0, b = y > 0 ? cur[x - row] : 0;
      const int c = x >= bpp && y > 0 ? cur[x - row - bpp] : 0;
      const int pred = type == 1 ? a : type == 2 ? b : type == 3 ? (a + b) / 2 : type == 4 ? SpecPaeth(a, b, c) : 0;
      raw.push_back(static_cast<uint8_t>(cur[x] - pred));
    }
  }
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, s.level, Z_DEFLATED, s.window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes zdata(deflateBound(&z, raw.size()));
  z.next_in = raw.data();
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = zdata.data();
  z.avail_out = static_cast<uInt>(zdata.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  zdata.resize(z.total_out);
  deflateEnd(&z);
  zdata.insert(zdata.end(), s.zlib_tail.begin(), s.zlib_tail.end());

  Bytes out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  Bytes ihdr;
  Put32(&ihdr, static_cast<uint32_t>(s.w));
  Put32(&ihdr, static_cast<uint32_t>(s.h));
  ihdr.insert(ihdr.end(), {8, static_cast<uint8_t>(s.c == 3 ? 2 : 0), 0, 0, 0});
  PutChunk(&out, "IHDR", ihdr);
  for (const auto& [type, data] : s.before) PutChunk(&out, type.c_str(), data);
  size_t from = 0;
  for (size_t i = 0; i <= s.idat_cuts.size(); ++i) {
    const size_t to = i < s.idat_cuts.size() ? std::min(s.idat_cuts[i], zdata.size()) : zdata.size();
    PutChunk(&out, "IDAT",
             Bytes(zdata.begin() + static_cast<ptrdiff_t>(from), zdata.begin() + static_cast<ptrdiff_t>(to)));
    from = to;
  }
  for (const auto& [type, data] : s.after) PutChunk(&out, type.c_str(), data);
  PutChunk(&out, "IEND", {});
  return out;
}

// What a decoder makes of `png` with `channels`: its pixels, or its error.
std::string Outcome(bool fast, const Bytes& png, int channels) {
  try {
    ImageDecoder d(fast);
    const ImageInfo info = d.Open(png, channels);
    const PixelView v = d.ReadView(0, 0, info.width, info.height);
    std::string s = fmt::format("{}x{}x{}/{}:", info.width, info.height, info.channels, v.channels);
    for (int y = 0; y < v.height; ++y)
      s.append(reinterpret_cast<const char*>(v.data + static_cast<size_t>(y) * v.stride),
               static_cast<size_t>(v.width * v.channels));
    return s;
  } catch (const Error& e) {
    return std::string("error: ") + e.what();
  }
}

// The fast path's own pixels (it must take the image), compared with libpng's.
void ExpectFastEqualsLibpng(const Bytes& png, int channels, const std::string& what) {
  FastPng fast;
  int w = 0, h = 0, c = 0;
  ASSERT_TRUE(fast.Open(png, &w, &h, &c)) << what;
  PixelView v;
  ASSERT_TRUE(fast.Read(channels, &v)) << what;
  std::string mine = fmt::format("{}x{}x{}/{}:", w, h, c, v.channels);
  for (int y = 0; y < v.height; ++y)
    mine.append(reinterpret_cast<const char*>(v.data + static_cast<size_t>(y) * v.stride),
                static_cast<size_t>(v.width * v.channels));
  ASSERT_EQ(mine, Outcome(false, png, channels)) << what;
}

TEST(PngFast, EqualsLibpngForEveryFilterSizeAndSplit) {
  uint32_t seed = 0;
  for (int c : {1, 3})
    for (auto [w, h] : {std::pair{1, 1}, {28, 28}, {61, 13}, {2, 40}})
      for (int filter = 0; filter <= 5; ++filter) {  // 5: a different type on each row
        Spec s;
        s.w = w, s.h = h, s.c = c;
        s.filter = [filter](int y) { return filter == 5 ? (y * 3 + 1) % 5 : filter; };
        const Bytes px = Pixels(s, ++seed);
        for (int split = 0; split < 3; ++split) {
          s.idat_cuts = split == 0   ? std::vector<size_t>{}
                        : split == 1 ? std::vector<size_t>{2, 2, 9}
                                     : std::vector<size_t>{1};
          const Bytes png = MakePng(s, px);
          const std::string what = fmt::format("{}x{}x{} filter {} split {}", w, h, c, filter, split);
          ExpectFastEqualsLibpng(png, c, what);
          if (c == 1) ExpectFastEqualsLibpng(png, 3, what + " to RGB");
          EXPECT_EQ(Outcome(true, png, 0), Outcome(false, png, 0)) << what;
        }
      }
}

TEST(PngFast, SmallZlibWindowsOnlyForDataThatFitsThem) {
  Spec s;
  s.w = s.h = 16;  // 272 bytes of rows: a 512-byte window holds them
  s.window_bits = 9;
  const Bytes png = MakePng(s, Pixels(s, 1));
  ExpectFastEqualsLibpng(png, 1, "window 512");
  s.w = s.h = 40;  // 1640 bytes: zlib would check the distances against the window, so libpng decides
  const Bytes big = MakePng(s, Pixels(s, 2));
  FastPng fast;
  int w, h, c;
  PixelView v;
  ASSERT_TRUE(fast.Open(big, &w, &h, &c));
  EXPECT_FALSE(fast.Read(1, &v));
  EXPECT_EQ(Outcome(true, big, 1), Outcome(false, big, 1));
}

TEST(PngFast, DeclinesWhatLibpngHandlesOtherwise) {
  Spec s;
  const Bytes px = Pixels(s, 3);
  FastPng fast;
  int w, h, c;
  PixelView v;
  auto declined = [&](const Bytes& png, int channels) {
    return !fast.Open(png, &w, &h, &c) || !fast.Read(channels, &v);
  };
  std::vector<std::pair<std::string, Bytes>> cases;
  s.before = {{"tEXt", {'a', 0, 'b'}}};  // ancillary chunks may change the output (tRNS, gAMA...)
  cases.emplace_back("a chunk before IDAT", MakePng(s, px));
  s.before.clear();
  s.after = {{"tIME", Bytes(7, 1)}};
  cases.emplace_back("a chunk after IDAT", MakePng(s, px));
  s.after.clear();
  s.zlib_tail = {1, 2, 3};  // libpng warns about it and decodes
  cases.emplace_back("data after the zlib stream", MakePng(s, px));
  s.zlib_tail.clear();
  s.filter = [](int y) { return y == 9 ? 5 : 0; };  // libpng: bad adaptive filter value
  cases.emplace_back("filter type 5", MakePng(s, px));
  s.filter = [](int) { return 1; };
  Bytes good = MakePng(s, px);
  Bytes crc = good;
  crc[crc.size() - 13] ^= 1;  // the last IDAT's CRC
  cases.emplace_back("a bad CRC", crc);
  Bytes sixteen = good;
  sixteen[24] = 16;  // IHDR's bit depth
  FixCrc(&sixteen, 8);
  cases.emplace_back("16 bits per sample", sixteen);
  for (const auto& [what, png] : cases) {
    EXPECT_TRUE(declined(png, 1)) << what;
    EXPECT_EQ(Outcome(true, png, 1), Outcome(false, png, 1)) << what;
  }
  // libpng's weights for RGB to gray.
  s.c = 3;
  const Bytes rgb = MakePng(s, Pixels(s, 4));
  EXPECT_TRUE(declined(rgb, 1));
  EXPECT_EQ(Outcome(true, rgb, 1), Outcome(false, rgb, 1));
  EXPECT_FALSE(declined(good, 1));  // the object is usable after declining
}

TEST(PngFast, DamagedFilesGiveLibpngsOutcome) {
  // Every truncation, and byte changes with the CRCs made right again (so that the zlib stream
  // itself is damaged and libdeflate, not a CRC, has to notice): the fast decoder gives libpng's
  // pixels or error.
  Spec s;
  s.w = s.h = 12;
  const Bytes good = MakePng(s, Pixels(s, 5));
  for (size_t n = 8; n < good.size(); ++n) {
    const Bytes cut(good.begin(), good.begin() + static_cast<ptrdiff_t>(n));
    ASSERT_EQ(Outcome(true, cut, 1), Outcome(false, cut, 1)) << "cut at " << n;
    EXPECT_NE(Outcome(true, cut, 1).find("error"), std::string::npos) << "cut at " << n;
  }
  const size_t idat = 33, len = (size_t{good[idat]} << 24) | (size_t{good[idat + 1]} << 16) |
                                (size_t{good[idat + 2]} << 8) | good[idat + 3];
  int errors = 0;
  for (size_t i = 0; i < len; ++i)
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      Bytes bad = good;
      bad[idat + 8 + i] ^= flip;
      FixCrc(&bad, idat);
      const std::string fast = Outcome(true, bad, 1);
      ASSERT_EQ(fast, Outcome(false, bad, 1)) << "byte " << i << " ^ " << int{flip};
      errors += fast.starts_with("error");
    }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace weft::io_detail
