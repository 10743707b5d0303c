// broadcast_reduce: the strided element map behind the broadcast_* ops and their gradients, the
// reductions (sum, mean, max) and their gradients, transpose and Concat (MXNet's
// broadcast_reduce_op family). Operands X, L, R are read at strided positions of an index space
// of up to 4 axes `dims` (stride 0 = broadcast along that axis); every output item o (strides
// `os`, 0 on reduced axes) combines, over the axes flagged in `rmask`, the term OP of (x, l, r):
// sums it (scaled by `scale`) or takes its maximum (OP 1). Host code collapses axes first.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const int OP = 0;
layout(std430, binding = 0) readonly buffer X { float xv[]; };
layout(std430, binding = 1) readonly buffer L { float lv[]; };
layout(std430, binding = 2) readonly buffer R { float rv[]; };
layout(std430, binding = 3) buffer O { float ov[]; };
layout(push_constant) uniform P {
  uint ox, ol, orr, oo;
  uint n, nd, rmask, add;
  float scale;
  uint dims[4], xs[4], ls[4], rs[4], os[4];
} p;

float Term(float x, float l, float r) {
  switch (OP) {
    case 0: return x;                         // copy / sum / mean and their gradients
    case 1: return x;                         // max
    case 2: return l + r;                     // broadcast_add
    case 3: return l - r;                     // broadcast_sub
    case 4: return l * r;                     // broadcast_mul
    case 5: return l / r;                     // broadcast_div
    case 6: return l < r ? r : l;             // broadcast_maximum (std::max)
    case 7: return r < l ? r : l;             // broadcast_minimum (std::min)
    case 8: return -x;                        // d rhs of broadcast_sub
    case 9: return x * r;                     // d lhs of broadcast_mul
    case 10: return x * l;                    // d rhs of broadcast_mul
    case 11: return x / r;                    // d lhs of broadcast_div
    case 12: return -x * l / (r * r);         // d rhs of broadcast_div
    case 13: return l >= r ? x : 0.0;         // d lhs of broadcast_maximum (ties go left)
    case 14: return l >= r ? 0.0 : x;         // d rhs of broadcast_maximum
    case 15: return l <= r ? x : 0.0;         // d lhs of broadcast_minimum
    case 16: return l <= r ? 0.0 : x;         // d rhs of broadcast_minimum
    default: return l == r ? x : 0.0;         // 17: _backward_max (l data, r the maximum)
  }
}

void main() {
  const uint stride = gl_NumWorkGroups.x * 64;
  for (uint j = gl_GlobalInvocationID.x; j < p.n; j += stride) {
    uint rem = j, xb = 0, lb = 0, rb = 0, ob = 0, red = 1;
    for (int d = int(p.nd) - 1; d >= 0; --d) {
      if ((p.rmask & (1u << d)) != 0) {
        red *= p.dims[d];
        continue;
      }
      const uint c = rem % p.dims[d];
      rem /= p.dims[d];
      xb += c * p.xs[d];
      lb += c * p.ls[d];
      rb += c * p.rs[d];
      ob += c * p.os[d];
    }
    float acc = OP == 1 ? -1.0 / 0.0 : 0.0;
    for (uint r = 0; r < red; ++r) {
      uint rr = r, xi = xb, li = lb, ri = rb;
      for (int d = int(p.nd) - 1; d >= 0; --d) {
        if ((p.rmask & (1u << d)) == 0) continue;
        const uint c = rr % p.dims[d];
        rr /= p.dims[d];
        xi += c * p.xs[d];
        li += c * p.ls[d];
        ri += c * p.rs[d];
      }
      const float t = Term(xv[p.ox + xi], lv[p.ol + li], rv[p.orr + ri]);
      acc = OP == 1 ? max(acc, t) : acc + t;
    }
    const float v = OP == 1 ? acc : acc * p.scale;
    ov[p.oo + ob] = p.add != 0 ? ov[p.oo + ob] + v : v;
  }
}
