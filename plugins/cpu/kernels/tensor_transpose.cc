// transpose / _backward_transpose: permuting axes (axes=() reverses them, as numpy). The
// backward applies the inverse permutation to the output gradient. SwapAxis (dim1, dim2) and its
// backward are the transposes that exchange two axes.
//
// The permutation is simplified first (extent-1 axes dropped, output axes that stay neighbours
// in the source merged). Then either the innermost output axis is contiguous in the source too
// (plain run copies), or the copy is a batch of 2-D transposes between the output's innermost
// axis and the source's innermost axis, done in square tiles so both sides stay in cache.
#include <algorithm>
#include <vector>

#include "tensor_kernels.h"
#include "weft/sdk/ops/transpose.hpp"

namespace weft::cpu::tensor {
namespace {

constexpr int64_t kTile = 16;

// A simplified permutation: output axis k has extent n[k], source stride src[k] and output
// stride dst[k] (elements).
struct Plan {
  int ndim = 0;
  int64_t n[WEFT_MAX_NDIM] = {};
  int64_t src[WEFT_MAX_NDIM] = {};
  int64_t dst[WEFT_MAX_NDIM] = {};
};

Plan MakePlan(const Dims& in, const std::vector<int>& perm) {
  int64_t in_stride[WEFT_MAX_NDIM];
  int64_t s = 1;
  for (int a = in.ndim - 1; a >= 0; --a) in_stride[a] = s, s *= in.d[a];
  Plan p;
  int prev = -2;
  for (int k = 0; k < in.ndim; ++k) {
    const int a = perm[static_cast<size_t>(k)];
    if (in.d[a] == 1) continue;
    if (p.ndim > 0 && a == prev + 1) {
      p.n[p.ndim - 1] *= in.d[a];
      p.src[p.ndim - 1] = in_stride[a];
    } else {
      p.n[p.ndim] = in.d[a];
      p.src[p.ndim] = in_stride[a];
      ++p.ndim;
    }
    prev = a;
  }
  if (p.ndim == 0) p.n[p.ndim] = 1, p.src[p.ndim] = 1, ++p.ndim;
  int64_t d = 1;
  for (int k = p.ndim - 1; k >= 0; --k) p.dst[k] = d, d *= p.n[k];
  return p;
}

template <typename T, typename Assign>
void Permute(const T* in, T* out, const Plan& p, Assign assign) {
  const int last = p.ndim - 1;
  // Source-innermost axis (stride 1): with the output-innermost one it forms the 2-D tiles.
  int q = last;
  for (int k = 0; k < p.ndim; ++k)
    if (p.src[k] == 1) q = k;
  int others[WEFT_MAX_NDIM];
  int no = 0;
  for (int k = 0; k < p.ndim; ++k)
    if (k != last && k != q) others[no++] = k;
  int64_t outer = 1;
  for (int j = 0; j < no; ++j) outer *= p.n[others[j]];
  int64_t idx[WEFT_MAX_NDIM] = {};
  int64_t so = 0, doff = 0;
  for (int64_t o = 0; o < outer; ++o) {
    const T* s = in + so;
    T* d = out + doff;
    if (q == last) {
      for (int64_t i = 0; i < p.n[last]; ++i) assign(d[i], s[i]);
    } else {
      const int64_t nq = p.n[q], np = p.n[last], sp = p.src[last], dq = p.dst[q];
      for (int64_t q0 = 0; q0 < nq; q0 += kTile) {
        const int64_t q1 = std::min(nq, q0 + kTile);
        for (int64_t p0 = 0; p0 < np; p0 += kTile) {
          const int64_t p1 = std::min(np, p0 + kTile);
          for (int64_t iq = q0; iq < q1; ++iq)
            for (int64_t ip = p0; ip < p1; ++ip) assign(d[iq * dq + ip], s[iq + ip * sp]);
        }
      }
    }
    for (int j = no - 1; j >= 0; --j) {
      const int k = others[j];
      so += p.src[k];
      doff += p.dst[k];
      if (++idx[j] < p.n[k]) break;
      so -= p.src[k] * p.n[k];
      doff -= p.dst[k] * p.n[k];
      idx[j] = 0;
    }
  }
}

class TransposeKernel {
 public:
  explicit TransposeKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireSameDType(s);
    const bool backward = s.op_name.rfind("_backward_", 0) == 0;
    // The forward's input shape: the backward's output.
    const TensorDesc& fwd_in = backward ? s.outputs[0] : s.inputs[0];
    const int n = fwd_in.ndim();
    const bool swap = s.op_name.find("SwapAxis") != std::string::npos;
    const std::vector<int64_t> axes = swap ? std::vector<int64_t>{} : s.Params<sdk::TransposeParam>().axes;
    std::vector<int> perm(static_cast<size_t>(n));
    if (swap) {
      // SwapAxis(dim1, dim2) is the transpose exchanging two axes (its own inverse).
      for (int k = 0; k < n; ++k) perm[static_cast<size_t>(k)] = k;
      const auto p = s.Params<sdk::SwapAxisParam>();
      const int a = NormalizeAxis(s, p.dim1, n, "dim1");
      const int b = NormalizeAxis(s, p.dim2, n, "dim2");
      std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
    } else if (axes.empty()) {
      for (int k = 0; k < n; ++k) perm[static_cast<size_t>(k)] = n - 1 - k;
    } else {
      if (static_cast<int>(axes.size()) != n) {
        Invalid(s, "axes " + sdk::FormatTuple(axes) + " must name each of the " + std::to_string(n) + " axes once");
      }
      std::vector<bool> seen(static_cast<size_t>(n), false);
      for (int k = 0; k < n; ++k) {
        const int a = NormalizeAxis(s, axes[static_cast<size_t>(k)], n, "axes");
        if (seen[static_cast<size_t>(a)])
          Invalid(s, "axes " + sdk::FormatTuple(axes) + " repeats axis " + std::to_string(a));
        seen[static_cast<size_t>(a)] = true;
        perm[static_cast<size_t>(k)] = a;
      }
    }
    // Output axis k of the forward is input axis perm[k]: check the shapes agree.
    const TensorDesc& fwd_out = backward ? s.inputs[0] : s.outputs[0];
    bool ok = fwd_out.ndim() == n;
    for (int k = 0; ok && k < n; ++k)
      ok = fwd_out.shape[static_cast<size_t>(k)] == fwd_in.shape[static_cast<size_t>(perm[static_cast<size_t>(k)])];
    if (!ok) Invalid(s, "output shape does not match the input shape permuted by axes");
    if (backward) {
      std::vector<int> inv(static_cast<size_t>(n));
      for (int k = 0; k < n; ++k) inv[static_cast<size_t>(perm[static_cast<size_t>(k)])] = k;
      perm = inv;
    }
    plan_ = MakePlan(Dims(s.inputs[0]), perm);
  }

  void Compute(const KernelCall& c) const {
    if (c.inputs[0].size() == 0) return;
    DispatchAll("transpose", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = static_cast<const T*>(c.inputs[0].raw());
      T* out = static_cast<T*>(c.outputs[0].raw());
      sdk::WithReq(c.req[0], [&](auto assign) { Permute(in, out, plan_, assign); });
    });
  }

 private:
  Plan plan_;
};

}  // namespace

void RegisterTransposeKernels(KernelTable& t) {
  AddAny<TransposeKernel>(t, "transpose", kAllMask);
  AddAny<TransposeKernel>(t, "_backward_transpose", kAllMask);
  AddAny<TransposeKernel>(t, "SwapAxis", kAllMask);
  AddAny<TransposeKernel>(t, "_backward_SwapAxis", kAllMask);
}

}  // namespace weft::cpu::tensor
