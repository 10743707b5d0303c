// elemwise_add / elemwise_sub / elemwise_mul / elemwise_div: c = a OP b (c += when add != 0).
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int OP = 0;  // 0 add, 1 sub, 2 mul, 3 div
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) buffer C { float c[]; };
layout(push_constant) uniform P { uint oa, ob, oc, n, add; } p;
void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    const float x = a[p.oa + i], y = b[p.ob + i];
    float r = OP == 0 ? x + y : OP == 1 ? x - y : OP == 2 ? x * y : x / y;
    if (p.add != 0) r += c[p.oc + i];
    c[p.oc + i] = r;
  }
}
