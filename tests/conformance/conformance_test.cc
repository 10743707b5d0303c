// Conformance suite (shared/design/testing.md §2–5): every op a device plugin claims
// (Runtime::Kernels) is run on seeded random inputs through KernelRunner and NDArrays whose
// buffers sit inside sentinel padding, and compared
//   - on every non-CPU device, with the CPU plugin (forward and backward, NMSE <= 1e-7 for fp32);
//   - on the CPU, the backward kernels with central finite differences of the forward kernels;
//   - on every device, for the write requests write / add-to / null / in-place.
// A coverage table (op x device) is printed at the end. Seeds are printed with every failure;
// WEFT_CONFORMANCE_SEED=<n> changes the base seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

#include "conformance_util.h"
#include "op_cases.h"
#include "operator/gradient.h"
#include "operator/infer.h"
#include "weft/plugin.h"
#include "weft/runtime.h"
#include "weft/sdk/operator.h"

namespace wconf {
namespace {

constexpr double kNmseFp32 = 1e-7;

uint64_t BaseSeed() {
  const char* s = std::getenv("WEFT_CONFORMANCE_SEED");
  return s != nullptr ? std::strtoull(s, nullptr, 10) : 20261121ull;
}

// ---- coverage ------------------------------------------------------------------------------------
enum class Status { kUntested, kPass, kFail };
std::map<std::string, std::map<std::string, Status>>& Coverage() {
  static std::map<std::string, std::map<std::string, Status>> c;
  return c;
}
void Record(const std::string& op, const std::string& device, bool ok) {
  Status& s = Coverage()[op][device];
  if (!ok)
    s = Status::kFail;
  else if (s == Status::kUntested)
    s = Status::kPass;
}

class CoverageTable : public testing::Environment {
 public:
  void TearDown() override {
    weft::Runtime& rt = weft::Runtime::Get();
    const std::vector<std::string> devices = rt.DeviceTypes();
    std::set<std::string> ops;
    for (const std::string& d : devices)
      for (const weft::KernelInfo& k : rt.Kernels(d)) ops.insert(k.def->op_name);
    size_t width = 4;
    for (const std::string& op : ops) width = std::max(width, op.size());
    std::cout << "\nConformance coverage (✓ passed, ✗ failed, · kernel not exercised, — no kernel)\n";
    std::cout << std::string(width, ' ');
    for (const std::string& d : devices) std::cout << "  " << d;
    std::cout << "\n";
    for (const std::string& op : ops) {
      std::cout << op << std::string(width - op.size(), ' ');
      for (const std::string& d : devices) {
        const char* mark = "—";
        bool has = false;
        for (const weft::KernelInfo& k : rt.Kernels(d)) has = has || op == k.def->op_name;
        if (has) {
          auto it = Coverage()[op].find(d);
          const Status s = it == Coverage()[op].end() ? Status::kUntested : it->second;
          mark = s == Status::kPass ? "✓" : s == Status::kFail ? "✗" : "·";
        }
        std::cout << "  " << mark << std::string(d.size() > 1 ? d.size() - 1 : 0, ' ');
      }
      std::cout << "\n";
    }
  }
};
[[maybe_unused]] testing::Environment* const kCoverageEnv = testing::AddGlobalTestEnvironment(new CoverageTable);

// ---- cases ---------------------------------------------------------------------------------------
struct Prepared {
  const OpCase* c;
  const weft::OpDef* def;
  AttrMap attrs;
  std::vector<HostTensor> in, aux;
  weft::NodeSignature sig;
  uint64_t seed;
};

Prepared Prepare(const OpCase& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Prepared p{&c, &weft::OpRegistry::Get().Lookup(c.op), {}, {}, {}, {}, seed};
  p.attrs = p.def->Normalize(AttrMap(c.attrs));
  for (const Input& i : c.in) p.in.push_back(Random(rng, i.shape, i.domain));
  for (const Input& i : c.aux) p.aux.push_back(Random(rng, i.shape, i.domain));
  p.sig = InferSignature(*p.def, p.attrs, p.in, p.aux);
  return p;
}

RunSpec ForwardSpec(const Prepared& p) {
  RunSpec s;
  s.op = p.def->name;
  s.attrs = p.attrs;
  s.sig = p.sig;
  s.in = p.in;
  s.aux = p.aux;
  s.is_train = p.c->is_train;
  s.seed = p.seed;
  return s;
}

// The backward node of `p` fed with the forward run `fwd` and output gradients `out_grads`.
std::optional<RunSpec> BackwardSpec(const Prepared& p, const RunResult& fwd, const std::vector<HostTensor>& out_grads) {
  if (p.def->grad != weft::GradKind::kOp) return std::nullopt;
  std::optional<weft::BackwardNode> node =
      weft::DescribeBackward(*p.def, p.attrs, static_cast<int>(p.in.size()), static_cast<int>(p.sig.out_shapes.size()),
                             static_cast<int>(p.aux.size()));
  if (!node) return std::nullopt;
  RunSpec s;
  s.op = node->op;
  s.attrs = p.attrs;
  s.in = weft::GatherBackwardInputs(*node, out_grads, p.in, fwd.out, fwd.aux);
  for (const HostTensor& t : s.in) s.sig.in_shapes.push_back(t.shape), s.sig.in_dtypes.push_back(t.dtype);
  s.sig.out_shapes = p.sig.in_shapes;
  s.sig.out_dtypes = p.sig.in_dtypes;
  s.is_train = p.c->is_train;
  s.seed = p.seed + 1;
  return s;
}

std::vector<HostTensor> RandomOutGrads(const Prepared& p, std::mt19937_64& rng) {
  const int visible = weft::OpNumVisibleOutputs(*p.def, p.attrs);
  std::vector<HostTensor> g;
  for (size_t o = 0; o < p.sig.out_shapes.size(); ++o) {
    HostTensor t = Random(rng, p.sig.out_shapes[o], Domain{});
    if (static_cast<int>(o) >= visible) std::fill(t.v.begin(), t.v.end(), 0.0);
    t.dtype = p.sig.out_dtypes[o];
    g.push_back(t);
  }
  return g;
}

bool HasKernelFor(const std::string& op, const std::string& device, const weft::NodeSignature& sig) {
  const DType key = !sig.in_dtypes.empty() ? sig.in_dtypes[0] : sig.out_dtypes[0];
  return weft::HasKernel(op, device, key);
}

// Compares every tensor of `got` with `ref`; returns the failures.
std::string Compare(const char* what, const std::vector<HostTensor>& ref, const std::vector<HostTensor>& got) {
  std::string err;
  if (ref.size() != got.size()) return fmt::format("{}: {} tensors, expected {}; ", what, got.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    const double e = Nmse(ref[i].v, got[i].v);
    if (!(e <= kNmseFp32))
      err += fmt::format("{} {} {}: NMSE {:.3g} > {:g}; ", what, i, ref[i].shape.ToString(), e, kNmseFp32);
  }
  return err;
}

// A device listed in the case's refused_by must refuse the attributes with an error when it has a
// kernel for the op at all (never run them and return something).
void ExpectRefused(const Context& ctx, const RunSpec& fwd, const OpCase& c) {
  if (!HasKernelFor(fwd.op, ctx.GetDeviceType(), fwd.sig)) return;
  const RunResult got = RunNode(ctx, fwd);
  EXPECT_FALSE(got.error.empty()) << ctx.GetDeviceType() << " is listed as refusing " << c.Label()
                                  << " but ran it: compare it with cpu instead (remove it from refused_by)";
  std::cout << "  " << ctx.GetDeviceType() << " refuses " << c.Label() << " (as listed): " << got.error << "\n";
}

std::vector<std::string> OtherDevices() {
  std::vector<std::string> d;
  for (const std::string& t : weft::Runtime::Get().DeviceTypes())
    if (t != "cpu" && weft::Runtime::Get().DeviceCount(t) > 0) d.push_back(t);
  return d;
}

TEST(Conformance, EveryClaimedOpHasCases) {
  std::set<std::string> covered;
  for (const OpCase& c : AllCases()) {
    const weft::OpDef& def = weft::OpRegistry::Get().Lookup(c.op);
    covered.insert(def.name);
    if (def.grad == weft::GradKind::kOp) covered.insert(def.backward_op);
  }
  weft::Runtime& rt = weft::Runtime::Get();
  ASSERT_FALSE(rt.Kernels("cpu").empty()) << "the CPU plugin registered no kernels";
  for (const std::string& d : rt.DeviceTypes())
    for (const weft::KernelInfo& k : rt.Kernels(d))
      EXPECT_TRUE(covered.count(k.def->op_name) || k.plugin->name() != d)
          << d << " claims '" << k.def->op_name << "' but the conformance suite has no case for it (op_cases.cc)";
}

// Device types whose plugin found no device (GPU plugins without a GPU) claim kernels that cannot
// run here: the suite skips them, naming each with its plugin's reason.
TEST(Conformance, DeviceTypesWithoutDevicesAreSkippedWithTheReason) {
  std::string skipped;
  for (const weft::Plugin* p : weft::Runtime::Get().Plugins()) {
    if (p->device_type().empty() || weft::Runtime::Get().DeviceCount(p->device_type()) > 0) continue;
    EXPECT_FALSE(p->device_note().empty()) << p->name() << " reports 0 devices without a reason";
    skipped += "\n  " + p->device_type() + " (" +
               std::to_string(weft::Runtime::Get().Kernels(p->device_type()).size()) + " kernels): " + p->device_note();
  }
  if (!skipped.empty()) GTEST_SKIP() << "device types with no device, their kernels not run:" << skipped;
}

TEST(Conformance, DevicesMatchCpu) {
  const std::vector<std::string> devices = OtherDevices();
  if (devices.empty()) GTEST_SKIP() << "no device other than cpu is loaded";
  const Context cpu = Context::cpu(0);
  uint64_t seed = BaseSeed();
  for (const OpCase& c : AllCases()) {
    const Prepared p = Prepare(c, ++seed);
    SCOPED_TRACE(fmt::format("{} seed {}", c.Label(), p.seed));
    const RunSpec fwd = ForwardSpec(p);
    const RunResult ref = RunNode(cpu, fwd);
    ASSERT_TRUE(ref.error.empty()) << "cpu reference failed: " << ref.error;
    std::mt19937_64 rng(p.seed ^ 0x5a5a);
    const std::vector<HostTensor> og = RandomOutGrads(p, rng);
    std::optional<RunSpec> bwd = BackwardSpec(p, ref, og);
    std::optional<RunResult> bref;
    if (bwd && HasKernelFor(bwd->op, "cpu", bwd->sig)) bref = RunNode(cpu, *bwd);
    for (const std::string& d : devices) {
      const Context ctx(d, 0);
      if (c.RefusedBy(d)) {
        ExpectRefused(ctx, fwd, c);
        continue;
      }
      if (HasKernelFor(fwd.op, d, fwd.sig)) {
        const RunResult got = RunNode(ctx, fwd);
        std::string err =
            got.error.empty() ? Compare("output", ref.out, got.out) + Compare("aux", ref.aux, got.aux) : got.error;
        EXPECT_TRUE(err.empty()) << d << ": " << err;
        Record(fwd.op, d, err.empty());
      }
      if (bref && HasKernelFor(bwd->op, d, bwd->sig)) {
        ASSERT_TRUE(bref->error.empty()) << "cpu backward failed: " << bref->error;
        const RunResult got = RunNode(ctx, *bwd);
        std::string err = got.error.empty() ? Compare("input gradient", bref->out, got.out) : got.error;
        EXPECT_TRUE(err.empty()) << d << " " << bwd->op << ": " << err;
        Record(bwd->op, d, err.empty());
      }
    }
  }
}

// Dropout in training on every device with the kernel (cpu included): the mask holds only 0 and
// 1/(1 − p), keeps a fraction 1 − p of the elements (within 5 standard deviations) and the output
// is data · mask. DevicesMatchCpu compares the masks themselves.
TEST(Conformance, DropoutMaskStatistics) {
  std::vector<std::string> devices = OtherDevices();
  devices.insert(devices.begin(), "cpu");
  const double p = 0.3, n = 20000;
  const weft::OpDef& def = weft::OpRegistry::Get().Lookup("Dropout");
  std::mt19937_64 rng(BaseSeed());
  RunSpec spec;
  spec.op = def.name;
  spec.attrs = def.Normalize(AttrMap(std::map<std::string, std::string>{{"p", "0.3"}}));
  spec.in = {Random(rng, Shape{100, 200}, Domain{0.5, 1.5})};
  spec.sig = InferSignature(def, spec.attrs, spec.in, {});
  spec.is_train = true;
  spec.seed = BaseSeed() + 300000;
  for (const std::string& d : devices) {
    if (!HasKernelFor(spec.op, d, spec.sig)) continue;
    const RunResult r = RunNode(Context(d, 0), spec);
    ASSERT_TRUE(r.error.empty()) << d << ": " << r.error;
    ASSERT_EQ(r.out.size(), 2u) << d;
    const double scale = static_cast<double>(1.0f / static_cast<float>(1 - p));
    size_t kept = 0, bad_mask = 0, bad_out = 0;
    for (size_t i = 0; i < r.out[1].v.size(); ++i) {
      const double m = r.out[1].v[i];
      kept += m != 0;
      bad_mask += m != 0 && std::fabs(m - scale) > 1e-6;
      bad_out += std::fabs(r.out[0].v[i] - static_cast<float>(spec.in[0].v[i]) * static_cast<float>(m)) > 1e-6;
    }
    const double sd = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(static_cast<double>(kept), n * (1 - p), 5 * sd) << d << ": kept fraction";
    EXPECT_EQ(bad_mask, 0u) << d << ": mask values other than 0 and 1/(1-p)";
    EXPECT_EQ(bad_out, 0u) << d << ": output != data * mask";
    Record(spec.op, d, kept > 0 && bad_mask == 0 && bad_out == 0);
  }
}

// Σ_o Σ w_o · out_o over the visible outputs.
double Loss(const RunResult& r, const std::vector<HostTensor>& w) {
  double l = 0;
  for (size_t o = 0; o < w.size() && o < r.out.size(); ++o)
    for (size_t i = 0; i < w[o].v.size(); ++i) l += w[o].v[i] * r.out[o].v[i];
  return l;
}

TEST(Conformance, CpuGradientsMatchFiniteDifferences) {
  const Context cpu = Context::cpu(0);
  uint64_t seed = BaseSeed() + 100000;
  int checked = 0;
  for (const OpCase& c : AllCases()) {
    if (!c.fd_grad) continue;
    const Prepared p = Prepare(c, ++seed);
    SCOPED_TRACE(fmt::format("{} seed {}", c.Label(), p.seed));
    const RunSpec fwd = ForwardSpec(p);
    if (!HasKernelFor(fwd.op, "cpu", fwd.sig)) continue;
    const RunResult base = RunNode(cpu, fwd);
    ASSERT_TRUE(base.error.empty()) << base.error;
    std::mt19937_64 rng(p.seed ^ 0xa5a5);
    const std::vector<HostTensor> og = RandomOutGrads(p, rng);
    std::optional<RunSpec> bwd = BackwardSpec(p, base, og);
    if (!bwd || !HasKernelFor(bwd->op, "cpu", bwd->sig)) continue;
    const RunResult grads = RunNode(cpu, *bwd);
    ASSERT_TRUE(grads.error.empty()) << bwd->op << ": " << grads.error;
    bool ok = true;
    for (size_t i = 0; i < p.in.size(); ++i) {
      if (c.in[i].domain.integer) continue;
      const size_t n = p.in[i].v.size();
      std::vector<double> analytic, numeric;
      for (size_t k = 0; k < std::min<size_t>(n, 6); ++k) {
        const size_t j = n <= 6 ? k : (k * 7919) % n;
        const double h = 1e-2 * std::max(1.0, std::fabs(p.in[i].v[j]));
        RunSpec plus = fwd, minus = fwd;
        plus.in[i].v[j] += h;
        minus.in[i].v[j] -= h;
        const RunResult rp = RunNode(cpu, plus), rm = RunNode(cpu, minus);
        ASSERT_TRUE(rp.error.empty() && rm.error.empty()) << rp.error << rm.error;
        // The perturbed values as the kernel sees them (fp32), for exact denominators.
        const double x0 = static_cast<float>(p.in[i].v[j]);
        const double xp = static_cast<float>(plus.in[i].v[j]), xm = static_cast<float>(minus.in[i].v[j]);
        const double l0 = Loss(base, og), lp = Loss(rp, og), lm = Loss(rm, og);
        // A kink inside [x - h, x + h] (the one-sided slopes disagree beyond what curvature
        // explains) is no point to difference at: skip it (testing.md §3).
        const double up = (lp - l0) / (xp - x0), down = (l0 - lm) / (x0 - xm);
        if (std::fabs(up - down) > 0.02 + 0.02 * std::max(std::fabs(up), std::fabs(down))) continue;
        numeric.push_back((lp - lm) / (xp - xm));
        analytic.push_back(grads.out[i].v[j]);
      }
      if (numeric.empty()) continue;
      const double e = Nmse(numeric, analytic);
      EXPECT_LE(e, 1e-4) << "d/d input " << i << " of " << bwd->op << ": analytic vs central differences, first "
                         << analytic[0] << " vs " << numeric[0];
      ok = ok && e <= 1e-4;
    }
    Record(bwd->op, "cpu", ok);
    ++checked;
  }
  EXPECT_GT(checked, 30) << "too few ops had their gradients checked";
}

// write / add-to / null / in-place on one device for one node.
std::string CheckReqModes(const Context& ctx, const RunSpec& spec, const weft::OpDef* def, const AttrMap& attrs,
                          uint64_t seed, bool req_add = true) {
  const RunResult written = RunNode(ctx, spec);
  if (!written.error.empty()) return "write: " + written.error;
  std::mt19937_64 rng(seed);
  RunSpec add = spec;
  for (size_t o = 0; o < spec.sig.out_shapes.size(); ++o) {
    HostTensor t = Random(rng, spec.sig.out_shapes[o], Domain{});
    t.dtype = spec.sig.out_dtypes[o];
    for (double& x : t.v)
      if (t.dtype != DType::kFloat32 && t.dtype != DType::kFloat64) x = std::floor((x + 1) * 4);  // 0..7
    add.out_init.push_back(t);
  }
  add.req.assign(spec.sig.out_shapes.size(), WEFT_REQ_ADD);
  const RunResult added = RunNode(ctx, add);
  std::string err;
  if (!req_add) {
    if (added.error.empty()) err += "add: the op claims to refuse req add but ran; ";
  } else if (!added.error.empty()) {
    err += "add: " + added.error;
  } else {
    std::vector<HostTensor> expect = add.out_init;
    for (size_t o = 0; o < expect.size(); ++o)
      for (size_t i = 0; i < expect[o].v.size(); ++i) expect[o].v[i] += written.out[o].v[i];
    err += Compare("add-to output", expect, added.out);
  }
  RunSpec null = add;
  null.req.assign(spec.sig.out_shapes.size(), WEFT_REQ_NULL);
  const RunResult nulled = RunNode(ctx, null);
  if (!nulled.error.empty()) {
    err += "null: " + nulled.error;
  } else {
    for (size_t o = 0; o < nulled.out.size(); ++o)
      if (nulled.out[o].v != add.out_init[o].v) err += fmt::format("null: output {} was written; ", o);
  }
  if (def != nullptr) {
    for (const auto& [i, o] : weft::OpInplacePairs(*def, attrs)) {
      if (spec.sig.in_shapes[static_cast<size_t>(i)] != spec.sig.out_shapes[static_cast<size_t>(o)] ||
          spec.sig.in_dtypes[static_cast<size_t>(i)] != spec.sig.out_dtypes[static_cast<size_t>(o)])
        continue;
      RunSpec inplace = spec;
      inplace.inplace_in = i;
      inplace.inplace_out = o;
      inplace.req.assign(spec.sig.out_shapes.size(), WEFT_REQ_WRITE);
      inplace.req[static_cast<size_t>(o)] = WEFT_REQ_WRITE_INPLACE;
      const RunResult r = RunNode(ctx, inplace);
      if (!r.error.empty()) {
        err += fmt::format("in-place {}->{}: {}", i, o, r.error);
        continue;
      }
      const double e = Nmse(written.out[static_cast<size_t>(o)].v, r.out[static_cast<size_t>(o)].v);
      if (!(e <= kNmseFp32)) err += fmt::format("in-place {}->{}: NMSE {:.3g}; ", i, o, e);
    }
  }
  return err;
}

TEST(Conformance, ReqModes) {
  const Context cpu = Context::cpu(0);
  std::vector<std::string> devices = OtherDevices();
  devices.insert(devices.begin(), "cpu");
  uint64_t seed = BaseSeed() + 200000;
  for (const OpCase& c : AllCases()) {
    const Prepared p = Prepare(c, ++seed);
    SCOPED_TRACE(fmt::format("{} seed {}", c.Label(), p.seed));
    const RunSpec fwd = ForwardSpec(p);
    const RunResult ref = RunNode(cpu, fwd);
    ASSERT_TRUE(ref.error.empty()) << ref.error;
    std::mt19937_64 rng(p.seed ^ 0x1234);
    std::optional<RunSpec> bwd = BackwardSpec(p, ref, RandomOutGrads(p, rng));
    for (const std::string& d : devices) {
      const Context ctx(d, 0);
      if (c.RefusedBy(d)) continue;  // DevicesMatchCpu checks the refusal
      if (HasKernelFor(fwd.op, d, fwd.sig)) {
        const std::string err = CheckReqModes(ctx, fwd, p.def, p.attrs, p.seed, c.req_add);
        EXPECT_TRUE(err.empty()) << d << " " << fwd.op << ": " << err;
        Record(fwd.op, d, err.empty());
      }
      if (bwd && HasKernelFor(bwd->op, d, bwd->sig)) {
        const std::string err = CheckReqModes(ctx, *bwd, nullptr, p.attrs, p.seed + 7);
        EXPECT_TRUE(err.empty()) << d << " " << bwd->op << ": " << err;
        Record(bwd->op, d, err.empty());
      }
    }
  }
}

}  // namespace
}  // namespace wconf
