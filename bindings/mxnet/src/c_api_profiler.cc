// MXNet C API: the profiler (mx.profiler) on weft's Chrome-trace profiler (weft/profiler.h):
// configuration, run/stop, dump to the configured file, aggregate statistics, and the frontend's
// own domains, tasks, frames, events, counters and markers (recorded in the same trace).
#include <algorithm>
#include <atomic>
#include <mutex>

#include <nlohmann/json.hpp>

#include "common.h"
#include "weft/profiler.h"

using namespace weft;
using namespace weft::mx;

namespace {

struct Config {
  std::mutex mu;
  std::string filename = "profile.json";  // MXNet's default
  bool paused = false;
};
Config& Conf() {
  static auto* c = new Config;
  return *c;
}

// A frontend profiling object: a domain, or a named duration/counter/marker in a domain.
struct ProfileH : Handle<HandleKind::kProfile> {
  enum Kind { kDomain, kTask, kFrame, kEvent, kCounter } kind = kDomain;
  std::string name, domain;  // domain: the category its events carry
  std::atomic<uint64_t> begin_ns{0};
  std::atomic<int64_t> value{0};
};
ProfileH& Prof(ProfileHandle h) { return *Handle<HandleKind::kProfile>::From<ProfileH>(h); }

ProfileHandle Create(ProfileH::Kind kind, const char* name, ProfileHandle domain) {
  auto h = std::make_unique<ProfileH>();
  h->kind = kind;
  h->name = NotNull(name, "name");
  h->domain = domain ? Prof(domain).name : std::string("event");
  return h.release();
}

bool Recording() {
  std::lock_guard lock(Conf().mu);
  return !Conf().paused && Profiler::Get().enabled();
}

// MXNet's aggregate table: per event name, count and total/min/max/average milliseconds, grouped
// by category, sorted as asked.
std::string AggregateTable(int format, int sort_by, bool ascending) {
  struct Stat {
    int64_t count = 0;
    double total = 0, min = 1e300, max = 0;
  };
  std::map<std::string, std::map<std::string, Stat>> cats;
  const nlohmann::json doc = nlohmann::json::parse(Profiler::Get().DumpToString());
  for (const auto& e : doc.value("traceEvents", nlohmann::json::array())) {
    if (e.value("ph", "") != "X") continue;
    Stat& s = cats[e.value("cat", "other")][e.value("name", "<unnamed>")];
    const double ms = e.value("dur", 0.0) / 1000.0;
    ++s.count;
    s.total += ms;
    s.min = std::min(s.min, ms);
    s.max = std::max(s.max, ms);
  }
  if (format == 1) {  // json
    nlohmann::json out;
    for (const auto& [cat, names] : cats)
      for (const auto& [name, s] : names)
        out["Time"][cat][name] = {{"Count", s.count},
                                  {"Total", s.total},
                                  {"Min", s.min},
                                  {"Max", s.max},
                                  {"Avg", s.total / static_cast<double>(s.count)}};
    out["Unit"] = {{"Time", "ms"}};
    return out.dump(4);
  }
  std::string text = "Profile Statistics:\n\tNote the difference in units for different entries.\n";
  for (const auto& [cat, names] : cats) {
    std::vector<std::pair<std::string, Stat>> rows(names.begin(), names.end());
    auto key = [sort_by](const Stat& s) {  // MXNet's sort_by: 0 total, 1 avg, 2 min, 3 max, 4 count
      switch (sort_by) {
        case 1:
          return s.total / static_cast<double>(s.count);
        case 2:
          return s.min;
        case 3:
          return s.max;
        case 4:
          return static_cast<double>(s.count);
        default:
          return s.total;
      }
    };
    std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
      return ascending ? key(a.second) < key(b.second) : key(a.second) > key(b.second);
    });
    text += fmt::format("\n{}\n=================\n", cat);
    text += fmt::format("{:<40}{:>16}{:>16}{:>16}{:>16}{:>16}\n", "Name", "Total Count", "Time (ms)", "Min Time (ms)",
                        "Max Time (ms)", "Avg Time (ms)");
    text += fmt::format("{:<40}{:>16}{:>16}{:>16}{:>16}{:>16}\n", "----", "-----------", "---------", "-------------",
                        "-------------", "-------------");
    for (const auto& [name, s] : rows)
      text += fmt::format("{:<40}{:>16}{:>16.4f}{:>16.4f}{:>16.4f}{:>16.4f}\n", name, s.count, s.total, s.min, s.max,
                          s.total / static_cast<double>(s.count));
  }
  return text;
}

void CheckProcess(int profile_process) {
  if (profile_process != 0) {
    Fail("profiling the KVStore servers (profile_process='server') is not supported; profile the worker");
  }
}

}  // namespace

extern "C" {

// Keys MXNet accepts: filename, profile_all, profile_symbolic, profile_imperative, profile_memory,
// profile_api, continuous_dump, dump_period, aggregate_stats, profile_process. weft's profiler
// records every engine operation and kernel, so the profile_* selections and aggregate_stats (the
// statistics come from the same events) only need valid values.
int MXSetProcessProfilerConfig(int num_params, const char* const* keys, const char* const* vals,
                               KVStoreHandle /*kvstore*/) {
  API_BEGIN();
  for (const auto& [k, v] : KeyValues(num_params, keys, vals, "profiler config")) {
    if (k == "filename") {
      std::lock_guard lock(Conf().mu);
      Conf().filename = v;
    } else if (k == "profile_process") {
      if (v != "worker") CheckProcess(1);
    } else if (k != "profile_all" && k != "profile_symbolic" && k != "profile_imperative" && k != "profile_memory" &&
               k != "profile_api" && k != "continuous_dump" && k != "dump_period" && k != "aggregate_stats") {
      Fail("profiler config: unknown key '{}'", k);
    }
  }
  API_END();
}

int MXSetProfilerConfig(int num_params, const char* const* keys, const char* const* vals) {
  return MXSetProcessProfilerConfig(num_params, keys, vals, nullptr);
}

// state 1 runs, 0 stops.
int MXSetProcessProfilerState(int state, int profile_process, KVStoreHandle /*kvstore*/) {
  API_BEGIN();
  CheckProcess(profile_process);
  if (state != 0 && state != 1) Fail("profiler state {} (0 stop, 1 run)", state);
  Profiler::Get().SetEnabled(state == 1);
  API_END();
}

int MXSetProfilerState(int state) { return MXSetProcessProfilerState(state, 0, nullptr); }

// Writes the trace to the configured file (Chrome trace-event JSON); `finished` stops recording.
int MXDumpProcessProfile(int finished, int profile_process, KVStoreHandle /*kvstore*/) {
  API_BEGIN();
  CheckProcess(profile_process);
  std::string file;
  {
    std::lock_guard lock(Conf().mu);
    file = Conf().filename;
  }
  if (finished) Profiler::Get().SetEnabled(false);
  Profiler::Get().Dump(file);
  API_END();
}

int MXDumpProfile(int finished) { return MXDumpProcessProfile(finished, 0, nullptr); }

int MXAggregateProfileStatsPrintEx(const char** out_str, int reset, int format, int sort_by, int ascending) {
  API_BEGIN();
  std::string& s = ThreadString("MXAggregateProfileStatsPrint");
  s = AggregateTable(format, sort_by, ascending != 0);
  if (reset) Profiler::Get().Clear();
  *NotNull(out_str, "out_str") = s.c_str();
  API_END();
}

int MXAggregateProfileStatsPrint(const char** out_str, int reset) {
  return MXAggregateProfileStatsPrintEx(out_str, reset, 0, 0, 0);
}

int MXProcessProfilePause(int paused, int profile_process, KVStoreHandle /*kvstore*/) {
  API_BEGIN();
  CheckProcess(profile_process);
  std::lock_guard lock(Conf().mu);
  Conf().paused = paused != 0;
  API_END();
}

int MXProfilePause(int paused) { return MXProcessProfilePause(paused, 0, nullptr); }

int MXProfileCreateDomain(const char* domain, ProfileHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = Create(ProfileH::kDomain, domain, nullptr);
  API_END();
}

int MXProfileCreateTask(ProfileHandle domain, const char* task_name, ProfileHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = Create(ProfileH::kTask, task_name, NotNull(domain, "domain"));
  API_END();
}

int MXProfileCreateFrame(ProfileHandle domain, const char* frame_name, ProfileHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = Create(ProfileH::kFrame, frame_name, NotNull(domain, "domain"));
  API_END();
}

int MXProfileCreateEvent(const char* event_name, ProfileHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = Create(ProfileH::kEvent, event_name, nullptr);
  API_END();
}

int MXProfileCreateCounter(ProfileHandle domain, const char* counter_name, ProfileHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = Create(ProfileH::kCounter, counter_name, NotNull(domain, "domain"));
  API_END();
}

int MXProfileDestroyHandle(ProfileHandle frame_handle) {
  API_BEGIN();
  delete &Prof(frame_handle);
  API_END();
}

int MXProfileDurationStart(ProfileHandle duration_handle) {
  API_BEGIN();
  Prof(duration_handle).begin_ns = Profiler::NowNs();
  API_END();
}

// A task, frame or event becomes one interval in the trace, in its domain's category.
int MXProfileDurationStop(ProfileHandle duration_handle) {
  API_BEGIN();
  ProfileH& h = Prof(duration_handle);
  const uint64_t begin = h.begin_ns.exchange(0);
  if (begin == 0) Fail("profiler: '{}' was stopped without being started", h.name);
  if (Recording()) Profiler::Get().AddEvent(h.name, h.domain, begin, Profiler::NowNs());
  API_END();
}

// Counter values are recorded as zero-length intervals whose args carry the value.
int MXProfileSetCounter(ProfileHandle counter_handle, uint64_t value) {
  API_BEGIN();
  ProfileH& h = Prof(counter_handle);
  h.value = static_cast<int64_t>(value);
  const uint64_t now = Profiler::NowNs();
  if (Recording())
    Profiler::Get().AddEvent(h.name, h.domain, now, now, fmt::format("{{\"value\": {}}}", h.value.load()));
  API_END();
}

int MXProfileAdjustCounter(ProfileHandle counter_handle, int64_t value) {
  API_BEGIN();
  ProfileH& h = Prof(counter_handle);
  const int64_t v = h.value += value;
  const uint64_t now = Profiler::NowNs();
  if (Recording()) Profiler::Get().AddEvent(h.name, h.domain, now, now, fmt::format("{{\"value\": {}}}", v));
  API_END();
}

int MXProfileSetMarker(ProfileHandle domain, const char* instant_marker_name, const char* scope) {
  API_BEGIN();
  const uint64_t now = Profiler::NowNs();
  if (Recording()) {
    Profiler::Get().AddEvent(NotNull(instant_marker_name, "instant_marker_name"), Prof(domain).name, now, now,
                             fmt::format("{{\"scope\": \"{}\"}}", scope ? scope : "process"));
  }
  API_END();
}

}  // extern "C"
