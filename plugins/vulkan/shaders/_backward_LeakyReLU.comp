// _backward_LeakyReLU for per-channel or random slopes (the other act_types run
// _backward_Activation.comp):
//   MODE 0, prelu: bindings out_grad, data, gamma, data gradient, product. gx = x > 0 ? gy :
//     gy · gamma[channel]; product = x > 0 ? 0 : x · gy, which the host then sums per channel
//     (broadcast_reduce.comp) into gamma's gradient: no float atomics.
//   MODE 1, rrelu: bindings out_grad, output, mask, data gradient, unused. gx = y > 0 ? gy : gy · mask.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int MODE = 0;
layout(std430, binding = 0) readonly buffer GY { float gy[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };  // prelu: data; rrelu: output
layout(std430, binding = 2) readonly buffer S { float s[]; };  // prelu: gamma; rrelu: mask
layout(std430, binding = 3) buffer GX { float gx[]; };
layout(std430, binding = 4) buffer T { float t[]; };
layout(push_constant) uniform P {
  uint ogy, ox, os, ogx, ot;
  uint n, write_x, add_x, channels, inner, write_t;
} p;

void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    const float g = gy[p.ogy + i], v = x[p.ox + i];
    const float slope = MODE == 0 ? s[p.os + (i / p.inner) % p.channels] : s[p.os + i];
    if (p.write_x != 0) {
      const float d = v > 0.0 ? g : g * slope;
      gx[p.ogx + i] = p.add_x != 0 ? gx[p.ogx + i] + d : d;
    }
    if (MODE == 0 && p.write_t != 0) t[p.ot + i] = v > 0.0 ? 0.0 : v * g;
  }
}
