// Pooling's forward on blocked activations (nChw8c / nChw16c): BlockedPoolForward, nn_blocked_act.h.
//
// It replaces oneDNN's pooling primitive, whose jit:avx2 kernel (Debian's libdnnl 2.x) took
// 0.88 ms for the 3x3 stride-2 max pooling of a 64 x 111 x 111 nChw8c tensor on one AMD EPYC
// (Zen 3) core; this loop takes 0.21 ms alone (0.55 ms inside SqueezeNet, where the tensor comes
// from the convolution before it). SqueezeNet 1.1's three max poolings were 13 % of its batch-1
// pass (1.54 ms, now 0.94), ResNet-18's stem pooling 2.5 % (0.78 ms, now 0.35). The loops take a
// vector of channels per pixel where the plain kernel (nn_pooling.cc) takes one float, in the same
// window order, so the two layouts give the same values; the time goes to the loads (one chain of
// max per output vector), not to window arithmetic.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "isa_dispatch.h"
#include "nn_blocked_act.h"
#include "nn_common.h"
#include "nn_conv_winograd_chunks.h"
#include "parallel.h"

namespace weft::cpu {
namespace {

using weft::sdk::PoolGeometry;
using weft::sdk::PoolType;
using weft::sdk::PoolWindow;

// acc = std::max(acc, v) lane by lane: v where acc < v, else acc (a NaN in v is skipped).
inline void MaxInto(V8& acc, const V8& v) { acc = acc < v ? v : acc; }

// One block of B channels: B / 8 vectors. (Not "Lanes": nn_pooling.cc has one, and the sanitizer
// builds compile both files in one unity batch.)
template <int64_t B>
struct ChannelBlock {
  V8 v[B / 8];
  void Fill(float f) {
    for (auto& x : v) x = V8{} + f;
  }
  // v = max(v, the B floats at q).
  void Max(const float* q) {
    for (int64_t i = 0; i < B / 8; ++i) {
      V8 t;
      LoadV8(q + 8 * i, t);
      MaxInto(v[i], t);
    }
  }
  void Add(const float* q) {
    for (int64_t i = 0; i < B / 8; ++i) {
      V8 t;
      LoadV8(q + 8 * i, t);
      v[i] += t;
    }
  }
  // y = v, or (add) y += v.
  void Store(float* q, bool add) const {
    for (int64_t i = 0; i < B / 8; ++i) {
      V8 t = v[i];
      if (add) {
        V8 old;
        LoadV8(q + 8 * i, old);
        t = old + t;
      }
      StoreV8(q + 8 * i, t);
    }
  }
};

// Output row oy of one channel block (xb, yb: its planes, B floats a pixel): each window's cells
// row by row, as the plain kernel's GenericForward, into the max (from -inf) or the sum, which avg
// scales by the window's divisor; a window wholly in the padding gives 0. (The plain kernel's other
// max loops visit a window in another order, which can matter only for which of a +0 and a -0
// is returned.) cols[ox]: the columns of window ox, the same in every row (PoolGeometry::Window per
// output took half of the time).
template <int64_t B>
void PoolRow(const PoolGeometry& g, const float* xb, float* yb, int64_t oy, bool add, const PoolWindow* cols) {
  const PoolWindow rows = g.Window(oy, 0);
  const bool max = g.type == PoolType::kMax;
  for (int64_t ox = 0; ox < g.ow; ++ox) {
    const int64_t w0 = cols[ox].w0, w1 = cols[ox].w1;
    ChannelBlock<B> acc;
    if (rows.h0 >= rows.h1 || w0 >= w1) {
      acc.Fill(0.0f);
    } else if (max) {
      acc.Fill(-INFINITY);
      for (int64_t h = rows.h0; h < rows.h1; ++h)
        for (int64_t q = w0; q < w1; ++q) acc.Max(xb + (h * g.iw + q) * B);
    } else {
      acc.Fill(0.0f);
      for (int64_t h = rows.h0; h < rows.h1; ++h)
        for (int64_t q = w0; q < w1; ++q) acc.Add(xb + (h * g.iw + q) * B);
      if (g.type == PoolType::kAvg) {
        const float div = g.Window(oy, ox).div;
        for (auto& v : acc.v) v *= div;
      }
    }
    acc.Store(yb + (oy * g.ow + ox) * B, add);
  }
}

// Output rows [r0, r1) of the batch's channel blocks (row r: block r / oh, output row r % oh).
template <int64_t B>
void PoolRows(const PoolGeometry& g, int64_t r0, int64_t r1, const float* x, float* y, bool add) {
  std::vector<PoolWindow> cols(static_cast<size_t>(g.ow));
  for (int64_t ox = 0; ox < g.ow; ++ox) cols[static_cast<size_t>(ox)] = g.Window(0, ox);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t block = r / g.oh, oy = r % g.oh;
    PoolRow<B>(g, x + block * g.ih * g.iw * B, y + block * g.oh * g.ow * B, oy, add, cols.data());
  }
}

}  // namespace

void BlockedPoolForward(const PoolGeometry& g, int64_t block, const float* x, float* y, bool add) {
  if (g.id != 1 || (block != 8 && block != 16) || g.c % block != 0)
    throw Error(WEFT_ERR_INVALID_ARGUMENT,
                "Pooling on blocked data: needs 2-D windows and whole blocks of 8 or 16 "
                "channels (got " +
                    std::to_string(g.c) + " channels, block " + std::to_string(block) + ")");
  // Rows of different blocks and images are independent: any split over the team gives the same bits.
  const int64_t rows = g.n * (g.c / block) * g.oh;
  const int64_t work = rows * g.ow * g.kh * g.kw * block;
  ParallelChunks(rows, work, [&](int64_t r0, int64_t r1, int) {
    isa::Dispatch([&] {
      if (block == 16)
        PoolRows<16>(g, r0, r1, x, y, add);
      else
        PoolRows<8>(g, r0, r1, x, y, add);
    });
  });
}

}  // namespace weft::cpu
