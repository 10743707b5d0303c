// argmax: the index (as float32) of the largest value along an axis viewed as (outer, n, inner),
// the first on ties, a NaN counting as the largest (the CPU kernel's rule).
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uint ox, oy, outer, n, inner, add; } p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint e = gl_GlobalInvocationID.x; e < p.outer * p.inner; e += stride) {
    const uint base = (e / p.inner) * p.n * p.inner + e % p.inner;
    float best = x[p.ox + base];
    uint at = 0;
    for (uint k = 1; k < p.n; ++k) {
      const float v = x[p.ox + base + k * p.inner];
      if (v > best || (isnan(v) && !isnan(best))) {
        best = v;
        at = k;
      }
    }
    y[p.oy + e] = p.add != 0 ? y[p.oy + e] + float(at) : float(at);
  }
}
