// col2im for _backward_Convolution: dx[img, c, y, x] (=|+=) the sum of dcol over the (ki, kj)
// whose window position (oy, ox) covers (y, x); layout of dcol as in im2col.comp. One invocation
// per dx element gathers (no atomics).
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Col { float col[]; };
layout(std430, binding = 1) buffer DX { float dx[]; };
layout(push_constant) uniform P {
  uint ocol, odx;
  uint n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, add, row_stride, img_stride;
} p;
void main() {
  const uint total = p.n * p.c * p.h * p.w, stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
    const uint xx = i % p.w, yy = (i / p.w) % p.h, ci = (i / (p.w * p.h)) % p.c, img = i / (p.w * p.h * p.c);
    float s = 0.0;
    for (uint ki = 0; ki < p.kh; ++ki) {
      const int ty = int(yy + p.ph) - int(ki * p.dh);
      if (ty < 0 || ty % int(p.sh) != 0) continue;
      const uint oy = uint(ty) / p.sh;
      if (oy >= p.oh) continue;
      for (uint kj = 0; kj < p.kw; ++kj) {
        const int tx = int(xx + p.pw) - int(kj * p.dw);
        if (tx < 0 || tx % int(p.sw) != 0) continue;
        const uint ox = uint(tx) / p.sw;
        if (ox >= p.ow) continue;
        const uint row = (ci * p.kh + ki) * p.kw + kj;
        s += col[p.ocol + row * p.row_stride + img * p.img_stride + oy * p.ow + ox];
      }
    }
    dx[p.odx + i] = p.add != 0 ? dx[p.odx + i] + s : s;
  }
}
