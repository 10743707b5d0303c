// Interleaved pixels to planes (io/pixel_convert.h).
#include "io/pixel_convert.h"

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace weft::io_detail {
namespace {

inline float Norm(uint8_t p, float mean, float mult, float bias) {
  return (static_cast<float>(p) - mean) * mult + bias;
}

// Pixels [from, w) of one row, any channel count.
void RowScalar(const uint8_t* in, int from, int w, int c, bool mirror, const float* mean, const float* mult,
               const float* bias, float* const* planes) {
  for (int x = from; x < w; ++x) {
    const int o = mirror ? w - 1 - x : x;
    for (int k = 0; k < c; ++k) planes[k][o] = Norm(in[x * c + k], mean[k], mult[k], bias[k]);
  }
}

#if defined(__x86_64__)
// Eight RGB pixels (24 bytes) at a time: converted to float as they lie (the constants repeat with
// period 3), then sorted into the three planes with two blends and a permutation per plane.
__attribute__((target("avx2"))) int RowRgbAvx2(const uint8_t* in, int w, bool mirror, const float* mean,
                                               const float* mult, const float* bias, float* const* planes) {
  alignas(32) float m[24], k[24], b[24];
  for (int i = 0; i < 24; ++i) m[i] = mean[i % 3], k[i] = mult[i % 3], b[i] = bias[i % 3];
  __m256 mv[3], kv[3], bv[3];
  for (int j = 0; j < 3; ++j) {
    mv[j] = _mm256_load_ps(m + 8 * j);
    kv[j] = _mm256_load_ps(k + 8 * j);
    bv[j] = _mm256_load_ps(b + 8 * j);
  }
  // Lane l of v[j] holds value 8j + l of the 24, i.e. channel (8j + l) % 3 of pixel (8j + l) / 3.
  // For channel ch: blend lanes from v1 and v2 into v0, then put pixel p at lane p.
  const __m256i order[3] = {_mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5), _mm256_setr_epi32(1, 4, 7, 2, 5, 0, 3, 6),
                            _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7)};
  const __m256i reverse = _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0);
  int x = 0;
  for (; x + 8 <= w; x += 8) {
    const uint8_t* p = in + 3 * x;
    __m256 v[3];
    for (int j = 0; j < 3; ++j) {
      const __m256 f =
          _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 8 * j))));
      v[j] = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(f, mv[j]), kv[j]), bv[j]);
    }
    // channel 0 sits in v0 lanes 0,3,6, v1 lanes 1,4,7, v2 lanes 2,5; channels 1 and 2 shifted.
    const __m256 c0 = _mm256_blend_ps(_mm256_blend_ps(v[0], v[1], 0x92), v[2], 0x24);
    const __m256 c1 = _mm256_blend_ps(_mm256_blend_ps(v[0], v[1], 0x24), v[2], 0x49);
    const __m256 c2 = _mm256_blend_ps(_mm256_blend_ps(v[0], v[1], 0x49), v[2], 0x92);
    const __m256 cs[3] = {c0, c1, c2};
    for (int ch = 0; ch < 3; ++ch) {
      __m256 out = _mm256_permutevar8x32_ps(cs[ch], order[ch]);
      float* dst = planes[ch] + (mirror ? w - 8 - x : x);
      if (mirror) out = _mm256_permutevar8x32_ps(out, reverse);
      // The batch (tens of MB) is not read again soon: streaming stores skip reading its lines
      // into the cache first, which halves the memory traffic of this loop.
      if ((reinterpret_cast<uintptr_t>(dst) & 31) == 0) {
        _mm256_stream_ps(dst, out);
      } else {
        _mm256_storeu_ps(dst, out);
      }
    }
  }
  return x;
}

// One gray row (c = 1), four pixels at a time in SSE2 (every x86-64 has it): gray images (MNIST-like
// .rec files) convert one row per call, and the scalar loop was ~1 ns per pixel.
int RowGraySse2(const uint8_t* in, int w, bool mirror, float mean, float mult, float bias, float* out) {
  const __m128 m = _mm_set1_ps(mean), k = _mm_set1_ps(mult), b = _mm_set1_ps(bias);
  const __m128i zero = _mm_setzero_si128();
  int x = 0;
  for (; x + 4 <= w; x += 4) {
    int32_t four;
    __builtin_memcpy(&four, in + x, 4);
    const __m128i px = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(four), zero), zero);
    __m128 v = _mm_add_ps(_mm_mul_ps(_mm_sub_ps(_mm_cvtepi32_ps(px), m), k), b);
    if (mirror) v = _mm_shuffle_ps(v, v, _MM_SHUFFLE(0, 1, 2, 3));
    _mm_storeu_ps(out + (mirror ? w - 4 - x : x), v);
  }
  return x;
}

bool HasAvx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

}  // namespace

void ToPlanes(const uint8_t* in, size_t in_stride, int w, int h, int c, bool mirror, const float* mean,
              const float* mult, const float* bias, float* out) {
  const size_t plane = static_cast<size_t>(w) * static_cast<size_t>(h);
  for (int y = 0; y < h; ++y) {
    const uint8_t* row = in + static_cast<size_t>(y) * in_stride;
    float* planes[3];
    for (int k = 0; k < c; ++k) planes[k] = out + k * plane + static_cast<size_t>(y) * static_cast<size_t>(w);
    int done = 0;
#if defined(__x86_64__)
    if (c == 3 && HasAvx2()) done = RowRgbAvx2(row, w, mirror, mean, mult, bias, planes);
    if (c == 1) done = RowGraySse2(row, w, mirror, mean[0], mult[0], bias[0], planes[0]);
#endif
    RowScalar(row, done, w, c, mirror, mean, mult, bias, planes);
  }
#if defined(__x86_64__)
  _mm_sfence();  // order the streaming stores before the batch is handed to another thread
#endif
}

void ToPlanes(const uint8_t* in, size_t in_stride, int w, int h, int c, bool mirror, uint8_t* out) {
  const size_t plane = static_cast<size_t>(w) * static_cast<size_t>(h);
  for (int k = 0; k < c; ++k)
    for (int y = 0; y < h; ++y) {
      const uint8_t* src = in + static_cast<size_t>(y) * in_stride + k;
      uint8_t* dst = out + k * plane + static_cast<size_t>(y) * static_cast<size_t>(w);
      for (int x = 0; x < w; ++x) dst[mirror ? w - 1 - x : x] = src[x * c];
    }
}

}  // namespace weft::io_detail
