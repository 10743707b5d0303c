// weft core — initializers (see weft/initializer.h; MXNet 1.9 initializer.py).
#include "weft/initializer.h"

#include <cmath>

namespace weft {

bool Initializer::StringStartWith(const std::string& name, const std::string& check_str) {
  return name.size() >= check_str.size() && name.compare(0, check_str.size(), check_str) == 0;
}

bool Initializer::StringEndWith(const std::string& name, const std::string& check_str) {
  return name.size() >= check_str.size() &&
         name.compare(name.size() - check_str.size(), check_str.size(), check_str) == 0;
}

void Initializer::Fill(NDArray* arr, float value) {
  *arr = value;
  arr->WaitToRead();
}

void Initializer::Write(NDArray* arr, const std::vector<float>& values) { arr->SyncCopyFromCPU(values); }

void Initializer::operator()(const std::string& name, NDArray* arr) {
  WEFT_CHECK(arr != nullptr && !arr->is_none(), "initializer: parameter '{}' has no array", name);
  WEFT_CHECK(arr->GetDType() == DType::kFloat32, "initializer: parameter '{}' is {}; initializers fill float32", name,
             DTypeName(arr->GetDType()));
  // Order matters: "moving_inv_var" must not be taken for "moving_var"'s "var" and so on.
  if (StringEndWith(name, "weight")) return InitWeight(name, arr);
  if (StringEndWith(name, "bias") || StringEndWith(name, "beta") || StringEndWith(name, "moving_mean") ||
      StringEndWith(name, "moving_inv_var") || StringEndWith(name, "moving_avg") || StringEndWith(name, "min") ||
      StringEndWith(name, "max"))
    return Fill(arr, 0.0f);
  if (StringEndWith(name, "gamma") || StringEndWith(name, "moving_var")) return Fill(arr, 1.0f);
  Fail(
      "initializer: unknown initialization pattern for '{}': names ending in weight, bias, gamma, beta, "
      "moving_mean, moving_var, moving_inv_var, moving_avg, min or max are initialised; skip data and label "
      "arguments",
      name);
}

void Constant::InitWeight(const std::string&, NDArray* arr) { Fill(arr, value_); }

Uniform::Uniform(float begin, float end) : begin_(begin), end_(end) {
  WEFT_CHECK(begin <= end, "Uniform initializer: begin {} is above end {}", begin, end);
}

void Uniform::InitWeight(const std::string&, NDArray* arr) {
  std::uniform_real_distribution<float> dist(begin_, end_);
  std::vector<float> v(arr->Size());
  for (float& x : v) x = dist(rng_);
  Write(arr, v);
}

Normal::Normal(float mu, float sigma) : mu_(mu), sigma_(sigma) {
  WEFT_CHECK(sigma >= 0, "Normal initializer: sigma must be >= 0, got {}", sigma);
}

void Normal::InitWeight(const std::string&, NDArray* arr) {
  std::normal_distribution<float> dist(mu_, sigma_);
  std::vector<float> v(arr->Size());
  for (float& x : v) x = dist(rng_);
  Write(arr, v);
}

void Xavier::InitWeight(const std::string& name, NDArray* arr) {
  const Shape shape = arr->GetShape();
  WEFT_CHECK(shape.ndim() >= 2,
             "Xavier initializer: parameter '{}' has shape {}; Xavier needs at least 2 dimensions (use another "
             "initializer for it)",
             name, shape);
  double hw_scale = 1.0;
  for (size_t i = 2; i < shape.ndim(); ++i) hw_scale *= static_cast<double>(shape[i]);
  const double fan_in = static_cast<double>(shape[1]) * hw_scale, fan_out = static_cast<double>(shape[0]) * hw_scale;
  const double factor = factor_type_ == avg ? (fan_in + fan_out) / 2.0 : factor_type_ == in ? fan_in : fan_out;
  const float scale = static_cast<float>(std::sqrt(magnitude_ / factor));
  std::vector<float> v(arr->Size());
  if (rand_type_ == uniform) {
    std::uniform_real_distribution<float> dist(-scale, scale);
    for (float& x : v) x = dist(rng_);
  } else {
    std::normal_distribution<float> dist(0.0f, scale);
    for (float& x : v) x = dist(rng_);
  }
  Write(arr, v);
}

}  // namespace weft
