// _backward_softmax (LOG = 0): gx = y (gy - Σ gy y) / T; _backward_log_softmax (LOG = 1):
// gx = (gy - exp(y) Σ gy) / T; rows as in softmax.comp.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int LOG = 0;
layout(std430, binding = 0) readonly buffer G { float gy[]; };
layout(std430, binding = 1) readonly buffer Y { float y[]; };
layout(std430, binding = 2) buffer O { float gx[]; };
layout(push_constant) uniform P { uint og, oy, oo, rows, len, inner, add; float inv_t; } p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint row = gl_GlobalInvocationID.x; row < p.rows; row += stride) {
    const uint b = (row / p.inner) * p.len * p.inner + row % p.inner, st = p.inner;
    float d = 0.0;
    for (uint j = 0; j < p.len; ++j) d += LOG != 0 ? gy[p.og + b + j * st] : gy[p.og + b + j * st] * y[p.oy + b + j * st];
    for (uint j = 0; j < p.len; ++j) {
      const float g = gy[p.og + b + j * st], v = y[p.oy + b + j * st];
      const float r = (LOG != 0 ? g - exp(v) * d : v * (g - d)) * p.inv_t;
      const uint k = p.oo + b + j * st;
      gx[k] = p.add != 0 ? gx[k] + r : r;
    }
  }
}
