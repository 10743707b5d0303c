// LRN: cross-channel local response normalisation on (N, C, inner) data, a window of nsize
// channels centred on each one and cut at the edges (MXNet 1.9, as the CPU kernel):
//   tmp_norm = knorm + alpha / nsize * sum over the window of x^2,  y = x * tmp_norm^-beta.
// HAS_NORM: also write tmp_norm (the op's hidden output).
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int HAS_NORM = 1;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(std430, binding = 2) buffer N { float nv[]; };
layout(push_constant) uniform P {
  uint ox, oy, on;
  uint total, c, inner, half_, add_y, add_n;
  float scale, beta, knorm;
} p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint e = gl_GlobalInvocationID.x; e < p.total; e += stride) {
    const uint ch = (e / p.inner) % p.c, col = e - ch * p.inner;  // col: element at channel 0
    const uint lo = ch >= p.half_ ? ch - p.half_ : 0, hi = min(ch + p.half_, p.c - 1);
    float acc = 0.0;
    for (uint k = lo; k <= hi; ++k) {
      const float v = x[p.ox + col + k * p.inner];
      acc += v * v;
    }
    const float norm = p.knorm + p.scale * acc;
    const float r = x[p.ox + e] * pow(norm, -p.beta);
    y[p.oy + e] = p.add_y != 0 ? y[p.oy + e] + r : r;
    if (HAS_NORM != 0) nv[p.on + e] = p.add_n != 0 ? nv[p.on + e] + norm : norm;
  }
}
