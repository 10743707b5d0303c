// Helpers of the tensor / element-wise / reduction kernel tests (tensor_*_test.cc), on top of
// kernel_harness.h: buffers of any dtype filled from doubles, random shapes, a req-mode checker
// and a finite-difference gradient checker.
//
// Gradients are checked in float64 (the kernels implement it), where central differences with a
// small step are accurate to ~1e-10, so the comparison can be as tight as the forward one; the
// float32 backward is then compared with the float64 one.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernel_harness.h"

namespace ttest {

using wtest::Attrs;
using wtest::Buf;
using Shape = std::vector<int64_t>;

inline int64_t Prod(const Shape& s) { return wtest::Prod(s); }

inline std::string Str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

/// Element of a buffer as double (any dtype the kernels use; float16 through _Float16).
inline double Get(const Buf& b, int64_t i) {
  switch (b.dtype) {
    case WEFT_DTYPE_FLOAT32:
      return b.as<float>()[i];
    case WEFT_DTYPE_FLOAT64:
      return b.as<double>()[i];
    case WEFT_DTYPE_FLOAT16:
      return static_cast<double>(b.as<_Float16>()[i]);
    case WEFT_DTYPE_UINT8:
      return b.as<uint8_t>()[i];
    case WEFT_DTYPE_INT8:
      return b.as<int8_t>()[i];
    case WEFT_DTYPE_INT32:
      return b.as<int32_t>()[i];
    case WEFT_DTYPE_INT64:
      return static_cast<double>(b.as<int64_t>()[i]);
    default:
      ADD_FAILURE() << "dtype " << b.dtype;
      return 0;
  }
}

/// Stores v (already representable, or rounded by C++ conversion) into element i.
inline void Set(Buf& b, int64_t i, double v) {
  switch (b.dtype) {
    case WEFT_DTYPE_FLOAT32:
      b.as<float>()[i] = static_cast<float>(v);
      break;
    case WEFT_DTYPE_FLOAT64:
      b.as<double>()[i] = v;
      break;
    case WEFT_DTYPE_FLOAT16:
      b.as<_Float16>()[i] = static_cast<_Float16>(static_cast<float>(v));
      break;
    case WEFT_DTYPE_UINT8:
      b.as<uint8_t>()[i] = static_cast<uint8_t>(v);
      break;
    case WEFT_DTYPE_INT8:
      b.as<int8_t>()[i] = static_cast<int8_t>(v);
      break;
    case WEFT_DTYPE_INT32:
      b.as<int32_t>()[i] = static_cast<int32_t>(v);
      break;
    case WEFT_DTYPE_INT64:
      b.as<int64_t>()[i] = static_cast<int64_t>(v);
      break;
    default:
      ADD_FAILURE() << "dtype " << b.dtype;
  }
}

inline Buf Make(int32_t dtype, const Shape& shape, const std::vector<double>& values = {}) {
  Buf b = Buf::Of(dtype, shape);
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < b.size(); ++i)
    Set(b, static_cast<int64_t>(i), values[i]);
  return b;
}

inline std::vector<double> Values(const Buf& b) {
  std::vector<double> v(static_cast<size_t>(b.size()));
  for (int64_t i = 0; i < b.size(); ++i) v[static_cast<size_t>(i)] = Get(b, i);
  return v;
}

/// Σ(a−b)²/Σa² with a the reference; 0 when both are zero; infinity on size mismatch or when
/// `got` has a NaN/Inf where `ref` has none.
inline double Nmse(const std::vector<double>& ref, const std::vector<double>& got) {
  if (ref.size() != got.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (std::isfinite(ref[i]) != std::isfinite(got[i])) return INFINITY;
    if (!std::isfinite(ref[i])) continue;
    const double d = ref[i] - got[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  if (den == 0) return num == 0 ? 0 : INFINITY;
  return num / den;
}

inline std::vector<double> Uniform(std::mt19937& rng, int64_t n, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}

/// Values rounded to float32 (so float32 and float64 runs see the same numbers).
inline std::vector<double> UniformF(std::mt19937& rng, int64_t n, double lo = -1, double hi = 1) {
  std::vector<double> v = Uniform(rng, n, lo, hi);
  for (double& x : v) x = static_cast<float>(x);
  return v;
}

/// A random shape of ndim in [lo, hi] with extents from {1, 2, 3, 4, 5, 7} (size-1 and odd
/// extents on purpose), at most max_size elements.
inline Shape RandomShape(std::mt19937& rng, int lo, int hi, int64_t max_size = 256) {
  static const int64_t kExtents[] = {1, 2, 3, 4, 5, 7};
  std::uniform_int_distribution<int> nd(lo, hi), ex(0, 5);
  while (true) {
    Shape s(static_cast<size_t>(nd(rng)));
    for (int64_t& e : s) e = kExtents[ex(rng)];
    if (Prod(s) <= max_size) return s;
  }
}

/// Index into a tensor of shape `in` (right-aligned, broadcast) of output element `flat` of `out`.
inline int64_t BroadcastIndex(const Shape& out, const Shape& in, int64_t flat) {
  int64_t idx = 0, stride = 1;
  for (int a = static_cast<int>(out.size()) - 1; a >= 0; --a) {
    const int64_t coord = flat % out[static_cast<size_t>(a)];
    flat /= out[static_cast<size_t>(a)];
    const int ia = a - static_cast<int>(out.size() - in.size());
    if (ia < 0) continue;
    const int64_t e = in[static_cast<size_t>(ia)];
    if (e != 1) idx += coord * stride;
    stride *= e;
  }
  return idx;
}

/// Runs `op` (kernel looked up for `dtype`) once. Outputs start as `outputs` (their contents
/// matter for add / null); `req` empty = write for all; `alias` (output, input) pairs share
/// memory. Returns the kernel's error ("" on success); results land in `outputs`.
inline std::string RunKernel(const std::string& op, const Attrs& attrs, std::vector<Buf> inputs,
                             std::vector<Buf>& outputs, std::vector<int32_t> req = {},
                             std::vector<std::pair<int, int>> alias = {}, int32_t dtype = -1) {
  if (dtype < 0) dtype = inputs.empty() ? WEFT_DTYPE_FLOAT32 : inputs[0].dtype;
  wtest::Kernel k(op, attrs, inputs, outputs, {}, dtype);
  if (!k.ok()) return "setup: " + k.error();
  wtest::Call c;
  for (Buf& b : inputs) c.inputs.push_back(&b);
  for (Buf& b : outputs) c.outputs.push_back(&b);
  c.req = std::move(req);
  c.alias = std::move(alias);
  return k.Run(c, op);
}

/// Output buffers of the given dtypes/shapes filled with random values (to catch unwritten
/// elements under write and to give add-to something to add to).
inline std::vector<Buf> Garbage(std::mt19937& rng, const std::vector<Buf>& like) {
  std::vector<Buf> out;
  for (const Buf& b : like) {
    Buf o = Buf::Of(b.dtype, b.shape);
    std::uniform_int_distribution<int> small(0, 9);
    for (int64_t i = 0; i < o.size(); ++i) Set(o, i, small(rng));
    out.push_back(o);
  }
  return out;
}

/// Checks op(inputs) == expected for req write, write-inplace, add-to (expected + prior) and
/// null (prior kept), each output with NMSE <= tol. `expected` gives dtypes and shapes.
inline void ExpectOp(const std::string& op, const Attrs& attrs, const std::vector<Buf>& inputs,
                     const std::vector<Buf>& expected, double tol = 1e-7, int32_t dtype = -1) {
  std::mt19937 rng(7);
  SCOPED_TRACE(op);
  for (int32_t req : {WEFT_REQ_WRITE, WEFT_REQ_WRITE_INPLACE, WEFT_REQ_ADD, WEFT_REQ_NULL}) {
    SCOPED_TRACE("req " + std::to_string(req));
    std::vector<Buf> prior = Garbage(rng, expected);
    std::vector<Buf> out = prior;
    std::string err = RunKernel(op, attrs, inputs, out, std::vector<int32_t>(expected.size(), req), {}, dtype);
    ASSERT_EQ(err, "");
    for (size_t o = 0; o < out.size(); ++o) {
      std::vector<double> want = Values(expected[o]);
      const std::vector<double> before = Values(prior[o]);
      if (req == WEFT_REQ_ADD) {
        for (size_t i = 0; i < want.size(); ++i) want[i] += before[i];
        // Integer / half outputs: the sum is stored in the output's dtype.
        Buf rounded = Make(expected[o].dtype, expected[o].shape, want);
        want = Values(rounded);
      }
      if (req == WEFT_REQ_NULL) want = before;
      const double e = Nmse(want, Values(out[o]));
      EXPECT_LE(e, tol) << "output " << o << " shape " << Str(expected[o].shape);
    }
  }
}

/// What a gradient check needs to know about an op (OPS.md's backward convention).
struct GradSpec {
  std::string op;  // forward op
  Attrs attrs;
  std::vector<Buf> inputs;     // float64 inputs
  std::vector<Shape> outputs;  // forward output shapes
  bool uses_inputs = false;    // backward gets the forward inputs
  bool uses_outputs = false;   // backward gets the forward outputs
  std::string backward;        // default "_backward_" + op
  // Skips input element (input, index) in the comparison (non-smooth points).
  std::function<bool(size_t, int64_t)> skip;
  double h = 1e-4;
};

inline std::vector<Buf> ForwardF64(const GradSpec& g, const std::vector<Buf>& inputs) {
  std::vector<Buf> out;
  for (const Shape& s : g.outputs) out.push_back(Buf::Of(WEFT_DTYPE_FLOAT64, s));
  std::string err = RunKernel(g.op, g.attrs, inputs, out);
  EXPECT_EQ(err, "") << g.op;
  return out;
}

inline std::vector<Buf> ToDType(const std::vector<Buf>& bs, int32_t dtype) {
  std::vector<Buf> out;
  for (const Buf& b : bs) out.push_back(Make(dtype, b.shape, Values(b)));
  return out;
}

/// Checks the backward op against central differences of L = Σ w·forward(x) in float64
/// (NMSE <= 1e-8 over the non-skipped elements), then the float32 backward against the float64
/// one (NMSE <= 1e-7) and the backward's add-to mode.
inline void ExpectGradient(const GradSpec& g, uint64_t seed) {
  SCOPED_TRACE(g.op + " gradient, seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  const std::vector<Buf> y = ForwardF64(g, g.inputs);
  std::vector<Buf> heads;
  for (const Shape& s : g.outputs) heads.push_back(Make(WEFT_DTYPE_FLOAT64, s, UniformF(rng, Prod(s))));
  auto loss = [&](const std::vector<Buf>& x) {
    std::vector<Buf> out = ForwardF64(g, x);
    double l = 0;
    for (size_t o = 0; o < out.size(); ++o)
      for (int64_t i = 0; i < out[o].size(); ++i) l += Get(heads[o], i) * Get(out[o], i);
    return l;
  };
  // Backward inputs: out grads, [inputs], [outputs]; outputs: input grads.
  auto backward = [&](int32_t dtype, std::vector<int32_t> req, std::vector<Buf>* grads) {
    std::vector<Buf> bin = ToDType(heads, dtype);
    if (g.uses_inputs)
      for (const Buf& b : ToDType(g.inputs, dtype)) bin.push_back(b);
    if (g.uses_outputs)
      for (const Buf& b : ToDType(y, dtype)) bin.push_back(b);
    return RunKernel(g.backward.empty() ? "_backward_" + g.op : g.backward, g.attrs, bin, *grads, std::move(req));
  };
  std::vector<Buf> grads;
  for (const Buf& b : g.inputs) grads.push_back(Buf::Of(WEFT_DTYPE_FLOAT64, b.shape));
  ASSERT_EQ(backward(WEFT_DTYPE_FLOAT64, {}, &grads), "");
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    std::vector<double> num, ana;
    std::vector<Buf> x = g.inputs;
    for (int64_t i = 0; i < x[k].size(); ++i) {
      if (g.skip && g.skip(k, i)) continue;
      const double x0 = Get(x[k], i);
      Set(x[k], i, x0 + g.h);
      const double lp = loss(x);
      Set(x[k], i, x0 - g.h);
      const double lm = loss(x);
      Set(x[k], i, x0);
      num.push_back((lp - lm) / (2 * g.h));
      ana.push_back(Get(grads[k], i));
    }
    EXPECT_LE(Nmse(num, ana), 1e-8) << "input " << k << " shape " << Str(g.inputs[k].shape);
  }
  // float32 backward vs float64.
  std::vector<Buf> g32;
  for (const Buf& b : g.inputs) g32.push_back(Buf::Of(WEFT_DTYPE_FLOAT32, b.shape));
  ASSERT_EQ(backward(WEFT_DTYPE_FLOAT32, {}, &g32), "");
  for (size_t k = 0; k < grads.size(); ++k) {
    EXPECT_LE(Nmse(Values(grads[k]), Values(g32[k])), 1e-7) << "float32 gradient of input " << k;
  }
  // add-to: grads + prior; null on the last input's gradient leaves it alone.
  std::vector<Buf> prior = Garbage(rng, ToDType(grads, WEFT_DTYPE_FLOAT64));
  std::vector<Buf> acc = prior;
  std::vector<int32_t> req(grads.size(), WEFT_REQ_ADD);
  if (req.size() > 1) req.back() = WEFT_REQ_NULL;
  ASSERT_EQ(backward(WEFT_DTYPE_FLOAT64, req, &acc), "");
  for (size_t k = 0; k < grads.size(); ++k) {
    std::vector<double> want = Values(prior[k]);
    if (req[k] == WEFT_REQ_ADD)
      for (int64_t i = 0; i < grads[k].size(); ++i) want[static_cast<size_t>(i)] += Get(grads[k], i);
    EXPECT_LE(Nmse(want, Values(acc[k])), 1e-12) << "req " << req[k] << " on the gradient of input " << k;
  }
}

}  // namespace ttest
