// Dropout (mode training): mask = u < 1 − p ? 1 / (1 − p) : 0 with u = UniformAt(seed, i), the cpu
// plugin's counter-based generator (SplitMix64 of seed ^ SplitMix64(i), top 24 bits), in 32-bit
// integer arithmetic (no shaderInt64 needed), so a call's mask is the cpu's bit for bit;
// y = x · mask. Not training (train = 0): y = x, mask = 1. Null outputs are skipped (write_*).
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(std430, binding = 2) buffer M { float mask[]; };
layout(push_constant) uniform P {
  uint ox, oy, om, n, train, write_y, add_y, write_m, add_m, seed_lo, seed_hi;
  float keep, scale;
} p;

uvec2 Add64(uvec2 a, uvec2 b) {
  uint carry;
  const uint lo = uaddCarry(a.x, b.x, carry);
  return uvec2(lo, a.y + b.y + carry);
}
uvec2 Mul64(uvec2 a, uvec2 b) {  // low 64 bits of a · b
  uint hi, lo;
  umulExtended(a.x, b.x, hi, lo);
  return uvec2(lo, hi + a.x * b.y + a.y * b.x);
}
uvec2 XorShr(uvec2 a, int k) {  // a ^ (a >> k), 0 < k < 32
  return a ^ uvec2((a.x >> k) | (a.y << (32 - k)), a.y >> k);
}
uvec2 SplitMix64(uvec2 z) {
  z = Add64(z, uvec2(0x7F4A7C15u, 0x9E3779B9u));
  z = Mul64(XorShr(z, 30), uvec2(0x1CE4E5B9u, 0xBF58476Du));
  z = Mul64(XorShr(z, 27), uvec2(0x133111EBu, 0x94D049BBu));
  return XorShr(z, 31);
}

void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    float m = 1.0;
    if (p.train != 0) {
      const uvec2 h = SplitMix64(uvec2(p.seed_lo, p.seed_hi) ^ SplitMix64(uvec2(i, 0u)));
      const float u = float(h.y >> 8) * (1.0 / 16777216.0);
      m = u < p.keep ? p.scale : 0.0;
    }
    if (p.write_m != 0) mask[p.om + i] = p.add_m != 0 ? mask[p.om + i] + m : m;
    if (p.write_y != 0) {
      const float v = p.train != 0 ? x[p.ox + i] * m : x[p.ox + i];
      y[p.oy + i] = p.add_y != 0 ? y[p.oy + i] + v : v;
    }
  }
}
