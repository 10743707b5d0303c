// Convolution by im2col + sgemm, one image and one group at a time:
//   forward       y_g  = W_g · col(x_g)                    (fg × ohw) = (fg × ckk)(ckk × ohw)
//   backward data gx_g = col2im(W_gᵀ · gy_g)
//   backward W    gW_g = Σ_n gy_g · col(x_g)ᵀ
// 1×1 kernels with unit stride and no padding use x itself as the column matrix.
#include <algorithm>
#include <cstring>

#include "nn_conv.h"
#include "parallel.h"

namespace weft::cpu {
namespace {

bool Pointwise(const ConvGeom& g) { return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0; }

// col[(c·kh + i)·kw + j][oy·ow + ox] = x[c][oy·sh − ph + i·dh][ox·sw − pw + j·dw] (0 outside).
void Im2col(const ConvGeom& g, const float* x, float* col) {
  for (int64_t c = 0; c < g.cg(); ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        float* row = col + ((c * g.kh + i) * g.kw + j) * g.out_plane();
        const float* xc = x + c * g.in_plane();
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          int64_t iy = oy * g.sh - g.ph + i * g.dh;
          float* r = row + oy * g.ow;
          if (iy < 0 || iy >= g.h) {
            std::fill(r, r + g.ow, 0.0f);
            continue;
          }
          const float* xr = xc + iy * g.w;
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            int64_t ix = ox * g.sw - g.pw + j * g.dw;
            r[ox] = ix >= 0 && ix < g.w ? xr[ix] : 0.0f;
          }
        }
      }
}

// Adds the columns back into gx (the adjoint of Im2col).
void Col2imAdd(const ConvGeom& g, const float* col, float* gx) {
  for (int64_t c = 0; c < g.cg(); ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const float* row = col + ((c * g.kh + i) * g.kw + j) * g.out_plane();
        float* gc = gx + c * g.in_plane();
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          int64_t iy = oy * g.sh - g.ph + i * g.dh;
          if (iy < 0 || iy >= g.h) continue;
          const float* r = row + oy * g.ow;
          float* gr = gc + iy * g.w;
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            int64_t ix = ox * g.sw - g.pw + j * g.dw;
            if (ix >= 0 && ix < g.w) gr[ix] += r[ox];
          }
        }
      }
}

class Im2colConv final : public ConvAlgo {
 public:
  explicit Im2colConv(const ConvGeom& g) : g_(g), pointwise_(Pointwise(g)) {}

  uint64_t ForwardWorkspace() const override { return ColBytes(); }
  // Backward: a column matrix per thread of the team, and a partial weight gradient for each
  // thread but the first (which accumulates into gw itself).
  uint64_t BackwardWorkspace() const override {
    const auto team = static_cast<uint64_t>(BackwardTeam());
    return team * ColBytes() + (team - 1) * static_cast<uint64_t>(g_.f * g_.col_rows()) * sizeof(float);
  }

  void Forward(const float* x, const float* w, const float* b, float* y, int32_t req, void* ws) const override {
    const ConvGeom& g = g_;
    float* col = static_cast<float*>(ws);
    const float beta = weft::sdk::ReqBeta(req);
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        const float* xg = x + (n * g.c + gr * g.cg()) * g.in_plane();
        const float* cm = pointwise_ ? xg : col;
        if (!pointwise_) Im2col(g, xg, col);
        float* yg = y + (n * g.f + gr * g.fg()) * g.out_plane();
        Sgemm(false, false, g.fg(), g.out_plane(), g.col_rows(), 1.0f, w + gr * g.fg() * g.col_rows(), g.col_rows(), cm,
              g.out_plane(), beta, yg, g.out_plane());
      }
    if (b != nullptr)
      for (int64_t n = 0; n < g.n; ++n)
        for (int64_t f = 0; f < g.f; ++f) {
          float* yp = y + (n * g.f + f) * g.out_plane();
          for (int64_t i = 0; i < g.out_plane(); ++i) yp[i] += b[f];
        }
  }

  void Backward(const float* gy, const float* x, const float* w, float* gx, int32_t req_x, float* gw, int32_t req_w,
                float* gb, int32_t req_b, void* ws) const override {
    if (!weft::sdk::IsNull(req_x)) DataGrad(gy, w, gx, req_x, static_cast<float*>(ws));
    if (!weft::sdk::IsNull(req_w)) WeightGrad(gy, x, gw, req_w, static_cast<float*>(ws));
    if (gb != nullptr && !weft::sdk::IsNull(req_b)) BiasGrad(gy, gb, req_b);
  }

 private:
  // Samples are split over the thread plan's team when the columns are worth it (LeNet conv1:
  // 100 images × 25 × 576). Each thread owns its samples' gx and its own column scratch.
  int BackwardTeam() const { return ParallelTeam(g_.n, g_.n * g_.groups * g_.col_rows() * g_.out_plane()); }
  int64_t ColElems() const { return pointwise_ ? 0 : g_.col_rows() * g_.out_plane(); }

  void DataGrad(const float* gy, const float* w, float* gx, int32_t req_x, float* ws) const {
    const ConvGeom& g = g_;
    ParallelChunks(g.n, g.n * g.groups * g.col_rows() * g.out_plane(), [&](int64_t n0, int64_t n1, int t) {
      float* col = ws + t * ColElems();
      if (req_x != WEFT_REQ_ADD) std::fill(gx + n0 * g.c * g.in_plane(), gx + n1 * g.c * g.in_plane(), 0.0f);
      for (int64_t n = n0; n < n1; ++n)
        for (int64_t gr = 0; gr < g.groups; ++gr) {
          const float* gyg = gy + (n * g.f + gr * g.fg()) * g.out_plane();
          float* gxg = gx + (n * g.c + gr * g.cg()) * g.in_plane();
          // Pointwise: the column matrix is gx itself, so sgemm accumulates straight into it.
          Sgemm(true, false, g.col_rows(), g.out_plane(), g.fg(), 1.0f, w + gr * g.fg() * g.col_rows(), g.col_rows(),
                gyg, g.out_plane(), pointwise_ ? 1.0f : 0.0f, pointwise_ ? gxg : col, g.out_plane());
          if (!pointwise_) Col2imAdd(g, col, gxg);
        }
    });
  }

  // gW = Σ_n gy_n · col(x_n)ᵀ: thread 0 sums its samples into gw (with req's beta), thread t > 0
  // into its partial, and the partials are added to gw afterwards.
  void WeightGrad(const float* gy, const float* x, float* gw, int32_t req_w, float* ws) const {
    const ConvGeom& g = g_;
    const int team = BackwardTeam();
    const int64_t gw_elems = g.f * g.col_rows();
    float* partials = ws + team * ColElems();
    ParallelChunks(g.n, g.n * g.groups * g.col_rows() * g.out_plane(), [&](int64_t n0, int64_t n1, int t) {
      float* col = ws + t * ColElems();
      float* out = t == 0 ? gw : partials + (t - 1) * gw_elems;
      const float first_beta = t == 0 ? weft::sdk::ReqBeta(req_w) : 0.0f;
      if (n0 == n1 && first_beta == 0.0f) std::fill(out, out + gw_elems, 0.0f);
      for (int64_t n = n0; n < n1; ++n)
        for (int64_t gr = 0; gr < g.groups; ++gr) {
          const float* xg = x + (n * g.c + gr * g.cg()) * g.in_plane();
          const float* cm = pointwise_ ? xg : col;
          if (!pointwise_) Im2col(g, xg, col);
          Sgemm(false, true, g.fg(), g.col_rows(), g.out_plane(), 1.0f, gy + (n * g.f + gr * g.fg()) * g.out_plane(),
                g.out_plane(), cm, g.out_plane(), n == n0 ? first_beta : 1.0f, out + gr * g.fg() * g.col_rows(),
                g.col_rows());
        }
    });
    for (int t = 1; t < team; ++t) {
      const float* p = partials + (t - 1) * gw_elems;
      for (int64_t i = 0; i < gw_elems; ++i) gw[i] += p[i];
    }
  }

  // gb[f] = Σ over images and positions of gy; each plane summed in 16 float lanes (vectorised)
  // and the planes in double.
  void BiasGrad(const float* gy, float* gb, int32_t req_b) const {
    const ConvGeom& g = g_;
    const int64_t plane = g.out_plane();
    ParallelChunks(g.f, g.n * g.f * plane, [&](int64_t f0, int64_t f1, int) {
      weft::sdk::WithReq(req_b, [&](auto assign) {
        for (int64_t f = f0; f < f1; ++f) {
          double s = 0;
          for (int64_t n = 0; n < g.n; ++n) s += PlaneSum(gy + (n * g.f + f) * plane, plane);
          assign(gb[f], static_cast<float>(s));
        }
      });
    });
  }

  static double PlaneSum(const float* p, int64_t len) {
    constexpr int kLanes = 16;
    float lane[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= len; i += kLanes)
      for (int j = 0; j < kLanes; ++j) lane[j] += p[i + j];
    double s = 0;
    for (int j = 0; j < kLanes; ++j) s += lane[j];
    for (; i < len; ++i) s += p[i];
    return s;
  }

  uint64_t ColBytes() const { return static_cast<uint64_t>(ColElems()) * sizeof(float); }
  ConvGeom g_;
  bool pointwise_;
};

}  // namespace

std::unique_ptr<ConvAlgo> MakeIm2colConv(const ConvGeom& g) { return std::make_unique<Im2colConv>(g); }

}  // namespace weft::cpu
