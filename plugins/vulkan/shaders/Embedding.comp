// Embedding: y[i, j] = weight[row(i), j], row(i) = indices[i] truncated toward zero and clipped
// to [0, input_dim - 1] (MXNet's forward). float32 indices and weight.
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer I { float idx[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) buffer Y { float y[]; };
layout(push_constant) uniform P { uint oi, ow, oy, n, rows, dim, add; } p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint e = gl_GlobalInvocationID.x; e < p.n * p.dim; e += stride) {
    const float v = clamp(idx[p.oi + e / p.dim], 0.0, float(p.rows - 1));
    const float r = w[p.ow + uint(v) * p.dim + e % p.dim];
    y[p.oy + e] = p.add != 0 ? y[p.oy + e] + r : r;
  }
}
