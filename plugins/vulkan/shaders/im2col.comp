// im2col for Convolution (NCHW; 1-D as H = 1): col[row * row_stride + img * img_stride + pix] =
// x[img, c, oy*sh - ph + ki*dh, ox*sw - pw + kj*dw] (0 in the padding) with row = (c, ki, kj)
// and pix = (oy, ox). Rows from c·kh·kw up to `rows` are written as 0 (K padded to a multiple of
// 4 for gemm4.comp). The strides choose the layout: (img, row, pix) for the forward's batched
// GEMM, (row, img, pix) for the weight gradient's single GEMM.
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Col { float col[]; };
layout(push_constant) uniform P {
  uint ox, ocol;
  uint n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, rows, row_stride, img_stride;
} p;
void main() {
  const uint ohow = p.oh * p.ow, kk = p.kh * p.kw, total = p.n * p.rows * ohow;
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
    const uint pix = i % ohow, t = i / ohow, row = t % p.rows, img = t / p.rows;
    float v = 0.0;
    if (row < p.c * kk) {
      const uint ci = row / kk, r = row % kk;
      const int iy = int((pix / p.ow) * p.sh + (r / p.kw) * p.dh) - int(p.ph);
      const int ix = int((pix % p.ow) * p.sw + (r % p.kw) * p.dw) - int(p.pw);
      if (iy >= 0 && iy < int(p.h) && ix >= 0 && ix < int(p.w)) v = x[p.ox + ((img * p.c + ci) * p.h + iy) * p.w + ix];
    }
    col[p.ocol + row * p.row_stride + img * p.img_stride + pix] = v;
  }
}
