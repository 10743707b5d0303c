// Dropout (mode training): mask = u < 1 − p ? 1 / (1 − p) : 0 with u = UniformAt(seed, i), the cpu
// plugin's counter-based generator (uniform_at.glsl), so a call's mask is the cpu's bit for bit;
// y = x · mask. Not training (train = 0): y = x, mask = 1. Null outputs are skipped (write_*).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(std430, binding = 2) buffer M { float mask[]; };
layout(push_constant) uniform P {
  uint ox, oy, om, n, train, write_y, add_y, write_m, add_m, seed_lo, seed_hi;
  float keep, scale;
} p;

#include "uniform_at.glsl"

void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    float m = 1.0;
    if (p.train != 0) {
      m = UniformAt(p.seed_lo, p.seed_hi, i) < p.keep ? p.scale : 0.0;
    }
    if (p.write_m != 0) mask[p.om + i] = p.add_m != 0 ? mask[p.om + i] + m : m;
    if (p.write_y != 0) {
      const float v = p.train != 0 ? x[p.ox + i] * m : x[p.ox + i];
      y[p.oy + i] = p.add_y != 0 ? y[p.oy + i] + v : v;
    }
  }
}
