// gemm4: gemm.comp's C[b] = alpha op(A[b]) op(B[b]) (+ bias) (+ C[b]) with vec4 loads, for
// operands whose offsets, batch strides and vectorised extents are multiples of 4: K unless
// TA && !TB, M when TA, N when !TB (the host checks; gemm.comp does the rest). Each invocation owns a (4 R4) x (4 C4) tile of C and walks K
// four at a time: a 4 x 4 block of op(A) and of op(B) per step, loaded as vec4 along whichever
// axis is contiguous (K for A when !TA and for B when TB, M / N otherwise), then 16 R4 C4 vec4
// FMAs. Why: on lavapipe (Mesa 22) every SSBO load, uniform or not, is a loop over the SIMD lanes
// with a bounds check per component, so loads, not FMAs, bound a GEMM; vec4 loads and K-blocking
// cut the loads per FMA by 4-8x against gemm.comp.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int TA = 0;
layout(constant_id = 1) const int TB = 0;
layout(constant_id = 2) const int R4 = 2;  // row groups of 4 per invocation
layout(constant_id = 3) const int C4 = 1;  // column groups of 4 per invocation
layout(constant_id = 4) const int WGY = 8;  // invocations of a workgroup along M (64 / WGY along N)
layout(std430, binding = 0) readonly buffer A { vec4 a[]; };
layout(std430, binding = 1) readonly buffer B { vec4 b[]; };
layout(std430, binding = 2) buffer C { float c[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
layout(push_constant) uniform P {
  uint oa, ob, oc, obias;
  uint M, N, K, ta, tb, add, has_bias, sa, sb, sc;
  float alpha;
  uint bias_rows;
} p;

void main() {
  // WGY x (64 / WGY) invocations per workgroup; consecutive invocations (one SIMD row of 8
  // lanes) take neighbouring column tiles of the same rows. Small M takes a small WGY, so fewer
  // invocations compute clamped rows that are thrown away.
  const uint wgx = 64 / WGY;
  const uint lx = gl_LocalInvocationID.x % wgx, ly = gl_LocalInvocationID.x / wgx;
  const uint m0 = (gl_WorkGroupID.y * WGY + ly) * (4 * R4), n0 = (gl_WorkGroupID.x * wgx + lx) * (4 * C4);
  const uint abase = p.oa + gl_WorkGroupID.z * p.sa, bbase = p.ob + gl_WorkGroupID.z * p.sb;
  vec4 acc[4 * R4][C4];
  for (int i = 0; i < 4 * R4; ++i)
    for (int j = 0; j < C4; ++j) acc[i][j] = vec4(0.0);
  for (uint k = 0; k < p.K; k += 4) {
    // av[i][kk] = op(A)(m0 + i, k + kk)
    vec4 av[4 * R4];
    for (int g = 0; g < R4; ++g) {
      if (TA == 0) {
        for (int r = 0; r < 4; ++r) av[4 * g + r] = a[(abase + min(m0 + 4 * g + r, p.M - 1) * p.K + k) / 4];
      } else {
        // K need not be a multiple of 4 here: rows past K are clamped and their terms zeroed.
        const uint mg = min(m0 + 4 * g, p.M - 4);
        vec4 t[4];
        for (int kk = 0; kk < 4; ++kk)
          t[kk] = k + kk < p.K ? a[(abase + min(k + kk, p.K - 1) * p.M + mg) / 4] : vec4(0.0);
        for (int r = 0; r < 4; ++r) av[4 * g + r] = vec4(t[0][r], t[1][r], t[2][r], t[3][r]);
      }
    }
    // bv[j][kk] = op(B)(k + kk, n0 + 4 j .. + 3)
    vec4 bv[C4][4];
    for (int j = 0; j < C4; ++j) {
      if (TB == 0) {
        const uint ng = min(n0 + 4 * j, p.N - 4);
        for (int kk = 0; kk < 4; ++kk) bv[j][kk] = b[(bbase + min(k + kk, p.K - 1) * p.N + ng) / 4];
      } else {
        vec4 t[4];
        for (int q = 0; q < 4; ++q) t[q] = b[(bbase + min(n0 + 4 * j + q, p.N - 1) * p.K + k) / 4];
        for (int kk = 0; kk < 4; ++kk) bv[j][kk] = vec4(t[0][kk], t[1][kk], t[2][kk], t[3][kk]);
      }
    }
    for (int i = 0; i < 4 * R4; ++i)
      for (int j = 0; j < C4; ++j)
        for (int kk = 0; kk < 4; ++kk) acc[i][j] = fma(vec4(av[i][kk]), bv[j][kk], acc[i][j]);
  }
  const uint cbase = p.oc + gl_WorkGroupID.z * p.sc;
  for (int i = 0; i < 4 * R4; ++i) {
    const uint m = m0 + i;
    if (m >= p.M) break;
    for (int j = 0; j < C4; ++j) {
      for (int q = 0; q < 4; ++q) {
        const uint n = n0 + 4 * j + q;
        if (n >= p.N) break;
        float v = p.alpha * acc[i][j][q];
        if (p.has_bias != 0) v += bias[p.obias + (p.bias_rows != 0 ? m : n)];
        const uint at = cbase + m * p.N + n;
        c[at] = p.add != 0 ? c[at] + v : v;
      }
    }
  }
}
