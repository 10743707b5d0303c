// weft core — Optimizer base: parameters, counts, multipliers, states (see weft/optimizer.h).
#include "weft/optimizer.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "base/untrusted.h"

#include "weft/symbol.h"

namespace weft {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::optional<bool> ParseBool(const std::string& v) {
  if (v == "true" || v == "True" || v == "1") return true;
  if (v == "false" || v == "False" || v == "0") return false;
  return std::nullopt;
}

std::optional<double> ParseNumber(const std::string& v) {
  try {
    size_t used = 0;
    double d = std::stod(v, &used);
    if (used != v.size()) return std::nullopt;
    return d;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A decimal int that fills all of `s` (an index or state number in saved keys), else nullopt.
// std::stoi threw std::invalid_argument out of Deserialize for a key such as "(5" (found by the
// states fuzzer), and the double ParseNumber let "1e300" or "nan" reach a cast to int.
std::optional<int> ParseIndex(std::string_view s) {
  int v = 0;
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || p != end) return std::nullopt;
  return v;
}

}  // namespace

Optimizer::Optimizer(unsigned begin_num_update) : begin_num_update_(begin_num_update), num_update_(begin_num_update) {}
Optimizer::~Optimizer() = default;

std::map<std::string, std::string> Optimizer::Defaults() const {
  return {{"lr", "0.01"}, {"wd", "0"}, {"rescale_grad", "1"}, {"clip_gradient", "-1"}};
}

void Optimizer::EnsureParams() {
  if (params_.empty()) params_ = Defaults();
}

Optimizer* Optimizer::SetParamString(const std::string& name_in, const std::string& value) {
  EnsureParams();
  const std::string name = name_in == "learning_rate" ? "lr" : name_in;
  auto it = params_.find(name);
  if (it == params_.end()) {
    std::string known;
    for (const auto& [k, v] : params_) known += (known.empty() ? "" : ", ") + k;
    Fail("{} optimizer: unknown parameter '{}' (known: {})", GetType(), name_in, known);
  }
  if (name == "centered") {
    auto b = ParseBool(value);
    WEFT_CHECK(b.has_value(), "{} optimizer: parameter '{}' must be true or false, got '{}'", GetType(), name, value);
    it->second = *b ? "true" : "false";
  } else {
    const std::optional<double> v = ParseNumber(value);
    WEFT_CHECK(v.has_value(), "{} optimizer: parameter '{}' must be a number, got '{}'", GetType(), name, value);
    // A NaN or infinite rate trains on NaN weights without any error (issue 19).
    WEFT_CHECK(std::isfinite(*v), "{} optimizer: parameter '{}' must be a finite number, got '{}'", GetType(), name,
               value);
    it->second = value;
  }
  if (name == "lr" && lr_scheduler_) lr_scheduler_->SetLR(Param("lr"));
  return this;
}

std::string Optimizer::GetParam(const std::string& name_in) const {
  const std::string name = name_in == "learning_rate" ? "lr" : name_in;
  auto defaults = Defaults();
  if (auto it = params_.find(name); it != params_.end()) return it->second;
  auto it = defaults.find(name);
  WEFT_CHECK(it != defaults.end(), "{} optimizer: unknown parameter '{}'", GetType(), name_in);
  return it->second;
}

float Optimizer::Param(const std::string& name) const { return static_cast<float>(*ParseNumber(GetParam(name))); }
bool Optimizer::BoolParam(const std::string& name) const { return *ParseBool(GetParam(name)); }

Optimizer* Optimizer::SetLRScheduler(std::unique_ptr<LRScheduler> scheduler) {
  lr_scheduler_ = std::move(scheduler);
  if (lr_scheduler_) lr_scheduler_->SetLR(Param("lr"));
  return this;
}

void Optimizer::SetLRMult(const std::map<int, float>& lr_mult) {
  for (const auto& [k, v] : lr_mult) lr_mult_[k] = v;
}
void Optimizer::SetWDMult(const std::map<int, float>& wd_mult) {
  for (const auto& [k, v] : wd_mult) wd_mult_[k] = v;
}

void Optimizer::SetParamNames(const std::map<int, std::string>& idx2name, const Symbol* symbol) {
  std::map<std::string, std::map<std::string, std::string>> attrs;
  if (symbol != nullptr) attrs = symbol->AttrDict();
  auto number = [&](const std::string& name, const char* key) -> std::optional<float> {
    auto node = attrs.find(name);
    if (node == attrs.end()) return std::nullopt;
    auto a = node->second.find(key);
    if (a == node->second.end()) return std::nullopt;
    auto v = ParseNumber(a->second);
    WEFT_CHECK(v.has_value(), "parameter '{}': attribute {}='{}' is not a number", name, key, a->second);
    return static_cast<float>(*v);
  };
  for (const auto& [index, name] : idx2name) {
    if (!EndsWith(name, "_weight") && !EndsWith(name, "_gamma")) wd_mult_[index] = 0.0f;
    if (auto v = number(name, "__lr_mult__")) lr_mult_[index] = *v;
    if (auto v = number(name, "__wd_mult__")) wd_mult_[index] = *v;
  }
}

float Optimizer::GetLR(int index) {
  float lr = lr_scheduler_ ? lr_scheduler_->GetLR(num_update_) : Param("lr");
  if (auto it = lr_mult_.find(index); it != lr_mult_.end()) lr *= it->second;
  return lr;
}

float Optimizer::GetWD(int index) const {
  float wd = Param("wd");
  if (auto it = wd_mult_.find(index); it != wd_mult_.end()) wd *= it->second;
  return wd;
}

unsigned Optimizer::UpdateCount(int index) const {
  auto it = count_.find(index);
  return it == count_.end() ? 0 : it->second;
}

void Optimizer::Update(int index, NDArray weight, NDArray grad) {
  EnsureParams();
  WEFT_CHECK(!weight.is_none() && !grad.is_none(), "{} optimizer, index {}: weight or gradient is a none array",
             GetType(), index);
  WEFT_CHECK(weight.GetShape() == grad.GetShape(),
             "{} optimizer, index {}: weight has shape {} but the gradient has shape {}", GetType(), index,
             weight.GetShape(), grad.GetShape());
  WEFT_CHECK(weight.GetDType() == DType::kFloat32 && grad.GetDType() == DType::kFloat32,
             "{} optimizer, index {}: weight and gradient must be float32 (got {} and {})", GetType(), index,
             DTypeName(weight.GetDType()), DTypeName(grad.GetDType()));
  WEFT_CHECK(weight.GetContext() == grad.GetContext(),
             "{} optimizer, index {}: weight is on {} but the gradient is on {}", GetType(), index, weight.GetContext(),
             grad.GetContext());
  auto cit = count_.find(index);
  const unsigned count = (cit == count_.end() ? begin_num_update_ : cit->second) + 1;
  count_[index] = count;
  num_update_ = std::max(num_update_, count);

  std::vector<NDArray>& states = states_[index];
  const Context ctx = weight.GetContext();
  if (states.empty()) {
    for (int k = 0; k < NumStates(); ++k) {
      NDArray s(weight.GetShape(), ctx, false);
      s = 0.0f;
      states.push_back(s);
    }
  }
  WEFT_CHECK(static_cast<int>(states.size()) == NumStates(),
             "{} optimizer, index {}: {} state arrays were loaded, the optimizer keeps {}", GetType(), index,
             states.size(), NumStates());
  for (NDArray& s : states) {
    WEFT_CHECK(s.GetShape() == weight.GetShape(), "{} optimizer, index {}: state has shape {} but the weight has {}",
               GetType(), index, s.GetShape(), weight.GetShape());
    if (s.GetContext() != ctx) s = s.Copy(ctx);
  }
  UpdateImpl(index, weight, grad, states, GetLR(index), GetWD(index));
}

std::string Optimizer::Serialize() const {
  nlohmann::json j;
  j["type"] = GetType();
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : Defaults()) params[k] = GetParam(k);
  j["params"] = params;
  nlohmann::json counts = nlohmann::json::object();
  for (const auto& [k, v] : count_) counts[std::to_string(k)] = v;
  j["counts"] = counts;
  j["num_update"] = num_update_;
  nlohmann::json lm = nlohmann::json::object(), wm = nlohmann::json::object();
  for (const auto& [k, v] : lr_mult_) lm[std::to_string(k)] = v;
  for (const auto& [k, v] : wd_mult_) wm[std::to_string(k)] = v;
  j["lr_mult"] = lm;
  j["wd_mult"] = wm;
  return j.dump();
}

void Optimizer::Deserialize(const std::string& json) {
  nlohmann::json j = detail::ParseJsonBounded(json, fmt::format("{} optimizer: Deserialize", GetType()));
  WEFT_CHECK(j.is_object(), "{} optimizer: Deserialize: not a JSON object", GetType());
  try {
    if (j.contains("type"))
      WEFT_CHECK(j["type"].get<std::string>() == GetType(),
                 "{} optimizer: the saved state belongs to a {} optimizer; create that type to load it", GetType(),
                 j["type"].get<std::string>());
    if (j.contains("params"))
      for (const auto& [k, v] : j["params"].items()) SetParamString(k, v.get<std::string>());
    auto index = [&](const char* section, const std::string& key) {
      const std::optional<int> i = ParseIndex(key);
      WEFT_CHECK(i, "{} optimizer: Deserialize: the {} key '{}' is not an integer index", GetType(), section,
                 detail::Excerpt(key));
      return *i;
    };
    auto count = [&](const char* what, const nlohmann::json& v) {
      WEFT_CHECK(v.is_number_unsigned() && v.get<uint64_t>() <= std::numeric_limits<unsigned>::max(),
                 "{} optimizer: Deserialize: {} must be an update count (0..{}), got {}", GetType(), what,
                 std::numeric_limits<unsigned>::max(), detail::JsonExcerpt(v));
      return v.get<unsigned>();
    };
    if (j.contains("counts")) {
      count_.clear();
      for (const auto& [k, v] : j["counts"].items()) count_[index("counts", k)] = count("a count", v);
    }
    if (j.contains("num_update")) num_update_ = count("num_update", j["num_update"]);
    if (j.contains("lr_mult"))
      for (const auto& [k, v] : j["lr_mult"].items()) lr_mult_[index("lr_mult", k)] = v.get<float>();
    if (j.contains("wd_mult"))
      for (const auto& [k, v] : j["wd_mult"].items()) wd_mult_[index("wd_mult", k)] = v.get<float>();
  } catch (const nlohmann::json::exception& e) {
    Fail("{} optimizer: Deserialize: malformed state: {}", GetType(), e.what());
  }
}

std::map<std::string, NDArray> Optimizer::GetStates() const {
  std::map<std::string, NDArray> out;
  for (const auto& [index, states] : states_)
    for (size_t k = 0; k < states.size(); ++k) out[fmt::format("{}:{}", index, k)] = states[k];
  return out;
}

void Optimizer::SetStates(const std::map<std::string, NDArray>& states) {
  std::map<int, std::map<int, NDArray>> parsed;
  for (const auto& [name, array] : states) {
    const size_t colon = name.find(':');
    auto index = colon == std::string::npos ? std::nullopt : ParseIndex(std::string_view(name).substr(0, colon));
    auto k = colon == std::string::npos ? std::nullopt : ParseIndex(std::string_view(name).substr(colon + 1));
    WEFT_CHECK(index && k && *k >= 0, "{} optimizer: state name '{}' is not '<index>:<k>' (integers)", GetType(),
               detail::Excerpt(name));
    parsed[*index][*k] = array;
  }
  states_.clear();
  for (auto& [index, m] : parsed) {
    std::vector<NDArray>& v = states_[index];
    for (auto& [k, a] : m) {
      WEFT_CHECK(k == static_cast<int>(v.size()), "{} optimizer: state {}:{} is missing", GetType(), index, v.size());
      v.push_back(a);
    }
  }
}

// ---- registry ------------------------------------------------------------------------------

Optimizer* OptimizerRegistry::Find(const std::string& name) { return Create(name).release(); }

std::unique_ptr<Optimizer> OptimizerRegistry::Create(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (n == "sgd" || n == "ccsgd") return std::make_unique<SGDOptimizer>();
  if (n == "nag") return std::make_unique<NAGOptimizer>();
  if (n == "adam") return std::make_unique<AdamOptimizer>();
  if (n == "rmsprop") return std::make_unique<RMSPropOptimizer>();
  Fail("unknown optimizer '{}'; known: sgd, nag, adam, rmsprop", name);
}

}  // namespace weft
