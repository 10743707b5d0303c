// Cast / _backward_Cast between float32 (type 0), float64 (1) and int32 (2), the cpu plugin's
// rules: float to int truncates toward zero and saturates, NaN becomes 0. Buffers are read and
// written as 32-bit words (a float64 element is two), so one pipeline serves every pair. Needs
// shaderFloat64 (the host refuses the op on devices without it).
#version 450
#extension GL_ARB_gpu_shader_fp64 : require
layout(local_size_x = 64) in;
layout(constant_id = 0) const int IN = 0;
layout(constant_id = 1) const int OUT = 0;
layout(std430, binding = 0) readonly buffer I { uint iv[]; };
layout(std430, binding = 1) buffer O { uint ov[]; };
layout(push_constant) uniform P { uint oi, oo, n, add; } p;

double Load(uint i) {
  if (IN == 0) return double(uintBitsToFloat(iv[p.oi + i]));
  if (IN == 1) return packDouble2x32(uvec2(iv[p.oi + 2 * i], iv[p.oi + 2 * i + 1]));
  return double(int(iv[p.oi + i]));
}
int ToInt(double v) {
  if (isnan(v)) return 0;
  if (v >= 2147483647.0LF) return 2147483647;
  if (v <= -2147483648.0LF) return -2147483647 - 1;
  return int(v);
}
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    const double v = Load(i);
    if (OUT == 0) {
      float r = float(v);
      if (p.add != 0) r += uintBitsToFloat(ov[p.oo + i]);
      ov[p.oo + i] = floatBitsToUint(r);
    } else if (OUT == 1) {
      double r = v;
      if (p.add != 0) r += packDouble2x32(uvec2(ov[p.oo + 2 * i], ov[p.oo + 2 * i + 1]));
      const uvec2 w = unpackDouble2x32(r);
      ov[p.oo + 2 * i] = w.x;
      ov[p.oo + 2 * i + 1] = w.y;
    } else {
      int r = ToInt(v);
      if (p.add != 0) r += int(ov[p.oo + i]);
      ov[p.oo + i] = uint(r);
    }
  }
}
