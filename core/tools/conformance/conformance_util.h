// Conformance suite helpers (core/tools/conformance, behind weft-conformance and tests/conformance): host tensors,
// running one node on a device through KernelRunner with sentinel-padded NDArrays, inference of a node's signature,
// NMSE.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "operator/gradient.h"
#include "operator/kernel_runner.h"
#include "operator/op_def.h"
#include "weft/base.h"
#include "weft/context.h"

namespace wconf {

using weft::AttrMap;
using weft::Context;
using weft::DType;
using weft::Shape;

/// A tensor in host memory; values held as double whatever the dtype (converted on upload).
struct HostTensor {
  Shape shape;
  DType dtype = DType::kFloat32;
  std::vector<double> v;
};

/// How to draw an input's values.
struct Domain {
  double lo = -1, hi = 1;
  bool integer = false;   // whole numbers in [lo, hi)
  double away_from = 0;   // keep |x| >= this (kinks at 0: relu, abs)
  bool distinct = false;  // a shuffled even grid over [lo, hi): no near-ties (max, max pooling)
  DType dtype = DType::kFloat32;
};

HostTensor Random(std::mt19937_64& rng, const Shape& shape, const Domain& d);

/// `x` as an element of `dtype` holds it (rounded to nearest for floats), back as double.
double RoundTo(DType dtype, double x);

/// `x` as the result of integer arithmetic in `dtype` (C++'s and MXNet's): truncated toward zero,
/// then wrapped modulo 2^bits into the dtype's range (uint8: -1 is 255); not finite (an integer
/// division by zero, which the cpu kernels define as 0) gives 0. Float dtypes: RoundTo.
double WrapTo(DType dtype, double x);

/// One run of a node.
struct RunSpec {
  std::string op;
  AttrMap attrs;  // normalised
  weft::NodeSignature sig;
  std::vector<HostTensor> in, aux;
  std::vector<int32_t> req;               // per output; empty = all write
  std::vector<HostTensor> out_init;       // initial output contents (add / null); empty = sentinel garbage
  int inplace_in = -1, inplace_out = -1;  // run with output `inplace_out` aliasing input `inplace_in`
  bool is_train = true;
  uint64_t seed = 1;  // for ops with random resources
};

struct RunResult {
  std::vector<HostTensor> out, aux;
  std::string error;  // non-empty when the kernel (or a pad check) failed
};

/// Runs `spec` on `ctx`: every array is a view at an odd element offset inside a larger NDArray
/// whose padding holds a byte sentinel; a pad byte that changed is reported in `error`.
RunResult RunNode(const Context& ctx, const RunSpec& spec);

/// Forward signature by inference (the OpDef's), from input and aux shapes/dtypes. Outputs that
/// inference leaves unknown take their shape and dtype from `given` when it has them (an op that
/// writes the caller's array, _set_value). Throws weft::Error when outputs stay unknown.
weft::NodeSignature InferSignature(const weft::OpDef& def, const AttrMap& attrs, const std::vector<HostTensor>& in,
                                   const std::vector<HostTensor>& aux, const weft::NodeSignature* given = nullptr);

/// Σ(a−b)² / Σa² (Σ(a−b)² when Σa² = 0); +inf when sizes differ or b has NaN/Inf where a has none.
double Nmse(const std::vector<double>& ref, const std::vector<double>& got);

/// "(2, 3) float32, (3,) float32".
std::string Describe(const std::vector<HostTensor>& ts);

}  // namespace wconf
