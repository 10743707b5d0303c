// elemwise_unary: the unary math ops (sin ... sign), clip and the scalar ops (_plus_scalar ...
// _power_scalar), forward, y = f(x) (y += f(x) when add != 0). OP numbers: vk_kernels_elemwise.cc.
// log1p / expm1 use the exact-rounding correction u = 1 + x, log(u) * x / (u - 1) (Goldberg),
// since GLSL lacks them; round is halves away from zero (std::round).
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int OP = 0;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uint ox, oy, n, add; float s, s2; } p;

float Log1p(float v) {
  const float u = 1.0 + v;
  return u == 1.0 ? v : log(u) * v / (u - 1.0);
}
float Expm1(float v) {
  const float u = exp(v);
  if (u == 1.0) return v;
  if (u - 1.0 == -1.0) return -1.0;
  return (u - 1.0) * v / log(u);
}
float F(float v) {
  switch (OP) {
    case 0: return sin(v);
    case 1: return cos(v);
    case 2: return exp(v);
    case 3: return log(v);
    case 4: return sqrt(v);
    case 5: return v * v;
    case 6: return abs(v);
    case 7: return -v;
    case 8: return v > 0.0 ? v : 0.0;
    case 9: return 1.0 / (1.0 + exp(-v));
    case 10: return tanh(clamp(v, -15.0, 15.0));
    case 11: return 1.0 / sqrt(v);
    case 12: return Log1p(v);
    case 13: return Expm1(v);
    case 14: return floor(v);
    case 15: { const float t = trunc(v); return abs(v - t) >= 0.5 ? t + sign(v) : t; }
    case 16: return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0);
    case 17: return v < p.s ? p.s : (v > p.s2 ? p.s2 : v);  // clip(a_min = s, a_max = s2)
    case 18: return v + p.s;
    case 19: return v - p.s;
    case 20: return p.s - v;
    case 21: return v * p.s;
    case 22: return v / p.s;
    case 23: return p.s / v;
    default: return pow(v, p.s);  // 24
  }
}
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    const float r = F(x[p.ox + i]);
    y[p.oy + i] = p.add != 0 ? y[p.oy + i] + r : r;
  }
}
