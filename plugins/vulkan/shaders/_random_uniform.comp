// _random_uniform / _random_uniform_like: y = low + (high − low)·U from the SDK's element stream
// (random_stream.glsl), drawn again while the float value reaches high (the cpu's rule; after 8
// tries low). The draws are the cpu's up to float rounding.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint oy, n, add, seed_lo, seed_hi;
  float low, high;
} p;

#include "uniform_at.glsl"
#include "random_stream.glsl"

void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    float v = p.low;
    if (p.high != p.low) {
      uvec2 s = StreamStart(p.seed_lo, p.seed_hi, i);
      for (int attempt = 0; attempt < 8; ++attempt) {
        const float d = p.low + (p.high - p.low) * Uniform53(StreamBits(s), 0.0);
        if (d < p.high) {
          v = d;
          break;
        }
      }
    }
    y[p.oy + i] = p.add != 0 ? y[p.oy + i] + v : v;
  }
}
