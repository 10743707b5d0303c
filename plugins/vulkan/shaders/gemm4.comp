// gemm4: gemm.comp's C[b] = alpha op(A[b]) op(B[b]) (+ bias) (+ C[b]) for operands whose offsets,
// batch strides and vectorised extents are multiples of 4: K unless TA && !TB, M when TA, N when
// !TB (the host checks; gemm.comp does the rest). A and B are uniform texel buffers of vec4
// (R32G32B32A32_SFLOAT; p.oa / p.ob count texels); C and the bias are storage buffers.
//
// Each invocation owns a (4 R4) x (4 C4) tile of C and walks K in steps of 4 KB: KB blocks of
// 4 x 4 of op(A) and of op(B), fetched as vec4 along whichever axis is contiguous (K for A when
// !TA and for B when TB, M / N otherwise), then 16 R4 C4 KB vec4 FMAs.
// Why texel fetches: on lavapipe (Mesa 22) a storage-buffer load is a loop over the SIMD lanes
// with a branch and a bounds check per lane and component, while texelFetch is a vector gather;
// loads, not FMAs, bound a GEMM there (bench/vulkan: 1024^3 6 -> 19 GFLOP/s, note of issue 14).
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int TA = 0;
layout(constant_id = 1) const int TB = 0;
layout(constant_id = 2) const int R4 = 2;   // row groups of 4 per invocation
layout(constant_id = 3) const int C4 = 1;   // column groups of 4 per invocation
layout(constant_id = 4) const int WGY = 8;  // invocations of a workgroup along M (64 / WGY along N)
layout(constant_id = 5) const int KB = 1;   // blocks of 4 along K per step
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

vec4 A4(uint at) { return texelFetch(a, int(at / 4)); }
vec4 B4(uint at) { return texelFetch(b, int(at / 4)); }

void main() {
  // WGY x (64 / WGY) invocations per workgroup; consecutive invocations (one SIMD row of 8
  // lanes) take neighbouring column tiles of the same rows. Small M takes a small WGY, so fewer
  // invocations compute clamped rows that are thrown away.
  const uint wgx = 64 / WGY;
  const uint lx = gl_LocalInvocationID.x % wgx, ly = gl_LocalInvocationID.x / wgx;
  const uint m0 = (gl_WorkGroupID.y * WGY + ly) * (4 * R4), n0 = (gl_WorkGroupID.x * wgx + lx) * (4 * C4);
  const uint abase = 4 * p.oa + gl_WorkGroupID.z * p.sa, bbase = 4 * p.ob + gl_WorkGroupID.z * p.sb;
  vec4 acc[4 * R4][C4];
  for (int i = 0; i < 4 * R4; ++i)
    for (int j = 0; j < C4; ++j) acc[i][j] = vec4(0.0);
  for (uint k0 = 0; k0 < p.K; k0 += 4 * KB) {
    // av[i][4 q + kk] = op(A)(m0 + i, k0 + 4 q + kk); bv[j][4 q + kk] = op(B)(k0 + 4 q + kk, n0 + 4 j ..).
    // Blocks past K contribute zero: A's terms there are zeroed, B's indices clamped.
    vec4 av[4 * R4][KB];
    vec4 bv[C4][4 * KB];
    for (int q = 0; q < KB; ++q) {
      const uint k = k0 + 4 * q;
      for (int g = 0; g < R4; ++g) {
        if (TA == 0) {
          const float live = k < p.K ? 1.0 : 0.0;
          for (int r = 0; r < 4; ++r)
            av[4 * g + r][q] = live * A4(abase + min(m0 + 4 * g + r, p.M - 1) * p.K + min(k, p.K - 4));
        } else {
          // K need not be a multiple of 4 here: rows past K are clamped and their terms zeroed.
          const uint mg = min(m0 + 4 * g, p.M - 4);
          vec4 t[4];
          for (int kk = 0; kk < 4; ++kk)
            t[kk] = k + kk < p.K ? A4(abase + min(k + kk, p.K - 1) * p.M + mg) : vec4(0.0);
          for (int r = 0; r < 4; ++r) av[4 * g + r][q] = vec4(t[0][r], t[1][r], t[2][r], t[3][r]);
        }
      }
      for (int j = 0; j < C4; ++j) {
        if (TB == 0) {
          const uint ng = min(n0 + 4 * j, p.N - 4);
          for (int kk = 0; kk < 4; ++kk) bv[j][4 * q + kk] = B4(bbase + min(k + kk, p.K - 1) * p.N + ng);
        } else {
          vec4 t[4];
          for (int s = 0; s < 4; ++s) t[s] = B4(bbase + min(n0 + 4 * j + s, p.N - 1) * p.K + min(k, p.K - 4));
          for (int kk = 0; kk < 4; ++kk) bv[j][4 * q + kk] = vec4(t[0][kk], t[1][kk], t[2][kk], t[3][kk]);
        }
      }
    }
    for (int i = 0; i < 4 * R4; ++i)
      for (int j = 0; j < C4; ++j)
        for (int q = 0; q < KB; ++q)
          for (int kk = 0; kk < 4; ++kk) acc[i][j] = fma(vec4(av[i][q][kk]), bv[j][4 * q + kk], acc[i][j]);
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
