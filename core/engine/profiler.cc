// The profiler's event buffer and its Chrome trace-event JSON writer.
#include "weft/profiler.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

#include "weft/base.h"
#include "weft/internal/host_services.h"

namespace weft {

namespace {

struct Event {
  std::string name;
  std::string category;
  uint64_t begin_ns;
  uint64_t end_ns;
  std::string args;
  int tid;
};

std::atomic<int> next_thread_id{0};

}  // namespace

struct Profiler::State {
  std::atomic<bool> enabled{false};
  mutable std::mutex mu;
  std::vector<Event> events;
  std::map<int, std::string> thread_names;
};

Profiler::Profiler() : state_(std::make_unique<State>()) {}

Profiler& Profiler::Get() {
  // Never destroyed: engine workers and static destructors may record until the very end.
  static Profiler* profiler = new Profiler();
  return *profiler;
}

void Profiler::SetEnabled(bool enabled) noexcept {
  bool was = state_->enabled.exchange(enabled);
  if (was == enabled) return;
  // Plugins' trace events (SDK host trace hook) go to the same buffer while profiling is on.
  try {
    if (enabled) {
      SetTraceSink([](const weft_trace_event& e, const std::string& plugin) {
        std::string args = nlohmann::json{{"plugin", plugin}, {"device", e.device_id}, {"stream", e.stream_id}}.dump();
        Profiler::Get().AddEvent(e.name ? e.name : "<unnamed>", e.category ? e.category : "plugin", e.begin_ns,
                                 e.end_ns, args);
      });
    } else {
      SetTraceSink({});
    }
  } catch (...) {
    // Tracing plugins is best effort; engine events are recorded regardless.
  }
}

bool Profiler::enabled() const noexcept { return state_->enabled.load(std::memory_order_relaxed); }

uint64_t Profiler::NowNs() noexcept {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

int Profiler::ThreadId() {
  thread_local int id = next_thread_id.fetch_add(1);
  return id;
}

void Profiler::SetThreadName(std::string_view name) {
  int tid = ThreadId();
  State& s = *Get().state_;
  std::lock_guard<std::mutex> lock(s.mu);
  s.thread_names[tid] = std::string(name);
}

void Profiler::AddEvent(std::string_view name, std::string_view category, uint64_t begin_ns, uint64_t end_ns,
                        std::string_view args_json, int tid) {
  if (!enabled()) return;
  if (tid < 0) tid = ThreadId();
  Event e{std::string(name),
          std::string(category),
          begin_ns,
          end_ns < begin_ns ? begin_ns : end_ns,
          std::string(args_json),
          tid};
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->events.push_back(std::move(e));
}

std::string Profiler::DumpToString() const {
  using nlohmann::json;
  json events = json::array();
  const int pid = static_cast<int>(getpid());
  std::lock_guard<std::mutex> lock(state_->mu);
  for (const auto& [tid, name] : state_->thread_names) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
  }
  for (const Event& e : state_->events) {
    // Chrome's ts/dur are microseconds; fractions keep the ns resolution.
    json ev = {{"name", e.name},
               {"cat", e.category},
               {"ph", "X"},
               {"ts", static_cast<double>(e.begin_ns) / 1000.0},
               {"dur", static_cast<double>(e.end_ns - e.begin_ns) / 1000.0},
               {"pid", pid},
               {"tid", e.tid}};
    if (!e.args.empty()) {
      json args = json::parse(e.args, nullptr, /*allow_exceptions=*/false);
      if (args.is_discarded() || !args.is_object()) args = json{{"args", e.args}};
      ev["args"] = std::move(args);
    }
    events.push_back(std::move(ev));
  }
  json doc = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  return doc.dump();
}

void Profiler::Dump(const std::string& path) const {
  std::string text = DumpToString();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) Fail("profiler: cannot open '{}' for writing; check that its directory exists and is writable", path);
  out << text;
  out.close();
  if (!out) Fail("profiler: writing '{}' failed (disk full?)", path);
}

void Profiler::Clear() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->events.clear();
}

size_t Profiler::EventCount() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->events.size();
}

}  // namespace weft
