// adam_update (MXNet 1.9): g = clip(rescale g + wd w); mean = b1 mean + (1 − b1) g;
// var = b2 var + (1 − b2) g²; out = w − lr mean / (√var + eps). States advance even when the
// output's req is null (write = 0).
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer W { float w[]; };
layout(std430, binding = 1) readonly buffer G { float g[]; };
layout(std430, binding = 2) buffer Mean { float mean[]; };
layout(std430, binding = 3) buffer Var { float var[]; };
layout(std430, binding = 4) buffer O { float o[]; };
layout(push_constant) uniform P {
  uint ow, og, omean, ovar, oo, n, write, add;
  float lr, wd, rescale, clip, beta1, beta2, eps;
} p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    const float wi = w[p.ow + i];
    float gi = p.rescale * g[p.og + i] + p.wd * wi;
    if (p.clip >= 0.0) gi = clamp(gi, -p.clip, p.clip);
    const float m = p.beta1 * mean[p.omean + i] + (1.0 - p.beta1) * gi;
    const float v = p.beta2 * var[p.ovar + i] + (1.0 - p.beta2) * gi * gi;
    mean[p.omean + i] = m;
    var[p.ovar + i] = v;
    const float r = wi - p.lr * m / (sqrt(v) + p.eps);
    if (p.write != 0) o[p.oo + i] = p.add != 0 ? o[p.oo + i] + r : r;
  }
}
