// _random_normal / _random_normal_like: y = loc + scale·N with N by the Box–Muller transform of
// two uniforms of the SDK's element stream (random_stream.glsl): the cpu's draws up to float
// rounding and the device's log / cos.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint oy, n, add, seed_lo, seed_hi;
  float loc, scale;
} p;

#include "uniform_at.glsl"
#include "random_stream.glsl"

void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    uvec2 s = StreamStart(p.seed_lo, p.seed_hi, i);
    const float r = sqrt(-2.0 * log(Uniform53(StreamBits(s), 0.5)));
    const float v = p.loc + p.scale * (r * cos(6.283185307179586 * Uniform53(StreamBits(s), 0.0)));
    y[p.oy + i] = p.add != 0 ? y[p.oy + i] + v : v;
  }
}
