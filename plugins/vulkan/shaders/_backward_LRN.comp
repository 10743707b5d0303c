// _backward_LRN: gx = gy * tmp_norm^-beta - 2 alpha beta / nsize * x * sum over the channel
// window of gy * x * tmp_norm^(-beta-1) (the window is symmetric, so the channels whose windows
// contain c are c's own window). tmp_norm comes from the forward.
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer GY { float gy[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer N { float nv[]; };
layout(std430, binding = 3) buffer GX { float gx[]; };
layout(push_constant) uniform P {
  uint ogy, ox, on, ogx;
  uint total, c, inner, half_, add;
  float k, beta;
} p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint e = gl_GlobalInvocationID.x; e < p.total; e += stride) {
    const uint ch = (e / p.inner) % p.c, col = e - ch * p.inner;
    const uint lo = ch >= p.half_ ? ch - p.half_ : 0, hi = min(ch + p.half_, p.c - 1);
    float acc = 0.0;
    for (uint q = lo; q <= hi; ++q) {
      const uint j = col + q * p.inner;
      acc += gy[p.ogy + j] * x[p.ox + j] * pow(nv[p.on + j], -p.beta - 1.0);
    }
    const float r = gy[p.ogy + e] * pow(nv[p.on + e], -p.beta) + p.k * x[p.ox + e] * acc;
    gx[p.ogx + e] = p.add != 0 ? gx[p.ogx + e] + r : r;
  }
}
