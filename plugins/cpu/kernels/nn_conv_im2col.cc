// Convolution by im2col + GEMM (OpenBLAS sgemm / dgemm), one image and one group at a time:
//   forward       y_g  = W_g · col(x_g)                    (fg × ohw) = (fg × ckk)(ckk × ohw)
//   backward data gx_g = col2im(W_gᵀ · gy_g)
//   backward W    gW_g = Σ_n gy_g · col(x_g)ᵀ
// 1-D to 3-D (sdk::ConvGeometry's one 3-D geometry), float32 (behind ConvAlgo) and float64 (the
// double-precision convolution, which oneDNN does not implement). 1×1 kernels with unit stride
// and no padding use x itself as the column matrix.
#include <algorithm>
#include <cstring>

#include "nn_conv.h"
#include "parallel.h"

namespace weft::cpu {
namespace {

bool Pointwise(const ConvGeom& g) {
  return g.kd == 1 && g.kh == 1 && g.kw == 1 && g.sd == 1 && g.sh == 1 && g.sw == 1 && g.pd == 0 && g.ph == 0 &&
         g.pw == 0;
}

// The walk Im2col and its adjoint share: for every column row r = ((c·kd + a)·kh + i)·kw + j and
// every output row (oz, oy), row(offset of that output row in col, offset in x of the input row
// it reads or -1 when that row lies in the padding, j).
template <typename F>
void ForEachColumnRow(const ConvGeom& g, F row) {
  for (int64_t c = 0; c < g.cg(); ++c)
    for (int64_t a = 0; a < g.kd; ++a)
      for (int64_t i = 0; i < g.kh; ++i)
        for (int64_t j = 0; j < g.kw; ++j) {
          const int64_t r = ((c * g.kd + a) * g.kh + i) * g.kw + j;
          for (int64_t oz = 0; oz < g.od; ++oz) {
            const int64_t iz = oz * g.sd - g.pd + a * g.dd;
            for (int64_t oy = 0; oy < g.oh; ++oy) {
              const int64_t iy = oy * g.sh - g.ph + i * g.dh;
              const bool inside = iz >= 0 && iz < g.d && iy >= 0 && iy < g.h;
              row(r * g.out_plane() + (oz * g.oh + oy) * g.ow, inside ? c * g.in_plane() + (iz * g.h + iy) * g.w : -1,
                  j);
            }
          }
        }
}

// col[(((c·kd + a)·kh + i)·kw + j)][(oz·oh + oy)·ow + ox] = x[c][oz·sd − pd + a·dd][oy·sh − ph + i·dh]
// [ox·sw − pw + j·dw] (0 outside).
template <typename T>
void Im2col(const ConvGeom& g, const T* x, T* col) {
  ForEachColumnRow(g, [&](int64_t at, int64_t xrow, int64_t j) {
    T* r = col + at;
    if (xrow < 0) {
      std::fill(r, r + g.ow, T(0));
      return;
    }
    const T* xr = x + xrow;
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const int64_t ix = ox * g.sw - g.pw + j * g.dw;
      r[ox] = ix >= 0 && ix < g.w ? xr[ix] : T(0);
    }
  });
}

// Adds the columns back into gx (the adjoint of Im2col).
template <typename T>
void Col2imAdd(const ConvGeom& g, const T* col, T* gx) {
  ForEachColumnRow(g, [&](int64_t at, int64_t xrow, int64_t j) {
    if (xrow < 0) return;
    const T* r = col + at;
    T* gr = gx + xrow;
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const int64_t ix = ox * g.sw - g.pw + j * g.dw;
      if (ix >= 0 && ix < g.w) gr[ix] += r[ox];
    }
  });
}

}  // namespace

namespace {

template <typename T>
class Im2colConv final : public ConvAlgoT<T> {
 public:
  explicit Im2colConv(const ConvGeom& g) : g_(g), pointwise_(Pointwise(g)) {}

  uint64_t ForwardWorkspace() const override { return ColBytes(); }
  // Backward: a column matrix per thread of the team, and a partial weight gradient for each
  // thread but the first (which accumulates into gw itself).
  uint64_t BackwardWorkspace() const override {
    const auto team = static_cast<uint64_t>(BackwardTeam());
    return team * ColBytes() + (team - 1) * static_cast<uint64_t>(g_.f * g_.col_rows()) * sizeof(T);
  }

  void Forward(const T* x, const T* w, const T* b, T* y, int32_t req, void* ws) const override {
    const ConvGeom& g = g_;
    T* col = static_cast<T*>(ws);
    const T beta = static_cast<T>(weft::sdk::ReqBeta(req));
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        const T* xg = x + (n * g.c + gr * g.cg()) * g.in_plane();
        const T* cm = pointwise_ ? xg : col;
        if (!pointwise_) Im2col(g, xg, col);
        T* yg = y + (n * g.f + gr * g.fg()) * g.out_plane();
        Gemm<T>(false, false, g.fg(), g.out_plane(), g.col_rows(), T(1), w + gr * g.fg() * g.col_rows(), g.col_rows(),
                cm, g.out_plane(), beta, yg, g.out_plane());
      }
    if (b != nullptr)
      for (int64_t n = 0; n < g.n; ++n)
        for (int64_t f = 0; f < g.f; ++f) {
          T* yp = y + (n * g.f + f) * g.out_plane();
          for (int64_t i = 0; i < g.out_plane(); ++i) yp[i] += b[f];
        }
  }

  void Backward(const T* gy, const T* x, const T* w, T* gx, int32_t req_x, T* gw, int32_t req_w, T* gb, int32_t req_b,
                void* ws) const override {
    if (!weft::sdk::IsNull(req_x)) DataGrad(gy, w, gx, req_x, static_cast<T*>(ws));
    if (!weft::sdk::IsNull(req_w)) WeightGrad(gy, x, gw, req_w, static_cast<T*>(ws));
    if (gb != nullptr && !weft::sdk::IsNull(req_b)) BiasGrad(gy, gb, req_b);
  }

 private:
  // Samples are split over the thread plan's team when the columns are worth it (LeNet conv1:
  // 100 images × 25 × 576). Each thread owns its samples' gx and its own column scratch.
  int BackwardTeam() const { return ParallelTeam(g_.n, g_.n * g_.groups * g_.col_rows() * g_.out_plane()); }
  int64_t ColElems() const { return pointwise_ ? 0 : g_.col_rows() * g_.out_plane(); }

  void DataGrad(const T* gy, const T* w, T* gx, int32_t req_x, T* ws) const {
    const ConvGeom& g = g_;
    ParallelChunks(g.n, g.n * g.groups * g.col_rows() * g.out_plane(), [&](int64_t n0, int64_t n1, int t) {
      T* col = ws + t * ColElems();
      if (req_x != WEFT_REQ_ADD) std::fill(gx + n0 * g.c * g.in_plane(), gx + n1 * g.c * g.in_plane(), T(0));
      for (int64_t n = n0; n < n1; ++n)
        for (int64_t gr = 0; gr < g.groups; ++gr) {
          const T* gyg = gy + (n * g.f + gr * g.fg()) * g.out_plane();
          T* gxg = gx + (n * g.c + gr * g.cg()) * g.in_plane();
          // Pointwise: the column matrix is gx itself, so sgemm accumulates straight into it.
          Gemm<T>(true, false, g.col_rows(), g.out_plane(), g.fg(), T(1), w + gr * g.fg() * g.col_rows(), g.col_rows(),
                  gyg, g.out_plane(), pointwise_ ? T(1) : T(0), pointwise_ ? gxg : col, g.out_plane());
          if (!pointwise_) Col2imAdd(g, col, gxg);
        }
    });
  }

  // gW = Σ_n gy_n · col(x_n)ᵀ: thread 0 sums its samples into gw (with req's beta), thread t > 0
  // into its partial, and the partials are added to gw afterwards.
  void WeightGrad(const T* gy, const T* x, T* gw, int32_t req_w, T* ws) const {
    const ConvGeom& g = g_;
    const int team = BackwardTeam();
    const int64_t gw_elems = g.f * g.col_rows();
    T* partials = ws + team * ColElems();
    ParallelChunks(g.n, g.n * g.groups * g.col_rows() * g.out_plane(), [&](int64_t n0, int64_t n1, int t) {
      T* col = ws + t * ColElems();
      T* out = t == 0 ? gw : partials + (t - 1) * gw_elems;
      const T first_beta = t == 0 ? static_cast<T>(weft::sdk::ReqBeta(req_w)) : T(0);
      if (n0 == n1 && first_beta == T(0)) std::fill(out, out + gw_elems, T(0));
      for (int64_t n = n0; n < n1; ++n)
        for (int64_t gr = 0; gr < g.groups; ++gr) {
          const T* xg = x + (n * g.c + gr * g.cg()) * g.in_plane();
          const T* cm = pointwise_ ? xg : col;
          if (!pointwise_) Im2col(g, xg, col);
          Gemm<T>(false, true, g.fg(), g.col_rows(), g.out_plane(), T(1), gy + (n * g.f + gr * g.fg()) * g.out_plane(),
                  g.out_plane(), cm, g.out_plane(), n == n0 ? first_beta : T(1), out + gr * g.fg() * g.col_rows(),
                  g.col_rows());
        }
    });
    for (int t = 1; t < team; ++t) {
      const T* p = partials + (t - 1) * gw_elems;
      for (int64_t i = 0; i < gw_elems; ++i) gw[i] += p[i];
    }
  }

  // gb[f] = Σ over images and positions of gy; each plane summed in 16 T lanes (vectorised)
  // and the planes in double.
  void BiasGrad(const T* gy, T* gb, int32_t req_b) const {
    const ConvGeom& g = g_;
    const int64_t plane = g.out_plane();
    ParallelChunks(g.f, g.n * g.f * plane, [&](int64_t f0, int64_t f1, int) {
      weft::sdk::WithReq(req_b, [&](auto assign) {
        for (int64_t f = f0; f < f1; ++f) {
          double s = 0;
          for (int64_t n = 0; n < g.n; ++n) s += PlaneSum(gy + (n * g.f + f) * plane, plane);
          assign(gb[f], static_cast<T>(s));
        }
      });
    });
  }

  static double PlaneSum(const T* p, int64_t len) {
    constexpr int kLanes = 16;
    T lane[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= len; i += kLanes)
      for (int j = 0; j < kLanes; ++j) lane[j] += p[i + j];
    double s = 0;
    for (int j = 0; j < kLanes; ++j) s += lane[j];
    for (; i < len; ++i) s += p[i];
    return s;
  }

  uint64_t ColBytes() const { return static_cast<uint64_t>(ColElems()) * sizeof(T); }
  ConvGeom g_;
  bool pointwise_;
};

}  // namespace

template <typename T>
std::unique_ptr<ConvAlgoT<T>> MakeIm2colConv(const ConvGeom& g) {
  return std::make_unique<Im2colConv<T>>(g);
}
template std::unique_ptr<ConvAlgoT<float>> MakeIm2colConv<float>(const ConvGeom& g);
template std::unique_ptr<ConvAlgoT<double>> MakeIm2colConv<double>(const ConvGeom& g);

}  // namespace weft::cpu
