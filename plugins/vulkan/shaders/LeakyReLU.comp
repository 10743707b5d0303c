// LeakyReLU with per-channel or random slopes below zero (the other act_types run Activation.comp):
//   MODE 0, prelu: y = x > 0 ? x : gamma[(i / inner) % channels] · x (binding 1 gamma; 3 unused);
//   MODE 1, rrelu: slope = lower + (upper − lower) · UniformAt(seed, i) in training (the cpu
//     plugin's generator, uniform_at.glsl, so the slopes are the cpu's bit for bit), else
//     (lower + upper) / 2; y = x > 0 ? x : slope · x, mask = slope (binding 3; 1 unused).
// Null outputs are skipped (write_*); add_* accumulate (req add).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(constant_id = 0) const int MODE = 0;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer G { float gamma[]; };
layout(std430, binding = 2) buffer Y { float y[]; };
layout(std430, binding = 3) buffer M { float mask[]; };
layout(push_constant) uniform P {
  uint ox, og, oy, om;
  uint n, write_y, add_y, channels, inner, train, write_m, add_m, seed_lo, seed_hi;
  float lower, upper;
} p;

#include "uniform_at.glsl"

void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    float slope;
    if (MODE == 0) {
      slope = gamma[p.og + (i / p.inner) % p.channels];
    } else {
      slope = p.train != 0 ? p.lower + (p.upper - p.lower) * UniformAt(p.seed_lo, p.seed_hi, i)
                           : 0.5 * (p.lower + p.upper);
      if (p.write_m != 0) mask[p.om + i] = p.add_m != 0 ? mask[p.om + i] + slope : slope;
    }
    if (p.write_y != 0) {
      const float v = x[p.ox + i] > 0.0 ? x[p.ox + i] : slope * x[p.ox + i];
      y[p.oy + i] = p.add_y != 0 ? y[p.oy + i] + v : v;
    }
  }
}
