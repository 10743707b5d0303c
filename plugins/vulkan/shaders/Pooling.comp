// Pooling forward (2-D NCHW; 1-D runs as H = 1), geometry as the CPU plugin's nn_pooling.cc:
// a window starts at o*stride - pad, is cut at in + pad (avg with count_include_pad divides by
// that size), then clipped to the input. TYPE: 0 max, 1 avg, 2 sum. A window wholly in the
// padding yields 0.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int TYPE = 0;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint ox_, oy_;
  uint NC, H, Wd, OH, OW, KH, KW, SH, SW, PH, PW, include_pad, add;
} p;
void main() {
  const uint total = p.NC * p.OH * p.OW;
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
    const uint ox = i % p.OW, oy = (i / p.OW) % p.OH, nc = i / (p.OW * p.OH);
    int h0 = int(oy * p.SH) - int(p.PH), w0 = int(ox * p.SW) - int(p.PW);
    int h1 = min(h0 + int(p.KH), int(p.H + p.PH)), w1 = min(w0 + int(p.KW), int(p.Wd + p.PW));
    const float cut = float((h1 - h0) * (w1 - w0));
    h0 = max(h0, 0); w0 = max(w0, 0); h1 = min(h1, int(p.H)); w1 = min(w1, int(p.Wd));
    float r = 0.0;
    if (h0 < h1 && w0 < w1) {
      float m = -3.402823466e38, s = 0.0;
      for (int yy = h0; yy < h1; ++yy)
        for (int xx = w0; xx < w1; ++xx) {
          const float v = x[p.ox_ + (nc * p.H + uint(yy)) * p.Wd + uint(xx)];
          m = max(m, v);
          s += v;
        }
      const float div = p.include_pad != 0 ? cut : float((h1 - h0) * (w1 - w0));
      r = TYPE == 0 ? m : TYPE == 1 ? s / div : s;
    }
    y[p.oy_ + i] = p.add != 0 ? y[p.oy_ + i] + r : r;
  }
}
