// Pooling (MXNet 1.9): max / avg / sum over 1-D (NCW), 2-D (NCHW) and 3-D (NCDHW) windows; global_pool;
// pooling_convention valid (floor) or full (ceil); stride; zero padding; count_include_pad for
// avg. Window geometry follows MXNet's pool.h: a window starts at o·stride − pad, is cut at
// in + pad, and (for avg with count_include_pad) is divided by that cut size before being clipped
// to the real input. Backward sends max's gradient to the first maximum of the window. A window
// lying wholly in the padding (full convention) yields 0, where MXNet yields NaN or the lowest
// float. float32 (the vectorised 2x2 path, threads) and float64 (the window loops).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "isa_dispatch.h"
#include "nn_blocked_act.h"
#include "nn_common.h"
#include "parallel.h"
#include "tensor_util.h"
#include "weft/sdk/ops/pooling.hpp"

namespace weft::cpu {
namespace {

using tensor::kFloatMask;

using weft::sdk::PoolGeometry;
using weft::sdk::PoolType;
using weft::sdk::PoolWindow3;
using PoolGeom = PoolGeometry;

// f(output offset in the plane, its window) for every output position of one plane.
template <typename F>
void ForEachWindow(const PoolGeom& g, F f) {
  for (int64_t oz = 0; oz < g.od; ++oz)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) f((oz * g.oh + oy) * g.ow + ox, g.Window3(oz, oy, ox));
}

// f(input offset in the plane) for every cell of window w, in window order (depth, row, column).
template <typename F>
void ForEachCell(const PoolGeom& g, const PoolWindow3& w, F f) {
  for (int64_t d = w.d0; d < w.d1; ++d)
    for (int64_t h = w.h0; h < w.h1; ++h)
      for (int64_t q = w.w0; q < w.w1; ++q) f((d * g.ih + h) * g.iw + q);
}

PoolGeom ParsePooling(const KernelSetup& s, const TensorDesc& x, const TensorDesc& y) {
  return weft::sdk::PoolingGeometry(s.op_name, s.Params<weft::sdk::PoolingParam>(), x.shape, y.shape, 3);
}

// Max pooling with 2x2 windows at stride 2 and no padding (LeNet's, VGG's): the windows tile the
// input, so rows are read pairwise with no window arithmetic, and GCC vectorises the loops.
bool IsMax2x2(const PoolGeom& g) {
  return g.type == PoolType::kMax && g.id == 1 && g.kd == 1 && g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 &&
         g.ph == 0 && g.pw == 0 && 2 * g.oh <= g.ih && 2 * g.ow <= g.iw;
}

// The same max as the generic loop (std::max from -inf in window order, so NaN handling agrees).
inline float Max4(float a, float b, float c, float d) {
  return std::max(std::max(std::max(std::max(-INFINITY, a), b), c), d);
}

// The 2x2 loops work on L outputs at a time in GCC vector types (L = 8 or 4 floats; the isa
// wrappers lower them to AVX-512/AVX2/SSE): one row's 2L inputs are split into the windows' left
// (even) and right (odd) columns with __builtin_shufflevector. The scalar versions of these loops
// compiled to compare-and-branch per window (data-dependent branches: 3.4 ms for LeNet's pool1
// gradient at batch 100, 12 ns per window).
// (The vector types are spelled per width: GCC drops vector_size on a dependent type.)
template <int L>
struct VectorTypes;
template <>
struct VectorTypes<8> {
  typedef float F __attribute__((vector_size(32)));
  typedef int32_t I __attribute__((vector_size(32)));
};
template <>
struct VectorTypes<4> {
  typedef float F __attribute__((vector_size(16)));
  typedef int32_t I __attribute__((vector_size(16)));
};

// Vectors are passed by reference only: by value they would change the ABI of the out-of-line
// baseline copies (GCC's -Wpsabi).
template <int L>
struct Lanes {
  using F = typename VectorTypes<L>::F;
  using I = typename VectorTypes<L>::I;
  static void Load(const float* p, F& v) { std::memcpy(&v, p, sizeof(v)); }
  static void Store(float* p, const F& v) { std::memcpy(p, &v, sizeof(v)); }
  // Even and odd elements of the 2L floats at p.
  static void Split(const float* p, F& even, F& odd) {
    F lo, hi;
    Load(p, lo);
    Load(p + L, hi);
    if constexpr (L == 8) {
      even = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
      odd = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15);
    } else {
      even = __builtin_shufflevector(lo, hi, 0, 2, 4, 6);
      odd = __builtin_shufflevector(lo, hi, 1, 3, 5, 7);
    }
  }
  // Stores even/odd interleaved as 2L floats at p (= or += by kAdd).
  template <bool kAdd>
  static void Merge(float* p, const F& even, const F& odd) {
    F lo, hi;
    if constexpr (L == 8) {
      lo = __builtin_shufflevector(even, odd, 0, 8, 1, 9, 2, 10, 3, 11);
      hi = __builtin_shufflevector(even, odd, 4, 12, 5, 13, 6, 14, 7, 15);
    } else {
      lo = __builtin_shufflevector(even, odd, 0, 4, 1, 5);
      hi = __builtin_shufflevector(even, odd, 2, 6, 3, 7);
    }
    if constexpr (kAdd) {
      F old_lo, old_hi;
      Load(p, old_lo);
      Load(p + L, old_hi);
      lo += old_lo;
      hi += old_hi;
    }
    Store(p, lo);
    Store(p + L, hi);
  }
  // x = std::max(x, y) lane by lane: y where x < y, else x (so a NaN in y is dropped, as in Max4).
  static void Max(F& x, const F& y) { x = x < y ? y : x; }
};

// Windows [ox, ox + L) of one output row: r0/r1 the two input rows, yr the output row.
template <int L, typename Assign>
void Max2x2ForwardLanes(const float* r0, const float* r1, float* yr, int64_t ox) {
  using V = Lanes<L>;
  typename V::F a, b, c, d, m = typename V::F{} - INFINITY;
  V::Split(r0 + 2 * ox, a, b);
  V::Split(r1 + 2 * ox, c, d);
  V::Max(m, a);
  V::Max(m, b);
  V::Max(m, c);
  V::Max(m, d);
  if constexpr (Assign::kAdd) {
    typename V::F old;
    V::Load(yr + ox, old);
    m += old;
  }
  V::Store(yr + ox, m);
}

template <typename Assign>
void Max2x2Forward(const PoolGeom& g, int64_t p0, int64_t p1, const float* x, float* y, Assign assign) {
  for (int64_t p = p0; p < p1; ++p)
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      const float* r0 = x + (p * g.ih + 2 * oy) * g.iw;
      const float* r1 = r0 + g.iw;
      float* yr = y + (p * g.oh + oy) * g.ow;
      int64_t ox = 0;
      for (; ox + 8 <= g.ow; ox += 8) Max2x2ForwardLanes<8, Assign>(r0, r1, yr, ox);
      for (; ox + 4 <= g.ow; ox += 4) Max2x2ForwardLanes<4, Assign>(r0, r1, yr, ox);
      for (; ox < g.ow; ++ox) assign(yr[ox], Max4(r0[2 * ox], r0[2 * ox + 1], r1[2 * ox], r1[2 * ox + 1]));
    }
}

// The gradient of windows [ox, ox + L) of one output row (see Max2x2Backward): g0/g1 the two
// gradient rows, gr the output gradient row.
template <int L, typename Assign>
void Max2x2BackwardLanes(const float* r0, const float* r1, const float* gr, float* g0, float* g1, int64_t ox) {
  using V = Lanes<L>;
  typename V::F a, b, c, d;
  V::Split(r0 + 2 * ox, a, b);
  V::Split(r1 + 2 * ox, c, d);
  const typename V::I pick_b = b > a;
  const typename V::F m_ab = pick_b ? b : a;
  const typename V::I pick_c = c > m_ab;
  const typename V::I pick_d = d > (pick_c ? c : m_ab);
  typename V::F go, zero{};
  V::Load(gr + ox, go);
  V::template Merge<Assign::kAdd>(g0 + 2 * ox, (pick_b | pick_c | pick_d) ? zero : go,
                                  (pick_b & ~pick_c & ~pick_d) ? go : zero);
  V::template Merge<Assign::kAdd>(g1 + 2 * ox, (pick_c & ~pick_d) ? go : zero, pick_d ? go : zero);
}

// The gradient of 2x2 max windows, through `assign` (= or +=): each window's out_grad goes to its
// first maximum in window order (the generic loop's rule: strictly greater replaces), the other
// three get 0. With `=` this writes every element of the windows, so an exactly tiled plane
// needs no zero fill first (half the memory traffic: this loop is bound by it).
template <typename Assign>
void Max2x2Backward(const PoolGeom& g, int64_t p0, int64_t p1, const float* gy, const float* x, float* gx,
                    Assign assign) {
  for (int64_t p = p0; p < p1; ++p)
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      const int64_t row = (p * g.ih + 2 * oy) * g.iw;
      const float *r0 = x + row, *r1 = r0 + g.iw;
      float *g0 = gx + row, *g1 = g0 + g.iw;
      const float* gr = gy + (p * g.oh + oy) * g.ow;
      int64_t ox = 0;
      for (; ox + 8 <= g.ow; ox += 8) Max2x2BackwardLanes<8, Assign>(r0, r1, gr, g0, g1, ox);
      for (; ox + 4 <= g.ow; ox += 4) Max2x2BackwardLanes<4, Assign>(r0, r1, gr, g0, g1, ox);
      for (; ox < g.ow; ++ox) {
        const float a = r0[2 * ox], b = r0[2 * ox + 1], c = r1[2 * ox], d = r1[2 * ox + 1];
        const bool pick_b = b > a;
        const float m_ab = pick_b ? b : a;
        const bool pick_c = c > m_ab;
        const bool pick_d = d > (pick_c ? c : m_ab);
        const float go = gr[ox];
        assign(g0[2 * ox], !pick_b && !pick_c && !pick_d ? go : 0.0f);
        assign(g0[2 * ox + 1], pick_b && !pick_c && !pick_d ? go : 0.0f);
        assign(g1[2 * ox], pick_c && !pick_d ? go : 0.0f);
        assign(g1[2 * ox + 1], pick_d ? go : 0.0f);
      }
    }
}

// 2-D max pooling of any window, stride and padding (ResNet's and Inception's 3x3 stride-2 stems):
// windows overlap, so the 2x2 tiling does not apply. IsMax2d: 2-D max pooling other than the 2x2
// tiling, float32.
bool IsMax2d(const PoolGeom& g) { return g.type == PoolType::kMax && g.id == 1 && g.kd == 1 && !IsMax2x2(g); }

// rowmax[q] = the max of column q over the input rows of output row oy of plane xp (std::max from
// -inf, so NaN is skipped): one vector loop over whole rows, shared by all the row's windows.
inline void RowMax(const PoolGeom& g, const float* xp, int64_t oy, float* rowmax) {
  const PoolWindow3 rows = g.Window3(0, oy, 0);
  for (int64_t q = 0; q < g.iw; ++q) rowmax[q] = -INFINITY;
  for (int64_t h = rows.h0; h < rows.h1; ++h) {
    const float* r = xp + h * g.iw;
    for (int64_t q = 0; q < g.iw; ++q) rowmax[q] = std::max(rowmax[q], r[q]);
  }
}

// The max of window w's columns of rowmax: the window's max, as the generic loop finds it (max is
// exact, and both orders skip NaN).
inline float WindowMax(const PoolWindow3& w, const float* rowmax) {
  float acc = -INFINITY;
  for (int64_t q = w.w0; q < w.w1; ++q) acc = std::max(acc, rowmax[q]);
  return acc;
}

// Forward of planes [p0, p1): RowMax per output row, then WindowMax per window.
template <typename Assign>
void Max2dForward(const PoolGeom& g, int64_t p0, int64_t p1, const float* x, float* y, float* rowmax, Assign assign) {
  for (int64_t p = p0; p < p1; ++p) {
    const float* xp = x + p * g.in_plane();
    float* yp = y + p * g.out_plane();
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      RowMax(g, xp, oy, rowmax);
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const PoolWindow3 w = g.Window3(0, oy, ox);
        assign(yp[oy * g.ow + ox], w.h0 >= w.h1 || w.w0 >= w.w1 ? 0.0f : WindowMax(w, rowmax));  // all padding: 0
      }
    }
  }
}

// gx += the gradient of planes [p0, p1). The generic loop's rule (the window's first cell, replaced
// by each later cell strictly greater than the best so far) picks the first cell when it is NaN,
// else the first cell equal to the window's max over its other values: found by a backward scan of
// selects, with no chain of compares through the running max (that chain, about four cycles a
// cell, bounded the generic loop).
// With `zero` (req write) each gx row is zeroed just before the first window reaching it, so the
// scattered adds hit rows in cache rather than a plane zeroed (and evicted) beforehand.
void Max2dBackward(const PoolGeom& g, int64_t p0, int64_t p1, const float* gy, const float* x, float* gx, float* rowmax,
                   bool zero) {
  for (int64_t p = p0; p < p1; ++p) {
    const float* xp = x + p * g.in_plane();
    float* gp = gx + p * g.in_plane();
    const float* gyp = gy + p * g.out_plane();
    int64_t zeroed = 0;  // gx rows [0, zeroed) of this plane are zero or written
    auto zero_rows_until = [&](int64_t end) {
      if (zero && end > zeroed) std::fill(gp + zeroed * g.iw, gp + end * g.iw, 0.0f);
      zeroed = std::max(zeroed, end);
    };
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      zero_rows_until(g.Window3(0, oy, 0).h1);
      RowMax(g, xp, oy, rowmax);
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const PoolWindow3 w = g.Window3(0, oy, ox);
        if (w.h0 >= w.h1 || w.w0 >= w.w1) continue;
        int64_t best = w.h0 * g.iw + w.w0;
        if (!std::isnan(xp[best])) {
          const float m = WindowMax(w, rowmax);
          for (int64_t h = w.h1 - 1; h >= w.h0; --h)
            for (int64_t q = w.w1 - 1; q >= w.w0; --q) best = xp[h * g.iw + q] == m ? h * g.iw + q : best;
        }
        gp[best] += gyp[oy * g.ow + ox];
      }
    }
    zero_rows_until(g.ih);  // rows no window reaches
  }
}

// The window loops of any geometry, over planes [p0, p1): max / avg / sum of each window.
template <typename T, typename Assign>
void GenericForward(const PoolGeom& g, int64_t p0, int64_t p1, const T* x, T* y, Assign assign) {
  for (int64_t p = p0; p < p1; ++p) {
    const T* xp = x + p * g.in_plane();
    T* yp = y + p * g.out_plane();
    ForEachWindow(g, [&](int64_t o, const PoolWindow3& w) {
      T acc = g.type == PoolType::kMax ? -std::numeric_limits<T>::infinity() : T(0);
      ForEachCell(g, w, [&](int64_t at) { acc = g.type == PoolType::kMax ? std::max(acc, xp[at]) : acc + xp[at]; });
      if (g.type == PoolType::kAvg) acc *= static_cast<T>(w.div);
      if (w.d0 >= w.d1 || w.h0 >= w.h1 || w.w0 >= w.w1) acc = T(0);  // window entirely in padding
      assign(yp[o], acc);
    });
  }
}

// GenericForward on float32 planes [p0, p1), 8 planes at a time: lane j of a vector reduces plane
// j's window in the same order as GenericForward, so the results are the same bits, but the 8 chains
// of adds (or maxes) are independent. One plane at a time, each cell waited for the add before it:
// SqueezeNet's closing 13x13 average over 1000 planes took 157 us at batch 1 and 4-5 ms at batch 32
// on a Zen 4 core, 36-49 us and 3.3 ms this way (at batch 32 its 21.6 MB come from memory). (The
// accumulator is one vector, not an array a lambda captures: GCC kept such an array on the stack,
// a store and a reload per cell.)
template <typename Assign>
void GenericForwardPlanes(const PoolGeom& g, int64_t p0, int64_t p1, const float* x, float* y, Assign assign) {
  typedef float V __attribute__((vector_size(32)));
  const int64_t in = g.in_plane(), out = g.out_plane();
  const bool max = g.type == PoolType::kMax;
  int64_t p = p0;
  for (; p + 8 <= p1; p += 8) {
    const float* xp = x + p * in;
    float* yp = y + p * out;
    for (int64_t o = 0; o < out; ++o) {
      const int64_t oz = o / (g.oh * g.ow), oy = o / g.ow % g.oh, ox = o % g.ow;
      const PoolWindow3 w = g.Window3(oz, oy, ox);
      V acc = V{} + (max ? -INFINITY : 0.0f);
      for (int64_t d = w.d0; d < w.d1; ++d)
        for (int64_t h = w.h0; h < w.h1; ++h)
          for (int64_t q = w.w0; q < w.w1; ++q) {
            const float* c = xp + (d * g.ih + h) * g.iw + q;
            const V v = {c[0], c[in], c[2 * in], c[3 * in], c[4 * in], c[5 * in], c[6 * in], c[7 * in]};
            if (max)
              acc = acc < v ? v : acc;  // std::max(acc, v) lane by lane
            else
              acc += v;
          }
      if (g.type == PoolType::kAvg) acc *= w.div;
      const bool empty = w.d0 >= w.d1 || w.h0 >= w.h1 || w.w0 >= w.w1;  // window entirely in padding
      for (int j = 0; j < 8; ++j) assign(yp[j * out + o], empty ? 0.0f : acc[j]);
    }
  }
  GenericForward(g, p, p1, x, y, assign);  // the last planes, fewer than 8
}

// gx += the pooling gradient of gy for planes [p0, p1) (x: the forward's input); max's gradient
// goes to the window's first maximum.
template <typename T>
void GenericGrad(const PoolGeom& g, int64_t p0, int64_t p1, const T* gy, const T* x, T* gx) {
  for (int64_t p = p0; p < p1; ++p) {
    const T* xp = x + p * g.in_plane();
    T* gp = gx + p * g.in_plane();
    const T* gyp = gy + p * g.out_plane();
    ForEachWindow(g, [&](int64_t o, const PoolWindow3& w) {
      const T go = gyp[o];
      if (g.type == PoolType::kMax) {
        int64_t best = -1;
        T mx = -std::numeric_limits<T>::infinity();
        ForEachCell(g, w, [&](int64_t at) {
          if (best < 0 || xp[at] > mx) mx = xp[at], best = at;
        });
        if (best >= 0) gp[best] += go;
      } else {
        const T v = g.type == PoolType::kAvg ? go * static_cast<T>(w.div) : go;
        ForEachCell(g, w, [&](int64_t at) { gp[at] += v; });
      }
    });
  }
}

// A blocked data_format (nn_blocked_act.h) for a float32 2-D pooling with whole blocks of
// channels, and an output in the same format or 1x1; Invalid otherwise.
void CheckBlocked(const KernelSetup& s, const weft::sdk::PoolingParam& p, const PoolGeom& g, int32_t dtype) {
  const int64_t block = weft::sdk::ActFormatBlock(p.data_format);
  if (dtype != WEFT_DTYPE_FLOAT32 || s.inputs[0].ndim() != 4 || g.c % block != 0)
    Invalid(s, "data_format " + std::string(weft::sdk::kActFormats[static_cast<size_t>(p.data_format)]) +
                   " needs float32 NCHW data with a multiple of " + std::to_string(block) + " channels (got " +
                   ShapeString(s.inputs[0]) + "); use plain");
  // A plain output lies as the blocked one only when it is 1x1 (the executor's global pooling).
  if (p.out_format != p.data_format && g.oh * g.ow != 1)
    Invalid(s, "out_format plain with data_format " +
                   std::string(weft::sdk::kActFormats[static_cast<size_t>(p.data_format)]) +
                   " needs a 1x1 output (got " + ShapeString(s.outputs[0]) + "); use out_format " +
                   std::string(weft::sdk::kActFormats[static_cast<size_t>(p.data_format)]));
}

class PoolingForward {
 public:
  explicit PoolingForward(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    dtype_ = RequireFloatDType(s);
    g_ = ParsePooling(s, s.inputs[0], s.outputs[0]);
    const auto p = s.Params<weft::sdk::PoolingParam>();
    if (p.data_format == weft::sdk::ActFormat::kPlain) return;
    CheckBlocked(s, p, g_, dtype_);
    block_ = weft::sdk::ActFormatBlock(p.data_format);
  }
  void Compute(const KernelCall& c) const {
    if (weft::sdk::IsNull(c.req[0])) return;
    const PoolGeom& g = g_;
    if (dtype_ == WEFT_DTYPE_FLOAT64) {
      const double* x = c.inputs[0].data<double>();
      double* y = c.outputs[0].data<double>();
      weft::sdk::WithReq(c.req[0], [&](auto assign) { GenericForward(g, 0, g.n * g.c, x, y, assign); });
      return;
    }
    const float* x = c.inputs[0].data<float>();
    float* y = c.outputs[0].data<float>();
    if (block_ > 1) return BlockedPoolForward(g, block_, x, y, c.req[0] == WEFT_REQ_ADD);
    Plain(x, y, c.req[0]);
  }

 private:
  // float32 on NCHW tensors. Planes are independent: the thread plan's team takes contiguous runs
  // of them.
  void Plain(const float* x, float* y, int32_t req) const {
    const PoolGeom& g = g_;
    ParallelChunks(g.n * g.c, g.n * g.c * g.in_plane(),
                   [&](int64_t p0, int64_t p1, int) { isa::Dispatch([&] { Run(g, p0, p1, x, y, req); }); });
  }

  static void Run(const PoolGeom& g, int64_t p0, int64_t p1, const float* x, float* y, int32_t req) {
    std::vector<float> rowmax(IsMax2d(g) ? static_cast<size_t>(g.iw) : 0);
    weft::sdk::WithReq(req, [&](auto assign) {
      if (IsMax2x2(g)) return Max2x2Forward(g, p0, p1, x, y, assign);
      if (IsMax2d(g)) return Max2dForward(g, p0, p1, x, y, rowmax.data(), assign);
      GenericForwardPlanes(g, p0, p1, x, y, assign);
    });
  }

  PoolGeom g_;
  int32_t dtype_ = WEFT_DTYPE_FLOAT32;
  int64_t block_ = 1;  // the channel block of a blocked data_format (nn_blocked_act.h), 1 for plain
};

// _backward_Pooling: inputs out_grad, data, output; output data grad.
class PoolingBackward {
 public:
  explicit PoolingBackward(const KernelSetup& s) {
    s.ExpectCounts(3, 1);
    dtype_ = RequireFloatDType(s);
    g_ = ParsePooling(s, s.inputs[1], s.inputs[0]);
    // Blocked activations are an inference executor's (its graphs have no gradient).
    if (s.Params<weft::sdk::PoolingParam>().data_format != weft::sdk::ActFormat::kPlain)
      Invalid(s, "has no gradient on a blocked data_format; bind the symbol before fusion (data_format plain)");
  }
  void Compute(const KernelCall& c) const {
    if (weft::sdk::IsNull(c.req[0])) return;
    const PoolGeom& g = g_;
    const bool add = c.req[0] == WEFT_REQ_ADD;
    if (dtype_ == WEFT_DTYPE_FLOAT64) {
      double* gx = c.outputs[0].data<double>();
      if (!add) std::fill(gx, gx + g.n * g.c * g.in_plane(), 0.0);
      GenericGrad(g, 0, g.n * g.c, c.inputs[0].data<double>(), c.inputs[1].data<double>(), gx);
      return;
    }
    const float* gy = c.inputs[0].data<float>();
    const float* x = c.inputs[1].data<float>();
    float* gx = c.outputs[0].data<float>();
    const bool tiled = IsMax2x2(g) && 2 * g.oh == g.ih && 2 * g.ow == g.iw;
    // A plane's windows write only that plane of gx, so runs of planes go to different threads.
    ParallelChunks(g.n * g.c, g.n * g.c * g.in_plane(), [&](int64_t p0, int64_t p1, int) {
      if (tiled && !add) return isa::Dispatch([&] { Max2x2Backward(g, p0, p1, gy, x, gx, weft::sdk::AssignWrite{}); });
      if (IsMax2d(g)) {
        std::vector<float> rowmax(static_cast<size_t>(g.iw));
        return isa::Dispatch([&] { Max2dBackward(g, p0, p1, gy, x, gx, rowmax.data(), !add); });
      }
      if (!add) std::fill(gx + p0 * g.in_plane(), gx + p1 * g.in_plane(), 0.0f);
      isa::Dispatch([&] { AccumulateGrad(g, p0, p1, gy, x, gx); });
    });
  }

 private:
  // gx += the pooling gradient of gy for planes [p0, p1) (x: the forward's input).
  static void AccumulateGrad(const PoolGeom& g, int64_t p0, int64_t p1, const float* gy, const float* x, float* gx) {
    if (IsMax2x2(g)) return Max2x2Backward(g, p0, p1, gy, x, gx, weft::sdk::AssignAdd{});
    GenericGrad(g, p0, p1, gy, x, gx);
  }

  PoolGeom g_;
  int32_t dtype_ = WEFT_DTYPE_FLOAT32;
};

}  // namespace

void RegisterPooling(KernelTable& t) {
  t.Add<PoolingForward>("Pooling", kFloatMask);
  t.Add<PoolingBackward>("_backward_Pooling", kFloatMask);
}

}  // namespace weft::cpu
