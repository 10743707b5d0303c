// _dequantize_2bit: element i of the output is t for code 11, -t for code 10, else 0, the code
// read from word i / 16 at _quantize_2bit.comp's bit position.
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer W { uint words[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uint ow, oy, n, add; float threshold; } p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    const uint code = (words[p.ow + i / 16] >> (8 * ((i % 16) / 4) + 6 - 2 * (i % 4))) & 3u;
    const float v = code == 3u ? p.threshold : code == 2u ? -p.threshold : 0.0;
    y[p.oy + i] = p.add != 0 ? y[p.oy + i] + v : v;
  }
}
