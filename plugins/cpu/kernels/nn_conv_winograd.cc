// weft's Winograd F(4x4, 3x3) convolution: see nn_conv_winograd.h.
#include "nn_conv_winograd.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "isa_dispatch.h"
#include "parallel.h"

namespace weft::cpu {
namespace {

// Eight channels: one AVX2 register in the AVX2 and AVX-512 variants, two SSE ones in the baseline.
using V8 = float __attribute__((vector_size(32)));
constexpr int64_t kLanes = 8;
constexpr int64_t kPositions = 36;  // the 6x6 transformed tile

std::atomic<uint64_t> g_runs{0};

// One activation tensor: plain NCHW (block 1) or nChw<block>c.
struct View {
  const float* p;
  int64_t block, channels, plane;
  // Offset of channel c (a multiple of 8) at pixel `pix` of image n.
  int64_t At(int64_t n, int64_t c, int64_t pix) const {
    if (block == 1) return (n * channels + c) * plane + pix;
    return ((n * (channels / block) + c / block) * plane + pix) * block + c % block;
  }
  // Channels c..c+7 at a pixel; those past `channels` (plain tensors only) read as 0. (Vectors
  // pass by reference: GCC warns that passing them by value changes the ABI without AVX.)
  void Load(int64_t n, int64_t c, int64_t pix, V8& v) const {
    const float* q = p + At(n, c, pix);
    if (block > 1) {
      std::memcpy(&v, q, sizeof v);
      return;
    }
    for (int64_t l = 0; l < kLanes; ++l) v[l] = c + l < channels ? q[l * plane] : 0.0f;
  }
  void Store(int64_t n, int64_t c, int64_t pix, const V8& v) const {
    float* q = const_cast<float*>(p) + At(n, c, pix);
    if (block > 1) {
      std::memcpy(q, &v, sizeof v);
      return;
    }
    for (int64_t l = 0; l < kLanes && c + l < channels; ++l) q[l * plane] = v[l];
  }
};

// Bᵀ·d for one column (or row) of the 6x6 input tile, elements `s` apart.
inline void InputRows(const V8* d, int64_t s, V8* t, int64_t ts) {
  const V8 d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s], d4 = d[4 * s], d5 = d[5 * s];
  t[0] = 4.0f * d0 - 5.0f * d2 + d4;
  t[ts] = d3 + d4 - 4.0f * (d1 + d2);
  t[2 * ts] = d4 - d3 + 4.0f * (d1 - d2);
  t[3 * ts] = d4 - d2 + 2.0f * (d3 - d1);
  t[4 * ts] = d4 - d2 + 2.0f * (d1 - d3);
  t[5 * ts] = 4.0f * d1 - 5.0f * d3 + d5;
}

// Aᵀ·m for one column (or row) of the 6x6 product tile, giving 4 outputs.
inline void OutputRows(const V8* m, int64_t s, V8* o, int64_t os) {
  const V8 a = m[s] + m[2 * s], b = m[s] - m[2 * s], c = m[3 * s] + m[4 * s], d = m[3 * s] - m[4 * s];
  o[0] = m[0] + a + c;
  o[os] = b + 2.0f * d;
  o[2 * os] = a + 4.0f * c;
  o[3 * os] = b + 8.0f * d + m[5 * s];
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

}  // namespace

bool WinogradF4Fits(const ConvGeom& g) {
  return g.spatial == 2 && g.groups == 1 && g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 &&
         g.dw == 1 && g.ph == g.pw && (g.ph == 0 || g.ph == 1) && g.oh > 0 && g.ow > 0;
}

bool WinogradF4Pays(const ConvGeom& g) {
  // Each transformed weight is read once per chunk of tiles; below a few chunks' worth of tiles
  // (ResNet-18's 7x7 layers at batch 1 have 4) the direct kernel, reading 9 floats per channel
  // pair instead of 36, is faster.
  const int64_t tiles = g.n * ((g.oh + 3) / 4) * ((g.ow + 3) / 4);
  return tiles >= 32 && g.c >= 8 && g.f >= 8;
}

WinogradF4Conv::WinogradF4Conv(const ConvGeom& g, int64_t in_block, int64_t out_block, const WinoEpilogue& e)
    : g_(g), in_block_(in_block), out_block_(out_block), e_(e) {
  cp_ = (g.c + kLanes - 1) / kLanes * kLanes;
  kp_ = (g.f + kLanes - 1) / kLanes * kLanes;
  tiles_h_ = (g.oh + 3) / 4;
  tiles_w_ = (g.ow + 3) / 4;
  tiles_ = g.n * tiles_h_ * tiles_w_;
  // V and M of a chunk (36 positions of cp + kp floats per tile) in about 1 MB, the L2 cache of
  // current x86 cores; at least 16 tiles so that the products keep sgemm's kernels busy.
  const int64_t per_tile = kPositions * (cp_ + kp_) * static_cast<int64_t>(sizeof(float));
  chunk_ = std::clamp<int64_t>((int64_t{1} << 20) / per_tile, 16, 128);
  chunk_ = std::min(chunk_, tiles_);
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
// output transform and epilogue. v and m hold chunk_ tiles.
void WinogradF4Conv::RunChunk(int64_t t0, int64_t count, const float* x, const float* sum, float* y, float* v,
                              float* m) const {
  const View in{x, in_block_, g_.c, g_.h * g_.w};
  const View out{y, out_block_, g_.f, g_.oh * g_.ow};
  const View add{sum, out_block_, g_.f, g_.oh * g_.ow};
  const int64_t per_image = tiles_h_ * tiles_w_;
  auto tile = [&](int64_t t) {
    const int64_t i = t0 + t;
    return TileAt{i / per_image, i % per_image / tiles_w_, i % tiles_w_};
  };
  const int64_t vstride = chunk_ * cp_, mstride = chunk_ * kp_;
  isa::Dispatch([&] {
    for (int64_t t = 0; t < count; ++t) {
      const TileAt at = tile(t);
      const int64_t y0 = at.ty * 4 - g_.ph, x0 = at.tx * 4 - g_.pw;
      const bool inside = y0 >= 0 && x0 >= 0 && y0 + 6 <= g_.h && x0 + 6 <= g_.w;
      for (int64_t c = 0; c < cp_; c += kLanes) {
        V8 d[36], r[36];
        for (int64_t i = 0; i < 6; ++i)
          for (int64_t j = 0; j < 6; ++j) {
            const int64_t yy = y0 + i, xx = x0 + j;
            const bool ok = inside || (yy >= 0 && yy < g_.h && xx >= 0 && xx < g_.w);
            d[i * 6 + j] = V8{};
            if (ok) in.Load(at.n, c, yy * g_.w + xx, d[i * 6 + j]);
          }
        for (int64_t j = 0; j < 6; ++j) InputRows(d + j, 6, r + j, 6);          // Bᵀ·d
        for (int64_t i = 0; i < 6; ++i) InputRows(r + i * 6, 1, d + i * 6, 1);  // (Bᵀ·d)·B
        for (int64_t p = 0; p < kPositions; ++p) std::memcpy(v + p * vstride + t * cp_ + c, &d[p], sizeof(V8));
      }
    }
  });
  for (int64_t p = 0; p < kPositions; ++p)
    dnnl_sgemm('N', 'N', count, kp_, cp_, 1.0f, v + p * vstride, cp_, u_.data() + p * cp_ * kp_, kp_, 0.0f,
               m + p * mstride, kp_);
  isa::Dispatch([&] {
    for (int64_t t = 0; t < count; ++t) {
      const TileAt at = tile(t);
      const int64_t oy0 = at.ty * 4, ox0 = at.tx * 4;
      const int64_t rows = std::min<int64_t>(4, g_.oh - oy0), cols = std::min<int64_t>(4, g_.ow - ox0);
      for (int64_t k = 0; k < kp_; k += kLanes) {
        V8 s[36], r[24], o[16];
        for (int64_t p = 0; p < kPositions; ++p) std::memcpy(&s[p], m + p * mstride + t * kp_ + k, sizeof(V8));
        for (int64_t j = 0; j < 6; ++j) OutputRows(s + j, 6, r + j, 6);          // Aᵀ·m: 4 rows of 6
        for (int64_t i = 0; i < 4; ++i) OutputRows(r + i * 6, 1, o + i * 4, 1);  // (Aᵀ·m)·A
        V8 bias;
        std::memcpy(&bias, bias_.data() + k, sizeof bias);
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t pix = (oy0 + i) * g_.ow + ox0 + j;
            V8 val = o[i * 4 + j] + bias;
            Activate(e_.act, val);
            if (e_.with_sum) {
              V8 s8;
              add.Load(at.n, k, pix, s8);
              val += s8;
            }
            Activate(e_.act2, val);
            out.Store(at.n, k, pix, val);
          }
      }
    }
  });
}

void WinogradF4Conv::Run(const float* x, const float* sum, float* y) const {
  g_runs.fetch_add(1, std::memory_order_relaxed);
  if (tiles_ == 0) return;
  const int64_t chunks = (tiles_ + chunk_ - 1) / chunk_;
  const size_t v_size = static_cast<size_t>(kPositions * chunk_ * cp_),
               m_size = static_cast<size_t>(kPositions * chunk_ * kp_);
  const int64_t work = tiles_ * kPositions * (cp_ + kp_);
  ParallelChunks(chunks, work, [&](int64_t c0, int64_t c1, int) {
    // Per-thread V and M, kept between calls (OpenMP keeps its threads).
    thread_local std::vector<float> scratch;
    if (scratch.size() < v_size + m_size) scratch.resize(v_size + m_size);
    // sgemm on this thread only: oneDNN would otherwise split a product over the team (when the
    // loop is not split), and a split reduction would make the sums depend on the thread count.
    const int team = omp_get_max_threads();
    omp_set_num_threads(1);
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t t0 = c * chunk_;
      RunChunk(t0, std::min(chunk_, tiles_ - t0), x, sum, y, scratch.data(), scratch.data() + v_size);
    }
    omp_set_num_threads(team);
  });
}

uint64_t WinogradF4Runs() { return g_runs.load(std::memory_order_relaxed); }

}  // namespace weft::cpu
