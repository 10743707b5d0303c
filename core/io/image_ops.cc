// Resizing and affine warps of 8-bit images (io/image_ops.h). The coordinate conventions and
// kernels are OpenCV's (imgproc resize.cpp / imgwarp.cpp, as documented for cv::resize and
// cv::warpAffine); the arithmetic is float with one rounding at the end.
#include "io/image_ops.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "weft/base.h"

namespace weft::io_detail {
namespace {

// The source taps of one output coordinate: `count` consecutive weights starting at table
// position `first`, for source indices index[first..first+count).
struct AxisTaps {
  std::vector<int> start;  // per output coordinate: first tap in index/weight
  std::vector<int> count;  // per output coordinate
  std::vector<int> index;  // source coordinate of each tap (clamped into the image)
  std::vector<float> weight;
};

void Add(AxisTaps& t, int src, int n, float w) {
  t.index.push_back(std::clamp(src, 0, n - 1));
  t.weight.push_back(w);
}

void CubicWeights(float x, float w[4]) {
  constexpr float A = -0.75f;
  w[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
  w[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  w[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
  w[3] = 1.f - w[0] - w[1] - w[2];
}

void LanczosWeights(float x, float w[8]) {
  const double pi = std::numbers::pi;
  double sum = 0;
  for (int i = 0; i < 8; ++i) {
    const double d = static_cast<double>(x) + 3 - i;
    const double v = std::abs(d) < 1e-12 ? 1.0 : std::sin(pi * d) * std::sin(pi * d / 4) / (pi * pi * d * d / 4);
    w[i] = static_cast<float>(v);
    sum += v;
  }
  for (int i = 0; i < 8; ++i) w[i] = static_cast<float>(w[i] / sum);
}

// Area coverage weights when shrinking (OpenCV's computeResizeAreaTab).
void AreaTaps(AxisTaps& t, int n, int m, double scale) {
  for (int d = 0; d < m; ++d) {
    t.start.push_back(static_cast<int>(t.index.size()));
    const double f1 = d * scale, f2 = f1 + scale;
    const double cell = std::min(scale, n - f1);
    int s1 = static_cast<int>(std::ceil(f1)), s2 = static_cast<int>(std::floor(f2));
    s2 = std::min(s2, n - 1);
    s1 = std::min(s1, s2);
    if (s1 - f1 > 1e-3) Add(t, s1 - 1, n, static_cast<float>((s1 - f1) / cell));
    for (int s = s1; s < s2; ++s) Add(t, s, n, static_cast<float>(1.0 / cell));
    if (f2 - s2 > 1e-3) Add(t, s2, n, static_cast<float>(std::min(std::min(f2 - s2, 1.0), cell) / cell));
    t.count.push_back(static_cast<int>(t.index.size()) - t.start.back());
  }
}

AxisTaps MakeTaps(int n, int m, Interpolation method) {
  AxisTaps t;
  const double scale = static_cast<double>(n) / m;
  if (method == Interpolation::kArea && scale >= 1.0) {
    AreaTaps(t, n, m, scale);
    return t;
  }
  for (int d = 0; d < m; ++d) {
    t.start.push_back(static_cast<int>(t.index.size()));
    if (method == Interpolation::kNearest) {
      Add(t, static_cast<int>(std::floor(d * scale)), n, 1.f);
      t.count.push_back(1);
      continue;
    }
    int s;
    float f;
    if (method == Interpolation::kArea) {  // enlarging: OpenCV's area-as-linear coefficients
      s = static_cast<int>(std::floor(d * scale));
      f = static_cast<float>((d + 1) - (s + 1) / scale);
      f = f <= 0 ? 0.f : f - std::floor(f);
    } else {
      const float fx = static_cast<float>((d + 0.5) * scale - 0.5);
      s = static_cast<int>(std::floor(fx));
      f = fx - static_cast<float>(s);
    }
    if (method == Interpolation::kCubic) {
      float w[4];
      CubicWeights(f, w);
      for (int k = 0; k < 4; ++k) Add(t, s - 1 + k, n, w[k]);
    } else if (method == Interpolation::kLanczos4) {
      float w[8];
      LanczosWeights(f, w);
      for (int k = 0; k < 8; ++k) Add(t, s - 3 + k, n, w[k]);
    } else {  // linear: the edges take the edge pixel (OpenCV sets fx = 0 there)
      if (s < 0) s = 0, f = 0;
      if (s >= n - 1) s = n - 1, f = 0;
      Add(t, s, n, 1.f - f);
      Add(t, s + 1, n, f);
    }
    t.count.push_back(static_cast<int>(t.index.size()) - t.start.back());
  }
  return t;
}

uint8_t Saturate(float v) { return static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L)); }

// OpenCV's 8-bit bilinear resize, reproduced bit for bit: per output coordinate a source index
// and two 11-bit weights (rounded separately), horizontal sums in int, and the vertical blend as
// its SSE2 code computes it — (((r0 >> 4) * b0 >> 16) + ((r1 >> 4) * b1 >> 16) + 2) >> 2 — except
// for the last values of a row, which its scalar tail rounds as (r0 * b0 + r1 * b1 + 2^21) >> 22.
struct LinearTaps {
  std::vector<int> src;
  std::vector<int16_t> w0, w1;
};

LinearTaps LinearFixedTaps(int n, int m) {
  LinearTaps t;
  const double scale = 1.0 / (static_cast<double>(m) / n);
  for (int d = 0; d < m; ++d) {
    float f = static_cast<float>((d + 0.5) * scale - 0.5);
    int s = static_cast<int>(std::floor(f));
    f -= static_cast<float>(s);
    if (s < 0) s = 0, f = 0;
    if (s >= n - 1) s = n - 1, f = 0;
    t.src.push_back(s);
    t.w0.push_back(static_cast<int16_t>(std::nearbyint((1.f - f) * 2048)));
    t.w1.push_back(static_cast<int16_t>(std::nearbyint(f * 2048)));
  }
  return t;
}

int16_t Sat16(int v) { return static_cast<int16_t>(std::clamp(v, -32768, 32767)); }

void ResizeLinear8u(const PixelView& src, Image* out) {
  const int c = src.channels, dw = out->width;
  const LinearTaps tx = LinearFixedTaps(src.width, dw), ty = LinearFixedTaps(src.height, out->height);
  const int row_len = dw * c;
  auto hrow = [&](int y, std::vector<int>& r) {
    const uint8_t* s = src.data + static_cast<size_t>(y) * src.stride;
    for (int x = 0; x < dw; ++x) {
      const int a = tx.src[static_cast<size_t>(x)], b = std::min(a + 1, src.width - 1);
      for (int k = 0; k < c; ++k)
        r[static_cast<size_t>(x * c + k)] =
            s[a * c + k] * tx.w0[static_cast<size_t>(x)] + s[b * c + k] * tx.w1[static_cast<size_t>(x)];
    }
  };
  // Where OpenCV's vector loops (16, then 4 values at a time) stop and its scalar tail begins.
  int vec_end = 0;
  while (vec_end <= row_len - 16) vec_end += 16;
  while (vec_end < row_len - 4) vec_end += 4;
  std::vector<int> r0(static_cast<size_t>(row_len)), r1(static_cast<size_t>(row_len));
  for (int y = 0; y < out->height; ++y) {
    const int a = ty.src[static_cast<size_t>(y)];
    hrow(a, r0);
    hrow(std::min(a + 1, src.height - 1), r1);
    const int b0 = ty.w0[static_cast<size_t>(y)], b1 = ty.w1[static_cast<size_t>(y)];
    uint8_t* d = out->row(y);
    for (int x = 0; x < row_len; ++x) {
      const int v0 = r0[static_cast<size_t>(x)], v1 = r1[static_cast<size_t>(x)];
      int v;
      if (x < vec_end) {
        const int s = Sat16(((Sat16(v0 >> 4) * b0) >> 16) + ((Sat16(v1 >> 4) * b1) >> 16));
        v = Sat16(s + 2) >> 2;
      } else {
        v = (v0 * b0 + v1 * b1 + (1 << 21)) >> 22;
      }
      d[x] = static_cast<uint8_t>(std::clamp(v, 0, 255));
    }
  }
}

}  // namespace

void ResizeInto(const PixelView& src, Image* out, Interpolation method) {
  const int c = src.channels, dw = out->width, dh = out->height;
  WEFT_CHECK(src.width >= 1 && src.height >= 1 && dw >= 1 && dh >= 1 && out->channels == c,
             "resize: cannot resize a {} x {} image to {} x {}", src.width, src.height, dw, dh);
  if (method == Interpolation::kLinear) {
    // OpenCV halves with its area method when both sides shrink exactly by 2.
    if (src.width != 2 * dw || src.height != 2 * dh) return ResizeLinear8u(src, out);
    method = Interpolation::kArea;
  }
  const AxisTaps tx = MakeTaps(src.width, dw, method), ty = MakeTaps(src.height, dh, method);
  // Horizontal pass over the source rows the vertical taps use, then the vertical pass.
  std::vector<float> rows(static_cast<size_t>(src.height) * static_cast<size_t>(dw * c));
  std::vector<char> needed(static_cast<size_t>(src.height), 0);
  for (int i : ty.index) needed[static_cast<size_t>(i)] = 1;
  for (int y = 0; y < src.height; ++y) {
    if (!needed[static_cast<size_t>(y)]) continue;
    const uint8_t* s = src.data + static_cast<size_t>(y) * src.stride;
    float* r = rows.data() + static_cast<size_t>(y) * static_cast<size_t>(dw * c);
    for (int x = 0; x < dw; ++x) {
      const int b = tx.start[static_cast<size_t>(x)], n = tx.count[static_cast<size_t>(x)];
      for (int k = 0; k < c; ++k) {
        float acc = 0;
        for (int j = b; j < b + n; ++j)
          acc += tx.weight[static_cast<size_t>(j)] * s[tx.index[static_cast<size_t>(j)] * c + k];
        r[x * c + k] = acc;
      }
    }
  }
  const size_t row_len = static_cast<size_t>(dw * c);
  for (int y = 0; y < dh; ++y) {
    uint8_t* d = out->row(y);
    const int b = ty.start[static_cast<size_t>(y)], n = ty.count[static_cast<size_t>(y)];
    for (size_t i = 0; i < row_len; ++i) {
      float acc = 0;
      for (int j = b; j < b + n; ++j)
        acc += ty.weight[static_cast<size_t>(j)] *
               rows[static_cast<size_t>(ty.index[static_cast<size_t>(j)]) * row_len + i];
      d[i] = Saturate(acc);
    }
  }
}

void WarpAffineInto(const PixelView& src, const float m[6], Interpolation method, uint8_t fill, Image* out) {
  const double det = static_cast<double>(m[0]) * m[4] - static_cast<double>(m[1]) * m[3];
  WEFT_CHECK(std::abs(det) > 1e-12, "affine augmentation: the transformation is singular (scale 0?)");
  // The inverse map, destination to source.
  const double a = m[4] / det, b = -m[1] / det, d = -m[3] / det, e = m[0] / det;
  const double c0 = -(a * m[2] + b * m[5]), f0 = -(d * m[2] + e * m[5]);
  const int ch = src.channels;
  auto at = [&](int x, int y, int k) -> float {
    if (x < 0 || y < 0 || x >= src.width || y >= src.height) return fill;
    return src.data[static_cast<size_t>(y) * src.stride + static_cast<size_t>(x * ch + k)];
  };
  for (int y = 0; y < out->height; ++y) {
    uint8_t* o = out->row(y);
    for (int x = 0; x < out->width; ++x) {
      const double sx = a * x + b * y + c0, sy = d * x + e * y + f0;
      if (method == Interpolation::kNearest) {
        const int ix = static_cast<int>(std::lround(sx)), iy = static_cast<int>(std::lround(sy));
        for (int k = 0; k < ch; ++k) o[x * ch + k] = static_cast<uint8_t>(at(ix, iy, k));
        continue;
      }
      const int x0 = static_cast<int>(std::floor(sx)), y0 = static_cast<int>(std::floor(sy));
      const float fx = static_cast<float>(sx - x0), fy = static_cast<float>(sy - y0);
      for (int k = 0; k < ch; ++k) {
        const float top = at(x0, y0, k) * (1 - fx) + at(x0 + 1, y0, k) * fx;
        const float bottom = at(x0, y0 + 1, k) * (1 - fx) + at(x0 + 1, y0 + 1, k) * fx;
        o[x * ch + k] = Saturate(top * (1 - fy) + bottom * fy);
      }
    }
  }
}

}  // namespace weft::io_detail
