// BatchNorm's forward statistics (norm_batch_norm.cc), shared with the fused convolution
// (nn_conv_fused.cc) so both normalise alike; internal to weft_cpu_kernels.
#pragma once

#include <vector>

#include "weft/sdk/ops/batch_norm.hpp"

namespace weft::cpu {

using BnParams = weft::sdk::BatchNormGeometry;

/// BatchNorm's forward as y = x·scale + shift per channel, with the statistics it used.
template <typename T>
struct BnScaleShift {
  std::vector<T> scale, shift, inv_std;  // inv_std = 1/√(var + eps)
  std::vector<double> mean, var;
};

/// The per-channel scale and shift of BatchNorm `p` on data x (outer, c, inner): with `batch`
/// (training without use_global_stats) from x's mean and biased variance, the moving statistics
/// mm/mv then becoming momentum·moving + (1 − momentum)·batch; otherwise from mm/mv (x unread).
/// fix_gamma treats gamma as 1. Sums in double; float and double.
template <typename T>
BnScaleShift<T> BatchNormScaleShift(const BnParams& p, const T* x, const T* gamma, const T* beta, T* mm, T* mv,
                                    bool batch);

}  // namespace weft::cpu
