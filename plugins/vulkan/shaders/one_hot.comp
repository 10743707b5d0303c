// one_hot: y[i, j] = on_value where j == int(indices[i]) (truncated toward zero), else off_value;
// an index outside [0, depth) gives a row of off_value. float32 indices and output.
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer I { float idx[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uint oi, oy, n, depth, add; float on_value, off_value; } p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint e = gl_GlobalInvocationID.x; e < p.n * p.depth; e += stride) {
    const float v = idx[p.oi + e / p.depth];
    // Compared as floats: an index beyond int range can never equal a column.
    const bool hot = abs(v) < float(p.depth) + 1.0 && int(v) == int(e % p.depth);
    const float r = hot ? p.on_value : p.off_value;
    y[p.oy + e] = p.add != 0 ? y[p.oy + e] + r : r;
  }
}
