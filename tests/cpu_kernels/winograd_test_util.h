// Helpers shared by the Winograd kernel tests (nn_conv_sg_winograd_test.cc,
// nn_conv_winograd_1d_test.cc, nn_conv_winograd_train_test.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "kernel_harness.h"

namespace wtest {

/// The activation format attribute of a channel block: 1 plain, 8 nChw8c, 16 nChw16c.
inline const char* ActFormatName(int64_t block) { return block == 16 ? "nChw16c" : block == 8 ? "nChw8c" : "plain"; }

/// `_sg_conv`'s attributes for a layer of kernel kh x kw, `f` filters, padding (ph, pw), the
/// activation, the sum with its second activation, and the blocks of the data and the output.
inline Attrs SgConvAttrs(int64_t kh, int64_t kw, int64_t f, int64_t ph, int64_t pw, const std::string& act, bool sum,
                         const std::string& post, int64_t in_block, int64_t out_block) {
  auto pair = [](int64_t a, int64_t b) { return "(" + std::to_string(a) + ", " + std::to_string(b) + ")"; };
  return Attrs{{"kernel", pair(kh, kw)},
               {"num_filter", std::to_string(f)},
               {"pad", pair(ph, pw)},
               {"act_type", act},
               {"with_sum", sum ? "True" : "False"},
               {"postsum_act_type", post},
               {"data_format", ActFormatName(in_block)},
               {"out_format", ActFormatName(out_block)}};
}

/// The reference's activation in double: relu, clip to [-0.5, 0.75] (the tests' clip bounds), or
/// none for any other word.
inline double ActRef(const std::string& a, double v) {
  if (a == "relu") return std::max(v, 0.0);
  if (a == "clip") return std::min(std::max(v, -0.5), 0.75);
  return v;
}

/// Runs f inside an OpenMP team of two, on one of its threads: every loop of the kernel then runs
/// on that thread alone (ParallelTeam is 1 inside a team), the split of a one-thread process.
template <typename F>
void OnOneThread(const F& f) {
#pragma omp parallel num_threads(2)
#pragma omp single
  f();
}

}  // namespace wtest
