// Test harness for CPU kernels: a minimal fake host (so kernel errors become readable objects)
// and a runner that calls one weft_kernel_def of the CPU kernel table (weft::cpu::MakeKernelTable,
// against a standalone host) on host buffers.
//
// Every buffer handed to a kernel sits between sentinel guard bands and is passed with a
// non-zero byte offset; Run() reports writes outside a tensor, changes to inputs that are not
// aliased to an output, and (for req null) changes to the output. Shared by every file of
// cpu_kernels_test.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "weft/sdk/operator.h"

namespace wtest {

/// A host tensor: dtype, shape and its bytes.
struct Buf {
  int32_t dtype = WEFT_DTYPE_FLOAT32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  Buf() = default;
  /// float32 tensor with the given values (zeros when `values` is empty).
  static Buf F(std::vector<int64_t> shape, std::vector<float> values = {});
  /// Tensor of another dtype, zero-filled.
  static Buf Of(int32_t dtype, std::vector<int64_t> shape);
  int64_t size() const;
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(bytes.data());
  }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
  std::vector<float> floats() const { return {as<float>(), as<float>() + size()}; }
};

/// One kernel call's operands. `alias` lists (output, input) pairs that share memory.
struct Call {
  std::vector<Buf*> inputs, outputs, aux;
  std::vector<int32_t> req;  // empty: WEFT_REQ_WRITE for every output
  std::vector<std::pair<int, int>> alias;
  bool is_train = true;
  uint64_t seed = 0;
};

using Attrs = std::map<std::string, std::string>;

/// A kernel state for one op/attrs/shapes, created through the C create_state.
class Kernel {
 public:
  /// Looks up `op` (float32) and creates its state from the shapes/dtypes of the given buffers.
  /// Check ok() / error() afterwards.
  Kernel(const std::string& op, const Attrs& attrs, const std::vector<Buf>& inputs, const std::vector<Buf>& outputs,
         const std::vector<Buf>& aux = {}, int32_t dtype = WEFT_DTYPE_FLOAT32);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  uint64_t workspace_bytes() const { return workspace_bytes_; }

  /// Runs compute; returns "" or the kernel's error ("code N: message"). Guard/input violations
  /// are added as GoogleTest failures naming `what`.
  std::string Run(Call& call, const std::string& what = "");

 private:
  const weft_kernel_def* def_ = nullptr;
  void* state_ = nullptr;
  uint64_t workspace_bytes_ = 0;
  std::string error_;
};

/// Convenience: build the kernel and run it once with req write (outputs are resized from
/// out_shapes). Fails the test on any error.
std::vector<Buf> RunOp(const std::string& op, const Attrs& attrs, std::vector<Buf> inputs,
                       const std::vector<std::vector<int64_t>>& out_shapes, std::vector<Buf>* aux = nullptr,
                       bool is_train = true, uint64_t seed = 0);

/// Normalised mean squared error Σ(a−b)²/Σa² (a = reference); 0 when both are all zero.
double Nmse(const std::vector<float>& ref, const std::vector<float>& got);
/// True when every value is finite.
bool AllFinite(const std::vector<float>& v);

/// Uniform random floats in [lo, hi).
std::vector<float> Random(std::mt19937& rng, int64_t n, float lo = -1.0f, float hi = 1.0f);

/// Central finite differences of L(x) = Σ_k w_k f(x)_k with respect to x, step h (double sums).
std::vector<float> NumericGrad(const std::function<std::vector<float>(const std::vector<float>&)>& f,
                               std::vector<float> x, const std::vector<float>& w, float h = 1e-2f);

/// The seed for this test: WEFT_TEST_SEED if set, else a fixed value; printed via SCOPED_TRACE.
uint64_t TestSeed();

int64_t Prod(const std::vector<int64_t>& s);

}  // namespace wtest
