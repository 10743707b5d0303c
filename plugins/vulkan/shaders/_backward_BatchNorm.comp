// _backward_BatchNorm over (outer, C, inner). STAGE 0, one workgroup per channel: ws = [mu | is |
// Σgy | Σgy·(x − mu)·is] with the statistics the forward used (the moving ones when use_global).
// STAGE 1, per element: gx = k (gy − Σgy/m − (x − mu) is Σgy·x̂/m), k = gamma·is (gx = k·gy with
// use_global). STAGE 2, per channel: the gamma (which = 0; 0 when fix_gamma) or beta (1) gradient.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int STAGE = 0;
layout(std430, binding = 0) readonly buffer GY { float gy[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer Gamma { float gamma[]; };
layout(std430, binding = 3) readonly buffer Mean { float mean[]; };
layout(std430, binding = 4) readonly buffer InvStd { float inv_std[]; };
layout(std430, binding = 5) readonly buffer MM { float mmean[]; };
layout(std430, binding = 6) readonly buffer MV { float mvar[]; };
layout(std430, binding = 7) buffer WS { float ws[]; };
layout(std430, binding = 8) buffer O { float o[]; };
layout(push_constant) uniform P {
  uint ogy, ox, og, omean, ois, omm, omv, ows, oo;
  uint outer, c, inner, use_global, fix_gamma, add, which;
  float eps;
} p;
shared float part[64];

float WorkgroupSum(float v) {
  const uint t = gl_LocalInvocationID.x;
  part[t] = v;
  barrier();
  for (uint s = 32; s > 0; s >>= 1) {
    if (t < s) part[t] += part[t + s];
    barrier();
  }
  const float r = part[0];
  barrier();
  return r;
}

void main() {
  const uint C = p.c;
  if (STAGE == 0) {
    const uint ch = gl_WorkGroupID.x, t = gl_LocalInvocationID.x, m = p.outer * p.inner;
    const float mu = p.use_global != 0 ? mmean[p.omm + ch] : mean[p.omean + ch];
    const float is = p.use_global != 0 ? 1.0 / sqrt(mvar[p.omv + ch] + p.eps) : inv_std[p.ois + ch];
    float a = 0.0, b = 0.0;
    for (uint k = t; k < m; k += 64) {
      const uint e = ((k / p.inner) * C + ch) * p.inner + k % p.inner;
      a += gy[p.ogy + e];
      b += gy[p.ogy + e] * (x[p.ox + e] - mu);
    }
    a = WorkgroupSum(a);
    b = WorkgroupSum(b);
    if (t == 0) {
      ws[p.ows + ch] = mu;
      ws[p.ows + C + ch] = is;
      ws[p.ows + 2 * C + ch] = a;
      ws[p.ows + 3 * C + ch] = b * is;
    }
    return;
  }
  if (STAGE == 2) {
    const uint ch = gl_GlobalInvocationID.x;
    if (ch >= C) return;
    const float v = p.which == 0 ? (p.fix_gamma != 0 ? 0.0 : ws[p.ows + 3 * C + ch]) : ws[p.ows + 2 * C + ch];
    o[p.oo + ch] = p.add != 0 ? o[p.oo + ch] + v : v;
    return;
  }
  const uint n = p.outer * C * p.inner, stride = gl_NumWorkGroups.x * 64;
  const float m = float(p.outer * p.inner);
  for (uint e = gl_GlobalInvocationID.x; e < n; e += stride) {
    const uint ch = e / p.inner % C;
    const float mu = ws[p.ows + ch], is = ws[p.ows + C + ch];
    const float k = (p.fix_gamma != 0 ? 1.0 : gamma[p.og + ch]) * is;
    float v = gy[p.ogy + e] * k;
    if (p.use_global == 0) {
      const float mg = ws[p.ows + 2 * C + ch] / m, mgx = ws[p.ows + 3 * C + ch] / m;
      v = k * (gy[p.ogy + e] - mg - (x[p.ox + e] - mu) * is * mgx);
    }
    o[p.oo + e] = p.add != 0 ? o[p.oo + e] + v : v;
  }
}
