// Convolution forward, 2-D NCHW, direct: one invocation per output element.
// y[n, f, oy, ox] = b[f] + sum_{c in group, ky, kx} x[n, c, oy*sh - ph + ky*dh, ox*sw - pw + kx*dw] w[f, c', ky, kx]
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint ox_, ow_, ob_, oy_;
  uint N, C, H, Wd, F, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, G, has_bias, add;
} p;
void main() {
  const uint total = p.N * p.F * p.OH * p.OW;
  const uint stride = gl_NumWorkGroups.x * 64;
  const uint cg = p.C / p.G, fg = p.F / p.G;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
    const uint ox = i % p.OW, oy = (i / p.OW) % p.OH, f = (i / (p.OW * p.OH)) % p.F, n = i / (p.OW * p.OH * p.F);
    const uint c0 = (f / fg) * cg;
    float s = p.has_bias != 0 ? bias[p.ob_ + f] : 0.0;
    for (uint c = 0; c < cg; ++c) {
      const uint xb = p.ox_ + (n * p.C + c0 + c) * p.H * p.Wd;
      const uint wb = p.ow_ + ((f * cg + c) * p.KH) * p.KW;
      for (uint ky = 0; ky < p.KH; ++ky) {
        const int iy = int(oy * p.SH + ky * p.DH) - int(p.PH);
        if (iy < 0 || iy >= int(p.H)) continue;
        for (uint kx = 0; kx < p.KW; ++kx) {
          const int ix = int(ox * p.SW + kx * p.DW) - int(p.PW);
          if (ix < 0 || ix >= int(p.Wd)) continue;
          s = fma(x[xb + uint(iy) * p.Wd + uint(ix)], w[wb + ky * p.KW + kx], s);
        }
      }
    }
    y[p.oy_ + i] = p.add != 0 ? y[p.oy_ + i] + s : s;
  }
}
