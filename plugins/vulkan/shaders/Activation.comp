// Activation: y = f(x) for act_type relu, sigmoid, tanh, softrelu, softsign.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int ACT = 0;  // 0 relu, 1 sigmoid, 2 tanh, 3 softrelu, 4 softsign
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uint ox, oy, n, add; } p;
float f(float v) {
  if (ACT == 0) return max(v, 0.0);
  if (ACT == 1) return 1.0 / (1.0 + exp(-v));
  if (ACT == 2) return tanh(v);
  if (ACT == 3) return v > 20.0 ? v : log(1.0 + exp(v));  // softrelu, overflow-safe
  return v / (1.0 + abs(v));
}
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    const float r = f(x[p.ox + i]);
    y[p.oy + i] = p.add != 0 ? y[p.oy + i] + r : r;
  }
}
