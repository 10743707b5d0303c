// _backward_Activation / _backward_LeakyReLU: gx = gy * f'(.), from the output y and/or the input
// x (act_func.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(constant_id = 0) const int ACT = 0;  // act_func.glsl's codes
layout(std430, binding = 0) readonly buffer GY { float gy[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer Y { float y[]; };
layout(std430, binding = 3) buffer GX { float gx[]; };
layout(push_constant) uniform P { uint ogy, ox, oy, ogx, n, add; float slope; } p;
#include "act_func.glsl"
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    const float r = gy[p.ogy + i] * ActDerivative(ACT, x[p.ox + i], y[p.oy + i], p.slope);
    gx[p.ogx + i] = p.add != 0 ? gx[p.ogx + i] + r : r;
  }
}
