// col2im for _backward_Convolution: dx[img, c, y, x] (=|+=) the sum of dcol over the (ki, kj)
// whose window position (oy, ox) covers (y, x); layout of dcol as in im2col.comp. One invocation
// per dx element gathers (no atomics).
#version 450
layout(local_size_x = 64) in;
// col through a uniform texel buffer of R32_SFLOAT (a vector gather on lavapipe; im2col.comp).
layout(binding = 0) uniform samplerBuffer col;
layout(std430, binding = 1) buffer DX { float dx[]; };
layout(push_constant) uniform P {
  uint ocol, odx;
  uint n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, add, row_stride, img_stride;
} p;
// One invocation per dx row (image, channel, y) walks x; the window rows (ki, oy) covering y
// are found once per row (integer division is scalarised per SIMD lane on CPU implementations).
void main() {
  const uint rows = p.n * p.c * p.h, stride = gl_NumWorkGroups.x * 64;
  for (uint t = gl_GlobalInvocationID.x; t < rows; t += stride) {
    const uint yy = t % p.h, ci = (t / p.h) % p.c, img = t / (p.h * p.c);
    const uint dxbase = p.odx + t * p.w;
    for (uint xx = 0; xx < p.w; ++xx) {
      float s = 0.0;
      for (uint ki = 0; ki < p.kh; ++ki) {
        const int ty = int(yy + p.ph) - int(ki * p.dh);
        if (ty < 0 || (p.sh != 1 && ty % int(p.sh) != 0)) continue;
        const uint oy = uint(ty) / p.sh;
        if (oy >= p.oh) continue;
        for (uint kj = 0; kj < p.kw; ++kj) {
          const int tx = int(xx + p.pw) - int(kj * p.dw);
          if (tx < 0 || (p.sw != 1 && tx % int(p.sw) != 0)) continue;
          const uint ox = p.sw == 1 ? uint(tx) : uint(tx) / p.sw;
          if (ox >= p.ow) continue;
          const uint row = (ci * p.kh + ki) * p.kw + kj;
          s += texelFetch(col, int(p.ocol + row * p.row_stride + img * p.img_stride + oy * p.ow + ox)).x;
        }
      }
      dx[dxbase + xx] = p.add != 0 ? dx[dxbase + xx] + s : s;
    }
  }
}
