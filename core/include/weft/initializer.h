// weft — parameter initializers, following mxnet-cpp's Initializer (include/mxnet-cpp/initializer.h)
// with MXNet 1.9's name-based dispatch (python/mxnet/initializer.py):
//
//   Xavier xavier;                       // rnd_type uniform, factor_type avg, magnitude 3
//   for (auto& [name, array] : exec->arg_dict()) xavier(name, &array);
//
// operator()(name, arr) picks by the parameter's name suffix: "weight" -> the initializer's rule,
// "bias" -> 0, "gamma" -> 1, "beta" -> 0, "moving_mean" -> 0, "moving_var" -> 1,
// "moving_inv_var" -> 0, "moving_avg" -> 0, "min"/"max" -> 0. Any other name raises
// weft::Error naming the parameter (MXNet: "Unknown initialization pattern"), so data and label
// arguments must be skipped by the caller.
//
// Random numbers come from the initializer's own generator (std::mt19937, seed 0 unless
// Seed() is called), drawn on the host in C order and copied to the array's device, so the
// same seed gives the same values on every device. Arrays must be float32.
//
// Thread-safety: an initializer belongs to one thread.
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <random>
#include <string>

#include "weft/ndarray.h"

namespace weft {

class WEFT_API Initializer {
 public:
  virtual ~Initializer() = default;
  static bool StringStartWith(const std::string& name, const std::string& check_str);
  static bool StringEndWith(const std::string& name, const std::string& check_str);
  /// Initialises *arr by its name (see the file comment). Waits until the values are written.
  /// Throws weft::Error for an unknown name pattern, a none or non-float32 array.
  virtual void operator()(const std::string& name, NDArray* arr);
  /// Restarts the random generator.
  void Seed(uint32_t seed) { rng_.seed(seed); }

 protected:
  virtual void InitWeight(const std::string& name, NDArray* arr) = 0;
  static void Fill(NDArray* arr, float value);
  /// Copies `values` (arr->Size() floats) into *arr.
  static void Write(NDArray* arr, const std::vector<float>& values);
  std::mt19937 rng_{0};
};

/// Every parameter the dispatch calls a weight gets `value`.
class WEFT_API Constant : public Initializer {
 public:
  explicit Constant(float value) : value_(value) {}

 protected:
  void InitWeight(const std::string& name, NDArray* arr) override;
  float value_;
};
class WEFT_API Zero : public Constant {
 public:
  Zero() : Constant(0.0f) {}
};
class WEFT_API One : public Constant {
 public:
  One() : Constant(1.0f) {}
};

/// Weights uniform in [begin, end); Uniform(scale) is [-scale, scale) (MXNet default scale 0.07).
class WEFT_API Uniform : public Initializer {
 public:
  explicit Uniform(float scale = 0.07f) : Uniform(-scale, scale) {}
  Uniform(float begin, float end);

 protected:
  void InitWeight(const std::string& name, NDArray* arr) override;
  float begin_, end_;
};

/// Weights normal with mean mu and standard deviation sigma (MXNet default sigma 0.01).
class WEFT_API Normal : public Initializer {
 public:
  explicit Normal(float mu = 0.0f, float sigma = 0.01f);

 protected:
  void InitWeight(const std::string& name, NDArray* arr) override;
  float mu_, sigma_;
};

/// Glorot/Xavier: for a weight of shape (out, in, k...) with fan_in = in·prod(k), fan_out =
/// out·prod(k), factor = (fan_in + fan_out)/2 (avg), fan_in (in) or fan_out (out), and
/// scale = sqrt(magnitude / factor): uniform in [-scale, scale] or normal with sigma = scale.
/// Throws weft::Error for weights of fewer than 2 dimensions (MXNet's rule).
class WEFT_API Xavier : public Initializer {
 public:
  enum RandType { gaussian, uniform };
  enum FactorType { avg, in, out };
  explicit Xavier(RandType rand_type = uniform, FactorType factor_type = avg, float magnitude = 3.0f)
      : rand_type_(rand_type), factor_type_(factor_type), magnitude_(magnitude) {}

 protected:
  void InitWeight(const std::string& name, NDArray* arr) override;
  RandType rand_type_;
  FactorType factor_type_;
  float magnitude_;
};

}  // namespace weft
