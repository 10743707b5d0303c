// Every op of the registry with a gradient definition, differentiated through autograd: the
// gradients match central finite differences of the op's forward (run imperatively) and equal,
// bit for bit, the executor's gradients for the same one-node graph. The list of ops comes from
// the registry, the inputs from the conformance suite's cases (core/tools/conformance/op_cases.cc);
// an op with a gradient and no case fails.
#include <cmath>
#include <random>

#include "autograd_util.h"
#include "ndarray/dtype_convert.h"
#include "op_cases.h"
#include "operator/infer.h"
#include "operator/op_def.h"
#include "weft/executor.h"
#include "weft/internal/runtime.h"
#include "weft/operator.h"
#include "weft/runtime.h"

namespace weft {
namespace {

// An op the cpu has no dense kernel for: no dense case can run it. cast_storage, whose point is
// the storage (the MXNet binding converts; tests/operator/sparse_ops_test.cc and the binding's
// sparse tests check it against MXNet).
bool CpuHasNoDenseKernel(const std::string& op) {
  for (const KernelInfo& k : internal::Kernels(Runtime::Get(), "cpu"))
    if (op == k.def->op_name && !internal::IsSparseKernel(*k.def)) return false;
  return true;
}

std::vector<std::string> DifferentiableOps() {
  std::vector<std::string> ops;
  for (const std::string& name : OpRegistry::Get().ListNames())
    if (OpRegistry::Get().Lookup(name).grad != GradKind::kNone && !CpuHasNoDenseKernel(name)) ops.push_back(name);
  return ops;
}

NDArray Upload(const wconf::HostTensor& t) {
  NDArray a(t.shape, Context::cpu(0), false, t.dtype);
  std::vector<uint8_t> bytes(t.v.size() * DTypeSize(t.dtype));
  for (size_t i = 0; i < t.v.size(); ++i)
    ndarray_detail::StoreFromDouble(t.v[i], t.dtype, bytes.data() + i * DTypeSize(t.dtype));
  a.SyncCopyFromCPUBytes(bytes.data(), bytes.size());
  return a;
}

std::vector<double> Download(const NDArray& a) {
  std::vector<uint8_t> bytes(a.Bytes());
  a.SyncCopyToCPUBytes(bytes.data(), bytes.size());
  std::vector<double> v(a.Size());
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = ndarray_detail::LoadAsDouble(bytes.data() + i * DTypeSize(a.GetDType()), a.GetDType());
  return v;
}

struct Case {
  const wconf::OpCase* c;
  const OpDef* def;
  AttrMap attrs;
  std::vector<std::string> in_names, aux_names;
  std::vector<wconf::HostTensor> in, aux;
  std::vector<bool> marked;              // inputs differentiated (real-valued ones)
  std::vector<wconf::HostTensor> heads;  // head gradients of the visible outputs
  uint64_t seed = 0;
};

Case Prepare(const wconf::OpCase& c, uint64_t seed) {
  Case k;
  k.c = &c;
  k.def = &OpRegistry::Get().Lookup(c.op);
  k.attrs = k.def->Normalize(AttrMap(c.attrs));
  k.in_names = OpInputNames(*k.def, k.attrs);
  k.aux_names = OpAuxNames(*k.def, k.attrs);
  k.seed = seed;
  std::mt19937_64 rng(seed);
  for (const wconf::Input& i : c.in) {
    k.in.push_back(wconf::Random(rng, i.shape, i.domain));
    const DType dt = i.domain.dtype;
    k.marked.push_back(!i.domain.integer && (dt == DType::kFloat32 || dt == DType::kFloat64));
  }
  for (const wconf::Input& i : c.aux) k.aux.push_back(wconf::Random(rng, i.shape, i.domain));
  return k;
}

// The op imperatively (not recorded unless the caller records) on fresh copies of the aux states.
std::vector<NDArray> Forward(const Case& k, const std::vector<NDArray>& in) {
  ImperativeCall call;
  call.op = k.def->name;
  call.params = k.attrs.values();
  call.inputs = in;
  for (const wconf::HostTensor& t : k.aux) call.inputs.push_back(Upload(t));
  call.is_train = k.c->is_train;
  RandomSeed(k.seed);
  return Invoke(call);
}

// Head gradients for the visible outputs (drawn once the output shapes are known).
void DrawHeads(Case& k, const std::vector<NDArray>& outs) {
  std::mt19937_64 rng(k.seed + 7);
  for (const NDArray& o : outs) {
    wconf::HostTensor t = wconf::Random(rng, o.GetShape(), wconf::Domain{});
    t.dtype = o.GetDType();
    k.heads.push_back(t);
  }
}

// Gradients through autograd: one per input (none for unmarked ones).
std::vector<NDArray> AutogradGrads(Case& k) {
  std::vector<NDArray> in;
  for (size_t i = 0; i < k.in.size(); ++i) {
    in.push_back(Upload(k.in[i]));
    if (k.marked[i]) autograd::AttachGrad(&in[i]);
  }
  std::vector<NDArray> outs;
  {
    auto rec = autograd::Record(k.c->is_train);
    outs = Forward(k, in);
  }
  if (k.heads.empty()) DrawHeads(k, outs);
  std::vector<NDArray> heads;
  for (const auto& h : k.heads) heads.push_back(Upload(h));
  autograd::BackwardEx(outs, heads, {}, false, false, k.c->is_train);
  std::vector<NDArray> grads;
  for (size_t i = 0; i < in.size(); ++i) grads.push_back(k.marked[i] ? autograd::GetGrad(in[i]) : NDArray());
  return grads;
}

// Gradients through the executor for the one-node graph.
std::vector<NDArray> ExecutorGrads(const Case& k) {
  Operator op(k.def->name);
  for (const auto& [name, value] : k.attrs.values()) op.SetParam(name, value);
  for (size_t i = 0; i < k.in.size(); ++i) op.SetInput(k.in_names[i], Symbol::Variable("in_" + k.in_names[i]));
  for (size_t i = 0; i < k.aux.size(); ++i) op.SetInput(k.aux_names[i], Symbol::Variable("aux_" + k.aux_names[i]));
  const Symbol sym = op.CreateSymbol("node");
  std::vector<NDArray> args, grads, aux;
  std::vector<OpReqType> reqs;
  for (const std::string& name : sym.ListArguments()) {
    size_t i = 0;
    while ("in_" + k.in_names[i] != name) ++i;
    args.push_back(Upload(k.in[i]));
    grads.push_back(k.marked[i] ? NDArray(k.in[i].shape, Context::cpu(0), false, k.in[i].dtype) : NDArray());
    reqs.push_back(k.marked[i] ? kWriteTo : kNullOp);
  }
  for (const std::string& name : sym.ListAuxiliaryStates()) {
    size_t i = 0;
    while ("aux_" + k.aux_names[i] != name) ++i;
    aux.push_back(Upload(k.aux[i]));
  }
  Executor ex(sym, Context::cpu(0), args, grads, reqs, aux);
  RandomSeed(k.seed);
  ex.Forward(k.c->is_train);
  std::vector<NDArray> heads;
  for (const auto& h : k.heads) heads.push_back(Upload(h));
  ex.Backward(heads);
  std::vector<NDArray> by_input(k.in.size());
  const std::vector<std::string> names = sym.ListArguments();
  for (size_t a = 0; a < names.size(); ++a)
    for (size_t i = 0; i < k.in.size(); ++i)
      if ("in_" + k.in_names[i] == names[a]) by_input[i] = grads[a];
  return by_input;
}

double Loss(const Case& k, const std::vector<NDArray>& outs) {
  double l = 0;
  for (size_t o = 0; o < outs.size(); ++o) {
    const std::vector<double> v = Download(outs[o]);
    for (size_t i = 0; i < v.size(); ++i) l += k.heads[o].v[i] * v[i];
  }
  return l;
}

// Central differences of Σ head·output at up to six elements of each marked input, skipping
// elements where the one-sided slopes disagree (a kink within the step: relu at 0, max ties).
void CheckFiniteDifferences(const Case& k, const std::vector<NDArray>& grads) {
  std::vector<NDArray> base;
  for (const auto& t : k.in) base.push_back(Upload(t));
  const double l0 = Loss(k, Forward(k, base));
  for (size_t i = 0; i < k.in.size(); ++i) {
    if (!k.marked[i]) continue;
    const std::vector<double> analytic_all = Download(grads[i]);
    const size_t n = k.in[i].v.size();
    std::vector<double> numeric, analytic;
    for (size_t s = 0; s < std::min<size_t>(n, 6); ++s) {
      const size_t j = n <= 6 ? s : (s * 7919 + 3) % n;
      const double x = k.in[i].v[j], h = 1e-2 * std::max(1.0, std::fabs(x));
      double slope[2], at[2];
      for (int side = 0; side < 2; ++side) {
        wconf::HostTensor t = k.in[i];
        t.v[j] = x + (side == 0 ? h : -h);
        std::vector<NDArray> in = base;
        in[i] = Upload(t);
        at[side] = Download(in[i])[j];  // the value as stored (fp32)
        const double l = Loss(k, Forward(k, in));
        slope[side] = (l - l0) / (at[side] - static_cast<float>(x));
      }
      if (std::fabs(slope[0] - slope[1]) > 0.02 + 0.02 * std::max(std::fabs(slope[0]), std::fabs(slope[1]))) continue;
      numeric.push_back((slope[0] * (at[0] - static_cast<float>(x)) - slope[1] * (at[1] - static_cast<float>(x))) /
                        (at[0] - at[1]));
      analytic.push_back(analytic_all[j]);
    }
    double num = 0, den = 0;
    for (size_t s = 0; s < numeric.size(); ++s) {
      num += (numeric[s] - analytic[s]) * (numeric[s] - analytic[s]);
      den += numeric[s] * numeric[s];
    }
    const double nmse = den > 0 ? num / den : num;
    EXPECT_LE(nmse, 1e-4) << "d/d " << k.in_names[i] << ": autograd vs central differences, first " << analytic[0]
                          << " vs " << numeric[0];
  }
}

class OpGradient : public ::testing::TestWithParam<std::string> {};

TEST_P(OpGradient, MatchesFiniteDifferencesAndTheExecutor) {
  const OpDef& def = OpRegistry::Get().Lookup(GetParam());
  size_t cases = 0;
  uint64_t seed = 11;
  for (const wconf::OpCase& c : wconf::AllCases()) {
    if (c.op != def.name) continue;
    ++cases;
    SCOPED_TRACE(c.Label());
    Case k = Prepare(c, ++seed);
    if (std::none_of(k.marked.begin(), k.marked.end(), [](bool b) { return b; })) continue;
    // Integer outputs (topk's int32 indices) carry no gradient: nothing to differentiate.
    const std::vector<NDArray> probe = Forward(k, [&] {
      std::vector<NDArray> in;
      for (const auto& t : k.in) in.push_back(Upload(t));
      return in;
    }());
    if (std::none_of(probe.begin(), probe.end(), [](const NDArray& o) {
          return o.GetDType() == DType::kFloat32 || o.GetDType() == DType::kFloat64;
        }))
      continue;
    const std::vector<NDArray> got = AutogradGrads(k), want = ExecutorGrads(k);
    for (size_t i = 0; i < got.size(); ++i) {
      if (!k.marked[i]) continue;
      const std::vector<double> g = Download(got[i]), w = Download(want[i]);
      EXPECT_EQ(g, w) << "d/d " << k.in_names[i] << ": autograd differs from the executor";
      if (def.grad == GradKind::kZero) {
        EXPECT_TRUE(std::all_of(g.begin(), g.end(), [](double v) { return v == 0; })) << k.in_names[i];
      }
    }
    if (c.fd_grad && def.grad == GradKind::kOp && !def.is_loss) CheckFiniteDifferences(k, got);
  }
  EXPECT_GT(cases, 0u) << def.name << " has a gradient definition but no case in core/tools/conformance/op_cases.cc";
}

INSTANTIATE_TEST_SUITE_P(Registry, OpGradient, ::testing::ValuesIn(DifferentiableOps()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace weft
