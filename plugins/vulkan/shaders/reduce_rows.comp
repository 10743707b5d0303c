// Column sums of a rows x cols matrix: out[j] = sum_i x[i * cols + j] (+= when add != 0).
// The bias gradient of FullyConnected.
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer O { float o[]; };
layout(push_constant) uniform P { uint ox, oo, rows, cols, add; } p;
void main() {
  const uint j = gl_GlobalInvocationID.x;
  if (j >= p.cols) return;
  float s = 0.0;
  for (uint i = 0; i < p.rows; ++i) s += x[p.ox + i * p.cols + j];
  o[p.oo + j] = p.add != 0 ? o[p.oo + j] + s : s;
}
