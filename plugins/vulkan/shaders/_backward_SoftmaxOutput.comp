// _backward_SoftmaxOutput: gx = (y - onehot(label)) * scale per row; ignored rows get 0.
// norm: 0 null (scale = grad_scale), 1 batch (grad_scale / rows), 2 valid (grad_scale / rows
// not ignored). A label outside [0, cols) that is not ignored gives a zero row and stores its
// row + 1 in bad[0] (zeroed by the host before the dispatch), which the host turns into the
// stream's sticky error, as the cpu kernel's error.
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer L { float label[]; };
layout(std430, binding = 1) readonly buffer Y { float y[]; };
layout(std430, binding = 2) buffer GX { float gx[]; };
layout(std430, binding = 3) buffer Bad { uint bad[]; };
layout(push_constant) uniform P {
  uint ol, oy, ogx, obad, rows, cols, add, use_ignore, norm;
  float grad_scale, ignore_label;
} p;
bool Ignored(float l) { return p.use_ignore != 0 && l == p.ignore_label; }
void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= p.rows * p.cols) return;
  const uint r = i / p.cols, j = i % p.cols;
  float scale = p.grad_scale;
  if (p.norm == 1) scale /= float(p.rows);
  if (p.norm == 2) {
    uint valid = 0;
    for (uint q = 0; q < p.rows; ++q) valid += Ignored(label[p.ol + q]) ? 0 : 1;
    scale /= float(max(valid, 1u));
  }
  const float l = label[p.ol + r];
  const int k = int(l);
  float v = 0.0;
  if (!Ignored(l) && k >= 0 && uint(k) < p.cols) {
    v = (y[p.oy + i] - (uint(k) == j ? 1.0 : 0.0)) * scale;
  } else if (!Ignored(l) && j == 0) {
    bad[p.obad] = r + 1;  // any one bad row (concurrent stores of different rows are fine)
  }
  gx[p.ogx + i] = p.add != 0 ? gx[p.ogx + i] + v : v;
}
