#include "op_checks.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "operator/gradient.h"
#include "operator/infer.h"
#include "reference.h"
#include "weft/internal/runtime.h"
#include "weft/sdk/operator.h"

namespace wconf {
namespace {

// ---- claims --------------------------------------------------------------------------------------
// (kernel op name -> dtypes) a device type's kernels claim, restricted to one plugin's.
using Claims = std::map<std::string, std::set<DType>>;

Claims ClaimsOf(const std::string& device_type, const weft::Plugin* plugin) {
  Claims c;
  for (const weft::KernelInfo& k : weft::internal::Kernels(weft::Runtime::Get(), device_type)) {
    if (plugin != nullptr && k.plugin != plugin) continue;
    // Sparse kernels (SDK 2.1) take sparse arrays, which these dense cases never give them; their
    // own tests check them against MXNet (tests/operator/sparse_*_test.cc).
    if (weft::internal::IsSparseKernel(*k.def)) continue;
    for (int bit = 0; bit < 64; ++bit)
      if (k.def->dtypes & (1ull << bit)) c[k.def->op_name].insert(static_cast<DType>(bit));
  }
  return c;
}

bool Claimed(const Claims& claims, const std::string& op, DType dtype) {
  auto it = claims.find(op);
  return it != claims.end() && it->second.count(dtype) > 0;
}

DType KeyDType(const weft::NodeSignature& sig) { return !sig.in_dtypes.empty() ? sig.in_dtypes[0] : sig.out_dtypes[0]; }

bool IsFloat(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16 || d == DType::kBfloat16;
}

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
  weft::NodeSignature given;
  for (const Shape& s : c.out) given.out_shapes.push_back(s), given.out_dtypes.push_back(DType::kFloat32);
  p.sig = InferSignature(*p.def, p.attrs, p.in, p.aux, &given);
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

bool IsUnsigned(DType d) {
  return d == DType::kUint8 || d == DType::kUint16 || d == DType::kUint32 || d == DType::kUint64;
}

// `x` (drawn for float32) as a value of `to`: floats rounded; integers spread over -50..50 (0..50
// unsigned) so that copies and index arithmetic see distinct values.
double Convert(DType to, double x) {
  if (IsFloat(to)) return RoundTo(to, x);
  const double v = std::floor(x * 50);
  return RoundTo(to, IsUnsigned(to) ? std::fabs(v) : v);
}

// The spec with float32 tensors converted to `to`: every one, or only input 0 when `first_only`
// (ops whose other inputs' dtype an attribute fixes: Embedding's weight). Inputs flagged in
// `whole` hold whole numbers (positions, counts): their values are kept, not spread. Output dtypes
// are re-inferred for a forward node (`def`), follow the inputs' for a backward node. Throws
// weft::Error when inference rejects the dtypes.
RunSpec Retype(const RunSpec& s, DType to, const weft::OpDef* def, bool first_only = false,
               const std::vector<bool>& whole = {}) {
  RunSpec r = s;
  if (to == DType::kFloat32) return r;
  auto convert = [&](std::vector<HostTensor>& ts, std::vector<DType>& dtypes, size_t limit, bool inputs) {
    for (size_t i = 0; i < ts.size() && i < limit; ++i) {
      if (ts[i].dtype != DType::kFloat32) continue;
      const bool keep = inputs && i < whole.size() && whole[i];
      ts[i].dtype = to;
      for (double& x : ts[i].v) x = keep ? RoundTo(to, x) : Convert(to, x);
      dtypes[i] = to;
    }
  };
  convert(r.in, r.sig.in_dtypes, first_only ? 1 : r.in.size(), true);
  if (!first_only) convert(r.aux, r.sig.aux_dtypes, r.aux.size(), false);
  if (def != nullptr) {
    r.sig = InferSignature(*def, r.attrs, r.in, r.aux, &s.sig);
  } else {
    for (DType& d : r.sig.out_dtypes)
      if (d == DType::kFloat32) d = to;
  }
  return r;
}

// Retype with every float32 tensor, else (inference refused) with input 0 only; the inputs of
// `c` drawn from an integer domain keep their values.
RunSpec RetypeForward(const RunSpec& s, DType to, const weft::OpDef* def, const OpCase& c) {
  std::vector<bool> whole;
  for (const Input& i : c.in) whole.push_back(i.domain.integer);
  try {
    return Retype(s, to, def, false, whole);
  } catch (const weft::Error&) {
    return Retype(s, to, def, /*first_only=*/true, whole);
  }
}

// The spec with every tensor of dtype `from` held as `to` (the same values): the reference spec for
// a device spec of a dtype the cpu has no kernel for (to float32), or the cpu's float64 run of a
// spec at a narrower dtype.
RunSpec Widen(const RunSpec& dev, DType from, DType to = DType::kFloat64) {
  RunSpec r = dev;
  if (from == to) return r;
  for (auto* ts : {&r.in, &r.aux})
    for (HostTensor& t : *ts)
      if (t.dtype == from) t.dtype = to;
  for (auto* ds : {&r.sig.in_dtypes, &r.sig.out_dtypes, &r.sig.aux_dtypes})
    for (DType& d : *ds)
      if (d == from) d = to;
  return r;
}

RunSpec AsReference(const RunSpec& dev, DType from) { return Widen(dev, from, DType::kFloat32); }

// Compares every tensor of `got` with `ref`; returns the failures; *worst gets the largest NMSE.
// The tolerance is that of the coarser dtype of each pair (0: integer results, and `exact` ops,
// must match bit for bit). A failure names the first element that differs most.
std::string Compare(const char* what, const std::vector<HostTensor>& ref, const std::vector<HostTensor>& got,
                    double* worst, bool exact = false) {
  if (ref.size() != got.size()) return fmt::format("{}: {} tensors, expected {}; ", what, got.size(), ref.size());
  std::string err;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double tol = exact ? 0 : std::max(Tolerance(ref[i].dtype), Tolerance(got[i].dtype));
    const double e = Nmse(ref[i].v, got[i].v);
    if (worst != nullptr) *worst = std::max(*worst, std::isnan(e) ? INFINITY : e);
    if (e <= tol) continue;
    size_t at = 0, n = 0;
    double most = -1;
    for (size_t k = 0; k < ref[i].v.size() && k < got[i].v.size(); ++k) {
      const double d = ref[i].v[k] == got[i].v[k] ? 0
                       : std::isnan(got[i].v[k])  ? INFINITY
                                                  : std::fabs(ref[i].v[k] - got[i].v[k]);
      n += d > 0;
      if (d > most) most = d, at = k;
    }
    const int digits = got[i].dtype == DType::kFloat64 ? 17 : 9;  // enough to tell neighbours apart
    err += fmt::format(
        "{} {} {}: NMSE {:.3g} > {:g}{}; {} of {} elements differ, most at element {}: {:.{}g}, "
        "expected {:.{}g}; ",
        what, i, ref[i].shape.ToString(), e, tol, exact ? " (an exactly defined result)" : "", n, ref[i].v.size(), at,
        at < got[i].v.size() ? got[i].v[at] : NAN, digits, ref[i].v[at], digits);
  }
  return err;
}

// ---- checks --------------------------------------------------------------------------------------
struct Finding {
  std::string check, error;
};

// write / add-to / null / in-place on one device for one node, against its own plain write.
std::vector<Finding> CheckReqModes(const Context& ctx, const RunSpec& spec, const weft::OpDef* def, uint64_t seed,
                                   bool req_add) {
  std::vector<Finding> f;
  const RunResult written = RunNode(ctx, spec);
  if (!written.error.empty()) return {{"write", written.error}};
  std::mt19937_64 rng(seed);
  RunSpec add = spec;
  for (size_t o = 0; o < spec.sig.out_shapes.size(); ++o) {
    HostTensor t = Random(rng, spec.sig.out_shapes[o], Domain{});
    t.dtype = spec.sig.out_dtypes[o];
    for (double& x : t.v) x = IsFloat(t.dtype) ? RoundTo(t.dtype, x) : std::floor((x + 1) * 4);  // ints: 0..7
    add.out_init.push_back(t);
  }
  add.req.assign(spec.sig.out_shapes.size(), WEFT_REQ_ADD);
  const RunResult added = RunNode(ctx, add);
  if (!req_add) {
    if (added.error.empty()) f.push_back({"add-to", "the op is listed as refusing req add but ran"});
  } else if (!added.error.empty()) {
    f.push_back({"add-to", added.error});
  } else {
    std::vector<HostTensor> expect = add.out_init;
    // An integer output's add-to wraps as the dtype's arithmetic does (uint8 250 + 7 is 1).
    for (size_t o = 0; o < expect.size(); ++o)
      for (size_t i = 0; i < expect[o].v.size(); ++i)
        expect[o].v[i] = IsFloat(expect[o].dtype) ? expect[o].v[i] + written.out[o].v[i]
                                                  : WrapTo(expect[o].dtype, expect[o].v[i] + written.out[o].v[i]);
    const std::string err = Compare("add-to output", expect, added.out, nullptr);
    if (!err.empty()) f.push_back({"add-to", err});
  }
  RunSpec null = add;
  null.req.assign(spec.sig.out_shapes.size(), WEFT_REQ_NULL);
  const RunResult nulled = RunNode(ctx, null);
  if (!nulled.error.empty()) {
    f.push_back({"null", nulled.error});
  } else {
    for (size_t o = 0; o < nulled.out.size(); ++o)
      if (nulled.out[o].v != add.out_init[o].v) f.push_back({"null", fmt::format("output {} was written", o)});
  }
  if (def == nullptr) return f;
  for (const auto& [i, o] : weft::OpInplacePairs(*def, spec.attrs)) {
    const auto ui = static_cast<size_t>(i), uo = static_cast<size_t>(o);
    if (spec.sig.in_shapes[ui] != spec.sig.out_shapes[uo] || spec.sig.in_dtypes[ui] != spec.sig.out_dtypes[uo])
      continue;
    RunSpec inplace = spec;
    inplace.inplace_in = i;
    inplace.inplace_out = o;
    inplace.req.assign(spec.sig.out_shapes.size(), WEFT_REQ_WRITE);
    inplace.req[uo] = WEFT_REQ_WRITE_INPLACE;
    const RunResult r = RunNode(ctx, inplace);
    const std::string what = fmt::format("in-place {}->{}", i, o);
    if (!r.error.empty()) {
      f.push_back({what, r.error});
      continue;
    }
    const double tol = Tolerance(spec.sig.out_dtypes[uo]);
    const double e = Nmse(written.out[uo].v, r.out[uo].v);
    if (!(e <= tol))
      f.push_back({what, fmt::format("output {}: NMSE {:.3g} > {:g} against the plain write", o, e, tol)});
  }
  return f;
}

// Σ_o Σ w_o · out_o over the visible outputs.
double Loss(const RunResult& r, const std::vector<HostTensor>& w) {
  double l = 0;
  for (size_t o = 0; o < w.size() && o < r.out.size(); ++o)
    for (size_t i = 0; i < w[o].v.size(); ++i) l += w[o].v[i] * r.out[o].v[i];
  return l;
}

// The backward kernel's input gradients against central finite differences of the forward
// kernel on `ctx` (float32 and float64 cases; a few elements per input; kinks skipped, testing.md
// §3). The forward kernel itself is checked against the reference (reference.h).
std::string CheckFiniteDifferences(const Context& ctx, const Prepared& p, const RunSpec& fwd, const RunResult& base,
                                   const std::vector<HostTensor>& og, const RunResult& grads) {
  std::string err;
  for (size_t i = 0; i < p.in.size(); ++i) {
    if (p.c->in[i].domain.integer) continue;
    const size_t n = p.in[i].v.size();
    std::vector<double> analytic, numeric;
    for (size_t k = 0; k < std::min<size_t>(n, 6); ++k) {
      const size_t j = n <= 6 ? k : (k * 7919) % n;
      const double h = 1e-2 * std::max(1.0, std::fabs(p.in[i].v[j]));
      RunSpec plus = fwd, minus = fwd;
      plus.in[i].v[j] += h;
      minus.in[i].v[j] -= h;
      const RunResult rp = RunNode(ctx, plus), rm = RunNode(ctx, minus);
      if (!rp.error.empty() || !rm.error.empty()) return "forward failed: " + rp.error + rm.error;
      // The perturbed values as the kernel sees them (rounded to the dtype), for exact denominators.
      const DType dt = fwd.in[i].dtype;
      const double x0 = RoundTo(dt, fwd.in[i].v[j]);
      const double xp = RoundTo(dt, plus.in[i].v[j]), xm = RoundTo(dt, minus.in[i].v[j]);
      const double l0 = Loss(base, og), lp = Loss(rp, og), lm = Loss(rm, og);
      // A kink inside [x - h, x + h] (the one-sided slopes disagree beyond what curvature
      // explains) is no point to difference at.
      const double up = (lp - l0) / (xp - x0), down = (l0 - lm) / (x0 - xm);
      if (std::fabs(up - down) > 0.02 + 0.02 * std::max(std::fabs(up), std::fabs(down))) continue;
      numeric.push_back((lp - lm) / (xp - xm));
      analytic.push_back(grads.out[i].v[j]);
    }
    if (numeric.empty()) continue;
    const double e = Nmse(numeric, analytic);
    if (!(e <= 1e-4))
      err += fmt::format("d/d input {}: analytic vs central differences NMSE {:.3g} > 1e-4 (first {} vs {}); ", i, e,
                         analytic[0], numeric[0]);
  }
  return err;
}

// A case for an op the suite has none for (an operator plugin's op): every input (2, 3, 4) with
// values in [-1, 1), default attributes; nullopt when its definition does not infer from that.
std::optional<OpCase> GenericCase(const weft::OpDef& def) {
  try {
    const AttrMap attrs = def.Normalize(AttrMap());
    OpCase c;
    c.op = def.name;
    for (size_t i = 0; i < weft::OpInputNames(def, attrs).size(); ++i) c.in.push_back(Input{Shape{2, 3, 4}, Domain{}});
    for (size_t i = 0; i < weft::OpAuxNames(def, attrs).size(); ++i) c.aux.push_back(Input{Shape{2, 3, 4}, Domain{}});
    Prepare(c, 1);
    return c;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// ---- the run -------------------------------------------------------------------------------------
class Runner {
 public:
  explicit Runner(const OpOptions& o) : o_(o), start_(std::chrono::steady_clock::now()) {
    if (weft::Runtime::Get().DeviceCount("cpu") == 0)
      weft::Fail(
          "conformance: no cpu device for the reference results: is the cpu plugin installed and accepted? "
          "(weft-info lists the plugins found)");
    for (const Context& d : o.devices) {
      const std::string& t = d.GetDeviceType();
      if (claims_.count(t) == 0) claims_[t] = ClaimsOf(t, o.plugin);
    }
    cpu_claims_ = ClaimsOf("cpu", nullptr);
  }

  OpResults Run() {
    std::set<std::string> rows;  // claimed forward ops, in name order
    for (const auto& [type, claims] : claims_)
      for (const auto& [op, dtypes] : claims) rows.insert(ForwardOpOf(op));
    for (const std::string& row : rows) {
      if (!o_.ops.empty() && o_.ops.count(row) == 0) continue;
      RunRow(row);
      if (r_.budget_exhausted) break;
    }
    Finish();
    return std::move(r_);
  }

 private:
  void Log(const std::string& s) const {
    if (o_.log) o_.log(s);
  }
  void NoteOnce(const std::string& s) {
    if (noted_.insert(s).second) r_.notes.push_back(s);
  }
  bool OutOfTime() {
    if (o_.time_budget_s <= 0) return false;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (s > o_.time_budget_s && !r_.budget_exhausted) {
      r_.budget_exhausted = true;
      r_.notes.push_back(
          fmt::format("time budget of {:g} s used up: the cells not reached are 'not run'", o_.time_budget_s));
    }
    return r_.budget_exhausted;
  }

  std::vector<OpCase> CasesFor(const std::string& row) {
    std::vector<OpCase> cases;
    for (const OpCase& c : AllCases())
      if (weft::OpRegistry::Get().Lookup(c.op).name == row) cases.push_back(c);
    if (cases.empty()) {
      const weft::OpDef* def = weft::OpRegistry::Get().Find(row);
      std::optional<OpCase> g = def != nullptr ? GenericCase(*def) : std::nullopt;
      if (g) {
        r_.notes.push_back(row + ": no case in the suite; checked on a generic case " + g->Label());
        cases.push_back(*g);
      } else {
        r_.notes.push_back(row + ": no case in the suite and none could be built from its definition: not run");
      }
    }
    return cases;
  }

  // The dtypes to run `c` at on `type`: its own, and every other dtype claimed for the op when
  // the case's inputs are float32 (converted: Retype).
  std::vector<DType> DTypesFor(const std::string& type, const std::string& op, DType native) const {
    std::vector<DType> out;
    auto it = claims_.at(type).find(op);
    const std::set<DType> claimed = it != claims_.at(type).end() ? it->second : std::set<DType>{};
    auto want = [&](DType d) { return o_.dtypes.empty() || o_.dtypes.count(std::string(weft::DTypeName(d))) > 0; };
    if (want(native)) out.push_back(native);
    if (native == DType::kFloat32)
      for (DType d : claimed)
        if (d != native && want(d)) out.push_back(d);
    return out;
  }

  void RunRow(const std::string& row) {
    const weft::OpDef* def = weft::OpRegistry::Get().Find(row);
    for (const auto& [type, claims] : claims_)
      r_.by_type[type][row].has_gradient = def && def->grad == weft::GradKind::kOp;
    if (def == nullptr) {
      r_.notes.push_back(row + ": claimed but unknown to the operator registry (no op definition): not run");
      return;
    }
    std::set<std::pair<std::string, std::string>> done;  // (type, dtype) with a case, for --small
    uint64_t seed = o_.seed + std::hash<std::string>{}(row) % 100000 * 10;
    for (const OpCase& c : CasesFor(row)) {
      if (OutOfTime()) return;
      Prepared p;
      try {
        p = Prepare(c, ++seed);
      } catch (const std::exception& e) {
        r_.notes.push_back(c.Label() + ": cannot prepare the case: " + e.what());
        continue;
      }
      std::set<DType> dtypes;
      for (const auto& [type, claims] : claims_)
        for (DType d : DTypesFor(type, p.def->name, KeyDType(p.sig))) dtypes.insert(d);
      for (DType d : dtypes) {
        if (o_.small && !done.insert({"", std::string(weft::DTypeName(d))}).second) continue;
        RunCase(p, d);
      }
    }
  }

  void RunCase(const Prepared& p, DType dtype) {
    const Context cpu = Context::cpu(0);
    const RunSpec native = ForwardSpec(p);
    RunSpec fwd;
    try {
      fwd = RetypeForward(native, dtype, p.def, *p.c);
    } catch (const std::exception& e) {
      r_.notes.push_back(fmt::format("{} as {}: {}", p.c->Label(), weft::DTypeName(dtype), e.what()));
      return;
    }
    const RunSpec ref_spec = Claimed(cpu_claims_, fwd.op, dtype) ? fwd : AsReference(fwd, dtype);
    const RunResult ref = RunNode(cpu, ref_spec);
    std::mt19937_64 rng(p.seed ^ 0x5a5a);
    const std::vector<HostTensor> og = RandomOutGrads(p, rng);
    std::optional<RunSpec> bwd;
    std::optional<RunResult> bref;
    if (ref.error.empty()) {
      // The backward node of the retyped forward node: its inputs, outputs and output gradients
      // at the forward node's dtypes.
      Prepared pv = p;
      pv.in = fwd.in;
      pv.aux = fwd.aux;
      pv.sig = fwd.sig;
      std::vector<HostTensor> og_v = og;
      RunResult ref_v = ref;
      for (size_t o = 0; o < og_v.size(); ++o) {
        const DType to = fwd.sig.out_dtypes[o];
        if (og_v[o].dtype != to)
          for (double& x : og_v[o].v) x = Convert(to, x);
        og_v[o].dtype = ref_v.out[o].dtype = to;
        for (double& x : ref_v.out[o].v) x = RoundTo(to, x);
      }
      for (size_t a = 0; a < ref_v.aux.size(); ++a) ref_v.aux[a].dtype = fwd.sig.aux_dtypes[a];
      if (std::optional<RunSpec> b = BackwardSpec(pv, ref_v, og_v)) {
        bwd = std::move(b);
        const DType key = KeyDType(bwd->sig);
        const RunSpec bref_spec = Claimed(cpu_claims_, bwd->op, key) ? *bwd : AsReference(*bwd, key);
        if (Claimed(cpu_claims_, bref_spec.op, KeyDType(bref_spec.sig))) bref = RunNode(cpu, bref_spec);
      }
    }
    for (const Context& ctx : o_.devices) {
      const std::string& type = ctx.GetDeviceType();
      const Claims& claims = claims_.at(type);
      if (p.c->RefusedBy(type)) {
        CheckRefused(ctx, fwd, p, dtype);
        continue;
      }
      if (Claimed(claims, fwd.op, dtype)) CheckForward(ctx, p, fwd, dtype, ref);
      if (bwd && Claimed(claims, bwd->op, KeyDType(bwd->sig))) CheckBackward(ctx, p, fwd, dtype, ref, og, *bwd, bref);
    }
  }

  // The forward of one case on one device: the cpu against the double-precision reference
  // (reference.h), every other device against the cpu's result `ref`; then the write requests.
  void CheckForward(const Context& ctx, const Prepared& p, const RunSpec& fwd, DType dtype, const RunResult& ref) {
    std::vector<Finding> f;
    double worst = 0;
    if (!ref.error.empty()) {
      f.push_back({"reference", "the cpu reference failed: " + ref.error});
    } else {
      const RunResult got = RunNode(ctx, fwd);
      if (!got.error.empty()) {
        f.push_back({"run", got.error});
      } else if (ctx.GetDeviceType() == "cpu") {
        std::string err;
        if (const std::optional<Reference> want = ReferenceForward(fwd, got, &err)) {
          err += Compare("output", want->out, got.out, &worst, p.c->exact) + Compare("aux", want->aux, got.aux, &worst);
        } else {
          NoteOnce(fwd.op +
                   ": no reference implementation (reference.h): its cpu forward is checked for the write "
                   "requests only, its gradient against finite differences");
        }
        if (!err.empty()) f.push_back({"vs reference", err});
      } else {
        const std::string err =
            Compare("output", ref.out, got.out, &worst, p.c->exact) + Compare("aux", ref.aux, got.aux, &worst);
        if (!err.empty()) f.push_back({"vs cpu", err});
      }
      for (Finding& x : CheckReqModes(ctx, fwd, p.def, p.seed, p.c->req_add)) f.push_back(std::move(x));
    }
    Record(ctx, p, fwd.op, dtype, false, worst, f);
  }

  // The gradient of one case on one device: every other device against the cpu's (`bref`); the
  // cpu against something independent of its backward kernel (CheckCpuGradient); then the write
  // requests.
  void CheckBackward(const Context& ctx, const Prepared& p, const RunSpec& fwd, DType dtype, const RunResult& ref,
                     const std::vector<HostTensor>& og, const RunSpec& bwd, const std::optional<RunResult>& bref) {
    std::vector<Finding> f;
    double worst = 0;
    if (!bref || !bref->error.empty()) {
      f.push_back({"reference", "no cpu reference for the gradient: " +
                                    (bref ? bref->error : "the cpu has no kernel for " + bwd.op)});
    } else {
      const RunResult got = RunNode(ctx, bwd);
      if (!got.error.empty()) {
        f.push_back({"run", got.error});
      } else if (ctx.GetDeviceType() == "cpu") {
        for (Finding& x : CheckCpuGradient(ctx, p, fwd, dtype, ref, og, bwd, got, &worst)) f.push_back(std::move(x));
      } else {
        const std::string err = Compare("input gradient", bref->out, got.out, &worst);
        if (!err.empty()) f.push_back({"vs cpu", err});
      }
      for (Finding& x : CheckReqModes(ctx, bwd, nullptr, p.seed + 7, true)) f.push_back(std::move(x));
    }
    Record(ctx, p, bwd.op, dtype, true, worst, f);
  }

  // The cpu's gradient `got` of the forward node `fwd` against: the reference gradient of ops that
  // define theirs (reference.h); central finite differences of the (reference-checked) forward at
  // float32 and float64; at other dtypes, the cpu's float64 gradient of the same values (which
  // the float64 run of the case checks). A case none of these reaches is a failure.
  std::vector<Finding> CheckCpuGradient(const Context& ctx, const Prepared& p, const RunSpec& fwd, DType dtype,
                                        const RunResult& ref, const std::vector<HostTensor>& og, const RunSpec& bwd,
                                        const RunResult& got, double* worst) {
    std::vector<Finding> f;
    bool checked = false;
    // The output gradients as the backward node got them (at its dtypes): its first inputs.
    const size_t n_out = fwd.sig.out_shapes.size();
    const std::vector<HostTensor> og_at =
        bwd.in.size() >= n_out
            ? std::vector<HostTensor>(bwd.in.begin(), bwd.in.begin() + static_cast<std::ptrdiff_t>(n_out))
            : og;
    if (std::optional<std::vector<HostTensor>> want = ReferenceGradient(fwd, ref, og_at)) {
      checked = true;
      for (size_t i = 0; i < want->size(); ++i) (*want)[i].dtype = got.out[i].dtype;
      const std::string err = Compare("input gradient", *want, got.out, worst);
      if (!err.empty()) f.push_back({"vs reference", err});
    }
    const bool fd_dtype = dtype == DType::kFloat32 || dtype == DType::kFloat64;
    if (p.c->fd_grad && fd_dtype) {
      checked = true;
      const std::string fd = CheckFiniteDifferences(ctx, p, fwd, ref, og, got);
      if (!fd.empty()) f.push_back({"finite differences", fd});
    } else if (!fd_dtype && !checked && Claimed(cpu_claims_, bwd.op, DType::kFloat64)) {
      checked = true;
      const RunResult wide = RunNode(ctx, Widen(bwd, KeyDType(bwd.sig)));
      const std::string err =
          wide.error.empty() ? Compare("input gradient vs float64", wide.out, got.out, worst) : wide.error;
      if (!err.empty()) f.push_back({"vs float64", err});
    }
    if (!checked)
      f.push_back({"unchecked",
                   "no independent check reaches this gradient: no finite differences for the case "
                   "(OpCase::fd_grad) and no reference gradient (reference.h ReferenceGradient)"});
    return f;
  }

  // A device listed in the case's refused_by must refuse the attributes with an error when it has
  // a kernel for the op (never run them and return something).
  void CheckRefused(const Context& ctx, const RunSpec& fwd, const Prepared& p, DType dtype) {
    if (!Claimed(claims_.at(ctx.GetDeviceType()), fwd.op, dtype)) return;
    const RunResult got = RunNode(ctx, fwd);
    if (got.error.empty()) {
      Record(ctx, p, fwd.op, dtype, false, 0,
             {{"refusal",
               "listed as refusing these attributes (OpCase::refused_by) but ran them: compare it with cpu "
               "instead (remove the device from refused_by)"}});
    } else if (ctx.GetDeviceId() == o_.devices.front().GetDeviceId()) {
      r_.notes.push_back(fmt::format("{} refuses {} (as listed): {}", ctx.GetDeviceType(), p.c->Label(), got.error));
    }
  }

  void Record(const Context& ctx, const Prepared& p, const std::string& op, DType dtype, bool backward, double worst,
              const std::vector<Finding>& findings) {
    const std::string dt(weft::DTypeName(dtype));
    Cell& cell = r_.by_type[ctx.GetDeviceType()][p.def->name].cells[dt][backward ? 1 : 0];
    ++cell.cases;
    ++r_.case_runs;
    if (worst >= cell.worst) {
      cell.worst = worst;
      cell.worst_case = p.c->Label();
    }
    if (!findings.empty()) cell.status = Status::kFail;
    for (const Finding& f : findings) {
      r_.failures.push_back(
          Failure{ctx.ToString(), p.def->name, op, dt, backward, f.check, p.c->Label(), p.seed, f.error});
      Log(fmt::format("FAIL {} {} {} [{}] {} (seed {}): {}", ctx.ToString(), op, dt, f.check, p.c->Label(), p.seed,
                      f.error));
    }
  }

  // Claimed cells never reached are "not run"; reached ones without a failure "pass"; rows with
  // no gradient say so in their backward cells.
  void Finish() {
    for (const auto& [type, claims] : claims_) {
      for (const auto& [op, dtypes] : claims) {
        const std::string row = ForwardOpOf(op);
        if (!o_.ops.empty() && o_.ops.count(row) == 0) continue;
        const size_t dir = row == op ? 0 : 1;
        const auto forward = claims.find(row);
        for (DType d : dtypes) {
          const std::string dt(weft::DTypeName(d));
          if (!o_.dtypes.empty() && o_.dtypes.count(dt) == 0) continue;
          // A backward kernel is keyed by its first output gradient, which may be an integer
          // output's (_sample_multinomial's indices): a dtype the forward does not claim names no
          // case the suite can run.
          if (dir == 1 && forward != claims.end() && forward->second.count(d) == 0) continue;
          Cell& cell = r_.by_type[type][row].cells[dt][dir];
          if (cell.status == Status::kNotClaimed) cell.status = cell.cases > 0 ? Status::kPass : Status::kNotRun;
        }
      }
    }
    for (auto& [type, rows] : r_.by_type)
      for (auto& [row, r] : rows)
        for (auto& [dt, cells] : r.cells)
          if (!r.has_gradient) cells[1].status = Status::kNoGradient;
  }

  const OpOptions& o_;
  const std::chrono::steady_clock::time_point start_;
  std::map<std::string, Claims> claims_;
  Claims cpu_claims_;
  OpResults r_;
  std::set<std::string> noted_;
};

}  // namespace

const char* StatusName(Status s) {
  switch (s) {
    case Status::kPass:
      return "pass";
    case Status::kFail:
      return "fail";
    case Status::kNoGradient:
      return "none";
    case Status::kNotRun:
      return "not run";
    default:
      return "not claimed";
  }
}

double Tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat64:
      return 1e-7;
    case DType::kFloat16:
      return 1e-4;
    case DType::kBfloat16:
      return 1e-3;
    default:
      return 0;
  }
}

std::string ForwardOpOf(const std::string& kernel_op) {
  static const std::map<std::string, std::string> by_backward = [] {
    std::map<std::string, std::string> m;
    for (const std::string& n : weft::OpRegistry::Get().ListNames()) {
      const weft::OpDef* d = weft::OpRegistry::Get().Find(n);
      if (d != nullptr && d->grad == weft::GradKind::kOp && !d->backward_op.empty()) m.emplace(d->backward_op, d->name);
    }
    return m;
  }();
  auto it = by_backward.find(kernel_op);
  if (it != by_backward.end()) return it->second;
  // Plugin ops registered after the first call: look them up directly.
  for (const std::string& n : weft::OpRegistry::Get().ListNames()) {
    const weft::OpDef* d = weft::OpRegistry::Get().Find(n);
    if (d != nullptr && d->grad == weft::GradKind::kOp && d->backward_op == kernel_op) return d->name;
  }
  return kernel_op;
}

std::vector<std::string> OpsWithoutCases(const std::string& device_type, const weft::Plugin* plugin) {
  std::set<std::string> covered, missing;
  for (const OpCase& c : AllCases()) covered.insert(weft::OpRegistry::Get().Lookup(c.op).name);
  for (const auto& [op, dtypes] : ClaimsOf(device_type, plugin)) {
    const std::string row = ForwardOpOf(op);
    if (covered.count(row)) continue;
    const weft::OpDef* def = weft::OpRegistry::Get().Find(row);
    if (def == nullptr || !GenericCase(*def)) missing.insert(row);
  }
  return {missing.begin(), missing.end()};
}

std::vector<std::string> OpsWithoutReference(const std::string& device_type, const weft::Plugin* plugin) {
  std::set<std::string> missing;
  for (const auto& [op, dtypes] : ClaimsOf(device_type, plugin)) {
    const std::string row = ForwardOpOf(op);
    if (!HasReferenceForward(row)) missing.insert(row);
  }
  return {missing.begin(), missing.end()};
}

OpResults RunOpConformance(const OpOptions& options) { return Runner(options).Run(); }

}  // namespace wconf
