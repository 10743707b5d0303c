// BatchNorm over data viewed as (outer, C, inner) (MXNet 1.9, the cpu plugin's semantics).
// STAGE 0, one workgroup per channel: the statistics to normalise with into ws = [mean | inv_std]
// (batch mean and biased variance when `batch`, two passes, updating the moving statistics as
// momentum * moving + (1 - momentum) * batch; else the moving ones). STAGE 1, per element:
// y = x * gamma * inv_std + (beta - mean * gamma * inv_std), gamma = 1 when fix_gamma.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int STAGE = 0;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Gamma { float gamma[]; };
layout(std430, binding = 2) readonly buffer Beta { float beta[]; };
layout(std430, binding = 3) buffer MM { float mmean[]; };
layout(std430, binding = 4) buffer MV { float mvar[]; };
layout(std430, binding = 5) buffer WS { float ws[]; };
layout(std430, binding = 6) buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint ox, og, ob, omm, omv, ows, oy;
  uint outer, c, inner, batch, fix_gamma, add;
  float eps, momentum;
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
  if (STAGE == 0) {
    const uint ch = gl_WorkGroupID.x, t = gl_LocalInvocationID.x, m = p.outer * p.inner;
    float mu = mmean[p.omm + ch], var = mvar[p.omv + ch];
    if (p.batch != 0) {
      float s = 0.0;
      for (uint k = t; k < m; k += 64) s += x[p.ox + ((k / p.inner) * p.c + ch) * p.inner + k % p.inner];
      mu = m > 0 ? WorkgroupSum(s) / float(m) : 0.0;
      float v = 0.0;
      for (uint k = t; k < m; k += 64) {
        const float d = x[p.ox + ((k / p.inner) * p.c + ch) * p.inner + k % p.inner] - mu;
        v += d * d;
      }
      var = m > 0 ? WorkgroupSum(v) / float(m) : 0.0;
      if (t == 0) {
        mmean[p.omm + ch] = p.momentum * mmean[p.omm + ch] + (1.0 - p.momentum) * mu;
        mvar[p.omv + ch] = p.momentum * mvar[p.omv + ch] + (1.0 - p.momentum) * var;
      }
    }
    if (t == 0) {
      ws[p.ows + ch] = mu;
      ws[p.ows + p.c + ch] = 1.0 / sqrt(var + p.eps);
    }
    return;
  }
  const uint n = p.outer * p.c * p.inner, stride = gl_NumWorkGroups.x * 64;
  for (uint e = gl_GlobalInvocationID.x; e < n; e += stride) {
    const uint ch = e / p.inner % p.c;
    const float scale = (p.fix_gamma != 0 ? 1.0 : gamma[p.og + ch]) * ws[p.ows + p.c + ch];
    const float v = x[p.ox + e] * scale + (beta[p.ob + ch] - ws[p.ows + ch] * scale);
    y[p.oy + e] = p.add != 0 ? y[p.oy + e] + v : v;
  }
}
