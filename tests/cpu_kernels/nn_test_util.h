// Checks shared by the nn kernel tests: req modes and finite-difference gradients.
#pragma once

#include <string>
#include <vector>

#include "kernel_harness.h"

namespace wtest {

/// Runs `op` with req write, then for each output with add (on random previous contents: must
/// give previous + written), null (must leave them alone) and, when inplace_input >= 0, output 0
/// written in place over that input. Aux states are reset before every run.
void CheckReqModes(const std::string& op, const Attrs& attrs, const std::vector<Buf>& inputs,
                   const std::vector<std::vector<int64_t>>& out_shapes, const std::vector<Buf>& aux = {},
                   bool is_train = true, uint64_t seed = 1, int inplace_input = -1);

/// A forward op and its backward op, checked by central differences.
struct GradCase {
  GradCase(std::string f, std::string b, Attrs a, std::vector<Buf> in, std::vector<std::vector<int64_t>> outs,
           std::vector<Buf> ax = {})
      : fwd(std::move(f)),
        bwd(std::move(b)),
        attrs(std::move(a)),
        inputs(std::move(in)),
        aux(std::move(ax)),
        out_shapes(std::move(outs)) {}
  std::string fwd, bwd;
  Attrs attrs;
  std::vector<Buf> inputs, aux;
  std::vector<std::vector<int64_t>> out_shapes;  // forward outputs (hidden ones included)
  bool uses_inputs = true, uses_outputs = false, uses_aux = false;
  std::vector<int> check;  // input indices whose gradient is compared (all when empty)
  float h = 1e-2f;
  double tol = 1e-4;  // NMSE bound between the numeric and the kernel gradient
  uint64_t seed = 1;
};

/// Runs the forward, feeds the backward op a random out-grad for output 0 (zeros for the other
/// outputs), compares its input gradients with NumericGrad. Also checks the backward's req
/// modes. Returns the kernel's gradients.
std::vector<Buf> CheckGradient(const GradCase& c);

/// Moves every value v with |v − t| < gap for some t in `kinks` to a safe distance (keeps
/// finite differences off non-smooth points).
void AvoidKinks(std::vector<float>& v, const std::vector<float>& kinks, float gap);

/// (N, C, H·W) NCHW values `x` rewritten as oneDNN's nChw<block>c (C a multiple of block).
std::vector<float> ToBlocked(const std::vector<float>& x, int64_t n, int64_t c, int64_t hw, int64_t block);

/// MXNet's tuple string "(3, 3)" / "(3,)".
inline std::string weft_tuple(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

}  // namespace wtest
