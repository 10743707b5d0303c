// _backward_Embedding, weight gradient: gw[r, j] = sum of out_grad[i, j] over the indices i whose
// row (Embedding.comp's rule) is r. One invocation per weight element scans the indices: no float
// atomics needed, and the sum's order is the CPU kernel's (ascending i).
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer G { float g[]; };
layout(std430, binding = 1) readonly buffer I { float idx[]; };
layout(std430, binding = 2) buffer GW { float gw[]; };
layout(push_constant) uniform P { uint og, oi, ow, n, rows, dim, add; } p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint e = gl_GlobalInvocationID.x; e < p.rows * p.dim; e += stride) {
    const uint r = e / p.dim, j = e % p.dim;
    float acc = p.add != 0 ? gw[p.ow + e] : 0.0;
    for (uint i = 0; i < p.n; ++i)
      if (uint(clamp(idx[p.oi + i], 0.0, float(p.rows - 1))) == r) acc += g[p.og + i * p.dim + j];
    gw[p.ow + e] = acc;
  }
}
