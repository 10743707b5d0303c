// gemm: C[b] = alpha * op(A[b]) * op(B[b]) (+ bias) (+ C[b] when add != 0), row-major.
// A is M x K (K x M when ta), B is K x N (N x K when tb); b = gl_WorkGroupID.z with strides
// sa, sb, sc in elements (p.oa / p.ob: texel = float offsets); bias is per column (bias_rows = 0)
// or per row (1). The GEMM for operands gemm4.comp cannot read as vec4.
// Blocking for CPU implementations (lavapipe runs invocations as SIMD lanes): a workgroup of 64
// invocations owns ROWS rows of C and 64 * COLS columns; every invocation of a workgroup reads
// the same A elements and its own COLS elements of B, then does ROWS * COLS fused multiply-adds
// per k. No shared memory or barriers: caches do the tiling on a CPU, and barriers cost
// coroutine switches there.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int ROWS = 4;
layout(constant_id = 1) const int COLS = 4;
// A and B through uniform texel buffers of R32_SFLOAT (vector gathers on lavapipe, gemm4.comp).
layout(binding = 0) uniform samplerBuffer a;
layout(binding = 1) uniform samplerBuffer b;
layout(std430, binding = 2) buffer C { float c[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
layout(push_constant) uniform P {
  uint oa, ob, oc, obias;
  uint M, N, K, ta, tb, add, has_bias, sa, sb, sc;
  float alpha;
  uint bias_rows;
} p;
void main() {
  const uint m0 = gl_WorkGroupID.y * ROWS;
  const uint abase = p.oa + gl_WorkGroupID.z * p.sa, bbase = p.ob + gl_WorkGroupID.z * p.sb;
  // Row index clamped (not branched) so the loads stay uniform and in bounds; rows past M are
  // computed and dropped at the store.
  uint rows[ROWS];
  for (int i = 0; i < ROWS; ++i) rows[i] = min(m0 + i, p.M - 1);
  uint cols[COLS];
  bool live[COLS];
  for (int j = 0; j < COLS; ++j) {
    const uint n = gl_WorkGroupID.x * (64 * COLS) + gl_LocalInvocationID.x + 64 * j;
    live[j] = n < p.N;
    cols[j] = min(n, p.N - 1);
  }
  float acc[ROWS][COLS];
  for (int i = 0; i < ROWS; ++i)
    for (int j = 0; j < COLS; ++j) acc[i][j] = 0.0;
  // Element (m, k) of op(A) is at am * m + ak * k; element (k, n) of op(B) at bk * k + bn * n.
  const uint am = p.ta == 0 ? p.K : 1, ak = p.ta == 0 ? 1 : p.M;
  const uint bk = p.tb == 0 ? p.N : 1, bn = p.tb == 0 ? 1 : p.K;
  for (uint k = 0; k < p.K; ++k) {
    float bv[COLS];
    for (int j = 0; j < COLS; ++j) bv[j] = texelFetch(b, int(bbase + bk * k + bn * cols[j])).x;
    for (int i = 0; i < ROWS; ++i) {
      const float av = texelFetch(a, int(abase + am * rows[i] + ak * k)).x;
      for (int j = 0; j < COLS; ++j) acc[i][j] = fma(av, bv[j], acc[i][j]);
    }
  }
  const uint cbase = p.oc + gl_WorkGroupID.z * p.sc;
  for (int i = 0; i < ROWS; ++i) {
    const uint m = m0 + i;
    if (m >= p.M) break;
    for (int j = 0; j < COLS; ++j) {
      if (!live[j]) continue;
      const uint n = cols[j];
      float v = p.alpha * acc[i][j];
      if (p.has_bias != 0) v += bias[p.obias + (p.bias_rows != 0 ? m : n)];
      const uint at = cbase + m * p.N + n;
      c[at] = p.add != 0 ? c[at] + v : v;
    }
  }
}
