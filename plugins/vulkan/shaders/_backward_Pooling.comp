// _backward_Pooling: one invocation per input element gathers from every window containing it.
// Max sends a window's gradient to its first maximum (row-major order), as the CPU kernel.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int TYPE = 0;  // 0 max, 1 avg, 2 sum
layout(std430, binding = 0) readonly buffer GY { float gy[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) buffer GX { float gx[]; };
layout(push_constant) uniform P {
  uint ogy, ox_, ogx;
  uint NC, H, Wd, OH, OW, KH, KW, SH, SW, PH, PW, include_pad, add;
} p;
void main() {
  const uint total = p.NC * p.H * p.Wd;
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
    const int ix = int(i % p.Wd), iy = int((i / p.Wd) % p.H);
    const uint nc = i / (p.Wd * p.H);
    float s = 0.0;
    // Outputs whose window may contain (iy, ix): oy*SH - PH <= iy < oy*SH - PH + KH.
    const int oy_lo = max(0, (iy + int(p.PH) - int(p.KH) + int(p.SH)) / int(p.SH));
    const int ox_lo = max(0, (ix + int(p.PW) - int(p.KW) + int(p.SW)) / int(p.SW));
    for (int oy = oy_lo; oy < int(p.OH) && oy * int(p.SH) - int(p.PH) <= iy; ++oy)
      for (int ox = ox_lo; ox < int(p.OW) && ox * int(p.SW) - int(p.PW) <= ix; ++ox) {
        int h0 = oy * int(p.SH) - int(p.PH), w0 = ox * int(p.SW) - int(p.PW);
        int h1 = min(h0 + int(p.KH), int(p.H + p.PH)), w1 = min(w0 + int(p.KW), int(p.Wd + p.PW));
        const float cut = float((h1 - h0) * (w1 - w0));
        h0 = max(h0, 0); w0 = max(w0, 0); h1 = min(h1, int(p.H)); w1 = min(w1, int(p.Wd));
        if (iy < h0 || iy >= h1 || ix < w0 || ix >= w1) continue;
        const float g = gy[p.ogy + (nc * p.OH + uint(oy)) * p.OW + uint(ox)];
        if (TYPE == 0) {
          // Is (iy, ix) the first maximum of this window?
          float m = -3.402823466e38;
          int at = -1;
          for (int yy = h0; yy < h1; ++yy)
            for (int xx = w0; xx < w1; ++xx) {
              const float v = x[p.ox_ + (nc * p.H + uint(yy)) * p.Wd + uint(xx)];
              if (v > m) { m = v; at = yy * int(p.Wd) + xx; }
            }
          if (at == iy * int(p.Wd) + ix) s += g;
        } else if (TYPE == 1) {
          s += g / (p.include_pad != 0 ? cut : float((h1 - h0) * (w1 - w0)));
        } else {
          s += g;
        }
      }
    gx[p.ogx + i] = p.add != 0 ? gx[p.ogx + i] + s : s;
  }
}
