// sgd_update (MOM = 0): out = (1 - lr wd) w - lr clip(rescale g)
// sgd_mom_update (MOM = 1): mom = momentum mom - lr wd w - lr clip(rescale g); out = w + mom
// clip(x) = clamp(x, -c, c) when clip_gradient c >= 0.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int MOM = 0;
layout(std430, binding = 0) readonly buffer W { float w[]; };
layout(std430, binding = 1) readonly buffer G { float g[]; };
layout(std430, binding = 2) buffer M { float mom[]; };
layout(std430, binding = 3) buffer O { float o[]; };
layout(push_constant) uniform P {
  uint ow, og, om, oo, n, add;
  float lr, wd, rescale, clip, momentum;
} p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    float gi = p.rescale * g[p.og + i];
    if (p.clip >= 0.0) gi = clamp(gi, -p.clip, p.clip);
    const float wi = w[p.ow + i];
    float r;
    if (MOM == 0) {
      r = (1.0 - p.lr * p.wd) * wi - p.lr * gi;
    } else {
      const float m = p.momentum * mom[p.om + i] - p.lr * p.wd * wi - p.lr * gi;
      mom[p.om + i] = m;
      r = wi + m;
    }
    o[p.oo + i] = p.add != 0 ? o[p.oo + i] + r : r;
  }
}
