#include "weft/env.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

#include "weft/base.h"

namespace weft {

std::optional<std::string> GetEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::string GetEnvString(const char* name, const std::string& fallback) { return GetEnv(name).value_or(fallback); }

int64_t GetEnvInt(const char* name, int64_t fallback) {
  auto v = GetEnv(name);
  if (!v) return fallback;
  int64_t out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  WEFT_CHECK(ec == std::errc() && p == v->data() + v->size(),
             "environment variable {}='{}' is not an integer; set it to a whole number or unset it", name, *v);
  return out;
}

int64_t GetEnvIntInRange(const char* name, int64_t fallback, int64_t lo, int64_t hi, const char* what) {
  const int64_t v = GetEnvInt(name, fallback);
  WEFT_CHECK(v >= lo && v <= hi, "{}={} is out of range; give {} from {} to {}", name, v, what, lo, hi);
  return v;
}

bool GetEnvBool(const char* name, bool fallback) {
  auto v = GetEnv(name);
  if (!v) return fallback;
  std::string s = *v;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  Fail("environment variable {}='{}' is not a boolean; use 1/0, true/false, yes/no or on/off", name, *v);
}

std::string DeviceEnvName(const std::string& device_type, const std::string& suffix) {
  std::string name = "WEFT_";
  for (char c : device_type) {
    const auto u = static_cast<unsigned char>(c);
    name += std::isalnum(u) ? static_cast<char>(std::toupper(u)) : '_';
  }
  return name + "_" + suffix;
}

void ValidateSettings() {
  if (auto v = GetEnv("WEFT_LOG_LEVEL")) {
    WEFT_CHECK(*v == "debug" || *v == "info" || *v == "warning" || *v == "error",
               "environment variable WEFT_LOG_LEVEL='{}' is not a log level; use debug, info, warning or error", *v);
  }
  GetEnvIntInRange("WEFT_CPU_MATH_THREADS", 1, 1, 1024, "a thread count");
}

void ApplyOpenMPDefaults() {
  // libgomp's idle team threads spin 300 000 rounds (about a millisecond) after every parallel
  // region before they sleep. weft's engine runs ops one after another on its own workers, with
  // serial work and other threads between the regions of oneDNN and of the cpu kernels, so that
  // spin takes a core from them; on a loaded 2-core machine a ResNet-18 training step took 2.3–3.0 s
  // with it and 0.6–1.1 s with a short or no spin (bench/mxnet_binding, 2026-11-29). A short spin
  // (1000 rounds: 0.60 s; 10 000: 0.93 s; none: 0.60–0.77 s but the MNIST MLP then lost 2/3 of its
  // speed once) still catches back-to-back regions. libgomp reads the variables once, when it is loaded (with
  // the cpu plugin), so this must run before plugins load; a user's choice is kept.
  if (GetEnv("OMP_WAIT_POLICY") || GetEnv("GOMP_SPINCOUNT")) return;
  ::setenv("GOMP_SPINCOUNT", kDefaultGompSpinCount, 0);
}

}  // namespace weft
