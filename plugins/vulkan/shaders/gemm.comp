// gemm: C[b] = alpha * op(A[b]) * op(B[b]) (+ bias[n]) (+ C[b] when add != 0), row-major.
// A is M x K (K x M when ta), B is K x N (N x K when tb); b = gl_WorkGroupID.z with strides
// sa, sb, sc in elements. Used by FullyConnected, dot and batch_dot.
// Tiling: a 16x16 workgroup computes a 64x64 tile of C, each invocation 4x4 outputs (rows ty +
// 16i, columns tx + 16j); K advances 16 at a time through shared memory (8 KiB).
#version 450
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) buffer C { float c[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
layout(push_constant) uniform P {
  uint oa, ob, oc, obias;
  uint M, N, K, ta, tb, add, has_bias, sa, sb, sc;
  float alpha;
} p;
shared float As[16][64];
shared float Bs[16][64];
void main() {
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const uint tid = ty * 16 + tx;
  const uint m0 = gl_WorkGroupID.y * 64, n0 = gl_WorkGroupID.x * 64;
  const uint abase = p.oa + gl_WorkGroupID.z * p.sa, bbase = p.ob + gl_WorkGroupID.z * p.sb;
  float acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0;
  for (uint k0 = 0; k0 < p.K; k0 += 16) {
    for (uint e = 0; e < 4; ++e) {
      const uint idx = tid + 256 * e;
      uint r, kk;
      if (p.ta == 0) { r = idx / 16; kk = idx % 16; } else { kk = idx / 64; r = idx % 64; }
      const uint m = m0 + r, k = k0 + kk;
      float v = 0.0;
      if (m < p.M && k < p.K) v = p.ta == 0 ? a[abase + m * p.K + k] : a[abase + k * p.M + m];
      As[kk][r] = v;
      uint cc;
      if (p.tb == 0) { kk = idx / 64; cc = idx % 64; } else { cc = idx / 16; kk = idx % 16; }
      const uint n = n0 + cc, k2 = k0 + kk;
      float w = 0.0;
      if (n < p.N && k2 < p.K) w = p.tb == 0 ? b[bbase + k2 * p.N + n] : b[bbase + n * p.K + k2];
      Bs[kk][cc] = w;
    }
    barrier();
    for (uint kk = 0; kk < 16; ++kk) {
      float ar[4], br[4];
      for (int i = 0; i < 4; ++i) ar[i] = As[kk][ty + 16 * i];
      for (int j = 0; j < 4; ++j) br[j] = Bs[kk][tx + 16 * j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] = fma(ar[i], br[j], acc[i][j]);
    }
    barrier();
  }
  const uint cbase = p.oc + gl_WorkGroupID.z * p.sc;
  for (int i = 0; i < 4; ++i) {
    const uint m = m0 + ty + 16 * i;
    if (m >= p.M) continue;
    for (int j = 0; j < 4; ++j) {
      const uint n = n0 + tx + 16 * j;
      if (n >= p.N) continue;
      float v = p.alpha * acc[i][j];
      if (p.has_bias != 0) v += bias[p.obias + n];
      const uint at = cbase + m * p.N + n;
      c[at] = p.add != 0 ? c[at] + v : v;
    }
  }
}
