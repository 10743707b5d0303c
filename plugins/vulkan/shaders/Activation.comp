// Activation: y = f(x) for act_type relu, sigmoid, tanh, softrelu, softsign; LeakyReLU's
// element-wise act_types leaky, elu, selu and gelu share it (act_func.glsl, with the gradients).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(constant_id = 0) const int ACT = 0;  // act_func.glsl's codes
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uint ox, oy, n, add; float slope; } p;
#include "act_func.glsl"
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    const float r = ActForward(ACT, x[p.ox + i], p.slope);
    y[p.oy + i] = p.add != 0 ? y[p.oy + i] + r : r;
  }
}
