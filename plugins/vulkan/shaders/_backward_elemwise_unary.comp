// _backward_elemwise_unary: gradients of elemwise_unary's ops, gx = gy * f'(x, y) (the cpu
// plugin's Grad functions); x and y are bound to gy when the op's backward lacks them.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int OP = 0;
layout(std430, binding = 0) readonly buffer G { float gy[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer Y { float y[]; };
layout(std430, binding = 3) buffer O { float gx[]; };
layout(push_constant) uniform P { uint og, ox, oy, oo, n, add; float s, s2; } p;
float D(float v, float w) {
  switch (OP) {
    case 0: return cos(v);
    case 1: return -sin(v);
    case 2: return w;
    case 3: return 1.0 / v;
    case 4: return 0.5 / w;
    case 5: return 2.0 * v;
    case 6: return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0);
    case 7: return -1.0;
    case 8: return v > 0.0 ? 1.0 : 0.0;
    case 9: return w * (1.0 - w);
    case 10: return 1.0 - w * w;
    case 11: return -0.5 * w / v;
    case 12: return 1.0 / (1.0 + v);
    case 13: return exp(v);
    case 17: return v < p.s || v > p.s2 ? 0.0 : 1.0;
    case 18: case 19: return 1.0;
    case 20: return -1.0;
    case 21: return p.s;
    case 22: return 1.0 / p.s;
    case 23: return -p.s / (v * v);
    default: return p.s * pow(v, p.s - 1.0);  // 24
  }
}
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    const float r = gy[p.og + i] * D(x[p.ox + i], y[p.oy + i]);
    gx[p.oo + i] = p.add != 0 ? gx[p.oo + i] + r : r;
  }
}
