// MXNet compatibility (issue 13): files MXNet 1.9.1 wrote, run by weft on the cpu, against the
// outputs and gradients MXNet computed for them (tests/compat/gen_fixtures.py wrote data/).
//   - op probes: each listed operator's symbol JSON as MXNet writes it, forward (and backward
//     with a random head gradient, where the op has one) compared element by element;
//   - model zoo: Gluon model-zoo networks (reduced widths, random weights) exported with
//     HybridBlock.export, loaded with Symbol::Load + NDArray::Load, inference output compared;
//   - classic symbols: MXNet's example/image-classification networks (mlp, lenet, resnet,
//     inception-bn, mobilenet) built with mx.sym and saved by mx.model.save_checkpoint, likewise.
// Tolerance (the issue's): |a − b| ≤ 1e-5 + 1e-4·|b| for fp32. Each case prints its max abs error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compat_support.h"
#include "weft/executor.h"
#include "weft/ndarray.h"
#include "weft/symbol.h"

// compat_zoo_avx2_test runs the networks again on the AVX2 path as MXNet191Avx2.
#ifndef WEFT_ZOO_PREFIX
#define WEFT_ZOO_PREFIX MXNet191
#endif

namespace weft {
namespace {

const std::string kData = WEFT_COMPAT_DATA;

// Element values as float (fixture arrays of any dtype; positions of topk / argsort come in integer
// dtypes).
std::vector<float> Values(const NDArray& a) {
  const std::vector<double> v = compat::Elements(a);
  return std::vector<float>(v.begin(), v.end());
}

template <typename T>
NDArray FromFloat(const std::vector<float>& v, const Shape& shape, DType dtype) {
  const std::vector<T> raw(v.begin(), v.end());
  NDArray out(shape, Context::cpu(0), false, dtype);
  out.SyncCopyFromCPUBytes(raw.data(), raw.size() * sizeof(T));
  return out;
}

// `a` converted to `dtype`. MXNet's fixture stores every head gradient as float32, also the one
// for an integer output (topk's indices); Executor::Backward wants the output's own dtype.
NDArray CastTo(const NDArray& a, DType dtype) {
  if (a.GetDType() == dtype) return a;
  const std::vector<float> v = Values(a);
  switch (dtype) {
    case DType::kFloat64:
      return FromFloat<double>(v, a.GetShape(), dtype);
    case DType::kInt32:
      return FromFloat<int32_t>(v, a.GetShape(), dtype);
    case DType::kInt64:
      return FromFloat<int64_t>(v, a.GetShape(), dtype);
    default:
      return FromFloat<float>(v, a.GetShape(), DType::kFloat32);
  }
}

// Max |got − want|; counts elements outside 1e-5 + 1e-4·|want| into *bad.
double Compare(const std::vector<float>& got, const std::vector<float>& want, size_t* bad) {
  double worst = 0;
  *bad = got.size() == want.size() ? 0 : 1;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(d <= 1e-5 + 1e-4 * std::fabs(want[i]))) ++*bad;
    worst = std::max(worst, std::isnan(d) ? INFINITY : d);
  }
  return worst;
}

// One deterministic input (gen_fixtures.py's DeterministicInput): exact in float on both sides.
std::vector<float> DeterministicInput(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int64_t>((i * 7919) % 2001) - 1000) / 1000.0f;
  return v;
}

// A probe: "<manifest stem>/<probe name>". gen_fixtures.py writes probes.*, gen_op_fixtures.py one
// probes_<family>.* per family of the ops added for MXNet's frontend.
class OpProbe : public testing::TestWithParam<std::string> {};

std::vector<std::string> ProbeStems() {
  std::vector<std::string> stems;
  for (const auto& e : std::filesystem::directory_iterator(kData)) {
    const std::string file = e.path().filename().string();
    if (file.starts_with("probes") && file.ends_with(".json")) stems.push_back(file.substr(0, file.size() - 5));
  }
  std::sort(stems.begin(), stems.end());
  return stems;
}

std::vector<std::string> ProbeNames() {
  std::vector<std::string> names;
  for (const std::string& stem : ProbeStems()) {
    const nlohmann::json manifest = compat::ReadJson(kData + "/" + stem + ".json");
    for (const auto& p : manifest) names.push_back(stem + "/" + p["name"].get<std::string>());
  }
  return names;
}

TEST_P(OpProbe, MatchesMXNet) {
  const std::string stem = GetParam().substr(0, GetParam().find('/'));
  const std::string name = GetParam().substr(stem.size() + 1);
  static std::map<std::string, std::pair<nlohmann::json, std::map<std::string, NDArray>>> files;
  if (!files.count(stem))
    files[stem] = {compat::ReadJson(kData + "/" + stem + ".json"), NDArray::LoadToMap(kData + "/" + stem + ".params")};
  const nlohmann::json& manifest = files[stem].first;
  const std::map<std::string, NDArray>& arrays = files[stem].second;
  nlohmann::json probe;
  for (const auto& p : manifest)
    if (p["name"] == name) probe = p;
  ASSERT_FALSE(probe.is_null());
  auto get = [&](const std::string& key) {
    auto it = arrays.find(name + ":" + key);
    EXPECT_NE(it, arrays.end()) << "probes.params has no " << name << ":" << key;
    return it == arrays.end() ? NDArray() : it->second;
  };

  Symbol sym = Symbol::LoadJSON(probe["symbol"].get<std::string>());
  std::map<std::string, Shape> shapes;
  for (const auto& [k, v] : probe["shapes"].items()) shapes[k] = Shape(v.get<std::vector<int64_t>>());
  std::map<std::string, std::string> reqs;
  for (const auto& k : probe["no_grad"]) reqs[k.get<std::string>()] = "null";
  std::unique_ptr<Executor> ex = Executor::SimpleBind(sym, Context::cpu(0), shapes, "write", reqs);
  std::map<std::string, NDArray> args;
  for (const std::string& a : sym.ListArguments()) args[a] = get("arg:" + a);
  ex->CopyParamsFrom(args);
  if (probe.contains("expect_error")) {
    // A case MXNet refuses at run time (take mode=raise with an index out of range): weft must
    // refuse it too, with a message naming the op and the offending value.
    std::string message;
    try {
      ex->Forward(probe["is_train"].get<bool>());
      for (const NDArray& out : ex->outputs) out.WaitToRead();
    } catch (const Error& e) {
      message = e.what();
    }
    const std::string op = nlohmann::json::parse(probe["symbol"].get<std::string>())["nodes"].back()["op"];
    EXPECT_NE(message.find(probe["expect_error"].get<std::string>()), std::string::npos) << "got: '" << message << "'";
    EXPECT_NE(message.find(op), std::string::npos) << "the error does not name the op " << op << ": " << message;
    std::cout << "[compat] op " << name << ": refused as MXNet refuses it: " << message << "\n";
    return;
  }
  ex->Forward(probe["is_train"].get<bool>());
  double worst = 0;
  const size_t compared = probe["outputs"].get<size_t>();
  for (size_t i = 0; i < compared; ++i) {
    size_t b = 0;
    const NDArray want = get("out:" + std::to_string(i));
    EXPECT_EQ(ex->outputs[i].GetDType(), want.GetDType()) << "output " << i << " dtype differs from MXNet's";
    worst = std::max(worst, Compare(Values(ex->outputs[i]), Values(want), &b));
    EXPECT_EQ(b, 0u) << "output " << i << " differs from MXNet's";
  }
  if (probe["forward_only"].get<bool>()) {
    std::cout << "[compat] op " << name << ": max abs error " << worst << " (forward only)\n";
    return;
  }
  std::vector<NDArray> heads;
  if (!probe["loss"].get<bool>())
    for (size_t i = 0; i < ex->outputs.size(); ++i)
      heads.push_back(CastTo(get("head:" + std::to_string(i)), ex->outputs[i].GetDType()));
  ex->Backward(heads);
  const std::map<std::string, NDArray> grads = ex->grad_dict();
  for (const std::string& a : sym.ListArguments()) {
    if (reqs.count(a)) continue;
    size_t b = 0;
    worst = std::max(worst, Compare(Values(grads.at(a)), Values(get("grad:" + a)), &b));
    EXPECT_EQ(b, 0u) << "gradient of '" << a << "' differs from MXNet's";
  }
  std::cout << "[compat] op " << name << ": max abs error " << worst << "\n";
}

INSTANTIATE_TEST_SUITE_P(MXNet191, OpProbe, testing::ValuesIn(ProbeNames()),
                         [](const testing::TestParamInfo<std::string>& i) {
                           // probes/clip -> clip; probes_math/_equal -> math__equal
                           std::string s = i.param.substr(7);
                           for (char& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

// Networks: "zoo_<net>" (Gluon model zoo, index zoo.json) and "sym_<net>" (the classic
// example/image-classification symbols written with mx.sym, index symbols.json).
class ZooNetwork : public testing::TestWithParam<std::string> {};

std::vector<std::string> ZooNames() {
  std::vector<std::string> names;
  for (const char* kind : {"zoo", "sym"}) {
    const nlohmann::json index = compat::ReadJson(kData + (kind == std::string("zoo") ? "/zoo.json" : "/symbols.json"));
    for (const auto& [k, v] : index.items()) names.push_back(std::string(kind) + "_" + k);
  }
  return names;
}

// Network `param`'s index entry, and an inference executor bound to its parameters with the
// deterministic input in "data".
struct BoundNetwork {
  nlohmann::json info;
  std::unique_ptr<Executor> ex;
};

BoundNetwork BindNetwork(const std::string& param) {
  const bool zoo = param.rfind("zoo_", 0) == 0;
  const nlohmann::json index = compat::ReadJson(kData + (zoo ? "/zoo.json" : "/symbols.json"));
  BoundNetwork b{index.at(param.substr(4)), nullptr};
  const std::string prefix = kData + "/" + param;
  Symbol sym = Symbol::Load(prefix + "-symbol.json");
  std::map<std::string, NDArray> arg_params, aux_params;
  for (const auto& [k, v] : NDArray::LoadToMap(prefix + "-0000.params")) {
    if (k.rfind("arg:", 0) == 0) arg_params[k.substr(4)] = v;
    if (k.rfind("aux:", 0) == 0) aux_params[k.substr(4)] = v;
  }
  const Shape in_shape(b.info["input"].get<std::vector<int64_t>>());
  b.ex = Executor::SimpleBind(sym, Context::cpu(0), {{"data", in_shape}}, "null");
  b.ex->CopyParamsFrom(arg_params, aux_params);
  b.ex->arg_dict().at("data").SyncCopyFromCPU(DeterministicInput(in_shape.Size()));
  return b;
}

TEST_P(ZooNetwork, MatchesMXNet) {
  const std::string param = GetParam();
  const bool zoo = param.rfind("zoo_", 0) == 0;
  const std::string name = param.substr(4);
  BoundNetwork net = BindNetwork(param);
  net.ex->Forward(false);
  const std::vector<float> want = Values(NDArray::LoadToMap(kData + "/" + param + "-io.params").at("out:0"));
  size_t bad = 0;
  const double worst = Compare(Values(net.ex->outputs.at(0)), want, &bad);
  EXPECT_EQ(bad, 0u) << name << ": " << bad << " of " << want.size() << " outputs differ from MXNet's (max abs error "
                     << worst << ")";
  std::cout << "[compat] " << (zoo ? "zoo " : "symbols ") << name << ": max abs error " << worst << " (|out| up to "
            << net.info["out_absmax"].get<double>() << ")\n";
}

// An executor is a pure function of its inputs (issue 32): three forward runs on the same input
// give the same bits, from the first run on (kernels for constant weights are chosen at bind time,
// not switched to once the weights have been seen twice).
TEST_P(ZooNetwork, RepeatsBitForBit) {
  const std::string param = GetParam();
  BoundNetwork net = BindNetwork(param);
  std::vector<std::vector<uint32_t>> runs;
  for (int run = 0; run < 3; ++run) {
    net.ex->Forward(false);
    const NDArray& out = net.ex->outputs.at(0);
    std::vector<uint32_t> bits(out.Bytes() / sizeof(uint32_t));
    out.SyncCopyToCPUBytes(bits.data(), bits.size() * sizeof(uint32_t));
    runs.push_back(std::move(bits));
  }
  for (int run = 1; run < 3; ++run) {
    size_t differ = 0;
    for (size_t i = 0; i < runs[0].size(); ++i) differ += runs[run][i] != runs[0][i];
    EXPECT_EQ(differ, 0u) << param << ": run " << run + 1 << " differs from run 1 in " << differ << " of "
                          << runs[0].size() << " outputs";
  }
}

INSTANTIATE_TEST_SUITE_P(WEFT_ZOO_PREFIX, ZooNetwork, testing::ValuesIn(ZooNames()),
                         [](const testing::TestParamInfo<std::string>& i) {
                           std::string s = i.param;
                           for (char& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

}  // namespace
}  // namespace weft
