// _quantize_2bit: the KVStore's 2-bit gradient compression (MXNet 1.9 quantize_2bit, as the CPU
// kernel). One invocation per output word of 16 codes: r = residual + data; r >= t: code 11 and
// r -= t; r <= -t: code 10 and r += t; else 00; residual = r. Element i's code sits at bit
// 8 * ((i % 16) / 4) + 6 - 2 * (i % 4) of word i / 16 (MXNet's byte layout read as a
// little-endian uint32). WRITE = 0 (req null): only the residual advances.
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer D { float data[]; };
layout(std430, binding = 1) buffer R { float residual[]; };
layout(std430, binding = 2) buffer W { uint words[]; };
layout(push_constant) uniform P { uint od, ores, ow, n, write_words; float threshold; } p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint w = gl_GlobalInvocationID.x; w < (p.n + 15) / 16; w += stride) {
    uint word = 0;
    for (uint i = w * 16; i < min(p.n, w * 16 + 16); ++i) {
      float r = residual[p.ores + i] + data[p.od + i];
      uint code = 0;
      if (r >= p.threshold) {
        code = 3;
        r -= p.threshold;
      } else if (r <= -p.threshold) {
        code = 2;
        r += p.threshold;
      }
      residual[p.ores + i] = r;
      word |= code << (8 * ((i % 16) / 4) + 6 - 2 * (i % 4));
    }
    if (p.write_words != 0) words[p.ow + w] = word;
  }
}
