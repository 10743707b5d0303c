// _backward_Activation: gx = gy * f'(.), from the output y (relu, sigmoid, tanh, softrelu) or
// the input x (softsign).
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int ACT = 0;  // as Activation.comp
layout(std430, binding = 0) readonly buffer GY { float gy[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer Y { float y[]; };
layout(std430, binding = 3) buffer GX { float gx[]; };
layout(push_constant) uniform P { uint ogy, ox, oy, ogx, n, add; } p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    float d;
    if (ACT == 4) {
      const float a = 1.0 + abs(x[p.ox + i]);
      d = 1.0 / (a * a);
    } else {
      const float o = y[p.oy + i];
      d = ACT == 0 ? (o > 0.0 ? 1.0 : 0.0) : ACT == 1 ? o * (1.0 - o) : ACT == 2 ? 1.0 - o * o : 1.0 - exp(-o);
    }
    const float r = gy[p.ogy + i] * d;
    gx[p.ogx + i] = p.add != 0 ? gx[p.ogx + i] + r : r;
  }
}
