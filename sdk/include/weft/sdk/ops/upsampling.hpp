// weft SDK ops — UpSampling (MXNet 1.9's UpSamplingParam): nearest (num_args inputs) and bilinear
// (a grouped Deconvolution with a (C, 1, k, k) weight input).
#pragma once

#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

enum class UpSampleType { kBilinear, kNearest };
inline constexpr std::string_view kUpSampleTypes[] = {"bilinear", "nearest"};
enum class MultiInputMode { kConcat, kSum };
inline constexpr std::string_view kMultiInputModes[] = {"concat", "sum"};

struct UpSamplingParam {
  int64_t scale = 1, num_filter = 0;
  UpSampleType sample_type = UpSampleType::kNearest;
  MultiInputMode multi_input_mode = MultiInputMode::kConcat;
  int64_t num_args = 1, workspace = 512;

  template <class V>
  void Visit(V& v) {
    v(scale, Attr("scale").Min(1).Doc("upsampling factor of the first input"));
    v(num_filter, Attr("num_filter").Default("0").Min(0).Doc("channels (bilinear only; must equal data's)"));
    v(sample_type, Attr("sample_type").Choices(kUpSampleTypes).Doc("nearest or bilinear"));
    v(multi_input_mode, Attr("multi_input_mode")
                            .Default("concat")
                            .Choices(kMultiInputModes)
                            .Doc("how several inputs are combined (nearest)"));
    v(num_args, Attr("num_args").Default("1").Min(1).Doc("number of inputs (nearest; bilinear takes data and weight)"));
    v(workspace, Attr("workspace").Default("512").Min(0).MxType("long (non-negative)").Ignored());
  }
  void Validate() const {
    CheckParam(sample_type != UpSampleType::kBilinear || num_args == 1,
               "sample_type=bilinear takes one data input (num_args 1), got num_args " + std::to_string(num_args));
  }
  /// The bilinear kernel's extent, 2·scale − scale % 2 (MXNet's GetDeconvolutionParam).
  int64_t BilinearKernel() const { return 2 * scale - scale % 2; }
};

}  // namespace weft::sdk
