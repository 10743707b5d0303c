// _backward_Convolution, direct, one shader with three modes (MODE specialization constant):
//   0: data gradient, one invocation per input element (gathers over the outputs it fed);
//   1: weight gradient, one invocation per weight (sums over batch and output positions);
//   2: bias gradient, one invocation per filter.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int MODE = 0;
layout(std430, binding = 0) readonly buffer GY { float gy[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer W { float w[]; };
layout(std430, binding = 3) buffer O { float o[]; };
layout(push_constant) uniform P {
  uint ogy, ox_, ow_, oo;
  uint N, C, H, Wd, F, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, G, add;
} p;
void main() {
  const uint cg = p.C / p.G, fg = p.F / p.G;
  const uint stride = gl_NumWorkGroups.x * 64;
  if (MODE == 0) {
    const uint total = p.N * p.C * p.H * p.Wd;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
      const uint ix = i % p.Wd, iy = (i / p.Wd) % p.H, c = (i / (p.Wd * p.H)) % p.C, n = i / (p.Wd * p.H * p.C);
      const uint g = c / cg, cc = c % cg;
      float s = 0.0;
      for (uint ky = 0; ky < p.KH; ++ky) {
        const int ty = int(iy + p.PH) - int(ky * p.DH);
        if (ty < 0 || ty % int(p.SH) != 0) continue;
        const uint oy = uint(ty) / p.SH;
        if (oy >= p.OH) continue;
        for (uint kx = 0; kx < p.KW; ++kx) {
          const int tx = int(ix + p.PW) - int(kx * p.DW);
          if (tx < 0 || tx % int(p.SW) != 0) continue;
          const uint ox = uint(tx) / p.SW;
          if (ox >= p.OW) continue;
          for (uint f = g * fg; f < (g + 1) * fg; ++f)
            s = fma(gy[p.ogy + ((n * p.F + f) * p.OH + oy) * p.OW + ox], w[p.ow_ + ((f * cg + cc) * p.KH + ky) * p.KW + kx], s);
        }
      }
      o[p.oo + i] = p.add != 0 ? o[p.oo + i] + s : s;
    }
  } else if (MODE == 1) {
    const uint total = p.F * cg * p.KH * p.KW;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
      const uint kx = i % p.KW, ky = (i / p.KW) % p.KH, cc = (i / (p.KW * p.KH)) % cg, f = i / (p.KW * p.KH * cg);
      const uint c = (f / fg) * cg + cc;
      float s = 0.0;
      for (uint n = 0; n < p.N; ++n)
        for (uint oy = 0; oy < p.OH; ++oy) {
          const int iy = int(oy * p.SH + ky * p.DH) - int(p.PH);
          if (iy < 0 || iy >= int(p.H)) continue;
          for (uint ox = 0; ox < p.OW; ++ox) {
            const int ix = int(ox * p.SW + kx * p.DW) - int(p.PW);
            if (ix < 0 || ix >= int(p.Wd)) continue;
            s = fma(gy[p.ogy + ((n * p.F + f) * p.OH + oy) * p.OW + ox], x[p.ox_ + ((n * p.C + c) * p.H + uint(iy)) * p.Wd + uint(ix)], s);
          }
        }
      o[p.oo + i] = p.add != 0 ? o[p.oo + i] + s : s;
    }
  } else {
    for (uint f = gl_GlobalInvocationID.x; f < p.F; f += stride) {
      float s = 0.0;
      for (uint n = 0; n < p.N; ++n)
        for (uint q = 0; q < p.OH * p.OW; ++q) s += gy[p.ogy + (n * p.F + f) * p.OH * p.OW + q];
      o[p.oo + f] = p.add != 0 ? o[p.oo + f] + s : s;
    }
  }
}
