// One image of an ImageRecordIter batch (io/image_transform.h). The steps, their order and the
// order of the random draws follow MXNet's DefaultImageAugmenter::Process and
// ImageRecordIOParser2::ParseChunk (weft/image_iter.h).
#include "io/image_transform.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "io/image_ops.h"
#include "io/pixel_convert.h"
#include "weft/base.h"

namespace weft::io_detail {
namespace {

// The draws of one sample through a type with internal linkage: the standard library's
// distribution templates instantiated on it stay inside this file. Instantiated on DrawRng itself
// they are weak symbols libweft would export wherever the compiler does not inline them (-O1 in
// the ASan preset). The draws are the same: the wrapper forwards every call.
class Draws {
 public:
  using result_type = DrawRng::result_type;
  explicit Draws(DrawRng& rng) : rng_(rng) {}
  static constexpr result_type min() { return DrawRng::min(); }
  static constexpr result_type max() { return DrawRng::max(); }
  result_type operator()() { return rng_(); }

 private:
  DrawRng& rng_;
};

int UniformInt(DrawRng& rng, int lo, int hi) {
  Draws d(rng);
  return std::uniform_int_distribution<int>(lo, hi)(d);
}

float Uniform01(DrawRng& rng) {
  Draws d(rng);
  return std::uniform_real_distribution<float>(0, 1)(d);
}

bool Coin(DrawRng& rng) {
  Draws d(rng);
  return std::bernoulli_distribution(0.5)(d);
}

void Copy(const PixelView& src, int x, int y, int w, int h, uint8_t* out) {
  const size_t row = static_cast<size_t>(w * src.channels);
  for (int r = 0; r < h; ++r)
    std::memcpy(out + static_cast<size_t>(r) * row,
                src.data + static_cast<size_t>(y + r) * src.stride + static_cast<size_t>(x * src.channels), row);
}

Image Sized(int w, int h, int c) {
  Image im{h, w, c, {}};
  im.data.resize(static_cast<size_t>(w) * static_cast<size_t>(h) * static_cast<size_t>(c));
  return im;
}

}  // namespace

ImageTransform::ImageTransform(const ImageRecordIterOptions& o) : o_(o) {
  const Shape& s = o.data_shape;
  WEFT_CHECK(s.ndim() == 3 && (s[0] == 1 || s[0] == 3) && s[1] >= 1 && s[2] >= 1 && s[1] <= 65535 && s[2] <= 65535,
             "ImageRecordIter: data_shape {} must be (channels, height, width) with 1 or 3 channels (4-channel "
             "images are not supported)",
             s);
  c_ = static_cast<int>(s[0]);
  h_ = static_cast<int>(s[1]);
  w_ = static_cast<int>(s[2]);
  WEFT_CHECK(o.dtype == DType::kFloat32 || o.dtype == DType::kUint8,
             "ImageRecordIter: dtype {} is not supported (float32 or uint8)", DTypeName(o.dtype));
  out_bytes_ = static_cast<size_t>(c_ * h_ * w_) * DTypeSize(o.dtype);
  const int m = o.inter_method;
  WEFT_CHECK((m >= 0 && m <= 4) || m == 9 || m == 10,
             "ImageRecordIter: inter_method {} is not one of 0 (nearest), 1 (bilinear), 2 (cubic), 3 (area), 4 "
             "(lanczos4), 9 (auto), 10 (random)",
             m);
  WEFT_CHECK(o.resize == -1 || o.resize >= 1, "ImageRecordIter: resize {} must be -1 (off) or positive", o.resize);
  WEFT_CHECK(o.pad >= 0, "ImageRecordIter: pad {} must not be negative", o.pad);
  WEFT_CHECK(o.fill_value >= 0 && o.fill_value <= 255, "ImageRecordIter: fill_value {} is outside 0..255",
             o.fill_value);
  WEFT_CHECK(o.max_random_scale >= o.min_random_scale && o.min_random_scale > 0,
             "ImageRecordIter: min_random_scale {} and max_random_scale {} must be positive with min <= max",
             o.min_random_scale, o.max_random_scale);
  WEFT_CHECK(o.max_rotate_angle >= 0 && o.max_shear_ratio >= 0 && o.max_aspect_ratio >= 0,
             "ImageRecordIter: max_rotate_angle, max_shear_ratio and max_aspect_ratio must not be negative");
  if (o.max_crop_size != -1 || o.min_crop_size != -1)
    WEFT_CHECK(o.min_crop_size >= 1 && o.max_crop_size >= o.min_crop_size,
               "ImageRecordIter: min_crop_size {} and max_crop_size {} must both be set with 1 <= min <= max",
               o.min_crop_size, o.max_crop_size);
  for (float sd : {o.std_r, o.std_g, o.std_b})
    WEFT_CHECK(sd != 0 && std::isfinite(sd), "ImageRecordIter: std_r/g/b must be finite and non-zero, got {}", sd);
}

bool ImageTransform::affine() const noexcept {
  return o_.max_rotate_angle > 0 || o_.max_shear_ratio > 0 || o_.rotate > 0 || o_.max_random_scale != 1.0f ||
         o_.min_random_scale != 1.0f || o_.max_aspect_ratio != 0 || o_.max_img_size != 1e10f || o_.min_img_size != 0;
}

int ImageTransform::Interp(int method, int ow, int oh, int nw, int nh, DrawRng& rng) const {
  if (method == 9) return nw > ow && nh > oh ? 2 : (nw < ow && nh < oh ? 3 : 1);
  if (method == 10) return UniformInt(rng, 0, 4);
  return method;
}

// The full path: resize, affine, pad and crop on whole images; leaves the crop in s.window.
void ImageTransform::Augment(DrawRng& rng, Scratch& s, int* x, int* y) const {
  Image* cur = &s.a;
  Image* spare = &s.b;
  if (o_.resize != -1) {
    const int rows = cur->height, cols = cur->width;
    const int nh = rows > cols ? o_.resize * rows / cols : o_.resize;
    const int nw = rows > cols ? o_.resize : o_.resize * cols / rows;
    const int m = Interp(o_.inter_method, cols, rows, nw, nh, rng);
    *spare = Sized(std::max(nw, 1), std::max(nh, 1), c_);
    ResizeInto(ViewOf(*cur), spare, static_cast<Interpolation>(m));
    std::swap(cur, spare);
  }
  if (affine()) {
    const float shear = Uniform01(rng) * o_.max_shear_ratio * 2 - o_.max_shear_ratio;
    int angle = UniformInt(rng, -o_.max_rotate_angle, o_.max_rotate_angle);
    if (o_.rotate > 0) angle = o_.rotate;
    const float a = static_cast<float>(std::cos(angle / 180.0 * std::numbers::pi));
    const float b = static_cast<float>(std::sin(angle / 180.0 * std::numbers::pi));
    const float scale = Uniform01(rng) * (o_.max_random_scale - o_.min_random_scale) + o_.min_random_scale;
    const float ratio = Uniform01(rng) * o_.max_aspect_ratio * 2 - o_.max_aspect_ratio + 1;
    const float hs = 2 * scale / (1 + ratio), ws = ratio * hs;
    const float nw = std::max(o_.min_img_size, std::min(o_.max_img_size, scale * static_cast<float>(cur->width)));
    const float nh = std::max(o_.min_img_size, std::min(o_.max_img_size, scale * static_cast<float>(cur->height)));
    float m[6] = {hs * a - shear * b * ws, hs * b + shear * a * ws, 0, -b * ws, a * ws, 0};
    const float cw = m[0] * static_cast<float>(cur->width) + m[1] * static_cast<float>(cur->height);
    const float ch = m[3] * static_cast<float>(cur->width) + m[4] * static_cast<float>(cur->height);
    m[2] = (nw - cw) / 2;
    m[5] = (nh - ch) / 2;
    const int iw = static_cast<int>(nw), ih = static_cast<int>(nh);
    WEFT_CHECK(iw >= 1 && ih >= 1, "the affine augmentation makes the image {} x {} pixels", iw, ih);
    const int method = Interp(o_.inter_method, cur->width, cur->height, iw, ih, rng);
    *spare = Sized(iw, ih, c_);
    WarpAffineInto(ViewOf(*cur), m, static_cast<Interpolation>(method), static_cast<uint8_t>(o_.fill_value), spare);
    std::swap(cur, spare);
  }
  if (o_.pad > 0) {
    *spare = Sized(cur->width + 2 * o_.pad, cur->height + 2 * o_.pad, c_);
    std::fill(spare->data.begin(), spare->data.end(), static_cast<uint8_t>(o_.fill_value));
    for (int r = 0; r < cur->height; ++r)
      std::memcpy(spare->row(r + o_.pad) + o_.pad * c_, cur->row(r), static_cast<size_t>(cur->width * c_));
    std::swap(cur, spare);
  }
  s.window.resize(static_cast<size_t>(w_ * h_ * c_));
  if (o_.max_crop_size != -1 || o_.min_crop_size != -1) {
    WEFT_CHECK(cur->width >= o_.max_crop_size && cur->height >= o_.max_crop_size,
               "the image is {} x {} pixels, smaller than max_crop_size {}", cur->width, cur->height, o_.max_crop_size);
    const int size = UniformInt(rng, o_.min_crop_size, o_.max_crop_size);
    *y = cur->height - size;
    *x = cur->width - size;
    if (o_.rand_crop) {
      *y = UniformInt(rng, 0, *y);
      *x = UniformInt(rng, 0, *x);
    } else {
      *y /= 2;
      *x /= 2;
    }
    const int method = Interp(o_.inter_method, size, size, w_, h_, rng);
    PixelView roi = ViewOf(*cur);
    roi.data += static_cast<size_t>(*y) * roi.stride + static_cast<size_t>(*x * c_);
    roi.width = roi.height = size;
    *spare = Sized(w_, h_, c_);
    ResizeInto(roi, spare, static_cast<Interpolation>(method));
    std::memcpy(s.window.data(), spare->data.data(), s.window.size());
    return;
  }
  WEFT_CHECK(cur->height >= h_ && cur->width >= w_,
             "the image is {} x {} pixels (after resize/augmentation), smaller than data_shape's {} x {}", cur->width,
             cur->height, w_, h_);
  *y = cur->height - h_;
  *x = cur->width - w_;
  if (o_.rand_crop) {
    *y = UniformInt(rng, 0, *y);
    *x = UniformInt(rng, 0, *x);
  } else {
    *y /= 2;
    *x /= 2;
  }
  Copy(ViewOf(*cur), *x, *y, w_, h_, s.window.data());
}

void ImageTransform::Process(std::span<const uint8_t> encoded, DrawRng& rng, Scratch& s, void* out) const {
  const ImageInfo info = s.decoder.Open(encoded, c_);
  const bool direct = o_.resize == -1 && !affine() && o_.pad == 0 && o_.max_crop_size == -1 && o_.min_crop_size == -1;
  int x = 0, y = 0;
  PixelView window;
  if (direct) {
    WEFT_CHECK(info.height >= h_ && info.width >= w_, "the image is {} x {} pixels, smaller than data_shape's {} x {}",
               info.width, info.height, w_, h_);
    y = info.height - h_;
    x = info.width - w_;
    if (o_.rand_crop) {
      y = UniformInt(rng, 0, y);
      x = UniformInt(rng, 0, x);
    } else {
      y /= 2;
      x /= 2;
    }
    window = s.decoder.ReadView(x, y, w_, h_);
  } else {
    s.a = Sized(info.width, info.height, c_);
    s.decoder.Read(0, 0, info.width, info.height, s.a.data.data(), static_cast<size_t>(info.width * c_));
    Augment(rng, s, &x, &y);
    window = {s.window.data(), w_, h_, c_, static_cast<size_t>(w_ * c_)};
  }
  const bool mirror = (o_.rand_mirror && Coin(rng)) || o_.mirror;
  float contrast = 1, illumination = 0;
  if (o_.dtype != DType::kUint8) {
    contrast = (Uniform01(rng) * o_.max_random_contrast * 2 - o_.max_random_contrast + 1) * o_.scale;
    illumination = (Uniform01(rng) * o_.max_random_illumination * 2 - o_.max_random_illumination) * o_.scale;
  }
  Write(window, mirror, contrast, illumination, out);
}

// MXNet's ProcessImage: (pixel - mean) * (contrast / std) + illumination / std per channel.
void ImageTransform::Write(const PixelView& window, bool mirror, float contrast, float illumination, void* out) const {
  if (o_.dtype == DType::kUint8)
    return ToPlanes(window.data, window.stride, w_, h_, c_, mirror, static_cast<uint8_t*>(out));
  const float mean[3] = {o_.mean_r, o_.mean_g, o_.mean_b}, stds[3] = {o_.std_r, o_.std_g, o_.std_b};
  float mult[3], bias[3];
  for (int k = 0; k < 3; ++k) {
    mult[k] = contrast / stds[k];
    bias[k] = illumination / stds[k];
  }
  ToPlanes(window.data, window.stride, w_, h_, c_, mirror, mean, mult, bias, static_cast<float*>(out));
}

}  // namespace weft::io_detail
