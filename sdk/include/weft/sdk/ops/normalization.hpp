// weft SDK ops — normalisation over groups of elements: LayerNorm, InstanceNorm, L2Normalization
// (MXNet 1.9's LayerNormParam, InstanceNormParam, L2NormalizationParam).
#pragma once

#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// LayerNorm: (data − mean) / sqrt(var + eps) · gamma + beta over `axis`.
struct LayerNormParam {
  int64_t axis = -1;
  double eps = 1e-5;
  bool output_mean_var = false;

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Default("-1").Doc("axis to normalise over"));
    v(eps, Attr("eps").Default("1e-05").MxType("float").Doc("added to var"));
    v(output_mean_var, Attr("output_mean_var").Default("False").Doc("also return mean and std"));
  }
};

/// InstanceNorm: normalisation over the spatial axes of each (n, c).
struct InstanceNormParam {
  double eps = 1e-3;

  template <class V>
  void Visit(V& v) {
    v(eps, Attr("eps").Default("0.001").MxType("float").Doc("added to var"));
  }
};

enum class L2NormMode { kChannel, kInstance, kSpatial };
inline constexpr std::string_view kL2NormModes[] = {"channel", "instance", "spatial"};

/// L2Normalization: data / sqrt(Σ data² + eps) over the axes `mode` names.
struct L2NormalizationParam {
  double eps = 1e-10;
  L2NormMode mode = L2NormMode::kInstance;

  template <class V>
  void Visit(V& v) {
    v(eps, Attr("eps").Default("1e-10").MxType("float").Doc("added to the sum of squares"));
    v(mode, Attr("mode").Default("instance").Choices(kL2NormModes).Doc("which axes are summed"));
  }
};

}  // namespace weft::sdk
