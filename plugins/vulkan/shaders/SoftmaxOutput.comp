// SoftmaxOutput forward: softmax of each row of a rows x cols matrix; one invocation per row.
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uint ox, oy, rows, cols, add; } p;
void main() {
  const uint r = gl_GlobalInvocationID.x;
  if (r >= p.rows) return;
  const uint xb = p.ox + r * p.cols, yb = p.oy + r * p.cols;
  float m = x[xb];
  for (uint j = 1; j < p.cols; ++j) m = max(m, x[xb + j]);
  float s = 0.0;
  for (uint j = 0; j < p.cols; ++j) s += exp(x[xb + j] - m);
  const float inv = 1.0 / s;
  for (uint j = 0; j < p.cols; ++j) {
    const float v = exp(x[xb + j] - m) * inv;
    y[yb + j] = p.add != 0 ? y[yb + j] + v : v;
  }
}
