// weft's Winograd F(4x4, 3x3) convolution: see nn_conv_winograd.h.
#include "nn_conv_winograd.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <type_traits>

#include <unistd.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "isa_dispatch.h"
#include "nn_conv_winograd_chunks.h"
#include "parallel.h"

namespace weft::cpu {
namespace {

constexpr int64_t kLanes = 8;
constexpr int64_t kPositions = 36;  // the 6x6 transformed tile

std::atomic<uint64_t> g_runs{0};

// StoreV8 past the caches (q 16-byte aligned): two non-temporal 128-bit stores, which every x86-64
// variant has (SSE); followed by FenceStreams before other threads read them.
inline void StreamV8(float* q, const V8& v) {
#if defined(__SSE__)
  __m128 lo, hi;
  std::memcpy(&lo, &v, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
  _mm_stream_ps(q, lo);
  _mm_stream_ps(q + 4, hi);
#else
  StoreV8(q, v);
#endif
}
inline void FenceStreams() {
#if defined(__SSE__)
  _mm_sfence();
#endif
}

// One activation tensor: plain NCHW (B 1) or nChw<B>c. B is a compile-time constant so that the
// address arithmetic has no divisions.
template <int64_t B>
struct View {
  const float* p;
  int64_t channels, plane;
  int64_t image = channels * plane;  // floats between images (more: a slice of a wider tensor)
  // Channel c (a multiple of 8) of image n at pixel 0; pixel `pix` is Pixel(pix) floats further.
  const float* Base(int64_t n, int64_t c) const {
    if (B == 1) return p + n * image + c * plane;
    return p + n * image + c / B * plane * B + c % B;
  }
  static int64_t Pixel(int64_t pix) { return pix * B; }
  // Channels c..c+7 at q = Base(n, c) + Pixel(pix); past `lanes` (plain tensors only) they read
  // as 0. (Vectors pass by reference: by value GCC warns that the ABI differs without AVX.)
  void Load(const float* q, int64_t lanes, V8& v) const {
    if (B > 1) {
      LoadV8(q, v);
      return;
    }
    for (int64_t l = 0; l < kLanes; ++l) v[l] = l < lanes ? q[l * plane] : 0.0f;
  }
  void Store(float* q, int64_t lanes, const V8& v) const {
    if (B > 1) {
      StoreV8(q, v);
      return;
    }
    for (int64_t l = 0; l < kLanes && l < lanes; ++l) q[l * plane] = v[l];
  }
};

// Runs f(std::integral_constant<int64_t, block>) for block 1, 8 or 16.
template <typename F>
void WithBlock(int64_t block, const F& f) {
  if (block == 16) return f(std::integral_constant<int64_t, 16>{});
  if (block == 8) return f(std::integral_constant<int64_t, 8>{});
  f(std::integral_constant<int64_t, 1>{});
}

// Bᵀ·d for one column (or row) of the 6x6 input tile, elements `s` apart. Every product is by a
// power of two, which is exact: whichever multiply-adds the compiler fuses, the bits are the same
// (4·d0 − 5·d2 + d4 written so gave other bits wherever GCC fused 5·d2 into the subtraction, which
// it did in some inlined copies and not in others).
inline void InputRows(const V8* d, int64_t s, V8* t, int64_t ts) {
  const V8 d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s], d4 = d[4 * s], d5 = d[5 * s];
  t[0] = 4.0f * (d0 - d2) + (d4 - d2);
  t[ts] = d3 + d4 - 4.0f * (d1 + d2);
  t[2 * ts] = d4 - d3 + 4.0f * (d1 - d2);
  t[3 * ts] = d4 - d2 + 2.0f * (d3 - d1);
  t[4 * ts] = d4 - d2 + 2.0f * (d1 - d3);
  t[5 * ts] = 4.0f * (d1 - d3) + (d5 - d3);
}

// Aᵀ·m for one column (or row) of the 6x6 product tile, giving 4 outputs.
inline void OutputRows(const V8* m, int64_t s, V8* o, int64_t os) {
  const V8 a = m[s] + m[2 * s], b = m[s] - m[2 * s], c = m[3 * s] + m[4 * s], d = m[3 * s] - m[4 * s];
  o[0] = m[0] + a + c;
  o[os] = b + 2.0f * d;
  o[2 * os] = a + 4.0f * c;
  o[3 * os] = b + 8.0f * d + m[5 * s];
}

// G·g for one column (or row) of a 3x3 kernel, giving 6 values (G as in SetWeights). The
// constants are the floats nearest 1/6, 1/12 and 1/24: each output carries at most a few roundings.
inline void KernelRows(const V8* g, int64_t s, V8* t, int64_t ts) {
  const V8 g0 = g[0], g1 = g[s], g2 = g[2 * s];
  const V8 a = g0 + g2, c = (1.0f / 24) * g0 + (1.0f / 6) * g2, d = (1.0f / 12) * g1;
  t[0] = 0.25f * g0;
  t[ts] = (-1.0f / 6) * (a + g1);
  t[2 * ts] = (-1.0f / 6) * (a - g1);
  t[3 * ts] = c + d;
  t[4 * ts] = c - d;
  t[5 * ts] = g2;
}

// U = G·g·Gᵀ for channel ch and every filter (zero for ch >= c and the padding filters): each of
// the 36 positions gets one contiguous row of kp floats. (With the filters outside and the
// channels inside, the 36 stores of each step landed a whole plane apart, in one cache set: the
// 512-channel layer took 26 ms instead of a few.)
void KernelTransform(const WinoWeights& src, int64_t f, int64_t c, int64_t ch, int64_t cp, int64_t kp, float* u) {
  for (int64_t k0 = 0; k0 < kp; k0 += kLanes) {
    const int64_t lanes = ch < c ? std::min<int64_t>(kLanes, f - k0) : 0;
    V8 g[9], r[18], o[36];
    for (int64_t e = 0; e < 9; ++e) {
      const float* q = src.w + k0 * src.k_stride + ch * src.c_stride + (src.rotate ? 8 - e : e);
      for (int64_t l = 0; l < kLanes; ++l) g[e][l] = l < lanes ? q[l * src.k_stride] : 0.0f;
    }
    for (int64_t k = 0; k < 3; ++k) KernelRows(g + k, 3, r + k, 3);          // G·g: 6 rows of 3
    for (int64_t i = 0; i < 6; ++i) KernelRows(r + i * 3, 1, o + i * 6, 1);  // (G·g)·Gᵀ
    for (int64_t p = 0; p < kPositions; ++p) StoreV8(u + p * cp * kp + ch * kp + k0, o[p]);
  }
}

// A·dy for one column (or row) of a 4x4 output-gradient tile, giving 6 values: OutputRows
// transposed (the weight gradient, WinogradF4Conv::WeightGrad).
inline void GradRows(const V8* y, int64_t s, V8* t, int64_t ts) {
  const V8 y0 = y[0], y1 = y[s], y2 = y[2 * s], y3 = y[3 * s];
  const V8 a = y0 + y2, b = y1 + y3, c = y0 + 4.0f * y2, d = 2.0f * y1 + 8.0f * y3;
  t[0] = y0;
  t[ts] = a + b;
  t[2 * ts] = a - b;
  t[3 * ts] = c + d;
  t[4 * ts] = c - d;
  t[5 * ts] = y3;
}

// Gᵀ·m for one column (or row) of a 6x6 tile of the weight gradient's sums, giving 3 values:
// KernelRows transposed.
inline void KernelGradRows(const V8* m, int64_t s, V8* t, int64_t ts) {
  const V8 a = m[s] + m[2 * s], b = m[2 * s] - m[s], c = m[3 * s] + m[4 * s], d = m[3 * s] - m[4 * s];
  t[0] = 0.25f * m[0] + (-1.0f / 6) * a + (1.0f / 24) * c;
  t[ts] = (1.0f / 6) * b + (1.0f / 12) * d;
  t[2 * ts] = (1.0f / 6) * (c - a) + m[5 * s];
}

// gw[k][ch] = (or +=) Gᵀ·M[.][ch][k]·G for every filter k: M the 36 summed products (u's layout).
void KernelGrad(const float* m, int64_t f, int64_t c, int64_t ch, int64_t cp, int64_t kp, float* gw, bool add) {
  for (int64_t k0 = 0; k0 < f; k0 += kLanes) {
    V8 s[36], r[18], o[9];
    for (int64_t p = 0; p < kPositions; ++p) LoadV8(m + p * cp * kp + ch * kp + k0, s[p]);
    for (int64_t j = 0; j < 6; ++j) KernelGradRows(s + j, 6, r + j, 6);          // Gᵀ·M: 3 rows of 6
    for (int64_t a = 0; a < 3; ++a) KernelGradRows(r + a * 6, 1, o + a * 3, 1);  // (Gᵀ·M)·G
    const int64_t lanes = std::min<int64_t>(kLanes, f - k0);
    for (int64_t l = 0; l < lanes; ++l)
      for (int64_t e = 0; e < 9; ++e) {
        float& d = gw[((k0 + l) * c + ch) * 9 + e];
        d = add ? d + o[e][l] : o[e][l];
      }
  }
}

inline void Activate(const WinoAct& a, V8& v) {
  const V8 zero = {};
  if (a.kind == WinoAct::kRelu) v = v > zero ? v : zero;
  if (a.kind == WinoAct::kClip) {
    const V8 lo = zero + a.lo, hi = zero + a.hi;
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
  }
}

// Tile geometry of one chunk: tile t0 + i of the batch is image n, tile row ty, column tx.
struct TileAt {
  int64_t n, ty, tx;
};

// One chunk of `count` tiles from tile t0 and filters k0..k1, its V (position p of tile t, channel
// c at v[p * vstride + t * cp + c]) and M (m[p * mstride + t * kp + k]).
struct Chunk {
  const ConvGeom& g;
  int64_t t0, count, k0, k1, cp, kp, tiles_h, tiles_w, vstride, mstride;
  TileAt Tile(int64_t t) const {
    const int64_t i = t0 + t, per_image = tiles_h * tiles_w;
    return TileAt{i / per_image, i % per_image / tiles_w, i % tiles_w};
  }
};

// Rows [i0, i1) and columns [k0, k1) of a tile's 6x6 input patch lie inside the image; the rest
// is padding (zero).
struct PatchInside {
  int64_t i0, i1, k0, k1;
};

// V = Bᵀ·d·B of one tile and 8 channels (`lanes` of them real: plain tensors' last ones read as 0)
// from q, the patch's top-left pixel (it may lie in the padding: only inside pixels are read; rows
// `row` floats apart), into v's 36 positions `vstride` apart: InputRows down each column, loaded
// straight into registers, then along each row, stored straight into V; a tile wholly inside
// (kWhole) has no bounds checks. The transform used to fill a 6x6 array on the stack first (zero
// fill, a check per pixel, two 128-bit moves per pixel through std::memcpy, read back as 256-bit
// values): the input transform took half of DenseNet's 128 -> 32 layers at batch 32 on AVX2, as
// long as their 36 sgemms; each such layer takes a fifth less now (the 56x56 one 37 ms instead of
// 45.5). In a blocked tensor the next tile's first new pixels of each row (4 pixels on) are
// prefetched: 16 channel blocks of 6 rows are more streams than the hardware prefetcher follows.
template <int64_t B, bool kWhole>
inline void InputTile(const View<B>& in, const float* q, int64_t row, int64_t lanes, const PatchInside& a, float* v,
                      int64_t vstride) {
  V8 r[36];
  for (int64_t k = 0; k < 6; ++k) {
    V8 d[6];
    for (int64_t i = 0; i < 6; ++i) {
      if (kWhole || (i >= a.i0 && i < a.i1 && k >= a.k0 && k < a.k1))
        in.Load(q + i * row + k * B, lanes, d[i]);
      else
        d[i] = V8{};
    }
    if (kWhole && B > 1) {
      __builtin_prefetch(q + k * row + 6 * B);
      __builtin_prefetch(q + k * row + 9 * B);
    }
    InputRows(d, 1, r + k, 6);  // Bᵀ·d of column k
  }
  for (int64_t i = 0; i < 6; ++i) {
    V8 o[6];
    InputRows(r + i * 6, 1, o, 1);  // (Bᵀ·d)·B of row i
    for (int64_t k = 0; k < 6; ++k) StoreV8(v + (i * 6 + k) * vstride, o[k]);
  }
}

// V = Bᵀ·d·B for every tile and 8 channels of the chunk (v[p * vstride + t * cp + c]).
template <int64_t B>
void InputTransform(const Chunk& j, const float* x, float* v) {
  const ConvGeom& g = j.g;
  const View<B> in{x, g.c, g.h * g.w};
  const int64_t h = g.h, w = g.w, cp = j.cp, vstride = j.vstride;
  for (int64_t t = 0; t < j.count; ++t) {
    const TileAt at = j.Tile(t);
    const int64_t y0 = at.ty * 4 - g.ph, x0 = at.tx * 4 - g.pw;
    const PatchInside a{std::max<int64_t>(0, -y0), std::min<int64_t>(6, h - y0), std::max<int64_t>(0, -x0),
                        std::min<int64_t>(6, w - x0)};
    const bool whole = a.i0 == 0 && a.i1 == 6 && a.k0 == 0 && a.k1 == 6;
    const int64_t corner = in.Pixel(y0 * w + x0);  // negative at the top left: never read there
    for (int64_t c = 0; c < cp; c += kLanes) {
      const float* q = in.Base(at.n, c) + corner;
      if (whole)
        InputTile<B, true>(in, q, in.Pixel(w), g.c - c, a, v + t * cp + c, vstride);
      else
        InputTile<B, false>(in, q, in.Pixel(w), g.c - c, a, v + t * cp + c, vstride);
    }
  }
}

// Tiles whose outputs OutputTransform writes together, one block of 8 filters after another.
constexpr int64_t kTileGroup = 4;

// y = act2(act(Aᵀ·M·A + bias) + sum) for every tile and 8 filters of the chunk. A tile's 4x4
// outputs of one block of 8 filters are 4 runs of 4 pixels, one per output row (128 bytes in
// nChw8c). Taken tile by tile with all their blocks, 4 · kp / 8 runs far apart were written in
// turn (32 for 64 filters), and the stores were three quarters of the transform's time (it took a
// quarter without them). Groups of kTileGroup tiles, block by block, write 4 runs of 16 pixels at
// a time: SqueezeNet's 55x55 16->64 layer at batch 32 took 17.5 ms instead of 20.0 (AVX2, one
// thread, CPU time; ResNet-18's, DenseNet's and Inception's layers as fast as before or faster).
// Every output is computed as before. With `stream` (blocked outputs larger than the last-level
// cache, WinogradF4Conv::StreamsOutput) the stores bypass the caches.
template <int64_t B>
void OutputTransform(const Chunk& j, const float* m, const float* bias, const WinoEpilogue& e, const float* sum,
                     float* y, int64_t out_image, bool stream) {
  const ConvGeom& g = j.g;
  const View<B> out{y, g.f, g.oh * g.ow, out_image}, add{sum, g.f, g.oh * g.ow};
  for (int64_t t0 = 0; t0 < j.count; t0 += kTileGroup)
    for (int64_t k = j.k0; k < j.k1; k += kLanes)
      for (int64_t t = t0; t < std::min(j.count, t0 + kTileGroup); ++t) {
        const TileAt at = j.Tile(t);
        const int64_t oy0 = at.ty * 4, ox0 = at.tx * 4;
        const int64_t rows = std::min<int64_t>(4, g.oh - oy0), cols = std::min<int64_t>(4, g.ow - ox0);
        V8 s[36], r[24], o[16], b;
        for (int64_t p = 0; p < kPositions; ++p) LoadV8(m + p * j.mstride + t * j.kp + k, s[p]);
        for (int64_t c = 0; c < 6; ++c) OutputRows(s + c, 6, r + c, 6);          // Aᵀ·m: 4 rows of 6
        for (int64_t i = 0; i < 4; ++i) OutputRows(r + i * 6, 1, o + i * 4, 1);  // (Aᵀ·m)·A
        LoadV8(bias + k, b);
        const int64_t offset = out.Base(at.n, k) - y;
        const int64_t sum_offset = e.with_sum ? add.Base(at.n, k) - sum : 0;  // differs in a slice
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t c = 0; c < cols; ++c) {
            const int64_t pix = out.Pixel((oy0 + i) * g.ow + ox0 + c), at_pix = offset + pix;
            V8 val = o[i * 4 + c] + b;
            Activate(e.act, val);
            if (e.with_sum) {
              V8 s8;
              add.Load(sum + sum_offset + pix, g.f - k, s8);
              val += s8;
            }
            Activate(e.act2, val);
            if (B > 1 && stream)
              StreamV8(y + at_pix, val);
            else
              out.Store(y + at_pix, g.f - k, val);
          }
      }
}

// Z = A·dy·Aᵀ for every tile and all filters of the chunk (z[p * mstride + t * kp + k], M's
// layout); output pixels past the edge count as 0.
template <int64_t B>
void GradTransform(const Chunk& j, const float* gy, float* z) {
  const ConvGeom& g = j.g;
  const View<B> in{gy, g.f, g.oh * g.ow};
  for (int64_t t = 0; t < j.count; ++t) {
    const TileAt at = j.Tile(t);
    const int64_t oy0 = at.ty * 4, ox0 = at.tx * 4;
    const int64_t rows = std::min<int64_t>(4, g.oh - oy0), cols = std::min<int64_t>(4, g.ow - ox0);
    for (int64_t k = 0; k < j.kp; k += kLanes) {
      const float* base = in.Base(at.n, k);
      V8 d[16] = {}, r[24], o[36];
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t c = 0; c < cols; ++c) in.Load(base + in.Pixel((oy0 + i) * g.ow + ox0 + c), g.f - k, d[i * 4 + c]);
      for (int64_t c = 0; c < 4; ++c) GradRows(d + c, 4, r + c, 4);          // A·dy: 6 rows of 4
      for (int64_t i = 0; i < 6; ++i) GradRows(r + i * 4, 1, o + i * 6, 1);  // (A·dy)·Aᵀ
      for (int64_t p = 0; p < kPositions; ++p) StoreV8(z + p * j.mstride + t * j.kp + k, o[p]);
    }
  }
}

}  // namespace

void WinogradF4TransformWeights(const WinoWeights& src, int64_t f, int64_t c, float* u) {
  const int64_t cp = (c + kLanes - 1) / kLanes * kLanes, kp = (f + kLanes - 1) / kLanes * kLanes;
  // Channels are disjoint rows of U: any split over the team gives the same bits.
  ParallelChunks(cp, kPositions * cp * kp, [&](int64_t c0, int64_t c1, int) {
    isa::Dispatch([&] {
      for (int64_t ch = c0; ch < c1; ++ch) KernelTransform(src, f, c, ch, cp, kp, u);
    });
  });
}

namespace {

// The size of cpu0's highest cache level as sysfs gives it (e.g. "32768K"), 0 if it gives none.
// glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) reads CPUID, which on AMD's chips of several core
// complexes can report all of them together (320 MB on a 32 MB one here).
int64_t SysfsLastLevelCache() {
  int64_t level = 0, bytes = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int64_t l = 0, size = 0;
    std::string type, unit;
    if (!(level_file >> l) || !(type_file >> type) || !(size_file >> size)) continue;
    if (type == "Instruction") continue;
    size_file.clear();
    size_file >> unit;
    const int64_t scale = unit == "K" ? 1024 : unit == "M" ? 1024 * 1024 : 1;
    if (l > level) level = l, bytes = size * scale;
  }
  return bytes;
}

}  // namespace

int64_t LastLevelCacheBytes() {
  static const int64_t bytes = [] {
    if (const int64_t b = SysfsLastLevelCache(); b > 0) return b;
    if (const long b = sysconf(_SC_LEVEL3_CACHE_SIZE); b > 0) return static_cast<int64_t>(b);
    return int64_t{32} << 20;  // not reported (a guess: a current x86 server's L3)
  }();
  return bytes;
}

bool WinogradF4Fits(const ConvGeom& g) {
  return g.spatial == 2 && g.groups == 1 && g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 &&
         g.dw == 1 && g.ph == g.pw && (g.ph == 0 || g.ph == 1) && g.oh > 0 && g.ow > 0;
}

bool WinogradF4Pays(const ConvGeom& g) {
  // Each transformed weight is read once per chunk of tiles; with few tiles the direct kernel,
  // reading 9 floats per channel pair instead of 36, is faster. AVX2, one thread: ResNet-18's 7x7
  // 512-channel layer at batch 1 (4 tiles) takes 5.3 ms, direct 2.6; its 14x14 256-channel layer
  // (16 tiles) 1.65 ms, direct 2.2. With 16 tiles and few channels the products are too small
  // for sgemm to pay back the transforms: SqueezeNet 1.1's 13x13 layers at batch 1 (48 -> 192 and
  // 64 -> 256 channels) took 1.2-1.6x the direct kernel's time (AVX2, one thread, AMD EPYC Zen 3,
  // three alternating runs each), while at batch 2 (32 tiles) they took 0.8-0.9x.
  const int64_t tiles = g.n * ((g.oh + 3) / 4) * ((g.ow + 3) / 4);
  return (tiles >= 32 || (tiles >= 16 && g.c >= 128)) && g.c >= 8 && g.f >= 8;
}

WinogradF4Conv::WinogradF4Conv(const ConvGeom& g, int64_t in_block, int64_t out_block, const WinoEpilogue& e,
                               int64_t out_image)
    : g_(g),
      in_block_(in_block),
      out_block_(out_block),
      e_(e),
      out_image_(out_image > 0 ? out_image : g.f * g.oh * g.ow) {
  cp_ = (g.c + kLanes - 1) / kLanes * kLanes;
  kp_ = (g.f + kLanes - 1) / kLanes * kLanes;
  tiles_h_ = (g.oh + 3) / 4;
  tiles_w_ = (g.ow + 3) / 4;
  tiles_ = g.n * tiles_h_ * tiles_w_;
  // V and M of a chunk (36 positions of cp + kp floats per tile) in about 1 MB, the L2 cache of
  // current x86 cores, but at least 16 tiles so that the products keep sgemm's kernels busy, and
  // more where U is large: each chunk reads all of U (36 C·K floats), so a chunk of T tiles does
  // T/4 multiply-adds per byte of U; 64 tiles make the 512-channel layers compute-bound (ResNet-18's
  // layer4 at batch 32: 68 ms with 16 tiles a chunk, 29 ms with 64, AVX2, one thread).
  const int64_t per_tile = kPositions * (cp_ + kp_) * static_cast<int64_t>(sizeof(float));
  const int64_t least = std::clamp<int64_t>(cp_ * kp_ / 4096, 16, 64);
  chunk_ = std::clamp<int64_t>((int64_t{1} << 20) / per_tile, least, 128);
  // Then the tiles in equal chunks, an even number of them so that a team of 2 shares them evenly,
  // or, for a single chunk, its filters in two halves (ResNet-18's 14x14 layers at batch 1 are one
  // chunk of 16 tiles, which one thread would otherwise run alone; two chunks of 8 tiles would
  // read U twice, 1.3 ms more per pass). Chunks and halves depend on the geometry only, never on
  // the team, so the sums do not either.
  int64_t chunks = (tiles_ + chunk_ - 1) / chunk_;
  if (chunks > 1) chunks += chunks % 2;
  chunk_ = (tiles_ + chunks - 1) / chunks;
  halves_ = chunks == 1 && tiles_ >= 8 && kp_ % 16 == 0 ? 2 : 1;
  // Where the output is larger than the last-level cache its first images have left the cache
  // before the next layer reads them, so that every store is a read for ownership from memory and a
  // write back: non-temporal stores skip the read. SqueezeNet 1.1 at batch 32 (AVX2, one thread;
  // its two 55x55 layers write 50 MB slices of their Concats, the 32 MB L3 here): 1 to 6% less CPU
  // time per pass over two runs, DenseNet-121 1%; at batch 2, whose outputs the next layer finds in
  // the cache, streaming every layer took 3% more. Blocked outputs only (whole 16-byte runs), 16-byte
  // aligned (RunChunk checks y).
  const int64_t footprint = g.n * out_image_ * static_cast<int64_t>(sizeof(float));
  stream_ = out_block > 1 && out_image_ % 4 == 0 && footprint > LastLevelCacheBytes();
}

void WinogradF4Conv::SetWeights(const float* w, const float* b) {
  u_.assign(static_cast<size_t>(kPositions * cp_ * kp_), 0.0f);
  bias_.assign(static_cast<size_t>(kp_), 0.0f);
  std::copy(b, b + g_.f, bias_.begin());
  // G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1], in double so
  // that U is rounded once.
  static constexpr double G[6][3] = {{0.25, 0, 0},
                                     {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                     {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                     {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                     {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                     {0, 0, 1}};
  const int64_t plane = cp_ * kp_;
  ParallelChunks(g_.f, g_.f * g_.c * 9 * 16, [&](int64_t k0, int64_t k1, int) {
    for (int64_t k = k0; k < k1; ++k)
      for (int64_t c = 0; c < g_.c; ++c) {
        const float* f = w + (k * g_.c + c) * 9;
        double a[6][3];  // G·g
        for (int i = 0; i < 6; ++i)
          for (int j = 0; j < 3; ++j) a[i][j] = G[i][0] * f[j] + G[i][1] * f[3 + j] + G[i][2] * f[6 + j];
        for (int i = 0; i < 6; ++i)
          for (int j = 0; j < 6; ++j) {
            const double u = a[i][0] * G[j][0] + a[i][1] * G[j][1] + a[i][2] * G[j][2];
            u_[static_cast<size_t>((i * 6 + j) * plane + c * kp_ + k)] = static_cast<float>(u);
          }
      }
  });
}

// One chunk of `count` tiles from tile t0: V = the input transform, M[p] = V[p]·U[p], then the
// output transform and epilogue. v and m hold chunk_ tiles; the 36 positions of each lie 64 bytes
// more than a whole number of pages apart, so that the transforms' 36 loads or stores per tile do not
// all fall into one set of the L1 cache.
void WinogradF4Conv::RunChunk(const float* u, const float* bias, int64_t t0, int64_t count, int64_t k0, int64_t k1,
                              const float* x, const float* sum, float* y, float* v, float* m) const {
  const Chunk j{g_, t0, count, k0, k1, cp_, kp_, tiles_h_, tiles_w_, VStride(), MStride()};
  isa::Dispatch([&] { WithBlock(in_block_, [&](auto b) { InputTransform<b()>(j, x, v); }); });
  for (int64_t p = 0; p < kPositions; ++p)
    dnnl_sgemm('N', 'N', count, k1 - k0, cp_, 1.0f, v + p * j.vstride, cp_, u + p * cp_ * kp_ + k0, kp_, 0.0f,
               m + p * j.mstride + k0, kp_);
  const bool stream = stream_ && reinterpret_cast<uintptr_t>(y) % 16 == 0;
  isa::Dispatch([&] {
    WithBlock(out_block_, [&](auto b) { OutputTransform<b()>(j, m, bias, e_, sum, y, out_image_, stream); });
  });
  if (stream) FenceStreams();
}

void WinogradF4Conv::TransformWeights(const WinoWeights& src, const float* b, float* uw) const {
  WinogradF4TransformWeights(src, g_.f, g_.c, uw);
  float* bias = uw + kPositions * cp_ * kp_;
  std::fill(bias, bias + kp_, 0.0f);
  if (b != nullptr) std::copy(b, b + g_.f, bias);
}

void WinogradF4Conv::Run(const float* x, const float* sum, float* y) const { RunWith(nullptr, x, sum, y); }

void WinogradF4Conv::RunWith(const float* uw, const float* x, const float* sum, float* y) const {
  // nullptr: SetWeights' U and bias.
  const float* u = uw ? uw : u_.data();
  const float* bias = uw ? uw + kPositions * cp_ * kp_ : bias_.data();
  g_runs.fetch_add(1, std::memory_order_relaxed);
  if (tiles_ == 0) return;
  const int64_t chunks = (tiles_ + chunk_ - 1) / chunk_;
  const size_t v_size = static_cast<size_t>(kPositions * VStride()),
               m_size = static_cast<size_t>(kPositions * MStride());
  const int64_t work = tiles_ * kPositions * (cp_ + kp_);
  ForChunksWithScratch(
      chunks * halves_, work, v_size + m_size, "_sg_conv", [&](int64_t i0, int64_t i1, float* scratch) {
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t t0 = i / halves_ * chunk_, half = kp_ / halves_, k0 = i % halves_ * half;
          RunChunk(u, bias, t0, std::min(chunk_, tiles_ - t0), k0, k0 + half, x, sum, y, scratch, scratch + v_size);
        }
      });
}

int64_t WinogradF4Conv::WeightGradFloats() const { return kPositions * (cp_ * kp_ + VStride() + MStride()); }

// gw = Σ over tiles of Gᵀ[(Bᵀ·d·B) ⊙ (A·dy·Aᵀ)]G, the forward's transforms transposed: per position
// p, M[p] (C x K) = V[p]ᵀ·Z[p] summed over the tiles, then gw = Gᵀ·M·G. The sum runs over the
// chunks of tiles in order, each position's on one thread (the positions are split over the team,
// the transforms of a chunk by tiles): the bits do not depend on the thread count.
void WinogradF4Conv::WeightGrad(const float* x, const float* gy, float* gw, bool add, float* ws) const {
  g_runs.fetch_add(1, std::memory_order_relaxed);
  float* msum = ws;
  float* v = msum + kPositions * cp_ * kp_;
  float* z = v + kPositions * VStride();
  const int64_t chunks = (tiles_ + chunk_ - 1) / chunk_;
  if (tiles_ == 0) std::fill(msum, msum + kPositions * cp_ * kp_, 0.0f);
  for (int64_t i = 0; i < chunks; ++i) {
    const int64_t t0 = i * chunk_, count = std::min(chunk_, tiles_ - t0);
    ParallelChunks(count, count * kPositions * (cp_ + kp_), [&](int64_t a, int64_t b, int) {
      const Chunk j{g_, t0 + a, b - a, 0, kp_, cp_, kp_, tiles_h_, tiles_w_, VStride(), MStride()};
      isa::Dispatch([&] { WithBlock(in_block_, [&](auto blk) { InputTransform<blk()>(j, x, v + a * cp_); }); });
      isa::Dispatch([&] { WithBlock(out_block_, [&](auto blk) { GradTransform<blk()>(j, gy, z + a * kp_); }); });
    });
    ParallelChunks(kPositions, count * kPositions * cp_ * kp_, [&](int64_t p0, int64_t p1, int) {
      const SgemmOnCallingThread one_thread;
      for (int64_t p = p0; p < p1; ++p)
        dnnl_sgemm('T', 'N', cp_, kp_, count, 1.0f, v + p * VStride(), cp_, z + p * MStride(), kp_,
                   i == 0 ? 0.0f : 1.0f, msum + p * cp_ * kp_, kp_);
    });
  }
  ParallelChunks(g_.c, kPositions * cp_ * kp_, [&](int64_t c0, int64_t c1, int) {
    isa::Dispatch([&] {
      for (int64_t ch = c0; ch < c1; ++ch) KernelGrad(msum, g_.f, g_.c, ch, cp_, kp_, gw, add);
    });
  });
}

uint64_t WinogradF4Runs() { return g_runs.load(std::memory_order_relaxed); }

}  // namespace weft::cpu
