// rmsprop_update (ALEX = 0) and rmspropalex_update (ALEX = 1), MXNet 1.9 (Tieleman & Hinton;
// Graves 2013): g = clip(rescale g + wd w);
//   rmsprop:     n = (1 − γ1) g² + γ1 n;  out = w − lr g / √(n + eps)
//   rmspropalex: n as above; gs = (1 − γ1) g + γ1 gs; delta = γ2 delta − lr g / √(n − gs² + eps);
//                out = w + delta
// then out is clipped to ±clip_weights when that is ≥ 0. States advance when req is null too.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int ALEX = 0;
layout(std430, binding = 0) readonly buffer W { float w[]; };
layout(std430, binding = 1) readonly buffer G { float g[]; };
layout(std430, binding = 2) buffer N { float nv[]; };
layout(std430, binding = 3) buffer GS { float gs[]; };
layout(std430, binding = 4) buffer D { float delta[]; };
layout(std430, binding = 5) buffer O { float o[]; };
layout(push_constant) uniform P {
  uint ow, og, on, ogs, od, oo, n, write, add;
  float lr, wd, rescale, clip, gamma1, gamma2, eps, clip_weights;
} p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    const float wi = w[p.ow + i];
    float gi = p.rescale * g[p.og + i] + p.wd * wi;
    if (p.clip >= 0.0) gi = clamp(gi, -p.clip, p.clip);
    const float nn = (1.0 - p.gamma1) * gi * gi + p.gamma1 * nv[p.on + i];
    nv[p.on + i] = nn;
    float r;
    if (ALEX == 0) {
      r = wi - p.lr * (gi / sqrt(nn + p.eps));
    } else {
      const float gg = (1.0 - p.gamma1) * gi + p.gamma1 * gs[p.ogs + i];
      gs[p.ogs + i] = gg;
      const float d = p.gamma2 * delta[p.od + i] - p.lr * gi / sqrt(nn - gg * gg + p.eps);
      delta[p.od + i] = d;
      r = wi + d;
    }
    if (p.clip_weights >= 0.0) r = clamp(r, -p.clip_weights, p.clip_weights);
    if (p.write != 0) o[p.oo + i] = p.add != 0 ? o[p.oo + i] + r : r;
  }
}
