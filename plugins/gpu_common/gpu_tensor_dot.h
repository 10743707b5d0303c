// weft GPU kernel layer — the tensor family's products (cpu: tensor_dot.cc): dot and batch_dot
// with their backward ops; float32 through L::Gemm (cuBLAS on CUDA, the tiled GEMM of gpu_gemm.h
// elsewhere), float64 through GemmMap.
#pragma once

#include <string>
#include <type_traits>

#include "gpu_gemm.h"
#include "gpu_kernel.h"
#include "weft/sdk/ops/dot.hpp"

namespace weft::WEFT_GPU_NS {

// ---- GEMM for float64 -----------------------------------------------------------------------

/// Row-major batched C = op(A)·op(B) (Assign: write or add) for dtypes the tiled float GEMM does
/// not serve: item = one element (z, r, col) of C, the k loop inside it.
template <typename T, class Assign>
struct GemmMap {
  bool ta, tb;
  int64_t m, n, k, lda, ldb, ldc, sa, sb, sc;
  const T* a;
  const T* b;
  T* c;
  WEFT_HD void operator()(int64_t e) const {
    const int64_t z = e / (m * n), rem = e - z * m * n, r = rem / n, col = rem - r * n;
    const T* az = a + z * sa;
    const T* bz = b + z * sb;
    T acc = T(0);
    for (int64_t kk = 0; kk < k; ++kk)
      acc += (ta ? az[kk * lda + r] : az[r * lda + kk]) * (tb ? bz[col * ldb + kk] : bz[kk * ldb + col]);
    Assign::Put(c[z * sc + r * ldc + col], acc);
  }
};

/// One (batched) product: batch × [op(A) (m × k)] [op(B) (k × n)] (the cpu's tensor_dot.cc rules:
/// dot flattens n-d operands around the contracted axis, batch_dot takes the last two axes).
struct DotGeometry {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  bool ta = false, tb = false;
  int64_t lda() const { return ta ? m : k; }
  int64_t ldb() const { return tb ? k : n; }
};

inline DotGeometry ParseDot(const KernelSetup& s, const TensorDesc& lhs, const TensorDesc& rhs, bool batched) {
  DotGeometry g;
  const auto p = s.Params<sdk::DotParam>();
  g.ta = p.transpose_a;
  g.tb = p.transpose_b;
  const std::string shapes = " (lhs " + ShapeOf(lhs) + ", rhs " + ShapeOf(rhs) + ")";
  int64_t k2 = 0;
  if (batched) {
    if (lhs.ndim() < 3 || lhs.ndim() != rhs.ndim()) Invalid(s, "needs operands of equal rank >= 3" + shapes);
    for (int a = 0; a < lhs.ndim() - 2; ++a) {
      if (lhs.dim(a) != rhs.dim(a)) Invalid(s, "batch extents differ" + shapes);
      g.batch *= lhs.dim(a);
    }
    g.m = lhs.dim(g.ta ? -1 : -2), g.k = lhs.dim(g.ta ? -2 : -1);
    k2 = rhs.dim(g.tb ? -1 : -2), g.n = rhs.dim(g.tb ? -2 : -1);
  } else {
    if (lhs.ndim() < 1 || rhs.ndim() < 1) Invalid(s, "needs operands of rank >= 1" + shapes);
    const int ca = g.ta ? 0 : lhs.ndim() - 1, cb = g.tb ? rhs.ndim() - 1 : 0;
    g.k = lhs.dim(ca), k2 = rhs.dim(cb), g.m = 1, g.n = 1;
    for (int a = 0; a < lhs.ndim(); ++a) g.m *= a == ca ? 1 : lhs.dim(a);
    for (int a = 0; a < rhs.ndim(); ++a) g.n *= a == cb ? 1 : rhs.dim(a);
  }
  if (g.k != k2) Invalid(s, "inner extents differ: " + std::to_string(g.k) + " vs " + std::to_string(k2) + shapes);
  return g;
}

/// dot / batch_dot and their backward ops (inputs out_grad, lhs, rhs; outputs their gradients):
/// float32 through L::Gemm, batched (cuBLAS strided-batched on CUDA, the tiled kernel elsewhere);
/// float64 through GemmMap (a plain kernel, no vendor call: correct, not fast).
template <class L>
class DotKernel {
 public:
  explicit DotKernel(const KernelSetup& s) : backward_(IsBackward(s)) {
    s.ExpectCounts(backward_ ? 3 : 2, backward_ ? 2 : 1);
    RequireSameDType(s, kFloatTypes);
    const size_t first = backward_ ? 1 : 0;
    g_ = ParseDot(s, s.inputs[first], s.inputs[first + 1], s.op_name.find("batch_dot") != std::string::npos);
    const TensorDesc& c = backward_ ? s.inputs[0] : s.outputs[0];
    if (c.size() != g_.batch * g_.m * g_.n)
      Invalid(s, "the product has " + std::to_string(g_.batch * g_.m * g_.n) + " elements, not " + ShapeOf(c));
  }
  void Compute(const DeviceCall& c) const {
    WithFloatType("dot", c.inputs[0].dtype(), [&](auto tag) { Run<typename decltype(tag)::type>(c); });
  }

 private:
  // float32: L::Gemm (cuBLAS / the tiled kernel); float64: GemmMap, one item per element of C.
  template <typename T>
  void Run(const DeviceCall& c) const {
    const int64_t sa = g_.m * g_.k, sb = g_.k * g_.n, sc = g_.m * g_.n;
    auto gemm = [&](bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, int64_t sta, const T* b,
                    int64_t ldb, int64_t stb, int32_t req, T* out, int64_t ldc, int64_t stc) {
      if (req == WEFT_REQ_NULL) return;
      if constexpr (std::is_same_v<T, float>) {
        GemmArgs g = MakeGemm(ta, tb, m, n, k, a, lda, b, ldb, req, out, ldc);
        g.batch = g_.batch, g.stride_a = sta, g.stride_b = stb, g.stride_c = stc;
        L::Gemm(c, g);
      } else {
        WithReq(req, [&](auto as) {
          L::Map(c, g_.batch * m * n,
                 GemmMap<T, decltype(as)>{ta, tb, m, n, k, lda, ldb, ldc, sta, stb, stc, a, b, out});
        });
      }
    };
    auto in = [&](size_t i) { return L::template Ptr<const T>(c.inputs[i]); };
    auto out = [&](size_t i) { return L::template Ptr<T>(c.outputs[i]); };
    const DotGeometry& g = g_;
    if (!backward_) {
      gemm(g.ta, g.tb, g.m, g.n, g.k, in(0), g.lda(), sa, in(1), g.ldb(), sb, c.req[0], out(0), g.n, sc);
      return;
    }
    const T* dc = in(0);
    const T* a = in(1);
    const T* b = in(2);
    if (!g.ta)  // dA (m × k) = dC · op(B)ᵀ
      gemm(false, !g.tb, g.m, g.k, g.n, dc, g.n, sc, b, g.ldb(), sb, c.req[0], out(0), g.k, sa);
    else  // dA (k × m) = op(B) · dCᵀ
      gemm(g.tb, true, g.k, g.m, g.n, b, g.ldb(), sb, dc, g.n, sc, c.req[0], out(0), g.m, sa);
    if (!g.tb)  // dB (k × n) = op(A)ᵀ · dC
      gemm(!g.ta, false, g.k, g.n, g.m, a, g.lda(), sa, dc, g.n, sc, c.req[1], out(1), g.n, sb);
    else  // dB (n × k) = dCᵀ · op(A)
      gemm(true, g.ta, g.n, g.k, g.m, dc, g.n, sc, a, g.lda(), sa, c.req[1], out(1), g.k, sb);
  }

  bool backward_;
  DotGeometry g_;
};

/// Registers dot, batch_dot and their backward ops for launcher L.
template <class L>
void RegisterTensorDotKernels(sdk::KernelTable& t) {
  for (const char* op : {"dot", "_backward_dot", "batch_dot", "_backward_batch_dot"})
    t.Add<DotKernel<L>>(op, kFloatTypes);
}

}  // namespace weft::WEFT_GPU_NS
