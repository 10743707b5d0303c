// The conformance library's double-precision reference (core/tools/conformance/reference.h), which
// the cpu plugin is certified against, checked itself against the real MXNet 1.9.1: each op probe
// of tests/compat (an operator's symbol as MXNet writes it, its inputs and the outputs and
// gradients MXNet computed, data/probes.* and data/probes_math.*) is run through ReferenceForward, and through
// ReferenceGradient where the op defines its gradient. Tolerance as tests/compat's:
// |a − b| ≤ 1e-5 + 1e-4·|b|. Probes of ops without a reference, or that MXNet refuses, are listed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "reference.h"
#include "weft/ndarray.h"

namespace wconf {
namespace {

const std::string kData = WEFT_COMPAT_DATA;

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

template <typename T>
std::vector<double> Widened(const weft::NDArray& a) {
  std::vector<T> raw(static_cast<size_t>(a.Size()));
  a.SyncCopyToCPUBytes(raw.data(), raw.size() * sizeof(T));
  return {raw.begin(), raw.end()};
}

// The fixture arrays hold float32, float64, int32 or int64.
HostTensor ToHost(const weft::NDArray& a) {
  HostTensor t{a.GetShape(), a.GetDType(), {}};
  switch (a.GetDType()) {
    case DType::kFloat64:
      t.v = Widened<double>(a);
      break;
    case DType::kInt32:
      t.v = Widened<int32_t>(a);
      break;
    case DType::kInt64:
      t.v = Widened<int64_t>(a);
      break;
    default:
      t.v = Widened<float>(a);
  }
  return t;
}

// Elements outside the tolerance; *worst gets the largest |got − want|.
size_t Mismatches(const std::vector<double>& got, const std::vector<double>& want, double* worst) {
  size_t bad = got.size() == want.size() ? 0 : 1;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    const double d = std::fabs(got[i] - want[i]);
    bad += !(d <= 1e-5 + 1e-4 * std::fabs(want[i]));
    *worst = std::max(*worst, std::isnan(d) ? INFINITY : d);
  }
  return bad;
}

// Every probe of data/<stem>.json.
void CheckProbes(const std::string& stem) {
  const nlohmann::json manifest = ReadJson(kData + "/" + stem + ".json");
  const std::map<std::string, weft::NDArray> arrays = weft::NDArray::LoadToMap(kData + "/" + stem + ".params");
  ASSERT_GT(manifest.size(), 50u);
  int checked = 0;
  std::string without;
  for (const auto& probe : manifest) {
    const std::string name = probe["name"].get<std::string>();
    SCOPED_TRACE(name);
    if (probe.contains("expect_error")) continue;  // MXNet refuses it: nothing to compare
    const nlohmann::json sym = nlohmann::json::parse(probe["symbol"].get<std::string>());
    const nlohmann::json& node = sym["nodes"].back();
    const weft::OpDef& def = weft::OpRegistry::Get().Lookup(node["op"].get<std::string>());
    if (!HasReferenceForward(def.name)) {
      without += " " + name;
      continue;
    }
    RunSpec spec;
    spec.op = def.name;
    std::map<std::string, std::string> attrs;
    if (node.contains("attrs"))
      for (const auto& [k, v] : node["attrs"].items()) attrs[k] = v.get<std::string>();
    spec.attrs = def.Normalize(weft::AttrMap(attrs));
    std::vector<std::string> inputs;
    for (const auto& in : node["inputs"]) {
      inputs.push_back(sym["nodes"][in[0].get<size_t>()]["name"].get<std::string>());
      spec.in.push_back(ToHost(arrays.at(name + ":arg:" + inputs.back())));
    }
    spec.sig = InferSignature(def, spec.attrs, spec.in, spec.aux);
    spec.is_train = probe["is_train"].get<bool>();
    std::string error;
    const std::optional<Reference> ref = ReferenceForward(spec, RunResult{}, &error);
    ASSERT_TRUE(ref.has_value());
    EXPECT_EQ(error, "");
    double worst = 0;
    for (size_t o = 0; o < probe["outputs"].get<size_t>(); ++o)
      EXPECT_EQ(Mismatches(ref->out[o].v, ToHost(arrays.at(name + ":out:" + std::to_string(o))).v, &worst), 0u)
          << "output " << o;
    // The gradients ops define rather than derive (loss layers, selu), with MXNet's head gradients.
    std::vector<HostTensor> heads;
    for (size_t o = 0; o < ref->out.size(); ++o) {
      auto h = arrays.find(name + ":head:" + std::to_string(o));
      heads.push_back(h != arrays.end() ? ToHost(h->second)
                                        : HostTensor{ref->out[o].shape, ref->out[o].dtype,
                                                     std::vector<double>(ref->out[o].v.size())});
    }
    RunResult fwd;
    fwd.out = ref->out;
    const auto grads = probe["forward_only"].get<bool>() ? std::nullopt : ReferenceGradient(spec, fwd, heads);
    for (size_t i = 0; grads && i < inputs.size(); ++i) {
      auto want = arrays.find(name + ":grad:" + inputs[i]);
      if (want == arrays.end()) continue;  // an input MXNet gives no gradient (no_grad)
      EXPECT_EQ(Mismatches((*grads)[i].v, ToHost(want->second).v, &worst), 0u) << "gradient of " << inputs[i];
    }
    std::printf("[reference] %s: max abs error %.3g%s\n", name.c_str(), worst, grads ? " (with the gradient)" : "");
    ++checked;
  }
  std::printf("[reference] %d probes compared; ops without a reference:%s\n", checked,
              without.empty() ? " none" : without.c_str());
  EXPECT_EQ(without, "");
}

TEST(Reference, AgreesWithMXNetOnTheCompatProbes) { CheckProbes("probes"); }

// MXNet's further math (reference_math.cc): comparisons, logic, mod, power, hypot, inverse
// trigonometric functions, rounding, erf/erfinv, gamma, with mod's gradients.
TEST(Reference, AgreesWithMXNetOnTheMathProbes) { CheckProbes("probes_math"); }

}  // namespace
}  // namespace wconf
