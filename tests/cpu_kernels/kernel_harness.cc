#include "kernel_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "cpu_kernels.h"
#include "weft/sdk/cpp/error.hpp"
#include "weft/sdk/cpp/host_kernel.hpp"
#include "weft/sdk/cpp/standalone_host.hpp"
#include "weft/sdk/host.h"

namespace wtest {
namespace {

// The kernels run against a standalone host (errors as objects, config from the environment)
// and their own table, as a plugin author's unit tests would.
weft::sdk::StandaloneHost& Host() {
  static weft::sdk::StandaloneHost host;
  return host;
}

const weft_operator_api* Api() {
  static const std::unique_ptr<weft::sdk::KernelTable> table = weft::cpu::MakeKernelTable(Host().api());
  return table->Api();
}

std::string Take(weft_error* e) { return weft::sdk::StandaloneHost::Take(e); }

weft_shape ToShape(const Buf& b) {
  weft_shape s{};
  s.ndim = static_cast<int32_t>(b.shape.size());
  for (size_t i = 0; i < b.shape.size(); ++i) s.dims[i] = b.shape[i];
  return s;
}

constexpr size_t kGuard = 64;  // bytes of sentinel on each side
constexpr unsigned char kSentinel = 0xA7;

// A guarded copy of a buffer: [guard][payload][guard].
struct Guarded {
  std::vector<unsigned char> mem;
  size_t payload = 0;
  explicit Guarded(const Buf& b) : mem(2 * kGuard + b.bytes.size(), kSentinel), payload(b.bytes.size()) {
    if (payload) std::memcpy(mem.data() + kGuard, b.bytes.data(), payload);
  }
  explicit Guarded(size_t bytes) : mem(2 * kGuard + bytes, kSentinel), payload(bytes) {}
  unsigned char* data() { return mem.data() + kGuard; }
  bool GuardsIntact() const {
    for (size_t i = 0; i < kGuard; ++i)
      if (mem[i] != kSentinel || mem[kGuard + payload + i] != kSentinel) return false;
    return true;
  }
  weft_tensor Tensor(const Buf& b) {
    weft_tensor t{};
    t.struct_size = sizeof(t);
    t.data = static_cast<weft_device_ptr>(reinterpret_cast<uintptr_t>(mem.data()));
    t.offset = kGuard;  // exercise the offset path
    t.dtype = b.dtype;
    t.device = 0;
    t.ndim = static_cast<int32_t>(b.shape.size());
    t.shape = b.shape.data();
    return t;
  }
};

}  // namespace

Buf Buf::F(std::vector<int64_t> shape, std::vector<float> values) {
  Buf b;
  b.dtype = WEFT_DTYPE_FLOAT32;
  b.shape = std::move(shape);
  b.bytes.assign(static_cast<size_t>(Prod(b.shape)) * 4, 0);
  if (!values.empty()) {
    EXPECT_EQ(values.size(), static_cast<size_t>(Prod(b.shape))) << "Buf::F value count";
    std::memcpy(b.bytes.data(), values.data(), std::min(values.size() * 4, b.bytes.size()));
  }
  return b;
}

Buf Buf::Of(int32_t dtype, std::vector<int64_t> shape) {
  Buf b;
  b.dtype = dtype;
  b.shape = std::move(shape);
  b.bytes.assign(static_cast<size_t>(Prod(b.shape)) * weft::sdk::ElementSize(dtype), 0);
  return b;
}

int64_t Buf::size() const { return Prod(shape); }

int64_t Prod(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Kernel::Kernel(const std::string& op, const Attrs& attrs, const std::vector<Buf>& inputs,
               const std::vector<Buf>& outputs, const std::vector<Buf>& aux, int32_t dtype) {
  const weft_operator_api* api = Api();
  for (int32_t i = 0; i < api->num_kernels; ++i) {
    const weft_kernel_def* d = api->kernels[i];
    // Dense kernels only: a sparse kernel (SDK 2.1 storage_types, e.g. dot of a csr) takes aux arrays.
    if (op == d->op_name && (d->dtypes & WEFT_DTYPE_BIT(dtype)) && d->infer_storage == nullptr) def_ = d;
  }
  if (def_ == nullptr) {
    error_ = "no cpu kernel for " + op;
    return;
  }
  std::vector<weft_kv> kv;
  for (const auto& [k, v] : attrs) kv.push_back({k.c_str(), v.c_str()});
  std::vector<weft_shape> is, os, as;
  std::vector<int32_t> it, ot, at;
  for (const Buf& b : inputs) is.push_back(ToShape(b)), it.push_back(b.dtype);
  for (const Buf& b : outputs) os.push_back(ToShape(b)), ot.push_back(b.dtype);
  for (const Buf& b : aux) as.push_back(ToShape(b)), at.push_back(b.dtype);
  weft_kernel_state_args a{};
  a.struct_size = sizeof(a);
  a.kernel_data = def_->kernel_data;
  a.op_name = def_->op_name;
  a.num_attrs = static_cast<int32_t>(kv.size());
  a.attrs = kv.data();
  a.num_inputs = static_cast<int32_t>(is.size());
  a.input_shapes = is.data();
  a.input_dtypes = it.data();
  a.num_outputs = static_cast<int32_t>(os.size());
  a.output_shapes = os.data();
  a.output_dtypes = ot.data();
  a.num_aux = static_cast<int32_t>(as.size());
  a.aux_shapes = as.data();
  a.aux_dtypes = at.data();
  if (def_->create_state) {
    error_ = Take(def_->create_state(nullptr, &a));
    state_ = a.state;
    workspace_bytes_ = a.workspace_bytes;
  }
}

Kernel::~Kernel() {
  if (def_ && def_->destroy_state && state_) def_->destroy_state(nullptr, state_);
}

std::string Kernel::Run(Call& call, const std::string& what) {
  if (!ok()) return error_;
  std::vector<Guarded> gin, gout, gaux;
  gin.reserve(call.inputs.size());
  gout.reserve(call.outputs.size());
  for (Buf* b : call.inputs) gin.emplace_back(*b);
  for (Buf* b : call.outputs) gout.emplace_back(*b);
  for (Buf* b : call.aux) gaux.emplace_back(*b);
  std::vector<weft_tensor> tin, tout, taux;
  for (size_t i = 0; i < gin.size(); ++i) tin.push_back(gin[i].Tensor(*call.inputs[i]));
  for (size_t i = 0; i < gout.size(); ++i) tout.push_back(gout[i].Tensor(*call.outputs[i]));
  for (size_t i = 0; i < gaux.size(); ++i) taux.push_back(gaux[i].Tensor(*call.aux[i]));
  std::vector<bool> aliased_in(gin.size(), false);
  for (auto [o, i] : call.alias) {
    tout[static_cast<size_t>(o)] = tin[static_cast<size_t>(i)];
    aliased_in[static_cast<size_t>(i)] = true;
  }
  std::vector<int32_t> req = call.req;
  if (req.empty()) req.assign(call.outputs.size(), WEFT_REQ_WRITE);
  Guarded ws(static_cast<size_t>(workspace_bytes_));
  weft_kernel_args a{};
  a.struct_size = sizeof(a);
  a.kernel_data = def_->kernel_data;
  a.state = state_;
  a.num_inputs = static_cast<int32_t>(tin.size());
  a.inputs = tin.data();
  a.num_outputs = static_cast<int32_t>(tout.size());
  a.outputs = tout.data();
  a.req = req.data();
  a.num_aux = static_cast<int32_t>(taux.size());
  a.aux = taux.data();
  if (workspace_bytes_ > 0) {
    a.workspace.struct_size = sizeof(a.workspace);
    a.workspace.data = static_cast<weft_device_ptr>(reinterpret_cast<uintptr_t>(ws.mem.data()));
    a.workspace.offset = kGuard;
    a.workspace.dtype = WEFT_DTYPE_UINT8;
  }
  a.is_train = call.is_train ? 1 : 0;
  a.seed = call.seed;
  std::string err = Take(def_->compute(nullptr, &a));
  for (size_t i = 0; i < gin.size(); ++i) {
    EXPECT_TRUE(gin[i].GuardsIntact()) << what << ": guard of input " << i << " overwritten";
    if (!aliased_in[i]) {
      EXPECT_TRUE(gin[i].payload == 0 || std::memcmp(gin[i].data(), call.inputs[i]->bytes.data(), gin[i].payload) == 0)
          << what << ": input " << i << " was modified";
    }
  }
  for (size_t i = 0; i < gout.size(); ++i) EXPECT_TRUE(gout[i].GuardsIntact()) << what << ": guard of output " << i;
  for (size_t i = 0; i < gaux.size(); ++i) EXPECT_TRUE(gaux[i].GuardsIntact()) << what << ": guard of aux " << i;
  EXPECT_TRUE(ws.GuardsIntact()) << what << ": workspace guard overwritten";
  // Copy results back (aliased outputs live in their input's buffer).
  for (size_t o = 0; o < gout.size(); ++o) {
    Guarded* src = &gout[o];
    for (auto [ao, ai] : call.alias)
      if (static_cast<size_t>(ao) == o) src = &gin[static_cast<size_t>(ai)];
    if (src->payload) std::memcpy(call.outputs[o]->bytes.data(), src->data(), call.outputs[o]->bytes.size());
  }
  for (size_t i = 0; i < gaux.size(); ++i)
    if (gaux[i].payload) std::memcpy(call.aux[i]->bytes.data(), gaux[i].data(), gaux[i].payload);
  return err;
}

std::vector<Buf> RunOp(const std::string& op, const Attrs& attrs, std::vector<Buf> inputs,
                       const std::vector<std::vector<int64_t>>& out_shapes, std::vector<Buf>* aux, bool is_train,
                       uint64_t seed) {
  std::vector<Buf> outs;
  for (const auto& s : out_shapes) outs.push_back(Buf::F(s));
  std::vector<Buf> no_aux;
  Kernel k(op, attrs, inputs, outs, aux ? *aux : no_aux);
  EXPECT_TRUE(k.ok()) << op << ": " << k.error();
  if (!k.ok()) return outs;
  Call c;
  for (Buf& b : inputs) c.inputs.push_back(&b);
  for (Buf& b : outs) c.outputs.push_back(&b);
  if (aux)
    for (Buf& b : *aux) c.aux.push_back(&b);
  c.is_train = is_train;
  c.seed = seed;
  std::string err = k.Run(c, op);
  EXPECT_EQ(err, "") << op;
  return outs;
}

double Nmse(const std::vector<float>& ref, const std::vector<float>& got) {
  if (ref.size() != got.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double d = static_cast<double>(ref[i]) - got[i];
    num += d * d;
    den += static_cast<double>(ref[i]) * ref[i];
  }
  if (den == 0) return num == 0 ? 0 : INFINITY;
  return num / den;
}

bool AllFinite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

std::vector<float> Random(std::mt19937& rng, int64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

std::vector<float> NumericGrad(const std::function<std::vector<float>(const std::vector<float>&)>& f,
                               std::vector<float> x, const std::vector<float>& w, float h) {
  std::vector<float> g(x.size());
  auto loss = [&](const std::vector<float>& xx) {
    std::vector<float> y = f(xx);
    double s = 0;
    for (size_t k = 0; k < y.size(); ++k) s += static_cast<double>(w[k]) * y[k];
    return s;
  };
  for (size_t i = 0; i < x.size(); ++i) {
    float x0 = x[i];
    x[i] = x0 + h;
    double lp = loss(x);
    x[i] = x0 - h;
    double lm = loss(x);
    x[i] = x0;
    g[i] = static_cast<float>((lp - lm) / (2.0 * h));
  }
  return g;
}

uint64_t TestSeed() {
  const char* s = std::getenv("WEFT_TEST_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20240611ull;
}

}  // namespace wtest
