// im2col for Convolution (NCHW; 1-D as H = 1): col[row * row_stride + img * img_stride + pix] =
// x[img, c, oy*sh - ph + ki*dh, ox*sw - pw + kj*dw] (0 in the padding) with row = (c, ki, kj)
// and pix = (oy, ox). Rows from c·kh·kw up to `rows` are written as 0 (K padded to a multiple of
// 4 for gemm4.comp). The strides choose the layout: (img, row, pix) for the forward's batched
// GEMM, (row, img, pix) for the weight gradient's single GEMM.
#version 450
layout(local_size_x = 64) in;
// x through a uniform texel buffer of R32_SFLOAT: a vector gather on lavapipe, where a storage
// load is a loop over the SIMD lanes (gemm4.comp's comment).
layout(binding = 0) uniform samplerBuffer x;
layout(std430, binding = 1) buffer Col { float col[]; };
layout(push_constant) uniform P {
  uint ox, ocol;
  uint n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, rows, row_stride, img_stride;
} p;
// One invocation per (image, row) walks that row's pixels: integer division is scalarised per
// SIMD lane on CPU implementations, so it stays out of the per-element loop.
void main() {
  const uint ohow = p.oh * p.ow, kk = p.kh * p.kw, total = p.n * p.rows;
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint t = gl_GlobalInvocationID.x; t < total; t += stride) {
    const uint row = t % p.rows, img = t / p.rows;
    const uint base = p.ocol + row * p.row_stride + img * p.img_stride;
    if (row >= p.c * kk) {
      for (uint pix = 0; pix < ohow; ++pix) col[base + pix] = 0.0;
      continue;
    }
    const uint ci = row / kk, r = row % kk;
    const int y0 = int((r / p.kw) * p.dh) - int(p.ph), x0 = int((r % p.kw) * p.dw) - int(p.pw);
    const uint xbase = p.ox + (img * p.c + ci) * p.h * p.w;
    uint pix = 0;
    for (uint oy = 0; oy < p.oh; ++oy) {
      const int iy = y0 + int(oy * p.sh);
      const bool row_in = iy >= 0 && iy < int(p.h);
      for (uint ox = 0; ox < p.ow; ++ox, ++pix) {
        const int ix = x0 + int(ox * p.sw);
        col[base + pix] = row_in && ix >= 0 && ix < int(p.w) ? texelFetch(x, int(xbase + uint(iy) * p.w + uint(ix))).x : 0.0;
      }
    }
  }
}
