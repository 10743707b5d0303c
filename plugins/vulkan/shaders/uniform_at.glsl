// UniformAt(seed, i): the cpu plugin's counter-based uniform in [0, 1) (nn_common.h: top 24 bits
// of SplitMix64(seed ^ SplitMix64(i))) in 32-bit integer arithmetic (no shaderInt64 needed), so a
// call's random numbers are the cpu's bit for bit. Used by Dropout and LeakyReLU (rrelu).
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

float UniformAt(uint seed_lo, uint seed_hi, uint i) {
  const uvec2 h = SplitMix64(uvec2(seed_lo, seed_hi) ^ SplitMix64(uvec2(i, 0u)));
  return float(h.y >> 8) * (1.0 / 16777216.0);
}
