// add_n (and copies with req add): out = x, or out += x when add != 0.
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer O { float o[]; };
layout(push_constant) uniform P { uint ox, oo, n, add; } p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    const float v = x[p.ox + i];
    o[p.oo + i] = p.add != 0 ? o[p.oo + i] + v : v;
  }
}
