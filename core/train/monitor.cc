// Monitor (see weft/monitor.h).
#include "weft/monitor.h"

// GCC 12's <regex> trips -Wmaybe-uninitialized (a false positive inside std::function, in the
// sanitizer presets at -O1); the pattern is a user's regular expression, so this file keeps
// std::regex and silences that warning here only (GCC's name; clang has no such group).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>

#include "weft/imperative.h"

namespace weft {

struct Monitor::Pattern {
  std::regex re;
};

namespace {

// str() of a numpy float32, what MXNet prints: the shortest text that reads back as the same
// float (fmt's "{}" too), with ".0" after an integral value ("0.0", "12.0"; "1e+16" stays).
std::string PythonFloat(float x) {
  std::string s = fmt::format("{}", x);
  if (s.find_first_not_of("-0123456789") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

Monitor::Monitor(int interval, StatFunc stat_func, const std::string& pattern, bool sort, bool monitor_all)
    : interval_(interval), stat_func_(std::move(stat_func)), sort_(sort), monitor_all_(monitor_all) {
  WEFT_CHECK(interval >= 1, "Monitor: interval is {}; give 1 or more (every interval-th Tic records)", interval);
  try {
    pattern_ = std::make_shared<const Pattern>(Pattern{std::regex(pattern)});
  } catch (const std::regex_error& e) {
    Fail("Monitor: pattern '{}' is not a regular expression: {}", pattern, e.what());
  }
  if (!stat_func_) stat_func_ = &Monitor::NormStat;
}

NDArray Monitor::NormStat(const NDArray& array) {
  // MXNet's default stat_func, norm(x) / sqrt(x.size), with the same ops on the array's device.
  NDArray x = array.GetDType() == DType::kFloat32 ? array : InvokeOne("Cast", {array}, {{"dtype", "float32"}});
  const auto size = static_cast<float>(std::max<size_t>(1, x.Size()));
  return InvokeOne("norm", {x}) / std::sqrt(size);
}

void Monitor::Install(Executor& executor) {
  executor.SetMonitorCallback([this](const std::string& name, const NDArray& array) { Record(name, array); },
                              monitor_all_);
  if (std::find(executors_.begin(), executors_.end(), &executor) == executors_.end()) executors_.push_back(&executor);
}

void Monitor::Record(const std::string& name, const NDArray& array) {
  if (!activated_ || !std::regex_search(name, pattern_->re, std::regex_constants::match_continuous)) return;
  queue_.emplace_back(name, stat_func_(array));
}

void Monitor::Tic() {
  if (step_ % interval_ == 0) {
    for (Executor* e : executors_)
      for (const NDArray& a : e->arg_arrays) a.WaitToRead();
    queue_.clear();
    activated_ = true;
  }
  ++step_;
}

std::vector<MonitorStat> Monitor::Toc() {
  if (!activated_) return {};
  for (Executor* e : executors_) {
    const std::vector<std::string> names = e->GetOptimizedSymbol().ListArguments();
    for (size_t i = 0; i < names.size() && i < e->arg_arrays.size(); ++i) {
      e->arg_arrays[i].WaitToRead();
      Record(names[i], e->arg_arrays[i]);
    }
  }
  activated_ = false;
  if (sort_)
    std::stable_sort(queue_.begin(), queue_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<MonitorStat> out;
  for (const auto& [name, stat] : queue_) {
    std::vector<float> v;
    (stat.GetDType() == DType::kFloat32 ? stat : InvokeOne("Cast", {stat}, {{"dtype", "float32"}})).SyncCopyToCPU(&v);
    std::string text;
    for (float x : v) text += PythonFloat(x) + "\t";
    out.push_back({step_, name, std::move(text)});
  }
  queue_.clear();
  return out;
}

void Monitor::TocPrint() {
  for (const MonitorStat& s : Toc())
    std::fprintf(stderr, "%s", fmt::format("Batch: {:7d} {:<30} {}\n", s.step, s.name, s.value).c_str());
}

}  // namespace weft
