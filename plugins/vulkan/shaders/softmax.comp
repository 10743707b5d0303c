// softmax (LOG = 0) and log_softmax (LOG = 1) along one axis of data viewed as (outer, len, inner):
// one invocation per (outer, inner) row, max-shifted, scaled by 1 / temperature (inv_t).
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int LOG = 0;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uint ox, oy, rows, len, inner, add; float inv_t; } p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint row = gl_GlobalInvocationID.x; row < p.rows; row += stride) {
    const uint b = (row / p.inner) * p.len * p.inner + row % p.inner, st = p.inner;
    float mx = -1.0 / 0.0;
    for (uint j = 0; j < p.len; ++j) mx = max(mx, x[p.ox + b + j * st]);
    float sum = 0.0;
    for (uint j = 0; j < p.len; ++j) sum += exp((x[p.ox + b + j * st] - mx) * p.inv_t);
    const float lse = log(sum), inv = 1.0 / sum;
    for (uint j = 0; j < p.len; ++j) {
      const float z = (x[p.ox + b + j * st] - mx) * p.inv_t;
      const float v = LOG != 0 ? z - lse : exp(z) * inv;
      const uint k = p.oy + b + j * st;
      y[k] = p.add != 0 ? y[k] + v : v;
    }
  }
}
