// weft GPU kernel layer — a tiled single-precision GEMM, the fallback where no vendor BLAS is
// available (Debian's ROCm has no rocBLAS/hipBLAS) or the vendor's rejects a shape.
//
// Row-major C (m × n) = op(A) (m × k) · op(B) (k × n) + beta · C, op = transpose or not.
// A block of kGemmTile × kGemmTile threads computes one tile of C, one element per thread; the
// k dimension is walked in tiles staged in shared memory. Each step has two phases separated by a
// block barrier: GemmLoad (every thread copies one element of A's and of B's tile) and
// GemmAccumulate (every thread adds its row of As times its column of Bs). The device kernel
// (gpu_launch_device.h) runs them with __syncthreads() between; the host emulation
// (gpu_launch_host.h) runs each phase for all threads of a block before the next phase starts,
// which is exactly what the barriers guarantee, so the tests check these very functions at the
// tile size the GPU builds use.
#pragma once

#include <stdint.h>

#include "gpu_port.h"
#include "weft/sdk/operator.h"

namespace weft::WEFT_GPU_NS {

inline constexpr int kGemmTile = 16;

struct GemmArgs {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float beta = 0;  // 0: C is written (its old contents are never read), 1: added to
  float* c = nullptr;
  int64_t ldc = 0;
  // Strided batch (batch_dot): product z uses a + z·stride_a, b + z·stride_b, c + z·stride_c.
  int64_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
  /// The arguments of product z of the batch.
  WEFT_HD GemmArgs At(int64_t z) const {
    GemmArgs g = *this;
    g.a += z * stride_a, g.b += z * stride_b, g.c += z * stride_c;
    g.batch = 1;
    return g;
  }
};

/// Element (r, kk) of op(A), 0 outside the matrix (the tile's padding).
WEFT_HD inline float GemmA(const GemmArgs& g, int64_t r, int64_t kk) {
  if (r >= g.m || kk >= g.k) return 0.0f;
  return g.trans_a ? g.a[kk * g.lda + r] : g.a[r * g.lda + kk];
}
/// Element (kk, col) of op(B), 0 outside the matrix.
WEFT_HD inline float GemmB(const GemmArgs& g, int64_t kk, int64_t col) {
  if (kk >= g.k || col >= g.n) return 0.0f;
  return g.trans_b ? g.b[col * g.ldb + kk] : g.b[kk * g.ldb + col];
}

/// Phase 1 of step `t` for thread (tx, ty) of block (bx, by): stage one element of each tile.
WEFT_HD inline void GemmLoad(const GemmArgs& g, int64_t bx, int64_t by, int tx, int ty, int64_t t,
                             float (*as)[kGemmTile], float (*bs)[kGemmTile]) {
  as[ty][tx] = GemmA(g, by * kGemmTile + ty, t * kGemmTile + tx);
  bs[ty][tx] = GemmB(g, t * kGemmTile + ty, bx * kGemmTile + tx);
}

/// Phase 2: thread (tx, ty)'s partial dot product over the staged tiles, added to `acc`.
WEFT_HD inline float GemmAccumulate(int tx, int ty, const float (*as)[kGemmTile], const float (*bs)[kGemmTile],
                                    float acc) {
  for (int e = 0; e < kGemmTile; ++e) acc += as[ty][e] * bs[e][tx];
  return acc;
}

/// After the last step: thread (tx, ty) stores its element (if inside C).
WEFT_HD inline void GemmStore(const GemmArgs& g, int64_t bx, int64_t by, int tx, int ty, float acc) {
  const int64_t r = by * kGemmTile + ty, col = bx * kGemmTile + tx;
  if (r >= g.m || col >= g.n) return;
  float& out = g.c[r * g.ldc + col];
  out = g.beta == 0.0f ? acc : acc + g.beta * out;
}

/// Number of k steps and of blocks along n (x) and m (y).
inline int64_t GemmSteps(const GemmArgs& g) { return (g.k + kGemmTile - 1) / kGemmTile; }
inline int64_t GemmBlocksX(const GemmArgs& g) { return (g.n + kGemmTile - 1) / kGemmTile; }
inline int64_t GemmBlocksY(const GemmArgs& g) { return (g.m + kGemmTile - 1) / kGemmTile; }

/// The arguments of C (=|+=) op(A)·op(B) for L::Gemm, beta from the write request `req`.
inline GemmArgs MakeGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                         int64_t ldb, int32_t req, float* c, int64_t ldc) {
  GemmArgs g;
  g.trans_a = ta, g.trans_b = tb, g.m = m, g.n = n, g.k = k;
  g.a = a, g.lda = lda, g.b = b, g.ldb = ldb, g.c = c, g.ldc = ldc;
  g.beta = req == WEFT_REQ_ADD ? 1.0f : 0.0f;
  return g;
}

}  // namespace weft::WEFT_GPU_NS
