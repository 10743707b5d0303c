// weft's 1-D Winograd convolution F(m, r): see nn_conv_winograd_1d.h.
#include "nn_conv_winograd_1d.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>
#include <new>
#include <string>
#include <type_traits>

#include "isa_dispatch.h"
#include "nn_conv_winograd_chunks.h"
#include "parallel.h"

namespace weft::cpu {
namespace {

constexpr int64_t kWidth = 8;
constexpr int64_t kMaxPoints = 12;  // n = m + r - 1 at most

std::atomic<uint64_t> g_runs_1d{0};

// The finite interpolation points of F(m, r) (∞ is the n-th), the first n - 1 of these: dyadic
// fractions and small integers, so that Aᵀ and Bᵀ are exact in float, and close together (the
// points' spread sets the transforms' constants and so the rounding error). Measured worst errors
// relative to the terms' magnitudes (tests/cpu_kernels/nn_conv_winograd_1d_test.cc): F(4,7) 2e-6
// with ±3/4 as its last pair, 6e-6 with ±3 instead; F(6,7) 5e-6 with ±3 as its last pair, 2e-5
// with ±1/4 instead.
std::vector<double> Points(int64_t n) {
  static const double all[] = {0, 1, -1, 2, -2, 0.5, -0.5, 0.75, -0.75, 3, -3};
  return std::vector<double>(all, all + n - 1);
}

// Reads and writes 8 channels at one pixel of an activation tensor: plain NCHW (B 1: the lanes a
// plane apart; past `lanes` they read as 0) or nChw<B>c (one contiguous vector), its images
// `image` floats apart (more than channels x plane: a channel slice of a Concat's output).
template <int64_t B>
struct Channels8 {
  float* p;
  int64_t plane, image;
  int64_t Offset(int64_t n, int64_t c, int64_t pix) const {
    if (B == 1) return n * image + c * plane + pix;
    return n * image + (c / B * plane + pix) * B + c % B;
  }
  void Get(int64_t at, int64_t lanes, V8& v) const {
    if (B > 1) {
      LoadV8(p + at, v);
      return;
    }
    for (int64_t l = 0; l < kWidth; ++l) v[l] = l < lanes ? p[at + l * plane] : 0.0f;
  }
  void Put(int64_t at, int64_t lanes, const V8& v) const {
    if (B > 1) {
      StoreV8(p + at, v);
      return;
    }
    for (int64_t l = 0; l < std::min(kWidth, lanes); ++l) p[at + l * plane] = v[l];
  }
};

template <typename F>
void ForBlock(int64_t block, const F& f) {
  if (block == 16) return f(std::integral_constant<int64_t, 16>{});
  if (block == 8) return f(std::integral_constant<int64_t, 8>{});
  f(std::integral_constant<int64_t, 1>{});
}

// Runs f(std::integral_constant<int64_t, n>) for the tile sizes weft builds (compile-time n, so
// that the transforms' loops unroll and their vectors stay in registers).
template <typename F>
void ForPoints(int64_t n, const F& f) {
  if (n == 12) return f(std::integral_constant<int64_t, 12>{});
  if (n == 10) return f(std::integral_constant<int64_t, 10>{});
  if (n == 8) return f(std::integral_constant<int64_t, 8>{});
  if (n == 6) return f(std::integral_constant<int64_t, 6>{});
  f(std::integral_constant<int64_t, 4>{});
}

// (Vectors pass by reference: by value GCC warns that the ABI differs without AVX.)
void Clamp(const WinoAct& a, V8& v) {
  const V8 zero = {};
  if (a.kind == WinoAct::kRelu) v = v > zero ? v : zero;
  if (a.kind == WinoAct::kClip) {
    const V8 lo = zero + a.lo, hi = zero + a.hi;
    v = v > hi ? hi : (v < lo ? lo : v);
  }
}

// The geometry the transforms need: tile i of the batch is tile `along` of line `line` (a row for
// 1xr, a column for rx1) of image `n`; InPixel and OutPixel give the pixel at position `pos` of a
// line in the input and output planes.
struct Tiles1D {
  bool along_w;
  int64_t m, pad, len_in, len_out, across, tiles_along, cp, kp, vstride, mstride;
  int64_t in_w, out_w;  // widths of the input and output planes
  int64_t k0, k1;       // the filters the output transform writes
  int64_t out_image;    // floats between the output's images
  struct At {
    int64_t n, line, along;
  };
  At Tile(int64_t i) const {
    const int64_t per_image = across * tiles_along, r = i % per_image;
    // 1xr: tiles of a row one after another (contiguous in memory); rx1: the lines (columns) of
    // a tile row one after another, so that neighbouring tiles read neighbouring pixels too.
    if (along_w) return {i / per_image, r / tiles_along, r % tiles_along};
    return {i / per_image, r % across, r / across};
  }
  int64_t InPixel(int64_t pos, int64_t line) const { return along_w ? line * in_w + pos : pos * in_w + line; }
  int64_t OutPixel(int64_t pos, int64_t line) const { return along_w ? line * out_w + pos : pos * out_w + line; }
};

// V[p] = Σ_j Bᵀ[p][j]·d[j] for every tile of the chunk (from tile t0) and 8 channels at a time:
// v[p * vstride + t * cp + c].
template <int64_t N, int64_t B>
void InputTransform1D(const Tiles1D& j, const float* bt, const ConvGeom& g, int64_t t0, int64_t count, const float* x,
                      float* v) {
  const Channels8<B> in{const_cast<float*>(x), g.h * g.w, g.c * g.h * g.w};
  for (int64_t t = 0; t < count; ++t) {
    const Tiles1D::At at = j.Tile(t0 + t);
    const int64_t start = at.along * j.m - j.pad;
    for (int64_t c = 0; c < j.cp; c += kWidth) {
      V8 d[N], o[N];
      for (int64_t q = 0; q < N; ++q) {
        d[q] = V8{};
        const int64_t pos = start + q;
        if (pos >= 0 && pos < j.len_in) in.Get(in.Offset(at.n, c, j.InPixel(pos, at.line)), g.c - c, d[q]);
      }
      for (int64_t p = 0; p < N; ++p) {
        V8 s = {};
        for (int64_t q = 0; q < N; ++q) s += bt[p * N + q] * d[q];
        o[p] = s;
      }
      for (int64_t p = 0; p < N; ++p) StoreV8(v + p * j.vstride + t * j.cp + c, o[p]);
    }
  }
}

// y = act2(act(Aᵀ·M + bias) + sum) for every tile of the chunk and 8 filters at a time; outputs
// past the line's end (the last tile's) are not written.
template <int64_t N, int64_t B>
void OutputTransform1D(const Tiles1D& j, const float* at_m, const ConvGeom& g, int64_t t0, int64_t count,
                       const float* m, const float* bias, const WinoEpilogue& e, const float* sum, float* y) {
  const Channels8<B> out{y, g.oh * g.ow, j.out_image}, add{const_cast<float*>(sum), g.oh * g.ow, g.f * g.oh * g.ow};
  for (int64_t t = 0; t < count; ++t) {
    const Tiles1D::At at = j.Tile(t0 + t);
    const int64_t first = at.along * j.m, outputs = std::min(j.m, j.len_out - first);
    for (int64_t k = j.k0; k < j.k1; k += kWidth) {
      V8 s[N], b;
      for (int64_t p = 0; p < N; ++p) LoadV8(m + p * j.mstride + t * j.kp + k, s[p]);
      LoadV8(bias + k, b);
      for (int64_t i = 0; i < outputs; ++i) {
        V8 val = b;
        for (int64_t p = 0; p < N; ++p) val += at_m[i * N + p] * s[p];
        const int64_t pix = j.OutPixel(first + i, at.line), where = out.Offset(at.n, k, pix);
        Clamp(e.act, val);
        if (e.with_sum) {
          V8 s8;
          add.Get(add.Offset(at.n, k, pix), g.f - k, s8);
          val += s8;
        }
        Clamp(e.act2, val);
        out.Put(where, g.f - k, val);
      }
    }
  }
}

// The coefficients (degree 0 up) of Π (x - roots[l]) over l != skip.
std::vector<double> PolyFromRoots(const std::vector<double>& roots, size_t skip) {
  std::vector<double> c = {1.0};
  for (size_t l = 0; l < roots.size(); ++l) {
    if (l == skip) continue;
    std::vector<double> next(c.size() + 1, 0.0);
    for (size_t i = 0; i < c.size(); ++i) {
      next[i + 1] += c[i];
      next[i] -= roots[l] * c[i];
    }
    c = std::move(next);
  }
  return c;
}

}  // namespace

bool Winograd1DFits(const ConvGeom& g) {
  const bool row = g.kh == 1 && g.ph == 0, column = g.kw == 1 && g.pw == 0;
  const int64_t r = row ? g.kw : g.kh, pad = row ? g.pw : g.ph;
  return g.spatial == 2 && g.groups == 1 && (row || column) && (r == 3 || r == 5 || r == 7) && pad < r && g.sh == 1 &&
         g.sw == 1 && g.dh == 1 && g.dw == 1 && g.oh > 0 && g.ow > 0;
}

bool Winograd1DPays(const ConvGeom& g) {
  // Each chunk reads all of U (n floats per channel pair against the direct kernel's r), so few
  // tiles leave too little work per weight. AVX-512, one thread, 1x7 layers at 17x17, batch 1 (51
  // tiles): 192 -> 192 channels 0.49 ms against direct 1.34, 32 -> 32 0.039 against 0.042, 16 ->
  // 16 0.0143 against 0.0136 (even: taken, so that the compatibility fixture's narrow Inception v3
  // runs this path too); Inception's 8x8 384-channel 1x3 layers at batch 1 (16 tiles; U read from
  // memory, 3.5 MB) 0.49 ms against 0.57 inside the network.
  const int64_t r = std::max(g.kh, g.kw), along = g.kh == 1 ? g.ow : g.oh, m = Winograd1DTile(r, along);
  const int64_t lines = g.kh == 1 ? g.n * g.oh : g.n * g.ow;
  return lines * ((along + m - 1) / m) >= 16 && g.c >= 8 && g.f >= 8;
}

int64_t Winograd1DTile(int64_t r, int64_t len) {
  // The fewest multiplications per line, tiles · n (the GEMMs' work), of m = 2, 4 or 6 (n up to
  // 12: with more points they spread further and the error grows; larger m for small r would
  // save little); the smaller m on a tie, for accuracy. Inception's 17-wide 1x7 layers: m 6 (3
  // tiles, 36 per line; m 4: 50, m 2: 72), 0.49 ms for its 192-channel layer instead of 0.67
  // (AVX-512, one thread); the whole network at batch 1 79.6 ms of CPU time instead of 81.9.
  int64_t best = 2;
  for (int64_t m = 4; m <= 6 && m + r - 1 <= kMaxPoints; m += 2)
    if ((len + m - 1) / m * (m + r - 1) < (len + best - 1) / best * (best + r - 1)) best = m;
  return best;
}

Winograd1DConv::Winograd1DConv(const ConvGeom& g, int64_t in_block, int64_t out_block, const WinoEpilogue& e, int64_t m,
                               int64_t out_image)
    : g_(g),
      in_block_(in_block),
      out_block_(out_block),
      e_(e),
      out_image_(out_image > 0 ? out_image : g.f * g.oh * g.ow),
      along_w_(g.kh == 1) {
  r_ = along_w_ ? g.kw : g.kh;
  pad_ = along_w_ ? g.pw : g.ph;
  len_in_ = along_w_ ? g.w : g.h;
  len_out_ = along_w_ ? g.ow : g.oh;
  m_ = m > 0 ? m : Winograd1DTile(r_, len_out_);
  n_ = m_ + r_ - 1;
  if (n_ > kMaxPoints || n_ % 2 != 0)
    throw Error(WEFT_ERR_INVALID_ARGUMENT, "_sg_conv: no 1-D Winograd F(" + std::to_string(m_) + ", " +
                                               std::to_string(r_) + ") (m + r - 1 must be even, at most 12)");
  across_ = along_w_ ? g.oh : g.ow;
  tiles_along_ = (len_out_ + m_ - 1) / m_;
  cp_ = (g.c + kWidth - 1) / kWidth * kWidth;
  kp_ = (g.f + kWidth - 1) / kWidth * kWidth;
  tiles_ = g.n * across_ * tiles_along_;

  // Cook–Toom with the finite points a_j and ∞: the correlation y_i = Σ_k g_k d_{i+k} is the
  // transpose of the linear convolution s = g * h = C·[(G·g) ⊙ (A·h)], where A·h evaluates h at the
  // points (and takes h's leading coefficient for ∞), G·g evaluates g divided by f_j =
  // Π_{l≠j} (a_j - a_l), and C interpolates: its column j holds the coefficients of
  // Π_{l≠j} (x - a_l), its last those of Π_l (x - a_l) (s's leading coefficient times that
  // polynomial is what the finite points miss). So Aᵀ = A's transpose and Bᵀ = Cᵀ.
  const std::vector<double> a = Points(n_);
  at_.assign(static_cast<size_t>(m_ * n_), 0.0);
  gm_.assign(static_cast<size_t>(n_ * r_), 0.0);
  bt_.assign(static_cast<size_t>(n_ * n_), 0.0);
  for (int64_t j = 0; j + 1 < n_; ++j) {
    double f = 1.0, pw = 1.0;
    for (int64_t l = 0; l + 1 < n_; ++l)
      if (l != j) f *= a[j] - a[l];
    for (int64_t i = 0; i < std::max(m_, r_); ++i, pw *= a[j]) {
      if (i < m_) at_[i * n_ + j] = pw;
      if (i < r_) gm_[j * r_ + i] = pw / f;
    }
    const std::vector<double> poly = PolyFromRoots(a, static_cast<size_t>(j));
    for (size_t t = 0; t < poly.size(); ++t) bt_[j * n_ + t] = poly[t];
  }
  at_[(m_ - 1) * n_ + n_ - 1] = 1.0;
  gm_[(n_ - 1) * r_ + r_ - 1] = 1.0;
  const std::vector<double> whole = PolyFromRoots(a, a.size());
  for (size_t t = 0; t < whole.size(); ++t) bt_[(n_ - 1) * n_ + t] = whole[t];
  at_f_.assign(at_.begin(), at_.end());
  bt_f_.assign(bt_.begin(), bt_.end());

  // Chunks as for the F(4x4, 3x3) (nn_conv_winograd.cc): V and M in about 1 MB, at least 16
  // tiles, more where U is large; then equal chunks, an even number of them for a team of 2.
  const int64_t per_tile = n_ * (cp_ + kp_) * static_cast<int64_t>(sizeof(float));
  const int64_t least = std::clamp<int64_t>(cp_ * kp_ / 4096, 16, 64);
  chunk_ = std::clamp<int64_t>((int64_t{1} << 20) / per_tile, least, 128);
  int64_t chunks = (tiles_ + chunk_ - 1) / chunk_;
  if (chunks > 1) chunks += chunks % 2;
  // A single chunk is split so that a team of 2 shares it (Inception's 17x17 layers at batch 1
  // are one chunk of 51 tiles: at 2 threads one core ran them while the other waited): with 32
  // tiles or more into two chunks of tiles, below into two halves of the filters (each half with
  // its own input transform). Both cost one thread a little (AVX-512, 1x7 at 17x17, batch 1: 128
  // channels 0.250 ms as two chunks, 0.300 as halves, 0.239 whole; 192: 0.588, 0.557, 0.487) and
  // save the second thread about half (128: 0.132 ms, 192: 0.263). Like the chunks, this depends
  // on the geometry only, never on the team, so the sums do not either.
  if (chunks == 1 && tiles_ >= 32) chunks = 2;
  chunk_ = std::max<int64_t>(1, (tiles_ + chunks - 1) / chunks);
  halves_ = chunks == 1 && tiles_ >= 8 && kp_ % 16 == 0 ? 2 : 1;
}

void Winograd1DConv::SetWeights(const float* w, const float* b) {
  u_.assign(static_cast<size_t>(n_ * cp_ * kp_), 0.0f);
  bias_.assign(static_cast<size_t>(kp_), 0.0f);
  std::copy(b, b + g_.f, bias_.begin());
  const int64_t plane = cp_ * kp_;
  ParallelChunks(g_.f, g_.f * g_.c * r_ * n_, [&](int64_t k0, int64_t k1, int) {
    for (int64_t k = k0; k < k1; ++k)
      for (int64_t c = 0; c < g_.c; ++c) {
        const float* f = w + (k * g_.c + c) * r_;
        for (int64_t p = 0; p < n_; ++p) {
          double u = 0.0;
          for (int64_t q = 0; q < r_; ++q) u += gm_[static_cast<size_t>(p * r_ + q)] * f[q];
          u_[static_cast<size_t>(p * plane + c * kp_ + k)] = static_cast<float>(u);
        }
      }
  });
}

void Winograd1DConv::RunChunk(int64_t t0, int64_t count, int64_t k0, int64_t k1, const float* x, const float* sum,
                              float* y, float* v, float* m) const {
  const Tiles1D j{along_w_, m_,        pad_,      len_in_, len_out_, across_, tiles_along_, cp_,
                  kp_,      VStride(), MStride(), g_.w,    g_.ow,    k0,      k1,           out_image_};
  isa::Dispatch([&] {
    ForPoints(n_, [&](auto n) {
      ForBlock(in_block_, [&](auto b) { InputTransform1D<n(), b()>(j, bt_f_.data(), g_, t0, count, x, v); });
    });
  });
  for (int64_t p = 0; p < n_; ++p)
    dnnl_sgemm('N', 'N', count, k1 - k0, cp_, 1.0f, v + p * j.vstride, cp_, u_.data() + p * cp_ * kp_ + k0, kp_, 0.0f,
               m + p * j.mstride + k0, kp_);
  isa::Dispatch([&] {
    ForPoints(n_, [&](auto n) {
      ForBlock(out_block_, [&](auto b) {
        OutputTransform1D<n(), b()>(j, at_f_.data(), g_, t0, count, m, bias_.data(), e_, sum, y);
      });
    });
  });
}

void Winograd1DConv::Run(const float* x, const float* sum, float* y) const {
  g_runs_1d.fetch_add(1, std::memory_order_relaxed);
  if (tiles_ == 0) return;
  const int64_t chunks = (tiles_ + chunk_ - 1) / chunk_;
  const size_t v_size = static_cast<size_t>(n_ * VStride()), m_size = static_cast<size_t>(n_ * MStride());
  ForChunksWithScratch(chunks * halves_, tiles_ * n_ * (cp_ + kp_), v_size + m_size, "_sg_conv (1-D Winograd)",
                       [&](int64_t i0, int64_t i1, float* scratch) {
                         for (int64_t i = i0; i < i1; ++i) {
                           const int64_t t0 = i / halves_ * chunk_, half = kp_ / halves_, k0 = i % halves_ * half;
                           RunChunk(t0, std::min(chunk_, tiles_ - t0), k0, k0 + half, x, sum, y, scratch,
                                    scratch + v_size);
                         }
                       });
}

uint64_t Winograd1DRuns() { return g_runs_1d.load(std::memory_order_relaxed); }

}  // namespace weft::cpu
