// nag_mom_update (MXNet 1.9): g = clip(rescale g) + wd w; m = momentum mom; mom = m − lr g;
// out = w − m + (momentum + 1)(m − lr g). The state advances even when the output's req is null.
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer W { float w[]; };
layout(std430, binding = 1) readonly buffer G { float g[]; };
layout(std430, binding = 2) buffer Mom { float mom[]; };
layout(std430, binding = 3) buffer O { float o[]; };
layout(push_constant) uniform P { uint ow, og, om, oo, n, write, add; float lr, wd, rescale, clip, momentum; } p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    const float wi = w[p.ow + i];
    float gi = p.rescale * g[p.og + i];
    if (p.clip >= 0.0) gi = clamp(gi, -p.clip, p.clip);
    gi += p.wd * wi;
    const float m = p.momentum * mom[p.om + i];
    mom[p.om + i] = m - p.lr * gi;
    const float r = wi - m + (p.momentum + 1.0) * (m - p.lr * gi);
    if (p.write != 0) o[p.oo + i] = p.add != 0 ? o[p.oo + i] + r : r;
  }
}
