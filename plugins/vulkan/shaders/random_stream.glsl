// The SDK's counter-based element stream (weft/sdk/cpp/random_sampler.hpp ElementStream) in
// 32-bit integer arithmetic: element i's k-th draw is SplitMix64(state0 + k·γ) with state0 =
// SplitMix64(seed ^ SplitMix64(i)), the cpu plugin's sequence bit for bit. Uniforms are made in
// float from all 53 bits the cpu uses (the float nearest the cpu's double, before rounding).
// Needs uniform_at.glsl (Add64, SplitMix64).
const uvec2 kGamma = uvec2(0x7F4A7C15u, 0x9E3779B9u);

uvec2 StreamStart(uint seed_lo, uint seed_hi, uint i) {
  return SplitMix64(uvec2(seed_lo, seed_hi) ^ SplitMix64(uvec2(i, 0u)));
}
// The next 64 random bits of the stream `state` (advanced).
uvec2 StreamBits(inout uvec2 state) {
  const uvec2 r = SplitMix64(state);
  state = Add64(state, kGamma);
  return r;
}
// (bits >> 11) · 2^-53 (+ 0.5 · 2^-53 for the open interval), in float.
float Uniform53(uvec2 b, float half_ulp) {
  return float(b.y) * 2.3283064365386963e-10 + (float(b.x >> 11) + half_ulp) * 1.1102230246251565e-16;
}
