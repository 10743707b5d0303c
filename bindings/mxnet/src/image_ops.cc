// MXNet's OpenCV image op _cvimresize (mx.image.imresize; MXNet 1.9 src/io/image_io.cc) on
// weft::ResizeImage (weft/image.h: OpenCV's conventions, its 8-bit bilinear bit for bit).
#include <cstdint>
#include <string>
#include <vector>

#include "binding_ops.h"
#include "common.h"
#include "weft/image.h"

namespace weft::mx {
namespace {

int IntParam(const std::map<std::string, std::string>& params, const char* op, const char* name,
             std::optional<int> fallback) {
  auto it = params.find(name);
  if (it == params.end()) {
    if (!fallback) Fail("{}: the attribute {} is required", op, name);
    return *fallback;
  }
  try {
    size_t used = 0;
    const int v = std::stoi(it->second, &used);
    if (used == it->second.size()) return v;
  } catch (const std::exception&) {
  }
  Fail("{}: attribute {}='{}' is not an integer", op, name, it->second);
}

// _cvimresize(src, w, h, interp=1): src (height, width, channels) -> (h, w, channels) on src's
// device. interp is OpenCV's code, passed to cv::resize by MXNet: 0 nearest, 1 bilinear, 2 bicubic,
// 3 area, 4 Lanczos; anything else fails as cv::resize does ("Unknown interpolation method"; 5,
// OpenCV's INTER_LINEAR_EXACT, is refused as not implemented). The image is uint8 with 1 or 3
// channels (what mx.image.imdecode gives); other dtypes are refused with the fix.
void CvImResize(const std::vector<NDArray>& in, const std::map<std::string, std::string>& params,
                std::vector<NDArray>* out) {
  const char* op = "_cvimresize";
  if (in.size() != 1) Fail("{} takes one input (src), {} given", op, in.size());
  const NDArray& src = in[0];
  const int w = IntParam(params, op, "w", std::nullopt), h = IntParam(params, op, "h", std::nullopt);
  const int interp = IntParam(params, op, "interp", 1);
  if (interp == 5) Fail("{}: interp=5 (OpenCV's INTER_LINEAR_EXACT) is not implemented by weft; use interp=1", op);
  if (interp < 0 || interp > 4) {
    Fail(
        "{}: Unknown interpolation method {} in function 'resize' (OpenCV's codes: 0 nearest, 1 bilinear, 2 "
        "bicubic, 3 area, 4 Lanczos)",
        op, interp);
  }
  const Shape& s = src.GetShape();
  if (s.ndim() != 3) Fail("{}: src must be an image (height, width, channels); its shape is {}", op, s);
  if (w < 1 || h < 1) Fail("{}: the new size w={}, h={} must be at least 1 x 1", op, w, h);
  if (src.GetDType() != DType::kUint8) {
    Fail(
        "{}: weft resizes uint8 images (what mx.image.imdecode gives); src is {}: convert it with "
        ".astype('uint8') first",
        op, DTypeName(src.GetDType()));
  }
  if (s[2] != 1 && s[2] != 3) Fail("{}: weft resizes images of 1 or 3 channels; src has {}", op, s[2]);
  Image image;
  image.height = static_cast<int>(s[0]);
  image.width = static_cast<int>(s[1]);
  image.channels = static_cast<int>(s[2]);
  image.data.resize(static_cast<size_t>(s.Size()));
  src.SyncCopyToCPUBytes(image.data.data(), image.data.size());
  const Image resized = ResizeImage(image, w, h, static_cast<Interpolation>(interp));
  NDArray result(Shape{h, w, s[2]}, src.GetContext(), false, DType::kUint8);
  result.SyncCopyFromCPUBytes(resized.data.data(), resized.data.size());
  if (out->empty()) {
    out->push_back(std::move(result));
    return;
  }
  if (out->size() != 1) Fail("{} has one output, {} given", op, out->size());
  NDArray::CopyFromTo(result, (*out)[0]);
}

}  // namespace

std::optional<BindingOp> FindImageOp(const std::string& name) {
  if (name != "_cvimresize") return std::nullopt;
  return BindingOp{
      BindingOpInfo(name, "Resize image with OpenCV.", {"src"},
                    {BindingAttr("w", "int", std::nullopt, "Width of resized image."),
                     BindingAttr("h", "int", std::nullopt, "Height of resized image."),
                     BindingAttr("interp", "int", "1", "Interpolation method (default=cv2.INTER_LINEAR).")}),
      CvImResize};
}

}  // namespace weft::mx
